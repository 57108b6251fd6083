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

}  // namespace reflex::compiler
