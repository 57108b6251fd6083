// The regex dialect of the language, defined once. RE2 in Latin-1 (byte)
// mode confirms every match and extracts the captures; Hyperscan prefilters
// with the flags below. The compiler validates patterns with exactly what the
// runtime matcher compiles them with, so a pattern that checks clean loads.
#pragma once

#include <set>
#include <string>

namespace reflex {

// Hyperscan flags of one line pattern in the matcher's database. `prefilter`:
// the pattern is not Hyperscan-exact, so hits are candidates RE2 confirms.
unsigned hyperscan_pattern_flags(bool prefilter);

// Whether RE2 (the language's options) compiles the pattern; *error otherwise.
bool re2_pattern_ok(const std::string& pattern, std::string* error);
// Whether Hyperscan compiles it at least as a prefilter (the matcher's
// fallback before RE2 alone); *error otherwise.
bool hyperscan_pattern_ok(const std::string& pattern, std::string* error);
// Named groups of the pattern as RE2 sees them (empty if it does not compile).
std::set<std::string> pattern_capture_names(const std::string& pattern);

}  // namespace reflex
