// The block database's stand-in for a pattern (Matcher, chunk mode).
//
// A pattern that is a concatenation A·B at its top level (groups without a
// quantifier or alternation are opened) only matches where B matches too, so
// B alone, scanned over the same bytes, reports a superset of its lines.
// Where A is an optional or repeated prefix that many lines share (the Xid
// prefix, "NVRM: .*") and B starts at a long literal, B is far cheaper for
// Hyperscan: the block scan of an Xid storm spends most of its time running
// such prefixes to their rare tails. block_factor() picks B: the suffix from
// the first literal run of 8 or more characters after the last wide repeat
// (`.*`, `[^,]*`, `\S+`) that has such a run after it, widened back over the
// literals and literal alternations just before the run (a `.*?` between two
// literals keeps the automaton busy over the rest of every line that holds
// the first); without a wide repeat, from the first such run; else from the
// longest run or all-literal alternation of 5 or more. The cut is made when
// what it drops holds a quantifier and what it keeps holds 12 literal
// characters. Otherwise, or when the text is not plain enough to cut safely
// (top-level alternation, a (?flags) switch, \Q..\E), the text itself.
#pragma once

#include <string>

namespace reflex::ingest {

std::string block_factor(const std::string& text);

}  // namespace reflex::ingest
