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
