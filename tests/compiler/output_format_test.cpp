// Machine-readable diagnostics: JSON and SARIF 2.1.0 parse and carry the
// expected keys; text output follows the clang layout.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace reflex {
namespace {

using nlohmann::json;

const char* kBroken =
    "reflex 1\n"
    "signature xid79 { on gpu match /^NVRM: Xid 79/ }\n"
    "rule r {\n"
    "  xid_79 -> xid79\n"
    "  within 5s .. 5s\n"
    "}\n";

TEST(OutputFormat, TextIsClangLayout) {
  CompileResult r = testing::check_text(kBroken);
  std::string t = render_diagnostics(r, DiagFormat::text);
  EXPECT_NE(t.find("snippet.rfx:4:3: error[E012]: unknown event 'xid_79'; did you mean 'xid79'?\n"
                   "   4 |   xid_79 -> xid79\n"
                   "     |   ^~~~~~\n"
                   "snippet.rfx:2:11: note: 'xid79' is declared here\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("1 error and 1 warning generated in 1 file."), std::string::npos) << t;
}

TEST(OutputFormat, JsonParsesWithKeys) {
  CompileResult r = testing::check_text(kBroken);
  json j = json::parse(render_diagnostics(r, DiagFormat::json));
  ASSERT_TRUE(j.contains("diagnostics"));
  EXPECT_EQ(j["errors"], 1);
  EXPECT_EQ(j["warnings"], 1);
  ASSERT_EQ(j["files"].size(), 1u);
  bool saw = false;
  for (const auto& d : j["diagnostics"]) {
    for (const char* k :
         {"severity", "code", "title", "message", "file", "line", "column", "notes"})
      EXPECT_TRUE(d.contains(k)) << k;
    if (d["code"] == "E012") {
      saw = true;
      EXPECT_EQ(d["line"], 4);
      EXPECT_EQ(d["column"], 3);
      EXPECT_EQ(d["severity"], "error");
      ASSERT_FALSE(d["notes"].empty());
      EXPECT_EQ(d["notes"][0]["location"]["line"], 2);
    }
    if (d["code"] == "W007") {
      EXPECT_EQ(d["name"], "empty-window");
    }
  }
  EXPECT_TRUE(saw);
}

TEST(OutputFormat, SarifParsesWithKeys) {
  CompileResult r = testing::check_text(kBroken);
  json j = json::parse(render_diagnostics(r, DiagFormat::sarif));
  EXPECT_EQ(j["version"], "2.1.0");
  ASSERT_EQ(j["runs"].size(), 1u);
  const json& run = j["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "reflexc");
  const json& rules = run["tool"]["driver"]["rules"];
  EXPECT_EQ(rules.size(), diagnostic_catalog().size());
  std::set<std::string> ids;
  for (const auto& rule : rules) ids.insert(rule["id"].get<std::string>());
  ASSERT_EQ(run["results"].size(), 2u);
  for (const auto& res : run["results"]) {
    EXPECT_TRUE(ids.count(res["ruleId"].get<std::string>()));
    EXPECT_TRUE(res["level"] == "error" || res["level"] == "warning");
    EXPECT_TRUE(res["message"].contains("text"));
    const json& loc = res["locations"][0]["physicalLocation"];
    EXPECT_EQ(loc["artifactLocation"]["uri"], "snippet.rfx");
    EXPECT_GE(loc["region"]["startLine"].get<int>(), 1);
    EXPECT_GE(loc["region"]["startColumn"].get<int>(), 1);
    // ruleIndex points at the rule with this id
    EXPECT_EQ(rules[res["ruleIndex"].get<size_t>()]["id"], res["ruleId"]);
  }
}

TEST(OutputFormat, InvalidUtf8InMessagesStillSerialises) {
  // Source text with bad bytes never reaches the parser, but the message names the byte.
  CompileResult r = testing::check_text("reflex 1\n# \xff\n");
  // json::accept, not a discarded json::parse: clang 14 warns about the
  // unused result, and gcc's warn_unused_result is not silenced by a void cast.
  EXPECT_NO_THROW(EXPECT_TRUE(json::accept(render_diagnostics(r, DiagFormat::json))));
  EXPECT_NO_THROW(EXPECT_TRUE(json::accept(render_diagnostics(r, DiagFormat::sarif))));
}

TEST(OutputFormat, SortedDeterministically) {
  CompileResult r = testing::check_text(
      "reflex 1\nsignature b { on gpux match /^B/ }\nsignature a { on gpuy match /^A/ }\n");
  ASSERT_GE(r.diagnostics.size(), 2u);
  for (size_t i = 1; i < r.diagnostics.size(); ++i) {
    const auto& p = r.diagnostics[i - 1].loc;
    const auto& q = r.diagnostics[i].loc;
    EXPECT_TRUE(std::tie(p.file, p.line, p.col) <= std::tie(q.file, q.line, q.col));
  }
}

}  // namespace
}  // namespace reflex
