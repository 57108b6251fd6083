// Token positions and descriptions, and the listener that turns ANTLR's
// syntax errors into diagnostics with human wording.
#include <algorithm>
#include <array>
#include <limits>

#include "front_end.h"

namespace reflex::compiler {
namespace {

int utf8_len(const std::string& s) {
  int n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// What a person calls each token.
std::string describe_token_type(const antlr4::dfa::Vocabulary& voc, size_t type) {
  switch (type) {
    case ReflexParser::ID:
      return "a name";
    case ReflexParser::STRING:
      return "a string";
    case ReflexParser::TRIPLE_STRING:
      return "a \"\"\"string\"\"\"";
    case ReflexParser::REGEX:
      return "a /regex/";
    case ReflexParser::NUMBER:
      return "a number";
    case ReflexParser::DURATION:
      return "a duration (e.g. 30s)";
    case antlr4::Token::EOF:
      return "end of file";
    default:
      break;
  }
  std::string lit = voc.getLiteralName(type);
  if (!lit.empty()) return lit;
  return voc.getDisplayName(type);
}

std::string describe_offending(const antlr4::Token* t) {
  if (t == nullptr || t->getType() == antlr4::Token::EOF) return "end of file";
  return "'" + shorten(t->getText()) + "'";
}

}  // namespace

// Line/column (1-based, code points) of a byte offset.
std::pair<int, int> line_col(const std::string& text, size_t offset) {
  int line = 1, col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      col = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++col;
    }
  }
  return {line, col};
}

// Offset of the first invalid UTF-8 sequence, or npos.
size_t invalid_utf8_at(const std::string& s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and out-of-range code points are invalid.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return i;
    i += len;
  }
  return std::string::npos;
}

SrcRange token_range(const std::string& file, const antlr4::Token* t) {
  SrcRange r;
  r.file = file;
  if (t == nullptr) return r;
  r.line = static_cast<int>(t->getLine());
  r.col = static_cast<int>(t->getCharPositionInLine()) + 1;
  // A token's indices count code points, so a one-line token's length is
  // their difference: its text (converted from UTF-32 on every call) is only
  // needed for a """string""" that may span lines, and for tokens without
  // indices (end of file, or conjured by the error recovery).
  constexpr size_t kNoIndex = std::numeric_limits<size_t>::max();  // ANTLR's INVALID_INDEX
  const size_t start = t->getStartIndex(), stop = t->getStopIndex();
  const size_t type = t->getType();
  if (type != antlr4::Token::EOF && type != ReflexParser::TRIPLE_STRING &&
      type != ReflexParser::UNTERMINATED_TRIPLE_STRING && start != kNoIndex && stop != kNoIndex &&
      start <= stop) {
    r.len = static_cast<int>(stop - start + 1);
    return r;
  }
  std::string text = type == antlr4::Token::EOF ? std::string() : t->getText();
  size_t nl = text.find('\n');
  if (nl != std::string::npos) text.resize(nl);
  r.len = std::max(1, utf8_len(text));
  return r;
}

std::string shorten(std::string s, size_t max) {
  size_t nl = s.find('\n');
  if (nl != std::string::npos) s = s.substr(0, nl) + "...";
  if (s.size() > max) {
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut) + "...";
  }
  return s;
}

void CollectingListener::syntaxError(antlr4::Recognizer* recognizer, antlr4::Token* offending,
                                     size_t line, size_t col, const std::string& msg,
                                     std::exception_ptr /*unused*/) {
  if (offending != nullptr) {
    size_t t = offending->getType();
    if (is_lex_error(t)) return;
    if (offending->getTokenIndex() == last_token_) return;  // one error per token
    last_token_ = offending->getTokenIndex();
    error_tokens.push_back(offending->getTokenIndex());
  }
  ++count;
  if (count > cap_) {
    SrcRange r = token_range(file_, offending);
    diags_.report(DiagId::too_many_errors, r, "too many syntax errors in this file; stopping here");
    throw TooManyErrors{};
  }
  SrcRange r = token_range(file_, offending);
  if (!r.valid()) {
    r.line = static_cast<int>(line);
    r.col = static_cast<int>(col) + 1;
  }
  diags_.report(DiagId::syntax_error, r, humanize(recognizer, offending, msg));
}

namespace {

using antlr4::atn::ATN;
using antlr4::atn::ATNState;

// The ATN state a parse context was invoked from returns to.
ATNState* return_state(const ATN& atn, const antlr4::RuleContext* ctx) {
  const auto* rt = static_cast<const antlr4::atn::RuleTransition*>(
      atn.states[ctx->invokingState]->transitions[0]);
  return rt->followState;
}

bool is_root(const antlr4::RuleContext* ctx) {
  return ctx == nullptr || ctx->invokingState == ATNState::INVALID_STATE_NUMBER;
}

// ATN::getExpectedTokens(s, ctx).contains(type), and the same for
// ATN::nextTokens(s, ctx) (the full-context LOOK: within-rule sets chained
// through the return states, end of file past the start rule), without
// building the set. `type` is a token type (never EPSILON).
bool can_follow(const ATN& atn, ATNState* s, const antlr4::RuleContext* ctx, size_t type) {
  for (;;) {
    const antlr4::misc::IntervalSet& follow = atn.nextTokens(s);
    if (follow.contains(type)) return true;
    if (!follow.contains(antlr4::Token::EPSILON)) return false;
    if (is_root(ctx)) return type == antlr4::Token::EOF;
    s = return_state(atn, ctx);
    ctx = static_cast<const antlr4::RuleContext*>(ctx->parent);
  }
}

// DefaultErrorStrategy::getErrorRecoverySet(recognizer).contains(type): what
// follows any rule invocation on the stack.
bool in_recovery_set(const ATN& atn, const antlr4::RuleContext* ctx, size_t type) {
  for (; !is_root(ctx); ctx = static_cast<const antlr4::RuleContext*>(ctx->parent)) {
    if (atn.nextTokens(return_state(atn, ctx)).contains(type)) return true;
  }
  return false;
}

// DefaultErrorStrategy::consumeUntil with a membership test for the set.
// The set is fixed for the call (the state and the stack do not change
// while tokens are skipped) and a run of bad characters is thousands of
// tokens of a few types, so each type is asked once: walking the stack per
// token was 16% of such a file.
template <typename InSet>
void consume_until(antlr4::Parser* recognizer, InSet in_set) {
  std::array<signed char, 256> known{};  // 0 not asked yet, 1 in the set, -1 not
  auto member = [&](size_t type) {
    if (type >= known.size()) return in_set(type);
    if (known[type] == 0) known[type] = in_set(type) ? 1 : -1;
    return known[type] > 0;
  };
  size_t ttype = recognizer->getInputStream()->LA(1);
  while (ttype != antlr4::Token::EOF && !member(ttype)) {
    recognizer->consume();
    ttype = recognizer->getInputStream()->LA(1);
  }
}

ATNState* current_state(antlr4::Parser* recognizer) {
  return recognizer->getATN().states[recognizer->getState()];
}

}  // namespace

// As DefaultErrorStrategy::recover: consume at least one token on a second
// error at the same token and state, then skip to what follows a rule on
// the stack.
void WordingErrorStrategy::recover(antlr4::Parser* recognizer, std::exception_ptr /*e*/) {
  const int index = static_cast<int>(recognizer->getInputStream()->index());
  if (lastErrorIndex == index && lastErrorStates.contains(recognizer->getState()))
    recognizer->consume();
  lastErrorIndex = static_cast<int>(recognizer->getInputStream()->index());
  lastErrorStates.add(recognizer->getState());
  const ATN& atn = recognizer->getATN();
  const antlr4::RuleContext* ctx = recognizer->getContext();
  consume_until(recognizer, [&](size_t t) { return in_recovery_set(atn, ctx, t); });
}

// As DefaultErrorStrategy::sync, the within-rule set by reference.
void WordingErrorStrategy::sync(antlr4::Parser* recognizer) {
  if (inErrorRecoveryMode(recognizer)) return;
  ATNState* s = current_state(recognizer);
  const size_t la = recognizer->getTokenStream()->LA(1);
  const antlr4::misc::IntervalSet& next = recognizer->getATN().nextTokens(s);
  if (next.contains(antlr4::Token::EPSILON) || next.contains(la)) return;
  switch (s->getStateType()) {
    case ATNState::BLOCK_START:
    case ATNState::STAR_BLOCK_START:
    case ATNState::PLUS_BLOCK_START:
    case ATNState::STAR_LOOP_ENTRY:
      if (singleTokenDeletion(recognizer) != nullptr) return;
      throw antlr4::InputMismatchException(recognizer);
    case ATNState::PLUS_LOOP_BACK:
    case ATNState::STAR_LOOP_BACK: {
      reportUnwantedToken(recognizer);
      const ATN& atn = recognizer->getATN();
      const antlr4::RuleContext* ctx = recognizer->getContext();
      // The expected tokens here, or what follows a rule on the stack.
      consume_until(recognizer, [&](size_t t) {
        return can_follow(atn, s, ctx, t) || in_recovery_set(atn, ctx, t);
      });
      break;
    }
    default:
      break;
  }
}

// As DefaultErrorStrategy's: the current token is what could follow the
// expected one, so the expected one is missing.
bool WordingErrorStrategy::singleTokenInsertion(antlr4::Parser* recognizer) {
  const size_t la = recognizer->getInputStream()->LA(1);
  ATNState* next = current_state(recognizer)->transitions[0]->target;
  if (!can_follow(recognizer->getATN(), next, recognizer->getContext(), la)) return false;
  reportMissingToken(recognizer);
  return true;
}

// As DefaultErrorStrategy's: the token after the current one is expected,
// so the current one is extra.
antlr4::Token* WordingErrorStrategy::singleTokenDeletion(antlr4::Parser* recognizer) {
  const size_t la2 = recognizer->getInputStream()->LA(2);
  if (!can_follow(recognizer->getATN(), current_state(recognizer), recognizer->getContext(), la2))
    return nullptr;
  reportUnwantedToken(recognizer);
  recognizer->consume();
  antlr4::Token* matched = recognizer->getCurrentToken();
  reportMatch(recognizer);
  return matched;
}

void WordingErrorStrategy::reportNoViableAlternative(antlr4::Parser* recognizer,
                                                     const antlr4::NoViableAltException& e) {
  recognizer->notifyErrorListeners(e.getOffendingToken(), "no viable alternative", nullptr);
}

void WordingErrorStrategy::reportInputMismatch(antlr4::Parser* recognizer,
                                               const antlr4::InputMismatchException& e) {
  recognizer->notifyErrorListeners(e.getOffendingToken(), "mismatched input", nullptr);
}

// As DefaultErrorStrategy's: once per error condition.
void WordingErrorStrategy::reportUnwantedToken(antlr4::Parser* recognizer) {
  if (inErrorRecoveryMode(recognizer)) return;
  beginErrorCondition(recognizer);
  recognizer->notifyErrorListeners(recognizer->getCurrentToken(), "extraneous input", nullptr);
}

void WordingErrorStrategy::reportMissingToken(antlr4::Parser* recognizer) {
  if (inErrorRecoveryMode(recognizer)) return;
  beginErrorCondition(recognizer);
  recognizer->notifyErrorListeners(recognizer->getCurrentToken(), "missing ", nullptr);
}

namespace {

// ATN::getExpectedTokens(state, ctx), the token types ascending, end of file
// and epsilon left out, without building IntervalSets: humanize asked ANTLR
// for the set and its list (allocations per stack level) on every error.
std::vector<size_t> expected_types(antlr4::Parser* parser) {
  const ATN& atn = parser->getATN();
  const size_t state = parser->getState();
  if (state >= atn.states.size()) return {};  // ANTLR throws: nothing expected
  std::vector<char> in(parser->getVocabulary().getMaxTokenType() + 1, 0);
  auto add = [&in](const antlr4::misc::IntervalSet& set) {
    for (const auto& iv : set.getIntervals())
      for (ssize_t t = std::max<ssize_t>(iv.a, 0); t <= iv.b && static_cast<size_t>(t) < in.size();
           ++t)
        in[static_cast<size_t>(t)] = 1;
  };
  const antlr4::RuleContext* ctx = parser->getContext();
  const antlr4::misc::IntervalSet* following = &atn.nextTokens(atn.states[state]);
  add(*following);
  while (!is_root(ctx) && following->contains(antlr4::Token::EPSILON)) {
    following = &atn.nextTokens(return_state(atn, ctx));
    add(*following);
    ctx = static_cast<const antlr4::RuleContext*>(ctx->parent);
  }
  std::vector<size_t> types;
  types.reserve(static_cast<size_t>(std::count(in.begin(), in.end(), 1)));
  for (size_t t = 0; t < in.size(); ++t)
    if (in[t]) types.push_back(t);
  return types;
}

// The token type written `lit` in the grammar ('match', '}'), or 0.
size_t literal_type(const antlr4::dfa::Vocabulary& voc, const std::string& lit) {
  for (size_t t = 1; t <= voc.getMaxTokenType(); ++t)
    if (voc.getLiteralName(t) == lit) return t;
  return 0;
}

// The keywords the wording looks for, looked up once (one grammar).
struct WordingTypes {
  size_t signature, match, close_brace;
};
const WordingTypes& wording_types(const antlr4::dfa::Vocabulary& voc) {
  static const WordingTypes types{literal_type(voc, "'signature'"), literal_type(voc, "'match'"),
                                  literal_type(voc, "'}'")};
  return types;
}

}  // namespace

std::string CollectingListener::humanize(antlr4::Recognizer* recognizer, antlr4::Token* offending,
                                         const std::string& msg) {
  auto* parser = dynamic_cast<antlr4::Parser*>(recognizer);
  std::vector<size_t> types;  // ascending and distinct
  auto has = [&types](size_t t) { return std::binary_search(types.begin(), types.end(), t); };
  std::vector<size_t> shown;  // the expected types worth naming
  if (parser != nullptr) {
    types = expected_types(parser);
    // Soft keywords are names too: with a name expected, do not list them.
    // Which keywords are soft is the grammar's `name` rule (read from the
    // ATN, so the list is written once, in Reflex.g4).
    const antlr4::atn::ATN& atn = parser->getATN();
    const antlr4::misc::IntervalSet& name_tokens =
        atn.nextTokens(atn.ruleToStartState[ReflexParser::RuleName]);
    bool name_expected = has(ReflexParser::ID);
    shown.reserve(types.size());
    for (size_t t : types)
      if (!(name_expected && t != ReflexParser::ID && name_tokens.contains(t))) shown.push_back(t);
  }
  std::string found = describe_offending(offending);
  // Targeted advice for common slips.
  if (offending && offending->getText() == "=" && parser) {
    for (auto* ctx = parser->getContext(); ctx != nullptr;
         ctx = dynamic_cast<antlr4::ParserRuleContext*>(ctx->parent)) {
      if (ctx->getRuleIndex() == ReflexParser::RuleCond ||
          dynamic_cast<ReflexParser::WhenMemberContext*>(ctx) != nullptr)
        return "unexpected '='; use '==' to compare";
    }
  }
  if (has(ReflexParser::DURATION) && offending && offending->getType() == ReflexParser::ID)
    return "expected a duration (e.g. 30s, 500ms, 10m), found " + found;
  std::string want;
  auto shows = [&shown](size_t t) {
    return t != 0 && std::find(shown.begin(), shown.end(), t) != shown.end();
  };
  const WordingTypes* kw = parser ? &wording_types(parser->getVocabulary()) : nullptr;
  if (kw && shows(kw->signature)) {
    want =
        "a declaration (signature, rule, latent, group, pattern, class, test, import, "
        "override)";
  } else if (kw && shows(kw->match)) {
    want = "a statement (on, from, match, field, when, ..., or '->' in a rule)";
    if (shows(kw->close_brace)) want += " or '}'";
  } else if (!shown.empty()) {
    size_t n = std::min<size_t>(shown.size(), 6);
    for (size_t i = 0; i < n; ++i) {
      if (i) want += (i + 1 == n && shown.size() <= 6) ? " or " : ", ";
      want += describe_token_type(parser->getVocabulary(), shown[i]);
    }
    if (shown.size() > 6) want += ", ...";
  }
  if (msg.rfind("missing ", 0) == 0 && !want.empty())
    return "expected " + want + " before " + found;
  if (want.empty()) return "unexpected " + found;
  return "unexpected " + found + "; expected " + want;
}

}  // namespace reflex::compiler
