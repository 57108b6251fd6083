// The words of the language the passes check against (statement keywords,
// severities, symptoms, field types, device kinds, transports, natures) and
// the value helpers that report a bad one.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "reflex/pattern.h"
#include "reflex/values.h"
#include "reflex/vocabulary.h"
#include "sema.h"
#include "sema_util.h"
#include "sema_words.h"

namespace reflex::compiler {

namespace fs = std::filesystem;
using DK = DeviceKind;

std::string member_keyword(Member::Kind k) {
  using K = Member::Kind;
  switch (k) {
    case K::on:
      return "on";
    case K::from:
      return "from";
    case K::match:
      return "match";
    case K::field:
      return "field";
    case K::when:
      return "when";
    case K::locate:
      return "locate";
    case K::class_:
      return "class";
    case K::severity:
      return "severity";
    case K::nature:
      return "nature";
    case K::description:
      return "description";
    case K::action:
      return "action";
    case K::remediation:
      return "remediation";
    case K::symptom:
      return "symptom";
    case K::aggregate:
      return "aggregate";
    case K::dedup:
      return "dedup";
    case K::baseline:
      return "baseline";
    case K::cleared_by:
      return "cleared_by";
    case K::example:
      return "example";
    case K::near_miss:
      return "near_miss";
    case K::allow:
      return "allow";
    case K::silent:
      return "silent";
    case K::quorum:
      return "quorum";
    case K::suspect:
      return "suspect";
    case K::background:
      return "background";
    case K::check:
      return "check";
    case K::odd_one_out:
      return "odd_one_out";
    case K::cause:
      return "->";
    case K::where:
      return "where";
    case K::within:
      return "within";
    case K::skew:
      return "skew";
    case K::while_cause_lasts:
      return "while cause lasts";
    case K::strength:
      return "strength";
    case K::topology:
      return "topology";
    case K::log:
      return "log";
    case K::bundle:
      return "bundle";
    case K::expect_root:
      return "expect root";
    case K::expect_no_root:
      return "expect no root";
    case K::expect_event:
      return "expect event";
  }
  return "?";
}

std::optional<double> duration_seconds(const Value& v) {
  if (v.kind == Value::Kind::number) {
    if (v.text == "0" || v.text == "-0") return 0.0;
    return std::nullopt;
  }
  if (v.kind != Value::Kind::duration) return std::nullopt;
  std::string t = v.text;
  bool neg = !t.empty() && t[0] == '-';
  if (neg) t = t.substr(1);
  auto d = parse_duration_s(t);
  if (!d) return std::nullopt;
  return neg ? -*d : *d;
}

namespace {

// For each '(' of the pattern: whether the group is "required", i.e. neither
// followed by a quantifier nor holding an alternation of its own, so that its
// literals must appear in every match (a pattern reference is spliced in as
// such a group: `xid_prefix + /.../`).
std::vector<bool> required_groups(const std::string& p) {
  std::vector<bool> required(p.size(), false);
  std::vector<std::pair<size_t, bool>> open;  // '(' position, saw '|' at its level
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      ++i;
    } else if (c == '[') {
      while (i < p.size() && p[i] != ']') i += p[i] == '\\' ? 2 : 1;
    } else if (c == '(') {
      open.emplace_back(i, false);
    } else if (c == '|' && !open.empty()) {
      open.back().second = true;
    } else if (c == ')' && !open.empty()) {
      const bool quantified = i + 1 < p.size() && std::strchr("*?{", p[i + 1]) != nullptr;
      required[open.back().first] = !quantified && !open.back().second;
      open.pop_back();
    }
  }
  return required;
}

}  // namespace

bool pattern_is_selective(const std::string& p) {
  if (!p.empty() && p[0] == '^') return true;
  if (p.size() >= 2 && p.back() == '$' && p[p.size() - 2] != '\\') return true;
  // Longest run of literal characters outside optional groups and classes.
  const std::vector<bool> required = required_groups(p);
  std::vector<bool> stack;  // per open group: required?
  int depth = 0, run = 0, best = 0;
  bool alternation = false;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      char n = p[++i];
      bool literal = !std::isalnum(static_cast<unsigned char>(n));
      if (literal && depth == 0) {
        ++run;
      } else {
        run = 0;
      }
      best = std::max(best, run);
      continue;
    }
    if (c == '[') {
      run = 0;
      while (i < p.size() && p[i] != ']') i += p[i] == '\\' ? 2 : 1;
      continue;
    }
    if (c == '(') {
      stack.push_back(required[i]);
      if (!required[i]) ++depth;
      // Skip the group's own syntax: (?: (?P<name> (?i)
      if (i + 1 < p.size() && p[i + 1] == '?') {
        size_t j = i + 2;
        if (j < p.size() && p[j] == 'P' && j + 1 < p.size() && p[j + 1] == '<') {
          j = p.find('>', j);
          if (j == std::string::npos) j = p.size() - 1;
        } else {
          while (j < p.size() && p[j] != ':' && p[j] != ')') ++j;
          if (j < p.size() && p[j] == ')') --j;
        }
        i = j;
      }
      run = 0;
      continue;
    }
    if (c == ')') {
      if (!stack.empty()) {
        if (!stack.back()) depth = std::max(0, depth - 1);
        stack.pop_back();
      }
      run = 0;
      continue;
    }
    if (c == '|' && stack.empty()) alternation = true;
    bool meta = std::string("|.*+?{}^$").find(c) != std::string::npos;
    if (!meta && depth == 0) {
      ++run;
      // A quantifier after this char makes it optional.
      if (i + 1 < p.size() && (p[i + 1] == '*' || p[i + 1] == '?' || p[i + 1] == '{')) run = 0;
    } else {
      run = 0;
    }
    best = std::max(best, run);
  }
  return best >= 4 && !alternation;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%gs", s);
  return buf;
}

std::optional<Severity> severity_from(const std::string& s) {
  if (s == "info") return Severity::info;
  if (s == "warning") return Severity::warning;
  if (s == "minor") return Severity::minor;
  if (s == "major") return Severity::major;
  if (s == "critical") return Severity::critical;
  return std::nullopt;
}

std::optional<SymptomKind> symptom_from(const std::string& s) {
  if (s == "crash") return SymptomKind::crash;
  if (s == "hang") return SymptomKind::hang;
  if (s == "launch") return SymptomKind::launch;
  if (s == "slowdown") return SymptomKind::slowdown;
  return std::nullopt;
}

std::optional<FieldType> type_from(const std::string& s) {
  if (s == "int") return FieldType::int_;
  if (s == "hex") return FieldType::hex;
  if (s == "float") return FieldType::float_;
  if (s == "bdf") return FieldType::bdf;
  if (s == "ip") return FieldType::ip;
  if (s == "string") return FieldType::string;
  return std::nullopt;
}

const std::vector<std::string> kKinds = [] {
  std::vector<std::string> v;
  for (const DeviceKindInfo& k : kDeviceKinds) v.emplace_back(k.name);
  return v;
}();
const std::vector<std::string> kTransports = [] {
  std::vector<std::string> v;
  for (const TransportInfo& t : kTransportWords) v.emplace_back(t.name);
  return v;
}();

void bad_word(Sema& s, DiagId id, const Ident& w, const std::string& what,
              const std::vector<std::string>& valid, const std::set<std::string>* allows) {
  auto& d = s.diags.report(id, w.range, "unknown " + what + " '" + w.text + "'", allows);
  std::string near = closest(w.text, valid);
  std::string list;
  for (size_t i = 0; i < valid.size(); ++i) list += (i ? ", " : "") + valid[i];
  if (!near.empty()) DiagEngine::note(d, "did you mean '" + near + "'?");
  DiagEngine::note(d, "valid: " + list);
}

// `nature WORD` names one of the unit's `nature` declarations (the shipped ones
// are in kb/classes.rfx). A unit that declares none is not checked.
void check_nature(Sema& s, const Ident& w, const std::set<std::string>* allows) {
  if (s.natures.empty() || s.natures.count(w.text)) return;
  std::vector<std::string> valid;
  for (const auto& [name, decl] : s.natures) valid.push_back(name);
  bad_word(s, DiagId::invalid_keyword_value, w, "nature", valid, allows);
}

void check_class(Sema& s, const std::string& file, const Ident& w,
                 const std::set<std::string>* allows) {
  s.ref(file, w.text);
  if (s.classes.count(w.text)) return;
  std::vector<std::string> names;
  for (const auto& [n, d] : s.classes) names.push_back(n);
  auto& d = s.diags.report(DiagId::unknown_class, w.range, "unknown fault class '" + w.text + "'",
                           allows);
  std::string near = closest(w.text, names);
  if (!near.empty())
    DiagEngine::note(d, s.classes.at(near)->name.range, "did you mean '" + near + "'?");
  else if (names.empty())
    DiagEngine::note(d,
                     "no fault class is declared in this unit; the standard classes are "
                     "declared in the shipped kb/classes.rfx: check the file together with it "
                     "(reflexc check kb/classes.rfx FILE)");
}

std::optional<Severity> severity_of(Sema& s, const Ident& w, const std::set<std::string>* allows) {
  auto v = severity_from(w.text);
  if (!v)
    bad_word(s, DiagId::invalid_keyword_value, w, "severity",
             {"info", "warning", "minor", "major", "critical"}, allows);
  return v;
}

std::optional<DeviceKind> kind_of(Sema& s, const Ident& w, const std::set<std::string>* allows) {
  auto k = device_kind_from_string(w.text);
  if (!k) bad_word(s, DiagId::unknown_kind, w, "device kind", kKinds, allows);
  return k;
}

std::optional<Transport> transport_of(Sema& s, const Ident& w,
                                      const std::set<std::string>* allows) {
  auto t = transport_from_string(w.text);
  if (!t || *t == kTransportAny) {
    bad_word(s, DiagId::unknown_transport, w, "transport", kTransports, allows);
    return std::nullopt;
  }
  return t;
}

std::optional<double> duration_of(Sema& s, const Value& v) {
  auto d = duration_seconds(v);
  if (!d && !v.text.empty()) {
    s.diags.report(
        DiagId::invalid_literal, v.range,
        v.kind == Value::Kind::number
            ? "duration '" + v.text + "' needs a unit (ms, s, m, h, d), e.g. " + v.text + "s"
            : "invalid duration '" + v.text + "'");
  }
  return d;
}

std::optional<int64_t> int_of(Sema& s, const Value& v, const char* what) {
  auto i = parse_int(v.text);
  if (!i && !v.text.empty())
    s.diags.report(DiagId::invalid_literal, v.range,
                   std::string(what) + " must be a whole number, not '" + v.text + "'");
  return i;
}

// Normalises a condition/example literal for a field type; nullopt = mismatch.
std::optional<std::string> literal_for(FieldType t, const Value& v) {
  switch (t) {
    case FieldType::int_: {
      if (v.kind == Value::Kind::number || v.kind == Value::Kind::string) {
        if (auto i = parse_int(v.text)) return std::to_string(*i);
        if (v.text.rfind("0x", 0) == 0 || v.text.rfind("-0x", 0) == 0) {
          bool neg = v.text[0] == '-';
          auto h = normalize_hex(neg ? v.text.substr(1) : v.text);
          if (h) {
            long long n = std::stoll(h->substr(2), nullptr, 16);
            return std::to_string(neg ? -n : n);
          }
        }
      }
      return std::nullopt;
    }
    case FieldType::float_: {
      if (v.kind == Value::Kind::duration) {
        auto d = duration_seconds(v);
        if (d) {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%g", *d);
          return std::string(buf);
        }
        return std::nullopt;
      }
      if (parse_float(v.text) || parse_int(v.text)) return v.text;
      return std::nullopt;
    }
    case FieldType::hex:
      return normalize_hex(v.text);
    case FieldType::bdf:
      return normalize_bdf(v.text);
    case FieldType::ip:
      return normalize_ip(v.text);
    case FieldType::string:
      return v.text;
  }
  return std::nullopt;
}

// "unknown event" with did-you-mean over non-abstract signatures and latents.
void unknown_event(Sema& s, const Ident& id, const std::set<std::string>* allows) {
  std::vector<std::string> names;
  for (const auto& [n, r] : s.sigs)
    if (!r.abstract) names.push_back(n);
  for (const auto& [n, r] : s.latent_defs) names.push_back(n);
  std::string near = closest(id.text, names);
  std::string msg = "unknown event '" + id.text + "'";
  if (!near.empty()) msg += "; did you mean '" + near + "'?";
  auto& d = s.diags.report(DiagId::unknown_event, id.range, msg, allows);
  if (!near.empty()) {
    const Decl* decl = s.sigs.count(near) ? s.sigs[near].decl : s.latent_defs[near].decl;
    DiagEngine::note(d, decl->name.range, "'" + near + "' is declared here");
  }
}

}  // namespace reflex::compiler
