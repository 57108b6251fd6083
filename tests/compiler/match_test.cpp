// reflex_model: one signature against log text (table-driven).
#include <gtest/gtest.h>

#include "reflex/signature_match.h"

namespace reflex {
namespace {

Signature xid_signature() {
  Signature s;
  s.name = "xid";
  s.kind = DeviceKind::gpu;
  s.sources = kTransportKernel;
  // Pattern of leptonai/gpud's xid/kmsg.go matcher, with named groups.
  s.patterns = {R"(NVRM: Xid \((?:PCI:)?(?P<bdf>[0-9a-fA-F:.]+)\): (?P<xid>\d+),)"};
  s.fields = {{"bdf", FieldType::bdf}, {"xid", FieldType::int_}};
  Condition c;
  c.op = Condition::Op::in;
  c.field = "xid";
  c.values = {"79", "48"};
  s.when = c;
  return s;
}

struct MatchCase {
  const char* name;
  const char* line;
  Transport transport;
  bool match;
  const char* bdf;  // expected normalised bdf when matching
};

std::ostream& operator<<(std::ostream& os, const MatchCase& c) {
  return os << c.name;
}

class XidMatch : public ::testing::TestWithParam<MatchCase> {};

TEST_P(XidMatch, MatchesAndNormalises) {
  const MatchCase& c = GetParam();
  std::string err;
  auto cs = CompiledSignature::compile(xid_signature(), &err);
  ASSERT_TRUE(cs) << err;
  FieldValues out;
  std::string why;
  EXPECT_EQ(match_text(*cs, c.line, c.transport, &out, &why), c.match) << why;
  if (c.match) {
    bool found = false;
    for (const auto& [k, v] : out)
      if (k == "bdf") {
        EXPECT_EQ(v, c.bdf);
        found = true;
      }
    EXPECT_TRUE(found);
  } else {
    EXPECT_FALSE(why.empty());
  }
}

// clang-format off
const MatchCase kCases[] = {
  // source: forums.developer.nvidia.com/t/xid-79-gpu-has-fallen-off-the-bus/49452
  {"xid79", "[155044.078590] NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.", kTransportKernel, true, "0000:06:00.0"},
  {"xid48_upper_hex", "NVRM: Xid (PCI:0000:AB:00.0): 48, DBE", kTransportKernel, true, "0000:ab:00.0"},
  {"xid13_filtered_by_when", "NVRM: Xid (PCI:0000:06:00): 13, Graphics SM Warp Exception", kTransportKernel, false, ""},
  {"wrong_transport", "NVRM: Xid (PCI:0000:06:00): 79, GPU has fallen off the bus.", kTransportApp, false, ""},
  {"no_match", "NVRM: GPU at PCI:0000:06:00 has fallen off the bus", kTransportKernel, false, ""},
  {"bad_bdf_type", "NVRM: Xid (PCI:zz): 79, x", kTransportKernel, false, ""},
  {"latin1_bytes", "NVRM: Xid (PCI:0000:06:00): 79, \xff\xfe", kTransportKernel, true, "0000:06:00.0"},
};
// clang-format on
INSTANTIATE_TEST_SUITE_P(Match, XidMatch, ::testing::ValuesIn(kCases),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(Match, WhyExplainsTheCondition) {
  auto cs = CompiledSignature::compile(xid_signature(), nullptr);
  ASSERT_TRUE(cs);
  std::string why;
  EXPECT_FALSE(
      match_text(*cs, "NVRM: Xid (PCI:0000:06:00): 13, x", kTransportKernel, nullptr, &why));
  EXPECT_NE(why.find("xid in {79, 48}"), std::string::npos) << why;
}

TEST(Match, BadPatternIsAnErrorNotAThrow) {
  Signature s = xid_signature();
  s.patterns = {"(unclosed"};
  std::string err;
  EXPECT_EQ(CompiledSignature::compile(s, &err), nullptr);
  EXPECT_FALSE(err.empty());
}

TEST(Match, ContinuationLines) {
  Signature s;
  s.name = "fell_off_multiline";
  s.patterns = {R"(NVRM: The NVIDIA GPU (?P<bdf>\S+)$)", R"(fallen off the bus)"};
  s.fields = {{"bdf", FieldType::bdf}};
  s.join_within_lines = 2;
  auto cs = CompiledSignature::compile(s, nullptr);
  ASSERT_TRUE(cs);
  // source: NVIDIA/NVSentinel test fixtures (multi-line fallen-off message)
  const char* text =
      "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
      "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
      "               NVRM: fallen off the bus and is not responding to commands.";
  FieldValues out;
  EXPECT_TRUE(match_text(*cs, text, kTransportKernel, &out, nullptr));
  s.join_within_lines = 1;
  auto strict = CompiledSignature::compile(s, nullptr);
  EXPECT_FALSE(match_text(*strict, text, kTransportKernel, nullptr, nullptr));
}

TEST(Match, MatchPartAppendsNothingOnMiss) {
  auto cs = CompiledSignature::compile(xid_signature(), nullptr);
  FieldValues caps;
  EXPECT_FALSE(cs->match_part(0, "unrelated line", &caps));
  EXPECT_TRUE(caps.empty());
  EXPECT_FALSE(cs->match_part(7, "out of range part", &caps));
}

TEST(Match, NumericAndHexConditions) {
  Signature s;
  s.name = "temp";
  s.patterns = {R"(temp=(?P<t>[\d.]+) code=(?P<c>0x[0-9A-Fa-f]+))"};
  s.fields = {{"t", FieldType::float_}, {"c", FieldType::hex}};
  Condition gt;
  gt.op = Condition::Op::gt;
  gt.field = "t";
  gt.values = {"85"};
  Condition eq;
  eq.op = Condition::Op::eq;
  eq.field = "c";
  eq.values = {"0x1f"};
  Condition both;
  both.op = Condition::Op::and_;
  both.children = {gt, eq};
  s.when = both;
  auto cs = CompiledSignature::compile(s, nullptr);
  ASSERT_TRUE(cs);
  EXPECT_TRUE(match_text(*cs, "temp=90.5 code=0x1F", kTransportKernel, nullptr, nullptr));
  EXPECT_FALSE(match_text(*cs, "temp=80 code=0x1F", kTransportKernel, nullptr, nullptr));
  EXPECT_FALSE(match_text(*cs, "temp=90 code=0x20", kTransportKernel, nullptr, nullptr));
}

}  // namespace
}  // namespace reflex
