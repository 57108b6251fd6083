// Event groups and multi-cause rules (docs/language.md §6, §6.1): pure
// expansion at lowering, one compiled rule per (cause, effect) pair.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "test_util.h"

namespace reflex {
namespace {

namespace fs = std::filesystem;
using testing::check_text;
using testing::dump;
using testing::has_code;

const char* kEvents = R"(reflex 1
signature xid79 { on gpu from kernel match /NVRM: Xid .*: 79,/ }
signature xid48 { on gpu from kernel match /NVRM: Xid .*: 48,/ }
signature xid62 { on gpu from kernel match /NVRM: Xid .*: 62,/ }
signature nccl_timeout { on rank from app match /Watchdog caught collective operation timeout/ }
signature nccl_abort { on rank from app match /NCCL communicator was aborted/ }
signature torch_failed { on rank from app match /NCCL operations have failed/ }
latent host_died { on host silent }
)";

std::set<std::string> pairs(const KnowledgeBase& kb) {
  std::set<std::string> out;
  for (const Rule& r : kb.rules) out.insert(r.cause + "->" + r.effect);
  return out;
}

const Rule* find_rule(const KnowledgeBase& kb, const std::string& name) {
  for (const Rule& r : kb.rules)
    if (r.name == name) return &r;
  return nullptr;
}

TEST(Groups, ExpandToEveryCauseEffectPair) {
  CompileResult r = check_text(std::string(kEvents) + R"(
group gpu_lost = xid79, xid48
group gpu_faults = gpu_lost, xid62
group rank_symptoms = nccl_timeout, nccl_abort
rule gpu_fault_fails_rank {
  gpu_faults -> rank_symptoms, torch_failed
  where effect runs_on cause
  within 0s .. 10m
  skew 5s
  strength 0.8
}
)");
  ASSERT_TRUE(r.kb) << dump(r);
  EXPECT_EQ(r.warnings(), 0) << dump(r);
  const KnowledgeBase& kb = *r.kb;
  ASSERT_EQ(kb.rules.size(), 9u);
  std::set<std::string> want;
  for (const char* c : {"xid79", "xid48", "xid62"})
    for (const char* e : {"nccl_timeout", "nccl_abort", "torch_failed"})
      want.insert(std::string(c) + "->" + e);
  EXPECT_EQ(pairs(kb), want);
  for (const Rule& rule : kb.rules) {
    // Every expansion carries the declaration's parameters and location.
    EXPECT_EQ(rule.loc.line, 13) << rule.name;  // the `rule` line
    EXPECT_DOUBLE_EQ(rule.max_s, 600);
    EXPECT_DOUBLE_EQ(rule.skew_s, 5);
    EXPECT_DOUBLE_EQ(rule.strength, 0.8);
    ASSERT_EQ(rule.where.size(), 1u);
    EXPECT_EQ(rule.where[0].rel, Relation::runs_on);
    EXPECT_EQ(rule.name, "gpu_fault_fails_rank:" + rule.cause + "->" + rule.effect);
  }
}

TEST(Groups, NamesOfExpansions) {
  CompileResult r = check_text(std::string(kEvents) + R"(
group rank_symptoms = nccl_timeout, nccl_abort
group only_xid79 = xid79
rule one_pair { only_xid79 -> torch_failed within 0s .. 1m }
rule one_cause { xid79 -> rank_symptoms within 0s .. 1m }
rule two_causes { xid48, xid62 -> torch_failed within 0s .. 1m }
)");
  ASSERT_TRUE(r.kb) << dump(r);
  const KnowledgeBase& kb = *r.kb;
  EXPECT_NE(find_rule(kb, "one_pair"), nullptr);
  EXPECT_NE(find_rule(kb, "one_cause:nccl_timeout"), nullptr);
  EXPECT_NE(find_rule(kb, "one_cause:nccl_abort"), nullptr);
  EXPECT_NE(find_rule(kb, "two_causes:xid48->torch_failed"), nullptr);
  EXPECT_NE(find_rule(kb, "two_causes:xid62->torch_failed"), nullptr);
  EXPECT_EQ(kb.rules.size(), 5u);
}

TEST(Groups, SameExpansionAsWrittenOut) {
  // A refactoring into groups is invisible to the compiled knowledge base.
  CompileResult grouped = check_text(std::string(kEvents) + R"(
group gpu_lost = xid79, xid48
group rank_symptoms = nccl_timeout, nccl_abort
rule lost { gpu_lost, host_died -> rank_symptoms within 0s .. 10m strength 0.7 }
)");
  CompileResult flat = check_text(std::string(kEvents) + R"(
rule a { xid79 -> nccl_timeout, nccl_abort within 0s .. 10m strength 0.7 }
rule b { xid48 -> nccl_timeout, nccl_abort within 0s .. 10m strength 0.7 }
rule c { host_died -> nccl_timeout, nccl_abort within 0s .. 10m strength 0.7 }
)");
  ASSERT_TRUE(grouped.kb) << dump(grouped);
  ASSERT_TRUE(flat.kb) << dump(flat);
  EXPECT_EQ(pairs(*grouped.kb), pairs(*flat.kb));
  EXPECT_EQ(grouped.kb->rules.size(), flat.kb->rules.size());
}

TEST(Groups, DuplicatesCountOnce) {
  CompileResult r = check_text(std::string(kEvents) + R"(
group gpu_lost = xid79, xid48
rule r { gpu_lost, xid79 -> nccl_timeout within 0s .. 10m }
)");
  ASSERT_TRUE(r.kb) << dump(r);
  EXPECT_TRUE(has_code(r, "W010")) << dump(r);
  EXPECT_EQ(r.kb->rules.size(), 2u);
}

TEST(Groups, LatentThroughAGroupIsNoEffect) {
  CompileResult r = check_text(std::string(kEvents) + R"(
group hosts = host_died
rule r { xid79 -> hosts within 0s .. 10m }
)");
  EXPECT_FALSE(r.kb);
  EXPECT_TRUE(has_code(r, "E036")) << dump(r);
}

TEST(Groups, BindingNeededInEveryEffect) {
  CompileResult r = check_text(R"(reflex 1
signature peer_err {
  on rank
  from app
  match /peer (?P<ip>\d+\.\d+\.\d+\.\d+)/
  field ip: ip
  locate nic by ip as peer
}
signature other_err {
  on rank
  from app
  match /other (?P<ip>\d+\.\d+\.\d+\.\d+)/
  field ip: ip
  locate nic by ip as peer
}
signature link_down { on nic from kernel match /mlx5_core .*: Link down/ }
group peer_symptoms = peer_err, other_err
rule r { link_down -> peer_symptoms where effect.peer same cause within 0s .. 2m }
)");
  ASSERT_TRUE(r.kb) << dump(r);
  EXPECT_EQ(r.kb->rules.size(), 2u);
}

TEST(Groups, GroupsAreVisibleAcrossTheUnitAndImports) {
  fs::path dir = fs::temp_directory_path() / ("reflex_groups_" + std::to_string(getpid()));
  fs::create_directories(dir / "unit");
  fs::create_directories(dir / "lib");
  std::ofstream(dir / "unit" / "events.rfx") << kEvents;
  std::ofstream(dir / "unit" / "rules.rfx")
      << "reflex 1\nimport \"../lib/groups.rfx\"\n"
         "rule r { gpu_lost -> rank_symptoms within 0s .. 10m }\n";
  std::ofstream(dir / "lib" / "groups.rfx")
      << "reflex 1\ngroup gpu_lost = xid79, xid48\ngroup rank_symptoms = nccl_timeout\n";
  CompileResult r = compile({(dir / "unit").string()}, CompileOptions{});
  fs::remove_all(dir);
  ASSERT_TRUE(r.kb) << dump(r);
  EXPECT_FALSE(has_code(r, "W001")) << dump(r);  // the import is used: its groups are named
  EXPECT_EQ(r.kb->rules.size(), 2u);
}

TEST(Groups, GroupIsAlsoANameWhereKeywordsAreNames) {
  // `group` starts a declaration but is still usable as a field name.
  CompileResult r = check_text(R"(reflex 1
signature s {
  on host
  match /worker (?P<group>\w+) failed/
  field group: string
  when group == "trainers"
}
group g = s
signature t { on host match /job failed/ symptom crash }
rule r { g -> t within 0s .. 1m }
)");
  EXPECT_EQ(r.errors(), 0) << dump(r);
}

TEST(Groups, SyntaxErrorsAreReported) {
  // No trailing comma (the next `group` would be read as a member); `->` needs
  // names on both sides.
  EXPECT_TRUE(has_code(check_text(std::string(kEvents) + "group g = xid79,\n"), "E005"));
  EXPECT_TRUE(has_code(
      check_text(std::string(kEvents) + "rule r { xid79, -> nccl_abort within 0s .. 1m }\n"),
      "E005"));
  EXPECT_TRUE(
      has_code(check_text(std::string(kEvents) + "rule r { xid79 -> within 0s .. 1m }\n"), "E005"));
}

}  // namespace
}  // namespace reflex
