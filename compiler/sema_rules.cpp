// Pass: causal rules (events, windows, `where` relations, cleared_by).
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
using DK = DeviceKind;

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

namespace {

// One rule while it is checked: its sides, and the fields every compiled
// (cause, effect) pair shares.
struct RuleCtx {
  Sema& s;
  const std::string& name;
  ResolvedRule& r;
  const std::set<std::string>* allows;
  Rule base;
  std::vector<SideEvent> causes, effects;
};

// `a, g -> b, c`: every cause with every effect, groups flattened. False
// (reported) when the rule has no usable `CAUSE -> EFFECT`.
bool rule_sides(RuleCtx& c) {
  const Member* cause = nullptr;
  for (const Member* m : c.r.members)
    if (m->kind == Member::Kind::cause) cause = m;
  if (cause == nullptr || cause->idents.size() < 2 || cause->causes == 0 ||
      cause->causes >= cause->idents.size()) {
    c.s.diags.report(DiagId::missing_statement, c.r.decl->name.range,
                     "rule '" + c.name + "' has no `CAUSE -> EFFECT`", c.allows);
    c.r.ok = false;
    return false;
  }
  std::vector<const Ident*> cause_items, effect_items;
  for (size_t i = 0; i < cause->idents.size(); ++i)
    (i < cause->causes ? cause_items : effect_items).push_back(&cause->idents[i]);
  if (!expand_side(c.s, c.name, c.r, cause_items, false, &c.causes)) c.r.ok = false;
  if (!expand_side(c.s, c.name, c.r, effect_items, true, &c.effects)) c.r.ok = false;
  return true;
}

// `while cause lasts [+ DUR]`: DUR >= 0 (default 0), and every cause has a
// log line (a latent has no first..last to bound anything by).
void lasting_bound(RuleCtx& c, const Member& m) {
  double d = 0;
  if (!m.values.empty()) {
    auto v = duration_of(c.s, m.values[0]);
    if (!v) return;
    if (*v < 0) {
      c.s.diags.report(
          DiagId::lasting_cause, m.values[0].range,
          "`while cause lasts + " + m.values[0].text + "`: the duration cannot be negative",
          c.allows);
      c.r.ok = false;
      return;
    }
    d = *v;
  }
  for (const SideEvent& ce : c.causes) {
    if (!ce.info.latent) continue;
    auto& diag =
        c.s.diags.report(DiagId::lasting_cause, m.range,
                         "`while cause lasts`: cause '" + ce.name +
                             "' is a latent, with no log line whose span could bound the effect",
                         c.allows);
    DiagEngine::note(diag, ce.info.decl->name.range, "declared here");
    c.r.ok = false;
    return;
  }
  c.base.lasting_s = d;
}

// `within MIN .. MAX`, `skew` and `strength` into the base rule; the window
// must exist, be in order, and not start before the cause beyond the skew.
void rule_timing(RuleCtx& c) {
  Sema& s = c.s;
  Rule& base = c.base;
  const Member* within = nullptr;
  bool have_skew = false;
  for (const Member* m : c.r.members) {
    using K = Member::Kind;
    if (m->kind == K::within && m->values.size() == 2) {
      within = m;
      auto lo = duration_of(s, m->values[0]);
      auto hi = duration_of(s, m->values[1]);
      if (lo) base.min_s = *lo;
      if (hi) base.max_s = *hi;
      if (lo && hi && *lo > *hi) {
        s.diags.report(
            DiagId::inverted_window, m->range,
            "window " + m->values[0].text + " .. " + m->values[1].text + " is inverted (MIN > MAX)",
            c.allows);
        c.r.ok = false;
      } else if (lo && hi && *lo == *hi) {
        s.diags.report(DiagId::empty_window, m->range,
                       "window " + m->values[0].text + " .. " + m->values[1].text +
                           " accepts a single exact delay",
                       c.allows);
      }
    } else if (m->kind == K::skew && !m->values.empty()) {
      if (auto d = duration_of(s, m->values[0])) {
        have_skew = true;
        if (*d < 0)
          s.diags.report(DiagId::invalid_literal, m->values[0].range, "skew cannot be negative",
                         c.allows);
        base.skew_s = *d;
      }
    } else if (m->kind == K::while_cause_lasts) {
      lasting_bound(c, *m);
    } else if (m->kind == K::strength && !m->values.empty()) {
      auto v = parse_float(m->values[0].text);
      if (!v) {
        if (auto i = parse_int(m->values[0].text)) v = static_cast<double>(*i);
      }
      if (!v || !(*v > 0.0 && *v <= 1.0)) {
        s.diags.report(DiagId::strength_range, m->values[0].range,
                       "strength " + m->values[0].text + " is outside (0, 1]", c.allows);
        c.r.ok = false;
      } else {
        base.strength = *v;
      }
    }
  }
  if (within == nullptr) {
    auto& d = s.diags.report(DiagId::missing_statement, c.r.decl->name.range,
                             "rule '" + c.name + "' has no `within MIN .. MAX`", c.allows);
    DiagEngine::note(d, "the window bounds effect time minus cause time, e.g. within 0s .. 30s");
    c.r.ok = false;
  } else if (base.min_s < 0 && base.skew_s < -base.min_s) {
    auto& d = s.diags.report(DiagId::negative_window, within->range,
                             "window starts before the cause (" + within->values[0].text +
                                 ") but the skew is only " + seconds_text(base.skew_s),
                             c.allows);
    DiagEngine::note(d, have_skew ? "raise `skew` to at least -MIN"
                                  : "add `skew` of at least -MIN, or start the window at 0s");
    c.r.ok = false;
  }
}

// One device of a `where` relation: `cause` or `effect`, optionally `.binding`
// (bound by a `locate ... as` in every event of that side). False (reported)
// when it names nothing.
bool where_ref(RuleCtx& c, const DevRef& d, DeviceRef* out) {
  if (d.side.text == "cause") {
    out->side = DeviceRef::Side::cause;
  } else if (d.side.text == "effect") {
    out->side = DeviceRef::Side::effect;
  } else {
    c.s.diags.report(DiagId::unknown_binding, d.side.range,
                     "expected `cause` or `effect`, found '" + d.side.text + "'", c.allows);
    return false;
  }
  out->binding = d.binding.text;
  if (d.binding.text.empty()) return true;
  bool ok = true;
  const auto& events = out->side == DeviceRef::Side::cause ? c.causes : c.effects;
  for (const SideEvent& ev : events) {
    if (!ev.info.known || ev.info.bindings.count(d.binding.text)) continue;
    std::string who =
        events.size() == 1 ? "'" + d.side.text + "'" : d.side.text + " '" + ev.name + "'";
    auto& diag =
        c.s.diags.report(DiagId::unknown_binding, d.binding.range,
                         who + " has no device bound as '" + d.binding.text + "'", c.allows);
    DiagEngine::note(
        diag, ev.info.decl->name.range,
        "bind one with `locate KIND by FIELD as " + d.binding.text + "` in this declaration");
    ok = false;
  }
  return ok;
}

// The relation must be defined between the two devices' kinds for every
// (cause, effect) pair the rule stands for (each kind pair reported once).
void check_relation_kinds(RuleCtx& c, const RelationExpr& rel, const RelationConstraint& rc) {
  const bool several = c.causes.size() > 1 || c.effects.size() > 1;
  std::set<std::pair<DeviceKind, DeviceKind>> reported;
  for (const SideEvent& ce : c.causes) {
    for (const SideEvent& e : c.effects) {
      if (!ce.info.known || !e.info.known) continue;
      auto kind_for = [&](const DeviceRef& d) {
        const EventInfo& ev = d.side == DeviceRef::Side::cause ? ce.info : e.info;
        if (!d.binding.empty()) {
          auto b = ev.bindings.find(d.binding);
          if (b != ev.bindings.end()) return b->second;
        }
        return ev.kind;
      };
      DeviceKind a = kind_for(rc.lhs), b = kind_for(rc.rhs);
      if (relation_allows(rc.rel, a, b)) continue;
      c.r.ok = false;
      if (!reported.insert({a, b}).second) continue;
      auto& d = c.s.diags.report(
          DiagId::relation_kinds, rel.rel.range,
          std::string("relation '") + to_string(rc.rel) + "' is not defined between " +
              to_string(a) + " (" + rel.lhs.side.text +
              (rel.lhs.binding.text.empty() ? "" : "." + rel.lhs.binding.text) + ") and " +
              to_string(b) + " (" + rel.rhs.side.text +
              (rel.rhs.binding.text.empty() ? "" : "." + rel.rhs.binding.text) + ")",
          c.allows);
      DiagEngine::note(d, std::string("'") + to_string(rc.rel) + "' relates " +
                              std::string(relation_info(rc.rel).kinds_text));
      if (several) DiagEngine::note(d, "for cause '" + ce.name + "' and effect '" + e.name + "'");
    }
  }
}

// The relation words, in the vocabulary's order (for "valid: ..." notes).
const std::vector<std::string>& relation_words() {
  static const std::vector<std::string> words = [] {
    std::vector<std::string> v;
    for (const RelationInfo& i : kRelations) v.emplace_back(i.name);
    return v;
  }();
  return words;
}

// where: relations between the two events' devices.
void rule_where(RuleCtx& c) {
  for (const Member* m : c.r.members) {
    if (m->kind != Member::Kind::where) continue;
    for (const auto& rel : m->relations) {
      RelationConstraint rc;
      auto relv = relation_from_string(rel.rel.text);
      if (!relv) {
        bad_word(c.s, DiagId::unknown_relation, rel.rel, "relation", relation_words(), c.allows);
        c.r.ok = false;
        continue;
      }
      rc.rel = *relv;
      const bool lhs_ok = where_ref(c, rel.lhs, &rc.lhs);
      const bool rhs_ok = where_ref(c, rel.rhs, &rc.rhs);
      if (!lhs_ok || !rhs_ok) {
        c.r.ok = false;
        continue;
      }
      check_relation_kinds(c, rel, rc);
      c.base.where.push_back(rc);
    }
  }
}

// One compiled rule per pair. Names: RULE (one pair), RULE:EFFECT (one
// cause), RULE:CAUSE->EFFECT (several causes); all carry the rule's location.
void emit_rules(RuleCtx& c) {
  for (const SideEvent& ce : c.causes) {
    for (const SideEvent& e : c.effects) {
      Rule rule = c.base;
      rule.cause = ce.name;
      rule.effect = e.name;
      if (c.causes.size() > 1)
        rule.name = c.name + ":" + ce.name + "->" + e.name;
      else if (c.effects.size() > 1)
        rule.name = c.name + ":" + e.name;
      c.r.rules.push_back(rule);
      c.r.effect_ranges.push_back(e.item->range);
    }
  }
}

}  // namespace

void pass_rules(Sema& s) {
  check_cleared_by(s);
  for (auto& [name, r] : s.rule_defs) {
    if (r.decl->broken) {
      r.ok = false;
      continue;
    }
    RuleCtx c{s, name, r, &r.allows, {}, {}, {}};
    c.base.name = name;
    c.base.loc = to_loc(r.decl->name.range);
    if (!rule_sides(c)) continue;
    rule_timing(c);
    rule_where(c);
    emit_rules(c);
  }
}

}  // namespace reflex::compiler
