// The compiler's shared types: its options, diagnostics and the result of a
// compile. Apart from the entry points (reflex/compiler.h) so that the
// compiler's own files and the renderers can use them without including the
// whole API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "reflex/kb.h"

namespace reflex {

// Every limit of the front end in one place, so hostile input is bounded.
struct CompileOptions {
  size_t max_file_bytes = 4u << 20;         // a larger .rfx file is an error in that file
  int max_nesting_depth = 128;              // brackets / parentheses (also inside regexes)
  int max_errors_per_file = 50;             // syntax errors before we stop reporting a file
  int max_errors = 500;                     // all diagnostics of severity error
  bool warnings_as_errors = false;          // --Werror
  std::set<std::string> disabled_warnings;  // --no-warn NAME
  std::set<std::string> enabled_warnings;   // -W NAME (re-enables a disabled one)
  bool check_examples = true;               // run inline examples / near-misses / ambiguity
  bool check_hyperscan = true;              // validate every pattern with Hyperscan as well as RE2
  // false: patterns get a cheap syntax scan (escapes, brackets, named groups)
  // instead of an RE2/Hyperscan compile, so fuzzing reaches the passes fast.
  // A unit that checks clean this way may still hold a pattern RE2 rejects.
  bool check_regex = true;
  bool analyse_graph = true;  // cycles, reachability, indistinguishable roots
  bool allow_imports = true;  // false: `import` is an error (fuzzing, sandboxed use)
};

enum class DiagSeverity : uint8_t { note, warning, error };
const char* to_string(DiagSeverity s);

struct DiagNote {
  SourceLoc loc;  // loc.file empty = no location
  std::string message;
};

struct Diagnostic {
  DiagSeverity severity = DiagSeverity::error;
  std::string code;         // stable: "E012", "W003"
  std::string name;         // warning name for -W/--no-warn/allow ("" for errors)
  std::string title;        // short title of the code
  std::string message;      // this occurrence
  SourceLoc loc;            // 1-based line/col; file "" = no location (whole unit)
  int length = 1;           // columns to underline on loc.line (0: no source line to show)
  std::string source_line;  // the text of loc.line (for rendering), "" if none
  std::vector<DiagNote> notes;
};

// Catalog of all diagnostic codes (for SARIF rules, docs and tests).
struct DiagnosticInfo {
  std::string code;
  DiagSeverity severity;
  std::string name;  // warnings only
  std::string title;
  std::string description;
};
const std::vector<DiagnosticInfo>& diagnostic_catalog();
// True when NAME is a switchable warning name.
bool is_warning_name(const std::string& name);

struct CompileResult {
  // Set when the inputs themselves could not be used (nonexistent path,
  // directory without .rfx files, unreadable file): `reflexc` exits 2.
  bool io_error = false;
  std::string io_message;
  std::vector<std::string> files;       // the unit's sources, sorted, as displayed
  std::vector<Diagnostic> diagnostics;  // sorted (file, line, col, severity, code)
  std::optional<KnowledgeBase> kb;      // set when there are no errors
  int errors() const;
  int warnings() const;
  bool ok() const { return !io_error && errors() == 0; }
};

}  // namespace reflex
