// `odd_one_out EVENT.FIELD among REL` in a latent (docs/language.md §7.1):
// parsing, lowering, the artifact round trip and the errors it can raise.
#include <gtest/gtest.h>

#include <string>

#include "reflex/artifact.h"
#include "test_util.h"

namespace reflex {
namespace {

using testing::check_text;
using testing::dump;
using testing::has_code;

const char* kBase = R"(reflex 1
class nccl_software "NCCL"
signature banner {
  on host from app
  match /NCCL version (?P<version>[\d.]+)\+cuda/
  field version: string
  allow unreachable-event
}
signature xid { on gpu from kernel match /NVRM: Xid \(PCI:(?P<bdf>[0-9a-f:.]+)\): (?P<xid>\d+)/ field bdf: bdf locate gpu by bdf allow unreachable-event }
abstract signature base_line { on host match /never/ }
signature hang { on rank from app match /Watchdog caught collective operation timeout/ symptom hang }
)";

std::string with_latent(const std::string& body, const std::string& on = "host") {
  return std::string(kBase) + "latent odd {\n  on " + on + "\n  class nccl_software\n  " + body +
         "\n}\nrule odd_hangs { odd -> hang where effect same_job cause within 0s .. 1h }\n";
}

TEST(OddOneOut, LowersEveryStatement) {
  CompileResult r = check_text(
      with_latent("odd_one_out banner.version among same_job\n  odd_one_out banner.version among "
                  "any"));
  ASSERT_TRUE(r.kb) << dump(r);
  ASSERT_EQ(r.kb->latents.size(), 1u);
  const auto& o = r.kb->latents[0].odd_one_out;
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[0].event, "banner");
  EXPECT_EQ(o[0].field, "version");
  EXPECT_EQ(o[0].among, Relation::same_job);
  EXPECT_EQ(o[1].among, Relation::any);
  // ... and survive the artifact.
  auto back = kb_from_cbor(kb_to_cbor(*r.kb), nullptr);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->latents[0].odd_one_out.size(), 2u);
  EXPECT_EQ(back->latents[0].odd_one_out[0].event, "banner");
  EXPECT_EQ(back->latents[0].odd_one_out[0].field, "version");
  EXPECT_EQ(back->latents[0].odd_one_out[1].among, Relation::any);
  // A latent without the statement has none (and an older artifact reads as none).
  CompileResult plain = check_text(with_latent("severity major"));
  ASSERT_TRUE(plain.kb) << dump(plain);
  EXPECT_TRUE(plain.kb->latents[0].odd_one_out.empty());
}

TEST(OddOneOut, StatementMayComeBeforeOn) {
  CompileResult r = check_text(std::string(kBase) +
                               "latent odd {\n  odd_one_out banner.version among same_job\n  on "
                               "host\n  class nccl_software\n}\n"
                               "rule odd_hangs { odd -> hang where effect same_job cause within "
                               "0s .. 1h }\n");
  ASSERT_TRUE(r.kb) << dump(r);
  EXPECT_EQ(r.kb->latents[0].odd_one_out.size(), 1u);
}

TEST(OddOneOut, AmongIsStillAName) {
  // `among` became a keyword; a field called `among` must still work.
  CompileResult r = check_text(
      "reflex 1\nsignature s { on host match /x (?P<among>\\d+)/ field among: int when among > 1 "
      "allow unreachable-event }\n");
  EXPECT_TRUE(r.kb) << dump(r);
}

TEST(OddOneOut, UnknownOrAbstractEventIsE012) {
  CompileResult r = check_text(with_latent("odd_one_out baner.version among same_job"));
  EXPECT_FALSE(r.kb);
  EXPECT_TRUE(has_code(r, "E012")) << dump(r);
  EXPECT_NE(dump(r).find("did you mean 'banner'"), std::string::npos) << dump(r);
  CompileResult a = check_text(with_latent("odd_one_out base_line.version among same_job"));
  EXPECT_FALSE(a.kb);
  EXPECT_TRUE(has_code(a, "E012")) << dump(a);
}

TEST(OddOneOut, FieldTheEventDoesNotCaptureIsE016) {
  CompileResult r = check_text(with_latent("odd_one_out banner.build among same_job"));
  EXPECT_FALSE(r.kb);
  EXPECT_TRUE(has_code(r, "E016")) << dump(r);
}

TEST(OddOneOut, OnlyGroupingRelationsAreE021Otherwise) {
  for (const char* rel : {"below", "paired", "nonsense"}) {
    CompileResult r =
        check_text(with_latent(std::string("odd_one_out banner.version among ") + rel));
    EXPECT_FALSE(r.kb) << rel;
    EXPECT_TRUE(has_code(r, "E021")) << rel << "\n" << dump(r);
  }
}

TEST(OddOneOut, KindsAreCheckedE030) {
  // A GPU found odd cannot hold a latent on a NIC; on its host it can.
  CompileResult nic = check_text(with_latent("odd_one_out xid.xid among same_host", "nic"));
  EXPECT_FALSE(nic.kb);
  EXPECT_TRUE(has_code(nic, "E030")) << dump(nic);
  CompileResult host = check_text(with_latent("odd_one_out xid.xid among same_host", "host"));
  EXPECT_TRUE(host.kb) << dump(host);
}

TEST(OddOneOut, NotAllowedInASignature) {
  CompileResult r = check_text(
      "reflex 1\nsignature s { on host match /x (?P<v>\\d+)/ odd_one_out s.v among same_job }\n");
  EXPECT_FALSE(r.kb);
  EXPECT_NE(dump(r).find("`odd_one_out` is not allowed in a signature"), std::string::npos)
      << dump(r);
}

}  // namespace
}  // namespace reflex
