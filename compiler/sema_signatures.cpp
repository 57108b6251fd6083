// Pass: signatures type-checked and lowered to their typed form.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "reflex/pattern.h"
#include "reflex/values.h"
#include "reflex/vocabulary.h"
#include "sema.h"
#include "sema_util.h"
#include "sema_words.h"

namespace reflex::compiler {

namespace fs = std::filesystem;

namespace {

struct SigCtx {
  Sema& s;
  ResolvedSig& r;
  const std::set<std::string>* allows;
  std::map<std::string, FieldType> types;
  std::set<std::string> captures;
  bool captures_known = false;
  std::vector<std::pair<Ident, std::string>> uses;  // field, context
  const Member* on = nullptr;                       // `on KIND`, if any
  const Member* match = nullptr;                    // `match ...`, if any
  std::vector<std::string> from_order;              // `from` transports as written
  std::vector<Condition> whens;                     // each `when`, lowered
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
    if (!regex_check(c.s, in.regex, &err)) {
      c.s.diags.report(DiagId::regex_re2, c.s.diags.narrow(in.regex_range, re2_error_fragment(err)),
                       "RE2 rejects the regex: " + err, c.allows);
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

// The field types first (conditions and examples need them).
void sig_fields(SigCtx& c) {
  Sema& s = c.s;
  ResolvedSig& r = c.r;
  Signature& sig = r.sig;
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
}

// `match RE [then RE ...] [within N lines]`: each part resolved (named
// patterns expanded) and compiled both ways; errors point at the regex.
void sig_match(SigCtx& c, const Member* m) {
  Sema& s = c.s;
  ResolvedSig& r = c.r;
  Signature& sig = r.sig;
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
    return;
  }
  // Each part must compile both ways; errors point at the regex.
  for (size_t i = 0; i < sig.patterns.size() && i < m->regexes.size(); ++i) {
    const auto& e = m->regexes[i];
    bool only_refs =
        std::all_of(e.atoms.begin(), e.atoms.end(), [](const RegexAtom& a) { return a.is_ref; });
    std::string err;
    if (!regex_check(s, sig.patterns[i], &err)) {
      if (!only_refs)
        s.diags.report(DiagId::regex_re2, s.diags.narrow(e.range, re2_error_fragment(err)),
                       "RE2 rejects the pattern: " + err, c.allows);
      all_ok = false;
    } else if (s.options.check_regex && s.options.check_hyperscan &&
               !hyperscan_check(sig.patterns[i], &err)) {
      if (!only_refs)
        s.diags.report(DiagId::regex_hyperscan, e.range, "Hyperscan rejects the pattern: " + err,
                       c.allows);
      all_ok = false;
    } else {
      auto names = regex_capture_names(s, sig.patterns[i]);
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
}

// `locate KIND by FIELD [as B]`: the field's type must be one the kind can be
// located by.
void sig_locate(SigCtx& c, const Member* m) {
  Sema& s = c.s;
  ResolvedSig& r = c.r;
  Signature& sig = r.sig;
  if (m->idents.size() < 2) return;
  Locator loc;
  auto k = kind_of(s, m->idents[0], c.allows);
  if (!k) {
    r.ok = false;
    return;
  }
  loc.kind = *k;
  loc.field = m->idents[1].text;
  if (m->idents.size() > 2) loc.binding = m->idents[2].text;
  c.uses.push_back({m->idents[1], "`locate`"});
  auto t = c.types.count(loc.field) ? c.types[loc.field] : FieldType::string;
  const bool ok = locate_allows(t, loc.kind);
  if (!ok) {
    auto& d = s.diags.report(DiagId::locate_type, m->idents[0].range,
                             std::string("cannot locate a ") + to_string(loc.kind) + " by " +
                                 to_string(t) + " field '" + loc.field + "'",
                             c.allows);
    DiagEngine::note(d, diag_def(DiagId::locate_type).description);
  }
  sig.locators.push_back(loc);
}

// `description` / `action` / `check`: the text, and its {placeholders} as
// field uses.
void sig_text(SigCtx& c, const Member* m) {
  using K = Member::Kind;
  Signature& sig = c.r.sig;
  if (m->values.empty()) return;
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
}

// `baseline FIELD above|below F x median of N`: a numeric field, a sane factor.
void sig_baseline(SigCtx& c, const Member* m) {
  Sema& s = c.s;
  ResolvedSig& r = c.r;
  Signature& sig = r.sig;
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
      s.diags.report(DiagId::invalid_literal, m->values[0].range,
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
    if (t != c.types.end() && t->second != FieldType::int_ && t->second != FieldType::float_)
      s.diags.report(
          DiagId::condition_type, m->idents[0].range,
          "baseline needs a numeric field; '" + sig.baseline.field + "' is " + to_string(t->second),
          c.allows);
  }
}

// `aggregate`, `dedup` and `cleared_by`: counts and windows.
void sig_counting(SigCtx& c, const Member* m) {
  Sema& s = c.s;
  ResolvedSig& r = c.r;
  Signature& sig = r.sig;
  if (m->kind == Member::Kind::aggregate) {
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
  } else if (m->kind == Member::Kind::dedup) {
    if (!m->values.empty()) {
      if (auto d = duration_of(s, m->values[0])) sig.dedup.window_s = *d;
      for (const auto& f : m->idents) {
        sig.dedup.by_fields.push_back(f.text);
        c.uses.push_back({f, "`dedup by`"});
      }
    }
  } else {
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
  }
}

// One statement of the effective signature.
void sig_member(SigCtx& c, const Member* m) {
  Sema& s = c.s;
  ResolvedSig& r = c.r;
  Signature& sig = r.sig;
  using K = Member::Kind;
  switch (m->kind) {
    case K::on:
      c.on = m;
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
          c.from_order.push_back(w.text);
        } else {
          r.ok = false;
        }
      }
      if (mask) sig.sources = mask;
      break;
    }
    case K::match:
      c.match = m;
      sig_match(c, m);
      break;
    case K::when:
      if (m->cond) c.whens.push_back(lower_cond(c, *m->cond));
      break;
    case K::locate:
      sig_locate(c, m);
      break;
    case K::class_:
      if (!m->idents.empty()) {
        sig.fault_class = m->idents[0].text;
        check_class(s, r.decl->file, m->idents[0], c.allows);
      }
      break;
    case K::severity:
      if (!m->idents.empty())
        if (auto v = severity_of(s, m->idents[0], c.allows)) sig.severity = *v;
      break;
    case K::nature:
      if (!m->idents.empty()) {
        sig.nature = m->idents[0].text;
        check_nature(s, m->idents[0], c.allows);
      }
      break;
    case K::description:
    case K::action:
    case K::check:
      sig_text(c, m);
      break;
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
    case K::dedup:
    case K::cleared_by:
      sig_counting(c, m);
      break;
    case K::suspect:
      sig.suspect = true;
      break;
    case K::background:
      sig.background = true;
      break;
    case K::baseline:
      sig_baseline(c, m);
      break;
    default:
      break;
  }
}

// Examples after `from` is known (their default transport is its first).
void sig_examples(SigCtx& c) {
  Sema& s = c.s;
  ResolvedSig& r = c.r;
  Signature& sig = r.sig;
  Transport default_tx = kTransportKernel;
  if (!c.from_order.empty()) default_tx = *transport_from_string(c.from_order[0]);
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
}

// The `when`s as one condition; a concrete signature needs `on` and `match`.
void sig_complete(SigCtx& c) {
  Sema& s = c.s;
  ResolvedSig& r = c.r;
  Signature& sig = r.sig;
  if (c.whens.size() == 1) {
    sig.when = c.whens[0];
  } else if (c.whens.size() > 1) {
    Condition all;
    all.op = Condition::Op::and_;
    all.children = c.whens;
    sig.when = all;
  }
  if (!r.abstract && r.parent_ok) {
    if (c.on == nullptr) {
      s.diags.report(DiagId::missing_statement, r.decl->name.range,
                     "signature '" + sig.name + "' has no `on KIND`", c.allows);
      r.ok = false;
    }
    if (c.match == nullptr) {
      auto& d = s.diags.report(DiagId::missing_statement, r.decl->name.range,
                               "signature '" + sig.name + "' has no `match`", c.allows);
      DiagEngine::note(d, "a signature without a pattern can only be `abstract`");
      r.ok = false;
    }
  }
}

// A `suspect` only flags lines: it is never an event, so it cannot be a
// symptom, a storm or a multi-line message. Its `class` is only the emitter
// family's guess for an unclassified root (docs/language.md).
void check_suspect(SigCtx& c) {
  Sema& s = c.s;
  ResolvedSig& r = c.r;
  Signature& sig = r.sig;
  if (sig.suspect) {
    const char* bad = sig.background                     ? "background"
                      : sig.symptom != SymptomKind::none ? "symptom"
                      : sig.patterns.size() > 1          ? "match ... then"
                      : sig.aggregate.count_at_least > 0 ? "aggregate"
                      : !sig.baseline.field.empty()      ? "baseline"
                      : !sig.cleared_by.empty()          ? "cleared_by"
                                                         : nullptr;
    if (bad) {
      auto& d = s.diags.report(DiagId::misplaced_statement, r.decl->name.range,
                               "signature '" + sig.name + "' is a `suspect` and has `" + bad + "`",
                               c.allows);
      DiagEngine::note(d, "a suspect is never an event; it reports lines no signature recognised");
      r.ok = false;
    }
  }
}

// Captures used but never bound by a pattern.
void check_captures(SigCtx& c) {
  Sema& s = c.s;
  ResolvedSig& r = c.r;
  Signature& sig = r.sig;
  if (!r.abstract && c.captures_known) {
    std::vector<std::string> caps(c.captures.begin(), c.captures.end());
    for (const auto& [id, where] : c.uses) {
      if (c.captures.count(id.text)) continue;
      auto& d = s.diags.report(
          DiagId::field_not_captured, id.range,
          "field '" + id.text + "' used in " + where + " is not captured by the pattern", c.allows);
      std::string near = closest(id.text, caps);
      if (!near.empty()) DiagEngine::note(d, "did you mean '" + near + "'?");
      if (id.range.file != r.decl->file || r.decl->parent)
        DiagEngine::note(d, r.decl->name.range, "in signature '" + sig.name + "'");
      if (caps.empty())
        DiagEngine::note(d,
                         "the pattern has no named groups; capture with (?P<" + id.text + ">...)");
      r.ok = false;
    }
  }
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
    r.sig.name = name;
    r.sig.loc = to_loc(r.decl->name.range);
    sig_fields(c);
    for (const Member* m : r.members) sig_member(c, m);
    sig_examples(c);
    sig_complete(c);
    check_suspect(c);
    check_captures(c);
  }
}

}  // namespace reflex::compiler
