// The parse tree's fast paths against the runtime's own answers: the
// contexts' child accessors and type tests (grammar/include/reflex_grammar/
// context.h) against dynamic_cast, and the token text read from the source
// (TokenText, front_end.h) against getText, over every node of the shipped
// KB and of inputs with non-ASCII text, a byte-order mark and syntax errors;
// the front end's parser (LeafArenaParser, front_end.h) against the
// generated one, and the lexer's dropped tokens.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include "front_end.h"

namespace reflex::compiler {
namespace {

using antlr4::ParserRuleContext;
using antlr4::tree::ParseTree;
using antlr4::tree::TerminalNode;
using rfxgen::ReflexContext;

// The generated parser on `text`, as the runtime makes it (no arena, the
// runtime's token factory), error listeners off.
struct GeneratedParse {
  explicit GeneratedParse(const std::string& text) : input(text) {
    lexer.removeErrorListeners();
    parser.removeErrorListeners();
  }
  antlr4::ANTLRInputStream input;
  ReflexLexer lexer{&input};
  antlr4::CommonTokenStream tokens{&lexer};
  ReflexParser parser{&tokens};
};

// Parses `text` with the runtime's default error recovery (which makes up
// missing tokens) and calls `visit` on every node.
void each_node(const std::string& text, const std::function<void(ParseTree*)>& visit) {
  GeneratedParse g(text);
  std::function<void(ParseTree*)> walk = [&](ParseTree* n) {
    visit(n);
    for (auto* c : n->children) walk(c);
  };
  walk(g.parser.file());
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

// A tree in preorder, one line a node: what it is, its tokens, and whether
// its parent link points at the node it hangs under.
std::string dump(ParseTree* n) {
  std::string out;
  std::function<void(ParseTree*, ParseTree*)> walk = [&](ParseTree* p, ParseTree* up) {
    if (auto* e = dynamic_cast<antlr4::tree::ErrorNode*>(p)) {
      out += "error " + std::to_string(e->getSymbol()->getTokenIndex()) + " " + e->getText();
    } else if (auto* t = dynamic_cast<TerminalNode*>(p)) {
      out += "token " + std::to_string(t->getSymbol()->getTokenIndex()) + " " + t->getText();
    } else {
      auto* c = dynamic_cast<ParserRuleContext*>(p);
      out += "rule " + std::to_string(c->getRuleIndex()) + " " + typeid(*c).name() + " " +
             std::to_string(c->getStart()->getTokenIndex()) + ".." +
             (c->getStop() ? std::to_string(c->getStop()->getTokenIndex()) : "-");
    }
    out += p->parent == up ? "\n" : " (wrong parent)\n";
    for (auto* c : p->children) walk(c, p);
  };
  walk(n, nullptr);
  return out;
}

// Inputs whose recovery skips many tokens, makes some up and nests errors.
std::vector<std::string> broken_inputs() {
  std::vector<std::string> out = inputs();
  out.push_back(
      "signature s { match /a/ \\\\]]]] when x == == 3 class }\n"
      "rule r { cause a, -> b within within 5s on same }\n");
  out.push_back("class c < < d \"x\"\nsignature { { { } } }\nlatent l { ) ( }\n");
  std::string junk;
  for (int i = 0; i < 50; ++i) junk += "signature s" + std::to_string(i) + " { match ] when ) }\n";
  out.push_back(junk);
  out.push_back("test \"t\" { given e on n at 1s\n expect root ::: \n}\ngroup g = , ,\n");
  return out;
}

// Every context and every token (the lexer's and the ones error recovery
// makes up) under `n` came from `arena`; with none, from the heap (tokens
// from the runtime's factory).
void expect_all_in(ParseTree* n, const rfxgen::NodeArena* arena, size_t* nodes) {
  ++*nodes;
  if (auto* t = dynamic_cast<TerminalNode*>(n)) {
    auto* token = dynamic_cast<ArenaToken*>(t->getSymbol());
    if (!arena) {  // the runtime's own factory
      ASSERT_EQ(token, nullptr) << t->getText();
      return;
    }
    ASSERT_NE(token, nullptr) << t->getText();
    ASSERT_EQ(rfxgen::NodeArena::arena_of(token), arena) << t->getText();
    return;
  }
  ASSERT_EQ(rfxgen::NodeArena::arena_of(dynamic_cast<void*>(n)), arena) << typeid(*n).name();
  for (auto* c : n->children) expect_all_in(c, arena, nodes);
}

TEST(ParseTree, LeafArenaParserBuildsTheGeneratedParsersTree) {
  size_t errors = 0, leaves = 0, nodes = 0;
  for (const std::string& text : broken_inputs()) {
    GeneratedParse g(text);
    g.parser.setErrorHandler(std::make_shared<WordingErrorStrategy>());
    auto* plain_tree = g.parser.file();
    const std::string want = dump(plain_tree);
    size_t heap_nodes = 0;  // no arena is current: the heap's
    expect_all_in(plain_tree, nullptr, &heap_nodes);

    // As parse_file does: a first stage that bails out, then a reset.
    ParseSession s(text);
    s.parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
    try {
      s.parser.file();
    } catch (const antlr4::ParseCancellationException&) {
    }
    s.parser.reset();
    s.parser.setErrorHandler(std::make_shared<WordingErrorStrategy>());
    auto* tree = s.parser.file();
    const std::string got = dump(tree);
    ASSERT_EQ(got, want) << text;
    expect_all_in(tree, &s.arena, &nodes);
    for (size_t at = 0; (at = got.find("\nerror ", at)) != std::string::npos; ++at) ++errors;
    for (size_t at = 0; (at = got.find("\ntoken ", at)) != std::string::npos; ++at) ++leaves;
  }
  EXPECT_GT(errors, 100u);
  EXPECT_GT(leaves, 10000u);
  EXPECT_GT(nodes, 20000u);
}

// What ASan still sees of the arena's nodes: a released one is poisoned (it
// is never reused), and so is the gap after every node.
TEST(ParseTree, ArenaNodesStayVisibleToAddressSanitizer) {
#ifndef REFLEX_ARENA_ASAN
  GTEST_SKIP() << "needs an AddressSanitizer build (make sanitize)";
#else
  rfxgen::NodeArena arena;
  rfxgen::NodeArena::Scope in_arena(arena);
  auto* a = static_cast<char*>(rfxgen::NodeArena::allocate(40));
  auto* b = static_cast<char*>(rfxgen::NodeArena::allocate(40));
  EXPECT_EQ(rfxgen::NodeArena::arena_of(a), &arena);
  EXPECT_EQ(__asan_region_is_poisoned(a, 40), nullptr);
  EXPECT_TRUE(__asan_address_is_poisoned(a + 40));  // one past its end
  EXPECT_TRUE(__asan_address_is_poisoned(a + 48));
  rfxgen::NodeArena::release(a, 40);
  EXPECT_TRUE(__asan_address_is_poisoned(a));
  EXPECT_TRUE(__asan_address_is_poisoned(a + 39));
  EXPECT_EQ(__asan_region_is_poisoned(b, 40), nullptr);  // its neighbour lives on
  auto* c = static_cast<char*>(rfxgen::NodeArena::allocate(40));
  EXPECT_NE(c, a);  // not reused
  rfxgen::NodeArena::release(b, 40);
  rfxgen::NodeArena::release(c, 40);
#endif
}

// Comments and white space are dropped by the lexer without a token; the
// tokens around them keep their places.
TEST(ParseTree, CommentsAndWhiteSpaceMakeNoToken) {
  antlr4::ANTLRInputStream input("# c\n  foo // d\n\t\fbar #\n\n");
  ReflexLexer lexer(&input);
  std::vector<std::string> got;
  for (const auto& t : lexer.getAllTokens())
    got.push_back(t->getText() + "@" + std::to_string(t->getLine()) + ":" +
                  std::to_string(t->getCharPositionInLine()) + "#" + std::to_string(t->getType()));
  const std::string id = std::to_string(ReflexLexer::ID);
  EXPECT_EQ(got, (std::vector<std::string>{"foo@2:2#" + id, "bar@3:2#" + id}));
  for (const std::string& text : inputs()) {
    antlr4::ANTLRInputStream in(text);
    ReflexLexer lex(&in);
    for (const auto& t : lex.getAllTokens()) {
      ASSERT_NE(t->getType(), ReflexLexer::WS);
      ASSERT_NE(t->getType(), ReflexLexer::LINE_COMMENT);
    }
  }
}

}  // namespace
}  // namespace reflex::compiler
