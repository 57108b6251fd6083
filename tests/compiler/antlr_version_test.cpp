// The generated parser and the runtime are the pair the build checked for
// (tool 4.7.2, runtime 4.9), and the generated ATN deserializes in this
// runtime: parsing a small file works.
#include <gtest/gtest.h>

#include <string>

#include "antlr4-runtime.h"
#include "reflex_grammar/antlr_versions.h"
#include "test_util.h"

namespace reflex {
namespace {

TEST(Antlr, ToolAndRuntimeVersions) {
  EXPECT_STREQ(REFLEX_ANTLR4_TOOL_VERSION, "4.7.2");
  EXPECT_STREQ(REFLEX_ANTLR4_RUNTIME_VERSION, "4.9");
  // The runtime linked in reports its own version.
  EXPECT_EQ(antlr4::RuntimeMetaData::VERSION, "4.9");
}

TEST(Antlr, GeneratedParserRunsOnThisRuntime) {
  CompileResult r = testing::check_text(
      "reflex 1\nclass a \"A\"\nsignature s { on gpu match /^x (?P<n>\\d+)/ field n: int class a "
      "}\n");
  EXPECT_EQ(r.errors(), 0) << testing::dump(r);
  ASSERT_TRUE(r.kb);
  ASSERT_EQ(r.kb->signatures.size(), 1u);
  EXPECT_EQ(r.kb->signatures[0].name, "s");
}

}  // namespace
}  // namespace reflex
