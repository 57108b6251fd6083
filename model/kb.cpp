// Names of the built-in enums and the KnowledgeBase lookups.
#include "reflex/kb.h"

#include "reflex/vocabulary.h"

namespace reflex {
// Device kind and relation names come from the vocabulary tables; their
// string_views view literals, so data() is NUL-terminated.
const char* to_string(DeviceKind k) {
  return kind_info(k).name.data();
}

std::optional<DeviceKind> device_kind_from_string(const std::string& s) {
  return device_kind_named(s, /*aliases=*/false);
}

const char* transport_name(Transport t) {
  return transport_word(t).data();  // the table's words are string literals
}

std::optional<Transport> transport_from_string(const std::string& s) {
  return transport_named(s);
}

const char* to_string(FieldType t) {
  switch (t) {
    case FieldType::int_:
      return "int";
    case FieldType::hex:
      return "hex";
    case FieldType::float_:
      return "float";
    case FieldType::bdf:
      return "bdf";
    case FieldType::ip:
      return "ip";
    case FieldType::string:
      return "string";
  }
  return "string";
}

const char* to_string(Severity s) {
  switch (s) {
    case Severity::info:
      return "info";
    case Severity::warning:
      return "warning";
    case Severity::minor:
      return "minor";
    case Severity::major:
      return "major";
    case Severity::critical:
      return "critical";
  }
  return "info";
}

const char* to_string(SymptomKind s) {
  switch (s) {
    case SymptomKind::none:
      return "none";
    case SymptomKind::crash:
      return "crash";
    case SymptomKind::hang:
      return "hang";
    case SymptomKind::launch:
      return "launch";
    case SymptomKind::slowdown:
      return "slowdown";
  }
  return "none";
}

const char* to_string(Relation r) {
  return relation_info(r).name.data();
}

std::optional<Relation> relation_from_string(const std::string& s) {
  for (const RelationInfo& r : kRelations)
    if (s == r.name) return r.rel;
  return std::nullopt;
}

std::string SourceLoc::str() const {
  return file + ":" + std::to_string(line);
}

const Signature* KnowledgeBase::find_signature(const std::string& name) const {
  for (auto& s : signatures)
    if (s.name == name) return &s;
  return nullptr;
}

const Latent* KnowledgeBase::find_latent(const std::string& name) const {
  for (auto& l : latents)
    if (l.name == name) return &l;
  return nullptr;
}

const Nature* KnowledgeBase::find_nature(const std::string& name) const {
  for (auto& n : natures)
    if (n.name == name) return &n;
  return nullptr;
}

bool KnowledgeBase::nature_evicts(const std::string& n) const {
  const Nature* d = n.empty() ? nullptr : find_nature(n);
  return d ? d->evicts : true;
}

const FaultClass* KnowledgeBase::find_class(const std::string& name) const {
  for (auto& c : classes)
    if (c.name == name) return &c;
  return nullptr;
}

std::string KnowledgeBase::standard_class(const std::string& cls) const {
  const FaultClass* c = find_class(cls);
  // Bounded walk: the checker rejects cycles, but a hand-built KB might not.
  for (size_t hops = 0; c && !c->parent.empty() && hops < classes.size(); ++hops)
    c = find_class(c->parent);
  return c ? c->name : std::string();
}

}  // namespace reflex
