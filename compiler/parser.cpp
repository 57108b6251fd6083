// ANTLR parse tree -> AST. Pre-checks run first so ANTLR never sees invalid
// UTF-8 (ANTLRInputStream throws) or deep nesting (its recursion overflows).
#include "parser.h"

#include <algorithm>
#include <set>

#include "front_end.h"

namespace reflex::compiler {
namespace {

// Nesting depth over tokens (brackets, chained `not`, parentheses inside
// regexes). Returns the token where the limit is passed, or nullptr.
const antlr4::Token* too_deep(const std::vector<antlr4::Token*>& tokens, int limit,
                              const antlr4::dfa::Vocabulary& voc) {
  int depth = 0;
  int nots = 0;
  for (const auto* t : tokens) {
    const std::string lit = voc.getLiteralName(t->getType());
    if (lit == "'('" || lit == "'{'") ++depth;
    if (lit == "')'" || lit == "'}'") depth = std::max(0, depth - 1);
    nots = lit == "'not'" ? nots + 1 : 0;
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

// The lexer's error tokens as diagnostics, one per line (at most
// max_errors_per_file).
void report_lex_errors(const std::string& path, const std::vector<antlr4::Token*>& all,
                       DiagEngine& diags, const CompileOptions& options) {
  int lex_errors = 0;
  std::set<size_t> bad_lines;
  for (const auto* t : all) {
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
      case ReflexParser::BAD_CHAR:
        id = DiagId::unexpected_char;
        msg = "unexpected character '" + shorten(t->getText()) + "'";
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
}

}  // namespace

bool parse_file(SourceFile& file, DiagEngine& diags, const CompileOptions& options) {
  if (!text_is_parseable(file, diags, options)) return false;
  const std::string& text = file.text;
  SrcRange at;
  at.file = file.path;
  try {
    antlr4::ANTLRInputStream input(text);
    ReflexLexer lexer(&input);
    lexer.removeErrorListeners();
    antlr4::CommonTokenStream tokens(&lexer);
    tokens.fill();
    std::vector<antlr4::Token*> all = tokens.getTokens();

    if (const antlr4::Token* deep =
            too_deep(all, options.max_nesting_depth, lexer.getVocabulary())) {
      diags.report(DiagId::nesting_too_deep, token_range(file.path, deep),
                   "nesting deeper than " + std::to_string(options.max_nesting_depth) +
                       " levels; the file is not parsed further");
      return false;
    }

    report_lex_errors(file.path, all, diags, options);

    ReflexParser parser(&tokens);
    parser.removeErrorListeners();
    CollectingListener listener(file.path, diags, options.max_errors_per_file);
    parser.addErrorListener(&listener);
    ReflexParser::FileContext* tree = nullptr;
    try {
      tree = parser.file();
    } catch (const TooManyErrors&) {
      return false;
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
