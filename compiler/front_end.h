// What the front end's three files share: parser.cpp (byte-level pre-checks,
// then ANTLR), syntax_errors.cpp (token positions and the error listener that
// words syntax errors) and ast_builder.cpp (parse tree -> AST). ANTLR types
// never leave these files (parser.h is the front end's interface).
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ReflexLexer.h"
#include "ReflexParser.h"
#include "antlr4-runtime.h"
#include "ast.h"
#include "diagnostics.h"
#include "reflex_grammar/node_arena.h"

namespace reflex::compiler {

using rfxgen::ReflexContext;
using rfxgen::ReflexLexer;
using rfxgen::ReflexParser;

// The lexer's error tokens (an unterminated string or regex, a bad character,
// a number glued to a word that is no unit): reported by the front end with
// their own message, never by the parser (parser.cpp).
bool is_lex_error(size_t token_type);

// ---- token positions (syntax_errors.cpp) ----
// Line/column (1-based, code points) of a byte offset.
std::pair<int, int> line_col(const std::string& text, size_t offset);
// Offset of the first invalid UTF-8 sequence, or npos.
size_t invalid_utf8_at(const std::string& s);
SrcRange token_range(const std::string& file, const antlr4::Token* t);
std::string shorten(std::string s, size_t max = 24);

// ---- token text (ast_builder.cpp) ----
// A token's text from the source's bytes. The runtime's getText converts
// each token from UTF-32 into a new string (a rule's through a
// stringstream): 4% of the .rfx fuzzer's time (perf). Token indices count
// code points of the text after a UTF-8 byte-order mark, as the input stream
// decoded it (parse_file has refused invalid UTF-8). Same text as getText.
class TokenText {
 public:
  explicit TokenText(const std::string& text);
  std::string of(const antlr4::Token* t) const;
  // A rule's text as RuleContext::getText: its tokens' texts, concatenated.
  std::string of(antlr4::tree::ParseTree* n) const;

 private:
  size_t byte(size_t code_point) const;
  void append(antlr4::tree::ParseTree* n, std::string& out) const;

  const std::string& text_;
  size_t bom_ = 0;
  std::vector<size_t> offsets_;  // byte offset of each code point; empty when all ASCII
};

// ---- the error listener (syntax_errors.cpp) ----
struct TooManyErrors {};

// Collects syntax errors as diagnostics with human wording. Errors on the
// lexer's error tokens are skipped: those were reported precisely already.
class CollectingListener : public antlr4::BaseErrorListener {
 public:
  CollectingListener(const std::string& file, DiagEngine& diags, int cap)
      : file_(file), diags_(diags), cap_(cap) {}

  void syntaxError(antlr4::Recognizer* recognizer, antlr4::Token* offending, size_t line,
                   size_t col, const std::string& msg, std::exception_ptr) override;

  int count = 0;
  std::vector<size_t> error_tokens;

 private:
  std::string humanize(antlr4::Recognizer* recognizer, antlr4::Token* offending,
                       const std::string& msg);

  const std::string& file_;
  DiagEngine& diags_;
  int cap_;
  size_t last_token_ = static_cast<size_t>(-1);
};

// ANTLR's DefaultErrorStrategy with the same recovery and shorter messages.
// Its own messages spell out the expected tokens ("mismatched input 'x'
// expecting {...}") and copy the exception for the listener; the listener
// words every error from the parser's state and reads of the message only
// whether it starts with "missing ". So the messages are cut to their first
// words: the same recovery and diagnostics, less work per syntax error.
//
// Recovery computes the same sets as DefaultErrorStrategy but asks them
// membership questions instead of building them: ANTLR copies and unions an
// IntervalSet (heap vectors) per invocation level for the expected tokens,
// the full-context LOOK of single-token insertion and the recovery set, and
// copies the within-rule follow set on every sync() of every loop
// iteration. The answers come from the ATN's cached within-rule sets,
// walked up the invocation stack (ATN::getExpectedTokens' own walk), so
// which tokens are deleted, inserted and skipped is unchanged.
class WordingErrorStrategy : public antlr4::DefaultErrorStrategy {
 public:
  void recover(antlr4::Parser* recognizer, std::exception_ptr e) override;
  void sync(antlr4::Parser* recognizer) override;

 protected:
  bool singleTokenInsertion(antlr4::Parser* recognizer) override;
  antlr4::Token* singleTokenDeletion(antlr4::Parser* recognizer) override;

  void reportNoViableAlternative(antlr4::Parser* recognizer,
                                 const antlr4::NoViableAltException& e) override;
  void reportInputMismatch(antlr4::Parser* recognizer,
                           const antlr4::InputMismatchException& e) override;
  void reportUnwantedToken(antlr4::Parser* recognizer) override;
  void reportMissingToken(antlr4::Parser* recognizer) override;
};

// ---- the parser (parser.cpp) ----
// The generated parser, whose token leaves live in two deques it owns
// instead of one heap node each in the runtime's tracker (one leaf per
// token: 9% of the front end's allocations over the fuzz corpus, heaptrack).
// consume() is Parser::consume() of ANTLR 4.9 with that one change; the
// tree is the same (parse_tree_test.cpp compares them), and it lives as long
// as the parser, as the tracker's nodes do.
class LeafArenaParser : public ReflexParser {
 public:
  using ReflexParser::ReflexParser;

  antlr4::Token* consume() override {
    if (!_parseListeners.empty()) return ReflexParser::consume();  // none are added
    antlr4::Token* o = getCurrentToken();
    if (o->getType() != antlr4::Token::EOF) getInputStream()->consume();
    if (_buildParseTrees) {
      if (_errHandler->inErrorRecoveryMode(this))
        _ctx->addChild(&errors_.emplace_back(o));
      else
        _ctx->addChild(&terminals_.emplace_back(o));
    }
    return o;
  }

  void reset() override {  // frees the tree, as Parser::reset() frees the tracker's
    ReflexParser::reset();
    terminals_.clear();
    errors_.clear();
  }

 private:
  std::deque<antlr4::tree::TerminalNodeImpl> terminals_;
  std::deque<antlr4::tree::ErrorNodeImpl> errors_;
};

// ---- tokens from the parse's arena ----
// The lexer's tokens (and the error strategy's conjured ones) as
// CommonTokenFactory makes them, but allocated from the current NodeArena.
class ArenaToken : public antlr4::CommonToken {
 public:
  using antlr4::CommonToken::CommonToken;
  static void* operator new(std::size_t n) { return rfxgen::NodeArena::allocate(n); }
  static void operator delete(void* p, std::size_t n) noexcept { rfxgen::NodeArena::release(p, n); }
};

class ArenaTokenFactory : public antlr4::TokenFactory<antlr4::CommonToken> {
 public:
  std::unique_ptr<antlr4::CommonToken> create(
      std::pair<antlr4::TokenSource*, antlr4::CharStream*> source, size_t type,
      const std::string& text, size_t channel, size_t start, size_t stop, size_t line,
      size_t column) override {
    auto t = std::make_unique<ArenaToken>(source, type, channel, start, stop);
    t->setLine(line);
    t->setCharPositionInLine(column);
    if (!text.empty()) t->setText(text);  // the runtime's copyText is off
    return t;
  }
  std::unique_ptr<antlr4::CommonToken> create(size_t type, const std::string& text) override {
    return std::make_unique<ArenaToken>(type, text);
  }
};

// ---- one parse's objects (parse_file) ----
// The arena is the first member, so it is destroyed last: after every token
// and context made from it. The lexer makes its tokens with the arena's
// factory; the parser's conjured tokens come from the same factory.
struct ParseSession {
  explicit ParseSession(const std::string& text) : input(text) {
    lexer.setTokenFactory(&token_factory);
    lexer.removeErrorListeners();
    parser.removeErrorListeners();
  }
  ParseSession(const ParseSession&) = delete;
  ParseSession& operator=(const ParseSession&) = delete;

  rfxgen::NodeArena arena;
  rfxgen::NodeArena::Scope in_arena{arena};
  ArenaTokenFactory token_factory;
  antlr4::ANTLRInputStream input;
  ReflexLexer lexer{&input};
  antlr4::CommonTokenStream tokens{&lexer};
  LeafArenaParser parser{&tokens};
};

// ---- parse tree -> AST (ast_builder.cpp) ----
// The tree's declarations into file.decls; one containing a syntax error (a
// parser error token, or a lexer error token) is kept for its name only.
void build_decls(SourceFile& file, ReflexParser::FileContext* tree,
                 const std::vector<antlr4::Token*>& all, std::vector<size_t> errs);

}  // namespace reflex::compiler
