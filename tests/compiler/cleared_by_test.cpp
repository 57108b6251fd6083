// `cleared_by EVENT, ... within DUR` and `baseline FIELD below ...`
// (docs/language.md §5): parsing, lowering, and the errors they can raise.
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace reflex {
namespace {

using testing::check_text;
using testing::dump;
using testing::has_code;

const char* kLink = R"(reflex 1
class nic "NIC"
signature link_down {
  on nic from kernel
  match /mlx5_core (?P<bdf>\S+) \S+: Link down/
  field bdf: bdf
  locate nic by bdf
  class nic
  severity major
)";
const char* kRest = R"(
}
signature link_up {
  on nic from kernel
  match /mlx5_core (?P<bdf>\S+) \S+: Link up/
  field bdf: bdf
  locate nic by bdf
}
signature nfs_ok { on host from kernel match /nfs: server \S+ OK/ }
latent cable_cut { on nic class nic }
)";

std::string with(const std::string& stmt) {
  return std::string(kLink) + "  " + stmt + kRest;
}

const Signature* sig(const KnowledgeBase& kb, const std::string& name) {
  for (const Signature& s : kb.signatures)
    if (s.name == name) return &s;
  return nullptr;
}

TEST(ClearedBy, LowersNamesAndWindow) {
  CompileResult r = check_text(with("cleared_by link_up within 30s"));
  ASSERT_TRUE(r.kb) << dump(r);
  const Signature* s = sig(*r.kb, "link_down");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->cleared_by.size(), 1u);
  EXPECT_EQ(s->cleared_by[0], "link_up");
  EXPECT_DOUBLE_EQ(s->clear_within_s, 30.0);
  EXPECT_TRUE(sig(*r.kb, "link_up")->cleared_by.empty());
}

TEST(ClearedBy, UnknownEventIsE012WithSuggestion) {
  CompileResult r = check_text(with("cleared_by link_upp within 30s"));
  EXPECT_FALSE(r.kb);
  EXPECT_TRUE(has_code(r, "E012")) << dump(r);
  EXPECT_NE(dump(r).find("did you mean 'link_up'"), std::string::npos) << dump(r);
}

TEST(ClearedBy, LatentCannotClear) {
  CompileResult r = check_text(with("cleared_by cable_cut within 30s"));
  EXPECT_FALSE(r.kb);
  EXPECT_TRUE(has_code(r, "E012")) << dump(r);
}

TEST(ClearedBy, OtherDeviceKindIsE030) {
  CompileResult r = check_text(with("cleared_by nfs_ok within 30s"));
  EXPECT_FALSE(r.kb);
  EXPECT_TRUE(has_code(r, "E030")) << dump(r);
}

TEST(ClearedBy, SelfIsAnError) {
  CompileResult r = check_text(with("cleared_by link_down within 30s"));
  EXPECT_FALSE(r.kb);
  EXPECT_TRUE(has_code(r, "E027")) << dump(r);
}

TEST(ClearedBy, WindowMustBePositive) {
  CompileResult r = check_text(with("cleared_by link_up within 0s"));
  EXPECT_FALSE(r.kb);
  EXPECT_TRUE(has_code(r, "E035")) << dump(r);
}

const char* kTitan = R"(reflex 1
signature titan {
  on job from app
  symptom slowdown
  match /step:\s*(?P<step>\d+)\s+loss:.*?mfu: (?P<mfu>[0-9.]+)%/
  field step: int
  field mfu: float
  %s
}
)";

std::string titan(const std::string& stmt) {
  std::string t = kTitan;
  return t.replace(t.find("%s"), 2, stmt);
}

TEST(BaselineBelow, Lowers) {
  CompileResult r = check_text(titan("baseline mfu below 0.93 x median of last 50"));
  ASSERT_TRUE(r.kb) << dump(r);
  const Signature* s = sig(*r.kb, "titan");
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->baseline.below);
  EXPECT_EQ(s->baseline.field, "mfu");
  EXPECT_DOUBLE_EQ(s->baseline.factor, 0.93);
  EXPECT_EQ(s->baseline.window, 50);
}

TEST(BaselineBelow, AboveStaysAbove) {
  CompileResult r = check_text(titan("baseline mfu above 1.08 x median of last 50"));
  ASSERT_TRUE(r.kb) << dump(r);
  EXPECT_FALSE(sig(*r.kb, "titan")->baseline.below);
}

TEST(BaselineBelow, FactorOnTheWrongSideOfOneIsE027) {
  CompileResult below = check_text(titan("baseline mfu below 1.2 x median of last 50"));
  EXPECT_FALSE(below.kb);
  EXPECT_TRUE(has_code(below, "E027")) << dump(below);
  CompileResult above = check_text(titan("baseline mfu above 0.9 x median of last 50"));
  EXPECT_FALSE(above.kb);
  EXPECT_TRUE(has_code(above, "E027")) << dump(above);
}

TEST(BaselineBelow, BelowIsStillUsableAsAName) {
  // `below` became a keyword; a relation and a field may still be called so.
  CompileResult r = check_text(std::string(kLink) + "  field below: string\n" + kRest);
  EXPECT_FALSE(has_code(r, "E005")) << dump(r);
  EXPECT_TRUE(has_code(r, "E016")) << dump(r);  // parsed; just not captured by the pattern
}

}  // namespace
}  // namespace reflex
