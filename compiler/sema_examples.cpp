// Inline examples and near-misses, run through the same matcher as production
// (reflex/signature_match.h), and lines that two signatures would both claim.
#include <memory>

#include "reflex/signature_match.h"
#include "reflex/values.h"
#include "sema.h"

namespace reflex::compiler {

namespace {

std::string transports_text(uint8_t mask) {
  std::string s;
  for (Transport t : {kTransportKernel, kTransportSyslog, kTransportJournal, kTransportApp})
    if (mask & t) s += std::string(s.empty() ? "" : ", ") + transport_name(t);
  return s;
}

// Whether the value a `locate` captured names a device of that kind the way
// the runtime resolves it (runtime/ingest/locate.cpp): a GPU by index or PCI
// address, a PCIe port by PCI address. Other kinds are found by any name.
bool names_a_device(const Locator& loc, const std::string& value) {
  switch (loc.kind) {
    case DeviceKind::gpu:
      return normalize_bdf(value) || parse_int(value);
    case DeviceKind::pcie_port:
      return normalize_bdf(value).has_value();
    default:
      return true;
  }
}

// W012: an example whose located value the runtime could only keep as a
// placeholder (`locate gpu by code` over an error code).
void check_located_values(Sema& s, const ResolvedSig& r, const SrcRange& at,
                          const FieldValues& caps) {
  for (const auto& loc : r.sig.locators) {
    for (const auto& [k, v] : caps) {
      if (k != loc.field || names_a_device(loc, v)) continue;
      auto& d =
          s.diags.report(DiagId::locate_value, at,
                         std::string("example locates a ") + to_string(loc.kind) + " by " +
                             loc.field + " = \"" + v + "\", which names no " + to_string(loc.kind),
                         &r.allows);
      DiagEngine::note(d, diag_def(DiagId::locate_value).description);
      break;
    }
  }
}

}  // namespace

void pass_examples(Sema& s) {
  if (!s.options.check_examples) return;
  std::map<std::string, std::unique_ptr<CompiledSignature>> compiled;
  for (auto& [name, r] : s.sigs) {
    if (r.abstract || !r.ok || !r.pattern_ok) continue;
    std::string err;
    auto cs = CompiledSignature::compile(r.sig, &err);
    if (!cs) {
      s.diags.report(DiagId::regex_re2, r.decl->name.range,
                     "signature '" + name + "' does not compile: " + err, &r.allows);
      r.ok = false;
      continue;
    }
    compiled[name] = std::move(cs);
  }
  // The ambiguity check is examples x signatures; a real KB needs ~10^5
  // matches. Bound it so a pathological unit cannot stall the checker.
  size_t budget = 4'000'000;
  for (auto& [name, cs] : compiled) {
    ResolvedSig& r = s.sigs[name];
    const Signature& sig = r.sig;
    for (size_t i = 0; i < sig.examples.size(); ++i) {
      const Example& ex = sig.examples[i];
      const SrcRange& at = r.example_ranges[i];
      if (!cs->accepts_transport(ex.source)) {
        auto& d = s.diags.report(DiagId::example_transport, at,
                                 std::string("example arrives through '") +
                                     transport_name(ex.source) + "', which is not in `from`",
                                 &r.allows);
        DiagEngine::note(d, "signature '" + name + "' accepts " + transports_text(sig.sources));
        continue;
      }
      FieldValues caps;
      std::string why;
      if (!match_text(*cs, ex.line, ex.source, &caps, &why)) {
        auto& d = s.diags.report(DiagId::example_no_match, at,
                                 "example does not match signature '" + name + "'", &r.allows);
        DiagEngine::note(d, "why: " + why);
        for (size_t p = 0; p < sig.patterns.size(); ++p)
          DiagEngine::note(
              d, "pattern" +
                     (sig.patterns.size() > 1 ? " " + std::to_string(p + 1) : std::string()) +
                     ": /" + sig.patterns[p] + "/");
        continue;
      }
      check_located_values(s, r, at, caps);
      for (const auto& [field, want] : ex.expect) {
        const std::string* got = nullptr;
        for (const auto& [k, v] : caps)
          if (k == field) {
            got = &v;
            break;
          }
        if (got == nullptr) {
          s.diags.report(
              DiagId::example_field_value, at,
              "example expects " + field + " = \"" + want + "\" but the field was not captured",
              &r.allows);
        } else if (*got != want) {
          s.diags.report(
              DiagId::example_field_value, at,
              "example expects " + field + " = \"" + want + "\" but got \"" + *got + "\"",
              &r.allows);
        }
      }
      // Another signature that accepts the same line: both events would fire.
      for (const auto& [other, ocs] : compiled) {
        if (other == name) continue;
        // A suspect overlaps signatures by design: it only reports lines none took.
        if (r.sig.suspect || s.sigs[other].sig.suspect) continue;
        if (budget == 0) break;
        --budget;
        FieldValues ocaps;
        if (!match_text(*ocs, ex.line, ex.source, &ocaps, nullptr)) continue;
        const ResolvedSig& o = s.sigs[other];
        std::set<std::string> allows = r.allows;
        allows.insert(o.allows.begin(), o.allows.end());
        auto& d =
            s.diags.report(DiagId::ambiguous_match, at,
                           "example of '" + name + "' is also matched by '" + other + "'", &allows);
        DiagEngine::note(d, o.decl->name.range, "'" + other + "' is declared here");
        DiagEngine::note(d,
                         "narrow one pattern or its `when`, or `allow ambiguous-match` if both "
                         "events are intended");
      }
    }
    for (size_t i = 0; i < sig.near_misses.size(); ++i) {
      const Example& ex = sig.near_misses[i];
      FieldValues caps;
      if (!match_text(*cs, ex.line, ex.source, &caps, nullptr)) continue;
      auto& d = s.diags.report(DiagId::near_miss_matches, r.near_miss_ranges[i],
                               "near-miss is matched by signature '" + name + "'", &r.allows);
      std::string fields;
      for (const auto& [k, v] : caps) fields += (fields.empty() ? "" : ", ") + k + " = " + v;
      if (!fields.empty()) DiagEngine::note(d, "captured: " + fields);
    }
  }
}

}  // namespace reflex::compiler
