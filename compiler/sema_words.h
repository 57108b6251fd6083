// The words and value helpers shared by the type-checking passes
// (sema_signatures.cpp, sema_latents.cpp, sema_rules.cpp, sema_tests.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sema.h"

namespace reflex::compiler {

std::string seconds_text(double s);  // "30s"
std::optional<Severity> severity_from(const std::string& s);
std::optional<SymptomKind> symptom_from(const std::string& s);
std::optional<FieldType> type_from(const std::string& s);
extern const std::vector<std::string> kKinds;       // the device kinds' words
extern const std::vector<std::string> kTransports;  // kernel, syslog, journal, app

// "unknown WHAT 'w'" with did-you-mean and the valid words.
void bad_word(Sema& s, DiagId id, const Ident& w, const std::string& what,
              const std::vector<std::string>& valid, const std::set<std::string>* allows);
void check_nature(Sema& s, const Ident& w, const std::set<std::string>* allows);
// `class NAME` of a signature or latent: records the reference from `file` and
// reports an unknown class with did-you-mean.
void check_class(Sema& s, const std::string& file, const Ident& w,
                 const std::set<std::string>* allows);
// `severity WORD`: the level, or nullopt after reporting the word.
std::optional<Severity> severity_of(Sema& s, const Ident& w, const std::set<std::string>* allows);
std::optional<DeviceKind> kind_of(Sema& s, const Ident& w, const std::set<std::string>* allows);
std::optional<Transport> transport_of(Sema& s, const Ident& w, const std::set<std::string>* allows);
std::optional<double> duration_of(Sema& s, const Value& v);
std::optional<int64_t> int_of(Sema& s, const Value& v, const char* what);
// E-unknown-event for a name that is neither a signature nor a latent, with did-you-mean.
void unknown_event(Sema& s, const Ident& id, const std::set<std::string>* allows);
// Normalises a condition/example literal for a field type; nullopt = mismatch.
std::optional<std::string> literal_for(FieldType t, const Value& v);

}  // namespace reflex::compiler
