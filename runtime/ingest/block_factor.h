// The block database's stand-in for a pattern (Matcher, chunk mode).
//
// A pattern that is a concatenation A·B at its top level (groups without a
// quantifier or alternation are opened) only matches where B matches too, so
// B alone, scanned over the same bytes, reports a superset of its lines.
// Where A is an optional or repeated prefix that many lines share (the Xid
// prefix, "NVRM: .*") and B starts at a long literal, B is far cheaper for
// Hyperscan: the block scan of an Xid storm spends most of its time running
// such prefixes to their rare tails. block_factor() picks B: the suffix from
// the first literal run of 8 or more characters (else from the longest run or
// all-literal alternation of 5 or more), when what it drops holds a
// quantifier and what it keeps holds 12 literal characters. Otherwise, or
// when the text is not plain enough to cut safely (top-level alternation, a
// (?flags) switch, \Q..\E), the text itself.
#pragma once

#include <string>

namespace reflex::ingest {

std::string block_factor(const std::string& text);

}  // namespace reflex::ingest
