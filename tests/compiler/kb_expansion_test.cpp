// kb/chains.rfx and kb/gpu_chains.rfx are written with event groups and
// multi-cause rules. What the engine sees is their expansion: one compiled
// rule per (cause, effect) with its relation, window, skew and strength. That
// set is pinned by a golden file (sorted, one line per compiled rule, without
// rule names or lines), so rewording or regrouping those files cannot change
// a diagnosis unnoticed. After a deliberate change to the chains, rewrite it
// with REFLEX_UPDATE_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "reflex/compiler.h"

namespace reflex {
namespace {

namespace fs = std::filesystem;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string ref(const DeviceRef& d) {
  return std::string(d.side == DeviceRef::Side::cause ? "cause" : "effect") +
         (d.binding.empty() ? "" : "." + d.binding);
}

std::string line_of(const Rule& r) {
  std::string where;
  for (const auto& c : r.where)
    where +=
        (where.empty() ? "" : " and ") + ref(c.lhs) + " " + to_string(c.rel) + " " + ref(c.rhs);
  return r.cause + " -> " + r.effect + " | where " + (where.empty() ? "-" : where) + " | within " +
         num(r.min_s) + " .. " + num(r.max_s) + " | skew " + num(r.skew_s) +
         (r.lasting_s >= 0 ? " | while cause lasts + " + num(r.lasting_s) : "") + " | strength " +
         num(r.strength);
}

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  std::string l;
  while (std::getline(in, l))
    if (!l.empty() && l[0] != '#') out.push_back(l);
  return out;
}

TEST(KbExpansion, ChainsExpandToTheGoldenRuleSet) {
  CompileOptions o;
  o.check_examples = false;  // the expansion is all this test looks at
  o.check_hyperscan = false;
  o.analyse_graph = false;
  CompileResult r = compile({REFLEX_KB_DIR}, o);
  ASSERT_TRUE(r.kb.has_value()) << render_diagnostics(r, DiagFormat::text);

  std::vector<std::string> got;
  std::set<std::string> files;
  for (const Rule& rule : r.kb->rules) {
    std::string file = fs::path(rule.loc.file).filename().string();
    if (file != "chains.rfx" && file != "gpu_chains.rfx") continue;
    files.insert(file);
    got.push_back(line_of(rule));
  }
  ASSERT_EQ(files.size(), 2u) << "no rules found in kb/chains.rfx or kb/gpu_chains.rfx";
  std::sort(got.begin(), got.end());

  const std::string golden = std::string(REFLEX_TESTDATA_DIR) + "/kb_chains_expansions.txt";
  const char* update = std::getenv("REFLEX_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream out(golden);
    out << "# Sorted expansion of kb/chains.rfx + kb/gpu_chains.rfx (kb_expansion_test.cpp).\n";
    for (const auto& l : got) out << l << "\n";
    GTEST_SKIP() << "rewrote " << golden;
  }
  std::vector<std::string> want = read_lines(golden);
  std::sort(want.begin(), want.end());
  ASSERT_FALSE(want.empty()) << "missing " << golden << " (run with REFLEX_UPDATE_GOLDEN=1)";

  // Multiset difference, so a duplicated or dropped expansion shows up too.
  std::vector<std::string> missing, extra;
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(),
                      std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
  std::ostringstream diff;
  for (size_t i = 0; i < missing.size() && i < 20; ++i) diff << "\n- " << missing[i];
  for (size_t i = 0; i < extra.size() && i < 20; ++i) diff << "\n+ " << extra[i];
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(missing.empty() && extra.empty())
      << missing.size() << " expansions lost, " << extra.size() << " added:" << diff.str();
}

}  // namespace
}  // namespace reflex
