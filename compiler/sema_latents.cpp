// Pass: latent causes type-checked and lowered.
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

namespace {

// `odd_one_out EVENT.FIELD among REL`: EVENT a concrete signature that captures
// FIELD, REL a relation that partitions devices into peer groups, and the
// odd device one the latent can stand on (its own kind, or its host).
bool odd_one_out_of(Sema& s, ResolvedLatent& r, const Member& m, OddOneOut* out) {
  if (m.idents.size() < 3) return false;
  const Ident& ev = m.idents[0];
  const Ident& field = m.idents[1];
  const Ident& rel = m.idents[2];
  s.ref(r.decl->file, ev.text);
  auto it = s.sigs.find(ev.text);
  if (it == s.sigs.end() || it->second.abstract) {
    unknown_event(s, ev, &r.allows);
    return false;
  }
  const ResolvedSig& sig = it->second;
  bool ok = true;
  if (sig.ok && sig.pattern_ok) {
    std::set<std::string> captures;
    for (const auto& p : sig.sig.patterns) {
      auto names = regex_capture_names(s, p);
      captures.insert(names.begin(), names.end());
    }
    if (!captures.count(field.text)) {
      auto& d = s.diags.report(DiagId::field_not_captured, field.range,
                               "signature '" + ev.text + "' captures no field '" + field.text + "'",
                               &r.allows);
      DiagEngine::note(d, sig.decl->name.range, "'" + ev.text + "' is declared here");
      ok = false;
    }
  }
  // Peers must fall into groups: each device is compared with the others of its group.
  static const std::vector<std::string> kAmong = {"same_host", "same_job", "any"};
  auto relv = relation_from_string(rel.text);
  if (!relv || std::find(kAmong.begin(), kAmong.end(), rel.text) == kAmong.end()) {
    bad_word(s, DiagId::unknown_relation, rel, "peer relation for `among`", kAmong, &r.allows);
    return false;
  }
  const DeviceKind ek = sig.sig.kind, lk = r.latent.kind;
  if (sig.ok && ek != lk && lk != DeviceKind::host) {
    auto& d = s.diags.report(DiagId::relation_kinds, ev.range,
                             std::string("the odd ") + to_string(ek) + " of '" + ev.text +
                                 "' cannot be the place of a latent `on " + to_string(lk) + "`",
                             &r.allows);
    DiagEngine::note(d, "a latent on the event's own kind, or `on host` (the odd device's host)");
    ok = false;
  }
  if (sig.ok && *relv != Relation::any && !relation_allows(*relv, ek, ek)) {
    s.diags.report(DiagId::relation_kinds, rel.range,
                   std::string("relation '") + rel.text + "' does not relate two " + to_string(ek) +
                       " devices (" + std::string(relation_info(*relv).kinds_text) + ")",
                   &r.allows);
    ok = false;
  }
  out->event = ev.text;
  out->field = field.text;
  out->among = *relv;
  return ok;
}

}  // namespace

// ---- latents ----

// `quorum N`, `quorum P%`, `quorum N and P%` (one of each at most).
static bool lower_quorum(Sema& s, const Member& m, Latent* l, const std::set<std::string>* allows) {
  bool ok = true;
  for (const Value& v : m.values) {
    const bool share = !v.text.empty() && v.text.back() == '%';
    const std::string num = share ? v.text.substr(0, v.text.size() - 1) : v.text;
    char* end = nullptr;
    const double x = std::strtod(num.c_str(), &end);
    const bool parsed = end && *end == '\0' && !num.empty();
    if (share) {
      if (!parsed || !(x > 0 && x <= 100) || l->quorum_share > 0) {
        s.diags.report(DiagId::quorum_range, v.range,
                       l->quorum_share > 0 ? "quorum share given twice"
                                           : "quorum share " + v.text + " is not in (0%, 100%]",
                       allows);
        ok = false;
        continue;
      }
      l->quorum_share = x / 100.0;
    } else {
      if (!parsed || x < 2 || x != std::floor(x) || x > 1e6 || l->quorum_devices > 0) {
        s.diags.report(DiagId::quorum_range, v.range,
                       l->quorum_devices > 0
                           ? "quorum device count given twice"
                           : "quorum " + v.text + " is not a whole number of devices >= 2",
                       allows);
        ok = false;
        continue;
      }
      l->quorum_devices = static_cast<int>(x);
    }
  }
  return ok;
}

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
    std::vector<const Member*> odd;
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
            check_class(s, r.decl->file, m->idents[0], &r.allows);
          }
          break;
        case K::severity:
          if (!m->idents.empty())
            if (auto v = severity_of(s, m->idents[0], &r.allows)) l.severity = *v;
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
        case K::quorum:
          if (!lower_quorum(s, *m, &l, &r.allows)) r.ok = false;
          break;
        case K::odd_one_out:
          odd.push_back(m);  // after the loop: the check needs `on`
          break;
        default:
          break;
      }
    }
    for (const Member* m : odd) {
      OddOneOut o;
      if (odd_one_out_of(s, r, *m, &o))
        l.odd_one_out.push_back(o);
      else
        r.ok = false;
    }
    if (!has_on) {
      s.diags.report(DiagId::missing_statement, r.decl->name.range,
                     "latent '" + name + "' has no `on KIND`", &r.allows);
      r.ok = false;
    }
  }
}

}  // namespace reflex::compiler
