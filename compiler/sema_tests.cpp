// Pass: tests that live with the rules.
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
            check_class(s, d->file, m.idents[0], nullptr);
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
