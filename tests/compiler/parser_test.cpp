// Table-driven parser tests: snippets that must parse and check clean, and
// snippets that must fail with a given diagnostic code.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "ReflexLexer.h"
#include "antlr4-runtime.h"
#include "test_util.h"

namespace reflex {
namespace {

using testing::check_text;
using testing::dump;
using testing::has_code;

struct Snippet {
  const char* name;
  const char* text;
  const char* code;  // "" = must be clean
};

std::ostream& operator<<(std::ostream& os, const Snippet& s) {
  return os << s.name;
}

class ValidSnippet : public ::testing::TestWithParam<Snippet> {};

TEST_P(ValidSnippet, ChecksClean) {
  const Snippet& s = GetParam();
  CompileResult r = check_text(s.text);
  EXPECT_EQ(r.errors(), 0) << dump(r);
  EXPECT_EQ(r.warnings(), 0) << dump(r);
  EXPECT_TRUE(r.kb.has_value());
}

// clang-format off
const Snippet kValid[] = {
  {"header_only", "reflex 1\n", ""},
  {"comments", "reflex 1 # version\n// a comment\n# another\n", ""},
  {"kb_meta", "reflex 1\nknowledge_base \"k\" version \"1.0.0\" requires engine \">= 0.1.0\"\n", ""},
  {"class_with_parent", "reflex 1\nclass a \"A\"\nclass b < a \"B\"\n", ""},
  {"trailing_semicolons", "reflex 1;\nclass a \"A\";\nsignature s { on gpu; match /NVRM: Xid/; };\n", ""},
  {"pattern_concat", "reflex 1\npattern p = /NVRM: / + /Xid (?P<x>\\d+)/\nsignature s { on gpu match p + /,/ field x: int }\n", ""},
  {"escaped_slash", "reflex 1\nsignature s { on host match /^mount \\/ckpt failed/ example \"mount /ckpt failed\" from kernel }\n", ""},
  {"conditions", "reflex 1\nsignature s { on gpu match /^Xid (?P<x>\\d+) (?P<t>\\w+)/ field x: int\n"
                 " when (x == 1 or x in {2, 3}) and not x > 100 and t matches /^[a-z]+$/ and x not in {9}\n"
                 " example \"Xid 2 abc\" { x = 2, t = \"abc\" } near_miss \"Xid 9 abc\" }\n", ""},
  {"hex_and_durations", "reflex 1\nsignature s { on gpu match /^code (?P<c>0x[0-9a-fA-F]+)/ field c: hex when c == 0x1F\n"
                        " aggregate count >= 3 within 500ms dedup 1.5m by c example \"code 0x1f\" { c = \"0x1F\" } }\n", ""},
  {"multiline_match", "reflex 1\nsignature s { on gpu from kernel match /^NVRM: The NVIDIA GPU (?P<bdf>\\S+)$/ then /fallen off the bus/ within 3 lines\n"
                      " field bdf: bdf locate gpu by bdf\n"
                      " example \"NVRM: The NVIDIA GPU 0000:b3:00.0\\nNVRM: (PCI ID: 10de:26b5) installed in this system has\\nNVRM: fallen off the bus and is not responding to commands.\" }\n", ""},
  {"latent", "reflex 1\nclass h \"H\"\nlatent l { on host class h severity critical nature hardware silent action \"a\" remediation X description \"d\" }\n", ""},
  {"rule_multi_effect", "reflex 1\nsignature a { on gpu match /^A/ }\nsignature b { on gpu match /^B/ }\nsignature c { on host match /^C/ }\n"
                        "rule r { a -> b, c where effect same_host cause within -1s .. 10s skew 1s strength 1 }\n", ""},
  {"baseline", "reflex 1\nsignature s { on job from app match /^iter (?P<ms>\\d+) ms/ field ms: float symptom slowdown baseline ms above 1.2 x median of last 20 allow unexplained-symptom }\n", ""},
  {"soft_keywords_as_names", "reflex 1\nsignature s { on rank match /^count=(?P<count>\\d+)/ field count: int locate rank by count }\n", ""},
  {"allow_warning", "reflex 1\nsignature s { on host match /(?P<n>\\d+)/ allow unanchored-pattern }\n", ""},
  {"override", "reflex 1\nsignature s { on host match /^boom/ action \"a\" }\noverride signature s { action \"b\" severity major }\n", ""},
  {"test_block", "reflex 1\nsignature s { on host match /^boom/ }\ntest \"t\" { topology \"\"\"{}\"\"\" log \"h\" syslog \"boom\" expect root \"h\" rank 2 expect no root expect event s on \"h\" }\n", ""},
};
// clang-format on
INSTANTIATE_TEST_SUITE_P(Parser, ValidSnippet, ::testing::ValuesIn(kValid),
                         [](const auto& p) { return std::string(p.param.name); });

class InvalidSnippet : public ::testing::TestWithParam<Snippet> {};

TEST_P(InvalidSnippet, ReportsCode) {
  const Snippet& s = GetParam();
  CompileResult r = check_text(s.text);
  EXPECT_TRUE(has_code(r, s.code)) << "expected " << s.code << ", got:\n" << dump(r);
  EXPECT_FALSE(r.kb.has_value());
  // Every diagnostic has a position and a message; ANTLR's wording never leaks.
  for (const auto& d : r.diagnostics) {
    EXPECT_GT(d.loc.line, 0) << d.message;
    EXPECT_GT(d.loc.col, 0) << d.message;
    EXPECT_EQ(d.message.find("mismatched input"), std::string::npos) << d.message;
    EXPECT_EQ(d.message.find("extraneous input"), std::string::npos) << d.message;
    EXPECT_EQ(d.message.find("no viable alternative"), std::string::npos) << d.message;
    EXPECT_EQ(d.message.find("token recognition"), std::string::npos) << d.message;
  }
}

// clang-format off
const Snippet kInvalid[] = {
  {"empty_file", "", "E009"},
  {"no_header", "class a \"A\"\n", "E009"},
  {"wrong_version", "reflex 2\n", "E009"},
  {"missing_brace", "reflex 1\nsignature s { on gpu match /x/\n", "E005"},
  {"extra_brace", "reflex 1\nsignature s { on gpu match /x/ } }\n", "E005"},
  {"assign_not_compare", "reflex 1\nsignature s { on gpu match /^(?P<x>\\d)/ when x = 1 }\n", "E005"},
  {"missing_arrow_target", "reflex 1\nrule r { a -> within 0s .. 1s }\n", "E005"},
  {"unterminated_string", "reflex 1\nclass a \"A\n", "E006"},
  {"unterminated_triple", "reflex 1\ntest \"t\" { topology \"\"\"{ \n", "E006"},
  {"unterminated_regex", "reflex 1\npattern p = /abc\n", "E007"},
  {"bad_char", "reflex 1\nclass a $ \"A\"\n", "E008"},
  {"duration_without_unit", "reflex 1\nsignature a { on gpu match /^A/ }\nrule r { a -> a within 0 .. 10 }\n", "E027"},
  {"unknown_kind", "reflex 1\nsignature s { on gpus match /^A/ }\n", "E020"},
  {"relation_kinds", "reflex 1\nsignature a { on gpu match /^A/ }\nsignature b { on host match /^B/ }\nrule r { a -> b where effect below cause within 0s .. 1s }\n", "E030"},
  {"abstract_cause", "reflex 1\nabstract signature a { on gpu }\nsignature b { on host match /^B/ }\nrule r { a -> b within 0s .. 1s }\n", "E012"},
  {"self_cycle", "reflex 1\nsignature a { on gpu match /^A/ }\nrule r { a -> a within 0s .. 1s }\n", "E043"},
  {"unknown_field_in_when", "reflex 1\nsignature a { on gpu match /^A (?P<x>\\d)/ when y == 1 }\n", "E016"},
  {"bad_condition_regex", "reflex 1\nsignature a { on gpu match /^A (?P<x>\\d)/ when x matches /(/ }\n", "E044"},
  {"ordered_bdf", "reflex 1\nsignature a { on gpu match /^A (?P<b>\\S+)/ field b: bdf when b > \"0000:01:00.0\" }\n", "E032"},
};
// clang-format on
INSTANTIATE_TEST_SUITE_P(Parser, InvalidSnippet, ::testing::ValuesIn(kInvalid),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(ParserRecovery, ReportsErrorsInEveryDeclaration) {
  CompileResult r = check_text(
      "reflex 1\n"
      "signature a { on gpu match }\n"
      "signature b { on gpu match /x/ when }\n"
      "rule c { a -> b within 1s .. }\n");
  int syntax = 0;
  for (const auto& d : r.diagnostics) syntax += d.code == "E005";
  EXPECT_GE(syntax, 3) << dump(r);
  // Lines 2, 3 and 4 each carry an error.
  std::set<int> lines;
  for (const auto& d : r.diagnostics) lines.insert(d.loc.line);
  EXPECT_TRUE(lines.count(2) && lines.count(3) && lines.count(4)) << dump(r);
}

TEST(ParserRecovery, ErrorCapStopsEarly) {
  std::string text = "reflex 1\n";
  for (int i = 0; i < 200; ++i) text += "signature s" + std::to_string(i) + " { on gpu match ) }\n";
  CompileOptions o;
  o.max_errors_per_file = 10;
  CompileResult r = check_text(text, o);
  EXPECT_TRUE(testing::has_code(r, "E010")) << dump(r);
  EXPECT_LE(r.errors(), 12);
}

TEST(ParserColumns, AreOneBasedCodePoints) {
  // "é" is two bytes but one column.
  CompileResult r = check_text("reflex 1\nclass é_x \"A\"\n");
  ASSERT_FALSE(r.diagnostics.empty());
  EXPECT_EQ(r.diagnostics[0].loc.line, 2);
  EXPECT_EQ(r.diagnostics[0].loc.col, 7);  // the 'é' is a bad char at column 7
}

// The tokens of `text` as (type, text) pairs, without EOF.
std::vector<std::pair<size_t, std::string>> lex(const std::string& text) {
  antlr4::ANTLRInputStream input(text);
  rfxgen::ReflexLexer lexer(&input);
  lexer.removeErrorListeners();
  std::vector<std::pair<size_t, std::string>> out;
  for (auto t = lexer.nextToken(); t->getType() != antlr4::Token::EOF; t = lexer.nextToken())
    out.emplace_back(t->getType(), t->getText());
  return out;
}

// A run of bad characters is one token, and it ends where any token could
// start: after a `\`, every literal of the vocabulary and every ASCII
// character followed by the usual continuations lexes as it does alone.
TEST(ParserLexer, BadCharRunsStopAtEveryToken) {
  const size_t bad = rfxgen::ReflexLexer::BAD_CHAR;
  EXPECT_EQ(lex("\\\\]]^"), (std::vector<std::pair<size_t, std::string>>{{bad, "\\\\]]^"}}));
  std::vector<std::string> starts;
  const antlr4::dfa::Vocabulary& voc = rfxgen::ReflexLexer(nullptr).getVocabulary();
  for (size_t type = 1; type <= voc.getMaxTokenType(); ++type) {
    const std::string lit = voc.getLiteralName(type);
    if (lit.size() >= 3) starts.push_back(lit.substr(1, lit.size() - 2));  // 'x' -> x
  }
  for (int c = 1; c < 128; ++c)
    for (const char* cont : {"", "=", "/", ">", "x\"", "0", "a-b"})
      starts.push_back(std::string(1, static_cast<char>(c)) + cont);
  int checked = 0;
  for (const std::string& s : starts) {
    const auto alone = lex(s);
    if (alone.empty() || alone[0].first == bad) continue;
    const auto after = lex("\\" + s);
    ASSERT_GE(after.size(), 2u) << "'\\" << s << "'";
    EXPECT_EQ(after[0], std::make_pair(bad, std::string("\\"))) << "'\\" << s << "'";
    EXPECT_EQ(after[1], alone[0]) << "'\\" << s << "'";
    ++checked;
  }
  EXPECT_GT(checked, 300);
}

// A run is reported once, naming its first character, at its column.
TEST(ParserLexer, BadCharRunIsOneError) {
  CompileResult r = check_text("reflex 1\nclass a \"A\" \\\\]]\n");
  int unexpected = 0;
  for (const auto& d : r.diagnostics)
    if (d.code == "E008") {
      ++unexpected;
      EXPECT_EQ(d.message, "unexpected character '\\'");
      EXPECT_EQ(d.loc.col, 13);
    }
  EXPECT_EQ(unexpected, 1) << dump(r);
}

}  // namespace
}  // namespace reflex
