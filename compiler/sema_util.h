// Helpers shared by the semantic passes.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "sema.h"

namespace reflex::compiler {

std::string member_keyword(Member::Kind k);
bool resolve_regex(Sema& s, const RegexExpr& e, const std::string& file, std::string* out,
                   std::set<std::string>* visiting);
const Decl* find_override(Sema& s, const std::string& kind, const Decl* target);

// Seconds of a duration literal ("30s", "-2s"); a bare "0" is allowed.
std::optional<double> duration_seconds(const Value& v);
// Whether a pattern is anchored or has a literal run of >= 4 characters.
bool pattern_is_selective(const std::string& pattern);
// Reports E012 for a name that is neither an event nor a group, with
// did-you-mean over non-abstract events and groups.
void unknown_event_or_group(Sema& s, const Ident& id, const std::set<std::string>* allows);

}  // namespace reflex::compiler
