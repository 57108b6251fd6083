// Matching one signature against one log message: RE2 captures, field typing
// and normalisation, `when` conditions. Shared by the compiler (inline
// examples, near-misses, ambiguity) and the runtime (confirming Hyperscan
// prefilter hits), so a rule's examples test exactly what production runs.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reflex/kb.h"

namespace reflex {

using FieldValues = std::vector<std::pair<std::string, std::string>>;

class CompiledSignature {
 public:
  // checked: every pattern is compiled (and refused) here. deferred: each
  // pattern is compiled at its first match_part(), for patterns already
  // checked (a compiled artifact's, whose texts reflexc compiled): a KB's
  // start-up then pays only for the patterns its input hits (RE2 was most
  // of `reflex events`' start-up from an artifact). A deferred pattern RE2
  // refuses never matches.
  enum class Patterns { checked, deferred };
  // nullptr + *error when a pattern does not compile in RE2 (Latin-1 / byte mode,
  // log_errors off) or a condition is malformed. Never throws.
  static std::unique_ptr<CompiledSignature> compile(const Signature& sig, std::string* error,
                                                    Patterns patterns = Patterns::checked);
  ~CompiledSignature();

  const Signature& signature() const;
  size_t parts() const;  // 1 + number of `then` continuation lines
  // Runs part i's regex on `text` (unanchored search unless the pattern anchors);
  // appends named captures to *caps. Allocates nothing when it does not match.
  bool match_part(size_t i, std::string_view text, FieldValues* caps) const;
  // Types and normalises captures per the field declarations (bdf -> 0000:18:00.0,
  // hex -> 0x.. lower case, int/float checked), then evaluates `when`.
  // false + *why (e.g. "field xid: 'x1' is not an int", "condition xid in {79} is false").
  bool accept(FieldValues* caps, std::string* why) const;
  // Additive (ingest perf): accept() in two steps, for callers that try many
  // signatures with the same field declarations on one set of captures (one
  // Xid pattern, ~50 signatures): type once, then test each `when`.
  // accept(caps) == type_fields(caps) && when_holds(*caps).
  bool type_fields(FieldValues* caps) const;
  bool when_holds(const FieldValues& caps) const;
  // Whether `transport` is one of the signature's `from` sources.
  bool accepts_transport(Transport transport) const;

 private:
  CompiledSignature();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// All parts against consecutive lines of `text` (split on '\n'; continuation
// lines may be separated by at most join_within_lines-1 other lines), then
// accept(). Used for examples and tests.
bool match_text(const CompiledSignature& sig, std::string_view text, Transport transport,
                FieldValues* out, std::string* why);

}  // namespace reflex
