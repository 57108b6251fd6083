// ANTLR parse tree -> AST. Pre-checks run first so ANTLR never sees invalid
// UTF-8 (ANTLRInputStream throws) or deep nesting (its recursion overflows).
#include "parser.h"

#include <algorithm>
#include <memory>
#include <set>
#include <vector>

#include "front_end.h"

namespace reflex::compiler {
namespace {

// What too_deep() needs to know of a token type, looked up once per
// vocabulary: a std::string per token from getLiteralName() cost ~10% of a parse.
enum class Nest : unsigned char { none, open, close, not_kw };

const std::vector<Nest>& nest_kinds(const antlr4::dfa::Vocabulary& voc) {
  static const std::vector<Nest> kinds = [&voc] {
    std::vector<Nest> k(voc.getMaxTokenType() + 1, Nest::none);
    for (size_t type = 0; type < k.size(); ++type) {
      const std::string lit = voc.getLiteralName(type);
      if (lit == "'('" || lit == "'{'") k[type] = Nest::open;
      if (lit == "')'" || lit == "'}'") k[type] = Nest::close;
      if (lit == "'not'") k[type] = Nest::not_kw;
    }
    return k;
  }();
  return kinds;
}

// Nesting depth over tokens (brackets, chained `not`, parentheses inside
// regexes). Returns the token where the limit is passed, or nullptr.
const antlr4::Token* too_deep(const std::vector<antlr4::Token*>& tokens, int limit,
                              const antlr4::dfa::Vocabulary& voc) {
  const std::vector<Nest>& kinds = nest_kinds(voc);
  int depth = 0;
  int nots = 0;
  for (const auto* t : tokens) {
    const size_t type = t->getType();
    const Nest kind = type < kinds.size() ? kinds[type] : Nest::none;  // EOF is -1
    if (kind == Nest::open) ++depth;
    if (kind == Nest::close) depth = std::max(0, depth - 1);
    nots = kind == Nest::not_kw ? nots + 1 : 0;
    if (depth + nots > limit) return t;
    if (t->getType() == ReflexParser::REGEX) {
      int d = 0;
      const std::string s = t->getText();
      bool in_class = false;
      for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\') {
          ++i;
          continue;
        }
        if (in_class) {
          if (s[i] == ']') in_class = false;
          continue;
        }
        if (s[i] == '[') in_class = true;
        if (s[i] == '(') ++d;
        if (s[i] == ')') d = std::max(0, d - 1);
        if (d > limit) return t;
      }
    }
  }
  return nullptr;
}

}  // namespace

std::string unescape_string(const std::string& body) {
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 >= body.size()) {
      out += body[i];
      continue;
    }
    char n = body[++i];
    switch (n) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      default:
        out += '\\';
        out += n;
    }
  }
  return out;
}

namespace {

// A file the parser must not see: too large, binary, or not UTF-8.
bool text_is_parseable(const SourceFile& file, DiagEngine& diags, const CompileOptions& options) {
  const std::string& text = file.text;
  SrcRange at;
  at.file = file.path;
  if (file.too_large || text.size() > options.max_file_bytes) {
    at.line = at.col = 1;
    diags.report(DiagId::file_too_large, at,
                 "file is " + std::to_string(file.too_large ? file.too_large : text.size()) +
                     " bytes; the limit is " + std::to_string(options.max_file_bytes));
    return false;
  }
  if (size_t nul = text.find('\0'); nul != std::string::npos) {
    auto [l, c] = line_col(text, nul);
    at.line = l;
    at.col = c;
    diags.report(
        DiagId::binary_file, at,
        "file contains a NUL byte at offset " + std::to_string(nul) + "; this is not a text file");
    return false;
  }
  if (size_t bad = invalid_utf8_at(text); bad != std::string::npos) {
    auto [l, c] = line_col(text, bad);
    at.line = l;
    at.col = c;
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(text[bad]));
    diags.report(DiagId::invalid_utf8, at,
                 std::string("invalid UTF-8 (byte ") + hex + " at offset " + std::to_string(bad) +
                     "); .rfx files must be UTF-8");
    return false;
  }
  return true;
}

// The first character (code point) of UTF-8 text.
std::string first_char(const std::string& s) {
  size_t n = 1;
  while (n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) ++n;
  return s.substr(0, n);
}

// The lexer's error tokens as diagnostics, one per line (at most
// max_errors_per_file). Returns whether there was any.
bool report_lex_errors(const std::string& path, const std::vector<antlr4::Token*>& all,
                       DiagEngine& diags, const CompileOptions& options) {
  int lex_errors = 0;
  std::set<size_t> bad_lines;
  bool any = false;
  for (const auto* t : all) {
    any = any || is_lex_error(t->getType());
    DiagId id;
    std::string msg;
    switch (t->getType()) {
      case ReflexParser::UNTERMINATED_STRING:
        id = DiagId::unterminated_string;
        msg = "missing closing '\"' at the end of the line";
        break;
      case ReflexParser::UNTERMINATED_TRIPLE_STRING:
        id = DiagId::unterminated_string;
        msg = "\"\"\" string is never closed";
        break;
      case ReflexParser::UNTERMINATED_REGEX:
        id = DiagId::unterminated_regex;
        msg = "missing closing '/' of the regex (write a literal slash as \\/)";
        break;
      case ReflexParser::BAD_DURATION:
        id = DiagId::syntax_error;
        msg = "'" + t->getText() +
              "' is not a duration: a number and one of the units ms, s, m, h, d (e.g. 1h)";
        break;
      case ReflexParser::BAD_CHAR:  // a run of them is one token: its first is named
        id = DiagId::unexpected_char;
        msg = "unexpected character '" + first_char(t->getText()) + "'";
        break;
      default:
        continue;
    }
    if (bad_lines.count(t->getLine()) && t->getType() == ReflexParser::BAD_CHAR) continue;
    bad_lines.insert(t->getLine());
    if (++lex_errors > options.max_errors_per_file) break;
    SrcRange r = token_range(path, t);
    diags.report(id, r, msg);
  }
  return any;
}

}  // namespace

bool is_lex_error(size_t type) {
  return type == ReflexParser::UNTERMINATED_STRING ||
         type == ReflexParser::UNTERMINATED_TRIPLE_STRING ||
         type == ReflexParser::UNTERMINATED_REGEX || type == ReflexParser::BAD_CHAR ||
         type == ReflexParser::BAD_DURATION;
}

bool parse_file(SourceFile& file, DiagEngine& diags, const CompileOptions& options) {
  if (!text_is_parseable(file, diags, options)) return false;
  const std::string& text = file.text;
  SrcRange at;
  at.file = file.path;
  try {
    ParseSession session(text);
    antlr4::CommonTokenStream& tokens = session.tokens;
    tokens.fill();
    std::vector<antlr4::Token*> all = tokens.getTokens();

    if (const antlr4::Token* deep =
            too_deep(all, options.max_nesting_depth, session.lexer.getVocabulary())) {
      diags.report(DiagId::nesting_too_deep, token_range(file.path, deep),
                   "nesting deeper than " + std::to_string(options.max_nesting_depth) +
                       " levels; the file is not parsed further");
      return false;
    }

    const bool lex_errors = report_lex_errors(file.path, all, diags, options);

    // Two stages, as ANTLR advises: SLL prediction with a bail-out strategy
    // is correct whenever it succeeds (the same tree as full LL) and much
    // cheaper; only on a failure (a syntax error, or input that needs full
    // context) is the file parsed again with full LL and the error listener,
    // so syntax errors and their wording are those of a single LL parse.
    // A lexer error token is in no parser rule, so with one the first stage
    // would fail: it is skipped.
    LeafArenaParser& parser = session.parser;
    auto* sim = parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
    ReflexParser::FileContext* tree = nullptr;
    CollectingListener listener(file.path, diags, options.max_errors_per_file);
    if (!lex_errors) {
      sim->setPredictionMode(antlr4::atn::PredictionMode::SLL);
      parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
      try {
        tree = parser.file();
      } catch (const antlr4::ParseCancellationException&) {
        tree = nullptr;
      }
    }
    if (tree == nullptr) {
      if (!lex_errors) parser.reset();  // rewinds the token stream, frees the first tree
      sim->setPredictionMode(antlr4::atn::PredictionMode::LL);
      parser.setErrorHandler(std::make_shared<WordingErrorStrategy>());
      parser.addErrorListener(&listener);
      try {
        tree = parser.file();
      } catch (const TooManyErrors&) {
        return false;
      }
    }
    build_decls(file, tree, all, listener.error_tokens);
    file.parsed = true;
    return true;
  } catch (const std::exception& e) {
    at.line = at.col = 1;
    diags.report(DiagId::syntax_error, at, std::string("the parser failed: ") + e.what());
    return false;
  } catch (...) {
    at.line = at.col = 1;
    diags.report(DiagId::syntax_error, at, "the parser failed");
    return false;
  }
}

}  // namespace reflex::compiler
