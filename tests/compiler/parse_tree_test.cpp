// The parse tree's fast paths against the runtime's own answers: the
// contexts' child accessors and type tests (grammar/include/reflex_grammar/
// context.h) against dynamic_cast, and the token text read from the source
// (TokenText, front_end.h) against getText, over every node of the shipped
// KB and of inputs with non-ASCII text, a byte-order mark and syntax errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "front_end.h"

namespace reflex::compiler {
namespace {

using antlr4::ParserRuleContext;
using antlr4::tree::ParseTree;
using antlr4::tree::TerminalNode;
using rfxgen::ReflexContext;

// Parses `text` with the runtime's default error recovery (which makes up
// missing tokens) and calls `visit` on every node.
void each_node(const std::string& text, const std::function<void(ParseTree*)>& visit) {
  antlr4::ANTLRInputStream input(text);
  ReflexLexer lexer(&input);
  lexer.removeErrorListeners();
  antlr4::CommonTokenStream tokens(&lexer);
  ReflexParser parser(&tokens);
  parser.removeErrorListeners();
  std::function<void(ParseTree*)> walk = [&](ParseTree* n) {
    visit(n);
    for (auto* c : n->children) walk(c);
  };
  walk(parser.file());
}

std::vector<std::string> inputs() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(REFLEX_KB_DIR)) {
    if (e.path().extension() != ".rfx") continue;
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    out.push_back(ss.str());
  }
  const std::string sig =
      "signature s_é {\n  description \"Ünïcode ✓ text\"  # ½ comment\n"
      "  match /GPU (?P<bus>[0-9a-f:.]+) — fell/ then /x/ within 3 lines\n"
      "  when bus == \"é\" and not (x in {1, 2s, \"ü\"})\n  class gpu_hw\n}\n";
  out.push_back(sig);
  out.push_back("\xEF\xBB\xBF" + sig);                                        // a byte-order mark
  out.push_back("signature { match when == class }\nrule r { cause -> }\n");  // errors
  out.push_back("signature a extends { on }\ntest \"t\" { expect root \n");
  out.push_back("pattern p /x/\ngroup g a, b\nclass c < \"d\"\n");  // missing tokens made up
  return out;
}

TEST(ParseTree, ContextAccessorsAgreeWithDynamicCast) {
  const size_t max_type = ReflexParser(nullptr).getVocabulary().getMaxTokenType();
  size_t nodes = 0, alternatives = 0;
  for (const std::string& text : inputs()) {
    each_node(text, [&](ParseTree* n) {
      ++nodes;
      ASSERT_EQ(ReflexContext::terminal(n), dynamic_cast<TerminalNode*>(n));
      auto* c = dynamic_cast<ParserRuleContext*>(n);
      if (!c) return;
      auto* fast = static_cast<ReflexContext*>(c);
      // The runtime's versions, called past ReflexContext's.
      EXPECT_EQ(fast->getRuleContexts<ReflexParser::NameContext>(),
                c->ParserRuleContext::getRuleContexts<ReflexParser::NameContext>());
      EXPECT_EQ(fast->getRuleContexts<ReflexParser::CondContext>(),
                c->ParserRuleContext::getRuleContexts<ReflexParser::CondContext>());
      EXPECT_EQ(fast->getRuleContexts<ReflexParser::MemberBodyContext>(),
                c->ParserRuleContext::getRuleContexts<ReflexParser::MemberBodyContext>());
      EXPECT_EQ(fast->getRuleContext<ReflexParser::ValueContext>(1),
                c->ParserRuleContext::getRuleContext<ReflexParser::ValueContext>(1));
      for (size_t t = 1; t <= max_type; ++t) {
        EXPECT_EQ(fast->getTokens(t), c->ParserRuleContext::getTokens(t));
        EXPECT_EQ(fast->getToken(t, 0), c->ParserRuleContext::getToken(t, 0));
      }
      const bool on = dynamic_cast<ReflexParser::OnMemberContext*>(c) != nullptr;
      const bool when = dynamic_cast<ReflexParser::WhenMemberContext*>(c) != nullptr;
      const bool and_ = dynamic_cast<ReflexParser::AndCondContext*>(c) != nullptr;
      alternatives += on + when + and_;
      EXPECT_EQ(ReflexContext::exactly<ReflexParser::OnMemberContext>(c) != nullptr, on);
      EXPECT_EQ(ReflexContext::exactly<ReflexParser::WhenMemberContext>(c) != nullptr, when);
      EXPECT_EQ(ReflexContext::exactly<ReflexParser::AndCondContext>(c) != nullptr, and_);
    });
  }
  EXPECT_GT(nodes, 10000u);
  EXPECT_GT(alternatives, 100u);
}

TEST(ParseTree, TokenTextIsGetText) {
  size_t tokens = 0, non_ascii = 0, made_up = 0;
  for (const std::string& text : inputs()) {
    const TokenText source(text);
    each_node(text, [&](ParseTree* n) {
      if (auto* t = ReflexContext::terminal(n)) {
        ++tokens;
        const std::string want = t->getSymbol()->getText();
        non_ascii += want.find('\xC3') != std::string::npos;
        made_up += t->getSymbol()->getTokenIndex() == INVALID_INDEX;
        ASSERT_EQ(source.of(t->getSymbol()), want);
      } else {
        ASSERT_EQ(source.of(n), n->getText());
      }
    });
  }
  EXPECT_GT(tokens, 10000u);
  EXPECT_GT(non_ascii, 3u);
  EXPECT_GT(made_up, 1u);
}

}  // namespace
}  // namespace reflex::compiler
