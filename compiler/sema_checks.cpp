// Passes that type-check declarations and build their typed form:
// signatures, latents, rules, tests.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "reflex/pattern.h"
#include "reflex/values.h"
#include "reflex/vocabulary.h"
#include "sema.h"
#include "sema_util.h"

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
    case K::suspect:
      return "suspect";
    case K::background:
      return "background";
    case K::check:
      return "check";
    case K::cause:
      return "->";
    case K::where:
      return "where";
    case K::within:
      return "within";
    case K::skew:
      return "skew";
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

bool pattern_is_selective(const std::string& p) {
  if (!p.empty() && p[0] == '^') return true;
  if (p.size() >= 2 && p.back() == '$' && p[p.size() - 2] != '\\') return true;
  // Longest run of literal characters outside groups and classes.
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
    if (c == '(') ++depth;
    if (c == ')') depth = std::max(0, depth - 1);
    if (c == '|' && depth == 0) alternation = true;
    bool meta = std::string("()|.*+?{}^$").find(c) != std::string::npos;
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

namespace {

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
const std::vector<std::string> kTransports = {"kernel", "syslog", "journal", "app"};

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

struct SigCtx {
  Sema& s;
  ResolvedSig& r;
  const std::set<std::string>* allows;
  std::map<std::string, FieldType> types;
  std::set<std::string> captures;
  bool captures_known = false;
  std::vector<std::pair<Ident, std::string>> uses;  // field, context
};

Condition lower_cond(SigCtx& c, const Cond& in) {
  Condition out;
  switch (in.op) {
    case Cond::Op::and_:
      out.op = Condition::Op::and_;
      break;
    case Cond::Op::or_:
      out.op = Condition::Op::or_;
      break;
    case Cond::Op::not_:
      out.op = Condition::Op::not_;
      break;
    case Cond::Op::eq:
      out.op = Condition::Op::eq;
      break;
    case Cond::Op::ne:
      out.op = Condition::Op::ne;
      break;
    case Cond::Op::lt:
      out.op = Condition::Op::lt;
      break;
    case Cond::Op::le:
      out.op = Condition::Op::le;
      break;
    case Cond::Op::gt:
      out.op = Condition::Op::gt;
      break;
    case Cond::Op::ge:
      out.op = Condition::Op::ge;
      break;
    case Cond::Op::in:
      out.op = Condition::Op::in;
      break;
    case Cond::Op::not_in:
      out.op = Condition::Op::not_in;
      break;
    case Cond::Op::matches:
      out.op = Condition::Op::matches;
      break;
  }
  if (in.op == Cond::Op::and_ || in.op == Cond::Op::or_ || in.op == Cond::Op::not_) {
    for (const auto& k : in.kids) out.children.push_back(lower_cond(c, k));
    return out;
  }
  out.field = in.field.text;
  if (!in.field.text.empty()) c.uses.push_back({in.field, "the condition"});
  if (in.op == Cond::Op::matches) {
    std::string err;
    if (!re2_check(in.regex, &err)) {
      c.s.diags.report(DiagId::regex_re2, in.regex_range, "RE2 rejects the regex: " + err,
                       c.allows);
      c.r.ok = false;
    }
    out.values.push_back(in.regex);
    return out;
  }
  auto it = c.types.find(in.field.text);
  FieldType t = it == c.types.end() ? FieldType::string : it->second;
  bool ordered = in.op == Cond::Op::lt || in.op == Cond::Op::le || in.op == Cond::Op::gt ||
                 in.op == Cond::Op::ge;
  if (ordered && (t == FieldType::bdf || t == FieldType::ip)) {
    c.s.diags.report(DiagId::condition_type, in.range,
                     std::string("cannot order ") + to_string(t) + " field '" + in.field.text +
                         "'; use == or in",
                     c.allows);
  }
  for (const auto& v : in.values) {
    auto lit = literal_for(t, v);
    if (!lit) {
      auto& d = c.s.diags.report(DiagId::condition_type, v.range,
                                 std::string("'") + v.text + "' is not a valid " + to_string(t) +
                                     " value for field '" + in.field.text + "'",
                                 c.allows);
      if (it != c.types.end())
        DiagEngine::note(d, "field '" + in.field.text + "' is declared " + to_string(t));
      c.r.ok = false;
      continue;
    }
    out.values.push_back(*lit);
  }
  return out;
}

}  // namespace

// ---- signatures ----
void pass_signatures(Sema& s) {
  for (auto& [name, r] : s.sigs) {
    if (r.decl->broken) {
      r.ok = false;
      continue;
    }
    SigCtx c{s, r, &r.allows, {}, {}, false, {}};
    Signature& sig = r.sig;
    sig.name = name;
    sig.loc = to_loc(r.decl->name.range);
    const Member* on = nullptr;
    const Member* match = nullptr;
    std::vector<std::string> from_order;
    // First the field types (conditions and examples need them).
    for (const Member* m : r.members) {
      if (m->kind != Member::Kind::field || m->idents.size() < 2) continue;
      auto t = type_from(m->idents[1].text);
      if (!t) {
        bad_word(s, DiagId::unknown_type, m->idents[1], "field type",
                 {"int", "hex", "float", "bdf", "ip", "string"}, c.allows);
        r.ok = false;
        continue;
      }
      c.types[m->idents[0].text] = *t;
      // A child may redeclare a parent's field: the last declaration wins.
      auto same = std::find_if(sig.fields.begin(), sig.fields.end(),
                               [&](const FieldDecl& f) { return f.name == m->idents[0].text; });
      if (same != sig.fields.end())
        same->type = *t;
      else
        sig.fields.push_back(FieldDecl{m->idents[0].text, *t});
      c.uses.push_back({m->idents[0], "the field declaration"});
    }
    std::vector<Condition> whens;
    for (const Member* m : r.members) {
      using K = Member::Kind;
      switch (m->kind) {
        case K::on:
          on = m;
          if (!m->idents.empty()) {
            if (auto k = kind_of(s, m->idents[0], c.allows))
              sig.kind = *k;
            else
              r.ok = false;
          }
          break;
        case K::from: {
          uint8_t mask = 0;
          for (const auto& w : m->idents) {
            if (auto t = transport_of(s, w, c.allows)) {
              mask |= *t;
              from_order.push_back(w.text);
            } else {
              r.ok = false;
            }
          }
          if (mask) sig.sources = mask;
          break;
        }
        case K::match: {
          match = m;
          if (!m->values.empty()) {
            if (auto n = int_of(s, m->values[0], "`within N lines`")) {
              if (*n < 1 || *n > 1000)
                s.diags.report(DiagId::invalid_literal, m->values[0].range,
                               "`within N lines` needs 1 <= N <= 1000", c.allows);
              else
                sig.join_within_lines = static_cast<int>(*n);
            }
          }
          bool all_ok = true;
          for (const auto& e : m->regexes) {
            std::string text;
            std::set<std::string> visiting;
            if (!resolve_regex(s, e, r.decl->file, &text, &visiting)) {
              all_ok = false;
              continue;
            }
            sig.patterns.push_back(text);
          }
          if (!all_ok) {
            r.ok = false;
            break;
          }
          // Each part must compile both ways; errors point at the regex.
          for (size_t i = 0; i < sig.patterns.size() && i < m->regexes.size(); ++i) {
            const auto& e = m->regexes[i];
            bool only_refs = std::all_of(e.atoms.begin(), e.atoms.end(),
                                         [](const RegexAtom& a) { return a.is_ref; });
            std::string err;
            if (!re2_check(sig.patterns[i], &err)) {
              if (!only_refs)
                s.diags.report(DiagId::regex_re2, e.range, "RE2 rejects the pattern: " + err,
                               c.allows);
              all_ok = false;
            } else if (s.options.check_hyperscan && !hyperscan_check(sig.patterns[i], &err)) {
              if (!only_refs)
                s.diags.report(DiagId::regex_hyperscan, e.range,
                               "Hyperscan rejects the pattern: " + err, c.allows);
              all_ok = false;
            } else {
              auto names = pattern_capture_names(sig.patterns[i]);
              c.captures.insert(names.begin(), names.end());
              if (!pattern_is_selective(sig.patterns[i]) && !r.abstract) {
                auto& d = s.diags.report(DiagId::unanchored_pattern, e.range,
                                         "pattern has no anchor and no literal of 4 or more "
                                         "characters; it will be slow in the prefilter",
                                         c.allows);
                DiagEngine::note(d, "anchor it with ^ or $, or include a longer literal");
              }
            }
          }
          r.pattern_ok = all_ok;
          c.captures_known = all_ok;
          if (!all_ok) r.ok = false;
          break;
        }
        case K::when:
          if (m->cond) whens.push_back(lower_cond(c, *m->cond));
          break;
        case K::locate: {
          if (m->idents.size() < 2) break;
          Locator loc;
          auto k = kind_of(s, m->idents[0], c.allows);
          if (!k) {
            r.ok = false;
            break;
          }
          loc.kind = *k;
          loc.field = m->idents[1].text;
          if (m->idents.size() > 2) loc.binding = m->idents[2].text;
          c.uses.push_back({m->idents[1], "`locate`"});
          auto t = c.types.count(loc.field) ? c.types[loc.field] : FieldType::string;
          bool ok = false;
          switch (t) {
            case FieldType::bdf:
              ok = loc.kind == DK::gpu || loc.kind == DK::nic || loc.kind == DK::pcie_port ||
                   loc.kind == DK::nvswitch;
              break;
            case FieldType::string:
              ok = loc.kind != DK::pcie_port && loc.kind != DK::job;
              break;
            case FieldType::int_:
              ok = loc.kind == DK::gpu || loc.kind == DK::rank;
              break;
            case FieldType::ip:
              ok = loc.kind == DK::nic || loc.kind == DK::host;
              break;
            default:
              ok = false;
          }
          if (!ok) {
            auto& d = s.diags.report(DiagId::locate_type, m->idents[0].range,
                                     std::string("cannot locate a ") + to_string(loc.kind) +
                                         " by " + to_string(t) + " field '" + loc.field + "'",
                                     c.allows);
            DiagEngine::note(d, diag_def(DiagId::locate_type).description);
          }
          sig.locators.push_back(loc);
          break;
        }
        case K::class_:
          if (!m->idents.empty()) {
            sig.fault_class = m->idents[0].text;
            s.ref(r.decl->file, sig.fault_class);
            if (!s.classes.count(sig.fault_class)) {
              std::vector<std::string> names;
              for (const auto& [n, d] : s.classes) names.push_back(n);
              auto& d = s.diags.report(DiagId::unknown_class, m->idents[0].range,
                                       "unknown fault class '" + sig.fault_class + "'", c.allows);
              std::string near = closest(sig.fault_class, names);
              if (!near.empty())
                DiagEngine::note(d, s.classes.at(near)->name.range, "did you mean '" + near + "'?");
            }
          }
          break;
        case K::severity:
          if (!m->idents.empty()) {
            if (auto v = severity_from(m->idents[0].text))
              sig.severity = *v;
            else
              bad_word(s, DiagId::invalid_keyword_value, m->idents[0], "severity",
                       {"info", "warning", "minor", "major", "critical"}, c.allows);
          }
          break;
        case K::nature:
          if (!m->idents.empty()) {
            sig.nature = m->idents[0].text;
            check_nature(s, m->idents[0], c.allows);
          }
          break;
        case K::description:
        case K::action:
        case K::check: {
          if (m->values.empty()) break;
          const Value& v = m->values[0];
          (m->kind == K::description ? sig.description
           : m->kind == K::action    ? sig.action
                                     : sig.check) = v.text;
          // {placeholders} name fields (or device/host/event/count).
          size_t pos = 0;
          while ((pos = v.text.find('{', pos)) != std::string::npos) {
            size_t end = v.text.find('}', pos);
            if (end == std::string::npos) break;
            std::string f = v.text.substr(pos + 1, end - pos - 1);
            if (f != "device" && f != "host" && f != "event" && f != "count" && !f.empty()) {
              SrcRange at = v.range;
              // Column of the placeholder (exact when no escape precedes it).
              at.col = v.range.col + 1 + static_cast<int>(pos);
              at.len = static_cast<int>(f.size()) + 2;
              c.uses.push_back({Ident{f, at}, "`" + member_keyword(m->kind) + "`"});
            }
            pos = end + 1;
          }
          break;
        }
        case K::remediation:
          if (!m->idents.empty()) sig.remediation = m->idents[0].text;
          break;
        case K::symptom:
          if (!m->idents.empty()) {
            if (auto v = symptom_from(m->idents[0].text))
              sig.symptom = *v;
            else
              bad_word(s, DiagId::invalid_keyword_value, m->idents[0], "symptom",
                       {"crash", "hang", "launch", "slowdown"}, c.allows);
          }
          break;
        case K::aggregate:
          if (m->values.size() >= 2) {
            auto n = int_of(s, m->values[0], "`aggregate count`");
            auto d = duration_of(s, m->values[1]);
            if (n && *n < 1)
              s.diags.report(DiagId::invalid_literal, m->values[0].range,
                             "`aggregate count` needs at least 1", c.allows);
            if (n && d) {
              sig.aggregate.count_at_least = static_cast<int>(*n);
              sig.aggregate.within_s = *d;
            }
          }
          break;
        case K::dedup:
          if (!m->values.empty()) {
            if (auto d = duration_of(s, m->values[0])) sig.dedup.window_s = *d;
            for (const auto& f : m->idents) {
              sig.dedup.by_fields.push_back(f.text);
              c.uses.push_back({f, "`dedup by`"});
            }
          }
          break;
        case K::suspect:
          sig.suspect = true;
          break;
        case K::background:
          sig.background = true;
          break;
        case K::cleared_by:
          // Names are checked once every signature is known (pass_rules).
          if (!m->values.empty()) {
            if (auto d = duration_of(s, m->values[0])) {
              if (*d <= 0)
                s.diags.report(DiagId::negative_window, m->values[0].range,
                               "`cleared_by ... within` needs a positive duration", c.allows);
              sig.clear_within_s = *d;
            }
            sig.cleared_by.clear();
            for (const auto& n : m->idents) sig.cleared_by.push_back(n.text);
          }
          break;
        case K::baseline:
          if (!m->idents.empty() && m->values.size() >= 2) {
            sig.baseline.field = m->idents[0].text;
            sig.baseline.below = m->baseline_below;
            c.uses.push_back({m->idents[0], "`baseline`"});
            auto f = parse_float(m->values[0].text);
            if (!f) {
              if (auto i = parse_int(m->values[0].text)) f = static_cast<double>(*i);
            }
            if (!f || *f <= 0)
              s.diags.report(DiagId::invalid_literal, m->values[0].range,
                             "baseline factor must be a positive number", c.allows);
            else if (m->baseline_below && *f > 1)
              s.diags.report(DiagId::invalid_literal, m->values[0].range,
                             "`baseline ... below` needs a factor of at most 1 (e.g. 0.9 x median)",
                             c.allows);
            else if (!m->baseline_below && *f < 1)
              s.diags.report(
                  DiagId::invalid_literal, m->values[0].range,
                  "`baseline ... above` needs a factor of at least 1 (e.g. 1.1 x median)",
                  c.allows);
            else
              sig.baseline.factor = *f;
            auto n = int_of(s, m->values[1], "baseline window");
            if (n && *n < 1)
              s.diags.report(DiagId::invalid_literal, m->values[1].range,
                             "baseline window needs at least 1 value", c.allows);
            else if (n)
              sig.baseline.window = static_cast<int>(*n);
            auto t = c.types.find(sig.baseline.field);
            if (t != c.types.end() && t->second != FieldType::int_ &&
                t->second != FieldType::float_)
              s.diags.report(DiagId::condition_type, m->idents[0].range,
                             "baseline needs a numeric field; '" + sig.baseline.field + "' is " +
                                 to_string(t->second),
                             c.allows);
          }
          break;
        default:
          break;
      }
    }
    // Examples after `from` is known (their default transport is its first).
    Transport default_tx = kTransportKernel;
    if (!from_order.empty()) default_tx = *transport_from_string(from_order[0]);
    for (const Member* m : r.members) {
      if (m->kind != Member::Kind::example && m->kind != Member::Kind::near_miss) continue;
      if (m->values.empty()) continue;
      Example ex;
      ex.line = m->values[0].text;
      ex.loc = to_loc(m->values[0].range);
      ex.source = default_tx;
      if (m->has_example_source && !m->idents.empty()) {
        if (auto t = transport_of(s, m->idents[0], c.allows))
          ex.source = *t;
        else
          continue;
      }
      for (const auto& e : m->expects) {
        c.uses.push_back({e.field, "the example's expectations"});
        auto t = c.types.count(e.field.text) ? c.types[e.field.text] : FieldType::string;
        auto lit = literal_for(t, e.value);
        if (!lit) {
          s.diags.report(DiagId::condition_type, e.value.range,
                         std::string("'") + e.value.text + "' is not a valid " + to_string(t) +
                             " value for field '" + e.field.text + "'",
                         c.allows);
          continue;
        }
        ex.expect[e.field.text] = *lit;
      }
      if (m->kind == Member::Kind::example) {
        sig.examples.push_back(ex);
        r.example_ranges.push_back(m->values[0].range);
      } else {
        sig.near_misses.push_back(ex);
        r.near_miss_ranges.push_back(m->values[0].range);
      }
    }
    if (whens.size() == 1) {
      sig.when = whens[0];
    } else if (whens.size() > 1) {
      Condition all;
      all.op = Condition::Op::and_;
      all.children = whens;
      sig.when = all;
    }
    if (!r.abstract && r.parent_ok) {
      if (on == nullptr) {
        s.diags.report(DiagId::missing_statement, r.decl->name.range,
                       "signature '" + name + "' has no `on KIND`", c.allows);
        r.ok = false;
      }
      if (match == nullptr) {
        auto& d = s.diags.report(DiagId::missing_statement, r.decl->name.range,
                                 "signature '" + name + "' has no `match`", c.allows);
        DiagEngine::note(d, "a signature without a pattern can only be `abstract`");
        r.ok = false;
      }
    }
    // A `suspect` only flags lines: it is never an event, so it cannot be a
    // root cause, a symptom, a storm or a multi-line message.
    if (sig.suspect) {
      const char* bad = sig.background                     ? "background"
                        : !sig.fault_class.empty()         ? "class"
                        : sig.symptom != SymptomKind::none ? "symptom"
                        : sig.patterns.size() > 1          ? "match ... then"
                        : sig.aggregate.count_at_least > 0 ? "aggregate"
                        : !sig.baseline.field.empty()      ? "baseline"
                        : !sig.cleared_by.empty()          ? "cleared_by"
                                                           : nullptr;
      if (bad) {
        auto& d = s.diags.report(DiagId::misplaced_statement, r.decl->name.range,
                                 "signature '" + name + "' is a `suspect` and has `" + bad + "`",
                                 c.allows);
        DiagEngine::note(d,
                         "a suspect is never an event; it reports lines no signature recognised");
        r.ok = false;
      }
    }
    // Captures used but never bound by a pattern.
    if (!r.abstract && c.captures_known) {
      std::vector<std::string> caps(c.captures.begin(), c.captures.end());
      for (const auto& [id, where] : c.uses) {
        if (c.captures.count(id.text)) continue;
        auto& d = s.diags.report(
            DiagId::field_not_captured, id.range,
            "field '" + id.text + "' used in " + where + " is not captured by the pattern",
            c.allows);
        std::string near = closest(id.text, caps);
        if (!near.empty()) DiagEngine::note(d, "did you mean '" + near + "'?");
        if (id.range.file != r.decl->file || r.decl->parent)
          DiagEngine::note(d, r.decl->name.range, "in signature '" + name + "'");
        if (caps.empty())
          DiagEngine::note(
              d, "the pattern has no named groups; capture with (?P<" + id.text + ">...)");
        r.ok = false;
      }
    }
  }
}

// ---- latents ----
void pass_latents(Sema& s) {
  for (auto& [name, r] : s.latent_defs) {
    if (r.decl->broken) {
      r.ok = false;
      continue;
    }
    Latent& l = r.latent;
    l.name = name;
    l.loc = to_loc(r.decl->name.range);
    bool has_on = false;
    for (const Member* m : r.members) {
      using K = Member::Kind;
      switch (m->kind) {
        case K::on:
          has_on = true;
          if (!m->idents.empty()) {
            if (auto k = kind_of(s, m->idents[0], &r.allows))
              l.kind = *k;
            else
              r.ok = false;
          }
          break;
        case K::class_:
          if (!m->idents.empty()) {
            l.fault_class = m->idents[0].text;
            s.ref(r.decl->file, l.fault_class);
            if (!s.classes.count(l.fault_class)) {
              std::vector<std::string> names;
              for (const auto& [n, d] : s.classes) names.push_back(n);
              auto& d = s.diags.report(DiagId::unknown_class, m->idents[0].range,
                                       "unknown fault class '" + l.fault_class + "'", &r.allows);
              std::string near = closest(l.fault_class, names);
              if (!near.empty())
                DiagEngine::note(d, s.classes.at(near)->name.range, "did you mean '" + near + "'?");
            }
          }
          break;
        case K::severity:
          if (!m->idents.empty()) {
            if (auto v = severity_from(m->idents[0].text))
              l.severity = *v;
            else
              bad_word(s, DiagId::invalid_keyword_value, m->idents[0], "severity",
                       {"info", "warning", "minor", "major", "critical"}, &r.allows);
          }
          break;
        case K::nature:
          if (!m->idents.empty()) {
            l.nature = m->idents[0].text;
            check_nature(s, m->idents[0], &r.allows);
          }
          break;
        case K::description:
          if (!m->values.empty()) l.description = m->values[0].text;
          break;
        case K::check:
          if (!m->values.empty()) l.check = m->values[0].text;
          break;
        case K::action:
          if (!m->values.empty()) l.action = m->values[0].text;
          break;
        case K::remediation:
          if (!m->idents.empty()) l.remediation = m->idents[0].text;
          break;
        case K::silent:
          l.silent = true;
          break;
        default:
          break;
      }
    }
    if (!has_on) {
      s.diags.report(DiagId::missing_statement, r.decl->name.range,
                     "latent '" + name + "' has no `on KIND`", &r.allows);
      r.ok = false;
    }
  }
}

// ---- rules ----
namespace {

struct EventInfo {
  bool known = false;
  bool latent = false;
  bool abstract = false;
  DeviceKind kind = DeviceKind::host;
  const Decl* decl = nullptr;
  std::map<std::string, DeviceKind> bindings;
};

EventInfo event_info(Sema& s, const std::string& name) {
  EventInfo e;
  if (auto it = s.sigs.find(name); it != s.sigs.end()) {
    e.known = true;
    e.abstract = it->second.abstract;
    e.kind = it->second.sig.kind;
    e.decl = it->second.decl;
    for (const auto& l : it->second.sig.locators)
      if (!l.binding.empty()) e.bindings[l.binding] = l.kind;
  } else if (auto lt = s.latent_defs.find(name); lt != s.latent_defs.end()) {
    e.known = true;
    e.latent = true;
    e.kind = lt->second.latent.kind;
    e.decl = lt->second.decl;
  }
  return e;
}

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

// One event of a rule's cause or effect side, after group expansion.
struct SideEvent {
  std::string name;
  EventInfo info;
  const Ident* item = nullptr;  // the name written in the rule: the event or its group
};

// Expands one side of `->` (groups flattened, each event once). Reports unknown
// names, abstract events and, on the effect side, latents; false on an error.
bool expand_side(Sema& s, const std::string& rule, ResolvedRule& r,
                 const std::vector<const Ident*>& items, bool effect_side,
                 std::vector<SideEvent>* out) {
  const auto* allows = &r.allows;
  bool ok = true;
  std::map<std::string, const Ident*> seen;
  std::map<const Ident*, std::vector<std::string>> repeats;
  auto add = [&](const std::string& ev, const EventInfo& info, const Ident* item) {
    if (auto it = seen.find(ev); it != seen.end()) {
      repeats[item].push_back(ev);
      return;
    }
    seen[ev] = item;
    out->push_back({ev, info, item});
  };
  for (const Ident* item : items) {
    s.ref(r.decl->file, item->text);
    if (auto g = s.group_defs.find(item->text); g != s.group_defs.end()) {
      s.used_groups.insert(item->text);
      if (!g->second.ok) {  // reported at the group
        ok = false;
        continue;
      }
      for (const std::string& ev : g->second.events) {
        EventInfo info = event_info(s, ev);
        if (effect_side && info.latent) {
          auto& d = s.diags.report(
              DiagId::latent_effect, item->range,
              "latent '" + ev + "' (in group '" + item->text + "') cannot be an effect", allows);
          const Ident* origin = g->second.origin.at(ev);
          DiagEngine::note(d, origin->range,
                           origin->text == ev
                               ? "'" + ev + "' is listed in group '" + item->text + "' here"
                               : "'" + ev + "' comes into group '" + item->text + "' through '" +
                                     origin->text + "' here");
          DiagEngine::note(d, "a latent cause has no log line of its own");
          ok = false;
          continue;
        }
        add(ev, info, item);
      }
      continue;
    }
    EventInfo info = event_info(s, item->text);
    if (!info.known) {
      unknown_event_or_group(s, *item, allows);
      ok = false;
    } else if (info.abstract) {
      auto& d = s.diags.report(DiagId::unknown_event, item->range,
                               "'" + item->text + "' is abstract and never fires", allows);
      DiagEngine::note(d, info.decl->name.range, "declared abstract here");
      ok = false;
    } else if (effect_side && info.latent) {
      auto& d = s.diags.report(DiagId::latent_effect, item->range,
                               "latent '" + item->text + "' cannot be an effect", allows);
      DiagEngine::note(d, info.decl->name.range,
                       "a latent cause has no log line of its own; declared here");
      ok = false;
    } else {
      add(item->text, info, item);
    }
  }
  for (const auto& [item, events] : repeats) {
    const Ident* first = seen.at(events.front());
    std::string msg;
    if (events.size() == 1 && item->text == events.front() && first->text == item->text) {
      msg = "'" + item->text + "' is listed twice in rule '" + rule + "'";
    } else {
      std::string list;
      for (size_t i = 0; i < events.size() && i < 3; ++i)
        list += (i ? ", '" : "'") + events[i] + "'";
      if (events.size() > 3) list += " and " + std::to_string(events.size() - 3) + " more";
      msg = list + (events.size() == 1 ? " is" : " are") + " already " +
            (effect_side ? "an effect" : "a cause") + " of rule '" + rule + "'";
      if (item->text != events.front()) msg += " (through '" + item->text + "')";
    }
    auto& d = s.diags.report(DiagId::duplicate_member, item->range, msg, allows);
    DiagEngine::note(d, first->range, "first named here");
  }
  return ok;
}

}  // namespace

// `cleared_by` names another signature on the same kind of device (the heal is
// looked up on the very device of the event it clears).
void check_cleared_by(Sema& s) {
  for (auto& [name, r] : s.sigs) {
    if (r.abstract || !r.ok) continue;
    const Member* m = nullptr;
    for (const Member* x : r.members)
      if (x->kind == Member::Kind::cleared_by) m = x;
    if (!m) continue;
    for (const Ident& id : m->idents) {
      s.ref(r.decl->file, id.text);
      EventInfo ce = event_info(s, id.text);
      if (!ce.known) {
        unknown_event(s, id, &r.allows);
        r.ok = false;
      } else if (ce.latent || ce.abstract) {
        auto& d = s.diags.report(
            DiagId::unknown_event, id.range,
            "'" + id.text + "' has no log line of its own and cannot clear '" + name + "'",
            &r.allows);
        DiagEngine::note(d, ce.decl->name.range, "declared here");
        r.ok = false;
      } else if (ce.kind != r.sig.kind) {
        auto& d = s.diags.report(DiagId::relation_kinds, id.range,
                                 "'" + id.text + "' is on a " + std::string(to_string(ce.kind)) +
                                     ", '" + name + "' on a " + std::string(to_string(r.sig.kind)) +
                                     "; `cleared_by` needs an event on the same device",
                                 &r.allows);
        DiagEngine::note(d, ce.decl->name.range, "declared here");
        r.ok = false;
      } else if (id.text == name) {
        s.diags.report(DiagId::invalid_literal, id.range,
                       "'" + name + "' cannot clear itself (use `dedup` for repeats)", &r.allows);
        r.ok = false;
      }
    }
  }
}

void pass_rules(Sema& s) {
  check_cleared_by(s);
  for (auto& [name, r] : s.rule_defs) {
    if (r.decl->broken) {
      r.ok = false;
      continue;
    }
    const auto* allows = &r.allows;
    Rule base;
    base.name = name;
    base.loc = to_loc(r.decl->name.range);
    const Member* cause = nullptr;
    const Member* within = nullptr;
    for (const Member* m : r.members)
      if (m->kind == Member::Kind::cause) cause = m;
    if (cause == nullptr || cause->idents.size() < 2 || cause->causes == 0 ||
        cause->causes >= cause->idents.size()) {
      s.diags.report(DiagId::missing_statement, r.decl->name.range,
                     "rule '" + name + "' has no `CAUSE -> EFFECT`", allows);
      r.ok = false;
      continue;
    }
    // `a, g -> b, c`: every cause with every effect, groups flattened.
    std::vector<const Ident*> cause_items, effect_items;
    for (size_t i = 0; i < cause->idents.size(); ++i)
      (i < cause->causes ? cause_items : effect_items).push_back(&cause->idents[i]);
    std::vector<SideEvent> causes, effects;
    if (!expand_side(s, name, r, cause_items, false, &causes)) r.ok = false;
    if (!expand_side(s, name, r, effect_items, true, &effects)) r.ok = false;
    const bool several = causes.size() > 1 || effects.size() > 1;
    bool have_skew = false;
    for (const Member* m : r.members) {
      using K = Member::Kind;
      if (m->kind == K::within && m->values.size() == 2) {
        within = m;
        auto lo = duration_of(s, m->values[0]);
        auto hi = duration_of(s, m->values[1]);
        if (lo) base.min_s = *lo;
        if (hi) base.max_s = *hi;
        if (lo && hi && *lo > *hi) {
          s.diags.report(DiagId::inverted_window, m->range,
                         "window " + m->values[0].text + " .. " + m->values[1].text +
                             " is inverted (MIN > MAX)",
                         allows);
          r.ok = false;
        } else if (lo && hi && *lo == *hi) {
          s.diags.report(DiagId::empty_window, m->range,
                         "window " + m->values[0].text + " .. " + m->values[1].text +
                             " accepts a single exact delay",
                         allows);
        }
      } else if (m->kind == K::skew && !m->values.empty()) {
        if (auto d = duration_of(s, m->values[0])) {
          have_skew = true;
          if (*d < 0)
            s.diags.report(DiagId::invalid_literal, m->values[0].range, "skew cannot be negative",
                           allows);
          base.skew_s = *d;
        }
      } else if (m->kind == K::strength && !m->values.empty()) {
        auto v = parse_float(m->values[0].text);
        if (!v) {
          if (auto i = parse_int(m->values[0].text)) v = static_cast<double>(*i);
        }
        if (!v || !(*v > 0.0 && *v <= 1.0)) {
          s.diags.report(DiagId::strength_range, m->values[0].range,
                         "strength " + m->values[0].text + " is outside (0, 1]", allows);
          r.ok = false;
        } else {
          base.strength = *v;
        }
      }
    }
    if (within == nullptr) {
      auto& d = s.diags.report(DiagId::missing_statement, r.decl->name.range,
                               "rule '" + name + "' has no `within MIN .. MAX`", allows);
      DiagEngine::note(d, "the window bounds effect time minus cause time, e.g. within 0s .. 30s");
      r.ok = false;
    } else if (base.min_s < 0 && base.skew_s < -base.min_s) {
      auto& d = s.diags.report(DiagId::negative_window, within->range,
                               "window starts before the cause (" + within->values[0].text +
                                   ") but the skew is only " + seconds_text(base.skew_s),
                               allows);
      DiagEngine::note(d, have_skew ? "raise `skew` to at least -MIN"
                                    : "add `skew` of at least -MIN, or start the window at 0s");
      r.ok = false;
    }
    // where: relations between the two events' devices, checked for every
    // (cause, effect) pair the rule stands for.
    for (const Member* m : r.members) {
      if (m->kind != Member::Kind::where) continue;
      for (const auto& rel : m->relations) {
        RelationConstraint rc;
        auto relv = relation_from_string(rel.rel.text);
        if (!relv) {
          bad_word(s, DiagId::unknown_relation, rel.rel, "relation",
                   {"same", "same_host", "on", "below", "paired", "nvlink_peer", "serves",
                    "attached", "uplink", "runs_on", "uses", "in", "same_job", "mounts", "any"},
                   allows);
          r.ok = false;
          continue;
        }
        rc.rel = *relv;
        bool refs_ok = true;
        auto side = [&](const DevRef& d, DeviceRef* out) {
          if (d.side.text == "cause") {
            out->side = DeviceRef::Side::cause;
          } else if (d.side.text == "effect") {
            out->side = DeviceRef::Side::effect;
          } else {
            s.diags.report(DiagId::unknown_binding, d.side.range,
                           "expected `cause` or `effect`, found '" + d.side.text + "'", allows);
            refs_ok = false;
            return;
          }
          out->binding = d.binding.text;
          if (d.binding.text.empty()) return;
          const auto& events = out->side == DeviceRef::Side::cause ? causes : effects;
          for (const SideEvent& ev : events) {
            if (!ev.info.known || ev.info.bindings.count(d.binding.text)) continue;
            std::string who =
                events.size() == 1 ? "'" + d.side.text + "'" : d.side.text + " '" + ev.name + "'";
            auto& diag =
                s.diags.report(DiagId::unknown_binding, d.binding.range,
                               who + " has no device bound as '" + d.binding.text + "'", allows);
            DiagEngine::note(diag, ev.info.decl->name.range,
                             "bind one with `locate KIND by FIELD as " + d.binding.text +
                                 "` in this declaration");
            refs_ok = false;
          }
        };
        side(rel.lhs, &rc.lhs);
        side(rel.rhs, &rc.rhs);
        if (!refs_ok) {
          r.ok = false;
          continue;
        }
        std::set<std::pair<DeviceKind, DeviceKind>> reported;
        for (const SideEvent& c : causes) {
          for (const SideEvent& e : effects) {
            if (!c.info.known || !e.info.known) continue;
            auto kind_for = [&](const DeviceRef& d) {
              const EventInfo& ev = d.side == DeviceRef::Side::cause ? c.info : e.info;
              if (!d.binding.empty()) {
                auto b = ev.bindings.find(d.binding);
                if (b != ev.bindings.end()) return b->second;
              }
              return ev.kind;
            };
            DeviceKind a = kind_for(rc.lhs), b = kind_for(rc.rhs);
            if (relation_allows(rc.rel, a, b)) continue;
            r.ok = false;
            if (!reported.insert({a, b}).second) continue;
            auto& d = s.diags.report(
                DiagId::relation_kinds, rel.rel.range,
                std::string("relation '") + to_string(rc.rel) + "' is not defined between " +
                    to_string(a) + " (" + rel.lhs.side.text +
                    (rel.lhs.binding.text.empty() ? "" : "." + rel.lhs.binding.text) + ") and " +
                    to_string(b) + " (" + rel.rhs.side.text +
                    (rel.rhs.binding.text.empty() ? "" : "." + rel.rhs.binding.text) + ")",
                allows);
            DiagEngine::note(d, std::string("'") + to_string(rc.rel) + "' relates " +
                                    std::string(relation_info(rc.rel).kinds_text));
            if (several)
              DiagEngine::note(d, "for cause '" + c.name + "' and effect '" + e.name + "'");
          }
        }
        base.where.push_back(rc);
      }
    }
    // One compiled rule per pair. Names: RULE (one pair), RULE:EFFECT (one
    // cause), RULE:CAUSE->EFFECT (several causes); all carry the rule's location.
    for (const SideEvent& c : causes) {
      for (const SideEvent& e : effects) {
        Rule rule = base;
        rule.cause = c.name;
        rule.effect = e.name;
        if (causes.size() > 1)
          rule.name = name + ":" + c.name + "->" + e.name;
        else if (effects.size() > 1)
          rule.name = name + ":" + e.name;
        r.rules.push_back(rule);
        r.effect_ranges.push_back(e.item->range);
      }
    }
  }
}

// ---- tests that live with the rules ----
void pass_tests(Sema& s) {
  for (const auto& [title, d] : s.tests) {
    if (d->broken) continue;
    KbTest t;
    t.name = title;
    t.loc = to_loc(d->name.range);
    fs::path dir = fs::path(d->file).parent_path();
    auto resolve = [&](const Value& v) { return (dir / v.text).lexically_normal().string(); };
    for (const auto& m : d->members) {
      using K = Member::Kind;
      switch (m.kind) {
        case K::topology:
          if (m.values.empty()) break;
          if (m.inline_topology) {
            t.topology_json = m.values[0].text;
          } else {
            t.topology_path = resolve(m.values[0]);
            std::error_code ec;
            if (!fs::is_regular_file(t.topology_path, ec))
              s.diags.report(DiagId::test_file_missing, m.values[0].range,
                             "topology file '" + t.topology_path + "' not found");
          }
          break;
        case K::bundle:
          if (m.values.empty()) break;
          t.bundle_dir = resolve(m.values[0]);
          {
            std::error_code ec;
            if (!fs::is_directory(t.bundle_dir, ec))
              s.diags.report(DiagId::test_file_missing, m.values[0].range,
                             "bundle directory '" + t.bundle_dir + "' not found");
          }
          break;
        case K::log:
          if (m.values.size() >= 2 && !m.idents.empty()) {
            TestLog l;
            l.host = m.values[0].text;
            l.line = m.values[1].text;
            if (auto tx = transport_of(s, m.idents[0], nullptr)) l.source = *tx;
            t.logs.push_back(l);
          }
          break;
        case K::expect_root: {
          TestExpect e;
          e.kind = TestExpect::Kind::root;
          e.loc = to_loc(m.range);
          if (!m.values.empty()) e.device = m.values[0].text;
          if (!m.idents.empty()) {
            e.fault_class = m.idents[0].text;
            s.ref(d->file, e.fault_class);
            if (!s.classes.count(e.fault_class)) {
              std::vector<std::string> names;
              for (const auto& [n, c] : s.classes) names.push_back(n);
              auto& diag = s.diags.report(DiagId::unknown_class, m.idents[0].range,
                                          "unknown fault class '" + e.fault_class + "'");
              std::string near = closest(e.fault_class, names);
              if (!near.empty()) DiagEngine::note(diag, "did you mean '" + near + "'?");
            }
          }
          if (m.values.size() > 1) {
            auto n = parse_int(m.values[1].text);
            if (!n || *n < 1)
              s.diags.report(DiagId::invalid_literal, m.values[1].range,
                             "rank must be a whole number >= 1");
            else
              e.rank = static_cast<int>(*n);
          }
          t.expects.push_back(e);
          break;
        }
        case K::expect_no_root: {
          TestExpect e;
          e.kind = TestExpect::Kind::no_root;
          e.loc = to_loc(m.range);
          t.expects.push_back(e);
          break;
        }
        case K::expect_event: {
          TestExpect e;
          e.kind = TestExpect::Kind::event;
          e.loc = to_loc(m.range);
          if (!m.idents.empty()) {
            e.event = m.idents[0].text;
            s.ref(d->file, e.event);
            auto it = s.sigs.find(e.event);
            if (it == s.sigs.end() || it->second.abstract) unknown_event(s, m.idents[0], nullptr);
          }
          if (!m.values.empty()) e.device = m.values[0].text;
          t.expects.push_back(e);
          break;
        }
        default:
          break;
      }
    }
    s.tests_lowered.push_back(t);
  }
  std::stable_sort(s.tests_lowered.begin(), s.tests_lowered.end(),
                   [](const KbTest& a, const KbTest& b) {
                     return std::tie(a.loc.file, a.loc.line) < std::tie(b.loc.file, b.loc.line);
                   });
}

}  // namespace reflex::compiler
