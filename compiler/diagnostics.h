// The diagnostics engine: one table of codes (code, severity, warning name,
// title, description), a collector that applies -W/--no-warn/--Werror/`allow`,
// and deterministic ordering for golden files.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ast.h"
#include "reflex/compile_types.h"

namespace reflex::compiler {

enum class DiagId : uint16_t {
  // input and syntax
  file_too_large,
  invalid_utf8,
  binary_file,
  nesting_too_deep,
  syntax_error,
  unterminated_string,
  unterminated_regex,
  unexpected_char,
  language_version,
  too_many_errors,
  // names
  duplicate_decl,
  unknown_event,
  unknown_pattern,
  unknown_class,
  unknown_parent,
  field_not_captured,
  unknown_binding,
  import_not_found,
  duplicate_kb,
  unknown_kind,
  unknown_relation,
  unknown_transport,
  unknown_type,
  invalid_keyword_value,
  misplaced_statement,
  duplicate_statement,
  invalid_literal,
  // semantics
  relation_kinds,
  locate_type,
  condition_type,
  strength_range,
  inverted_window,
  negative_window,
  latent_effect,
  override_undefined,
  override_twice,
  override_statement,
  class_parent,
  class_cycle,
  missing_statement,
  causal_cycle,
  regex_re2,
  regex_hyperscan,
  example_no_match,
  near_miss_matches,
  example_transport,
  extends_cycle,
  engine_requirement,
  test_file_missing,
  example_field_value,
  group_cycle,
  empty_group,
  quorum_range,
  lasting_cause,
  // warnings
  unused_import,
  ambiguous_match,
  unreachable_event,
  unexplained_symptom,
  indistinguishable_roots,
  unanchored_pattern,
  empty_window,
  unused_pattern,
  unknown_warning,
  duplicate_member,
  unused_group,
  locate_value,
  kCount
};

struct DiagDef {
  DiagId id;
  const char* code;
  DiagSeverity severity;
  const char* name;  // warnings: the switchable name; errors: ""
  const char* title;
  const char* description;
};

const DiagDef& diag_def(DiagId id);
// Checks done at compile time: the table is in enum order, codes are unique.
bool diag_table_consistent();

class DiagEngine {
 public:
  explicit DiagEngine(const CompileOptions& options) : options_(options) {}

  void add_source(const std::string& file, const std::string& text);
  // Starts a diagnostic. `allows` are the `allow NAME` of the enclosing
  // declaration(s). Returns the diagnostic so notes can be attached; for a
  // suppressed warning it returns a scratch object that is discarded.
  Diagnostic& report(DiagId id, const SrcRange& at, std::string message,
                     const std::set<std::string>* allows = nullptr);
  // `at` narrowed to the first occurrence of `fragment` inside it on its
  // line (the part of a regex an RE2 error names), or `at` when it is not
  // there (the fragment came from an expanded pattern reference).
  SrcRange narrow(const SrcRange& at, const std::string& fragment);
  static void note(Diagnostic& d, const SrcRange& at, std::string message);
  static void note(Diagnostic& d, std::string message);

  int errors() const { return errors_; }
  bool error_limit_reached() const { return errors_ >= options_.max_errors; }
  // Sorted, de-duplicated, with source lines filled in.
  std::vector<Diagnostic> take();

 private:
  const CompileOptions& options_;
  std::deque<Diagnostic> diags_;
  Diagnostic scratch_;
  int errors_ = 0;
  // A file's text, and where its lines start once a diagnostic needs one:
  // most files have no diagnostic, and splitting each into lines up front
  // was an allocation per line.
  struct Source {
    std::string text;
    std::vector<size_t> starts;  // empty until first asked
  };
  std::map<std::string, Source> sources_;
  // Line `line` (1-based) of `file`, shown on terminals; false when none.
  bool source_line(const std::string& file, int line, std::string* out);
};

SourceLoc to_loc(const SrcRange& r);

// The part of the pattern an RE2 error names ("missing ]: [a-" -> "[a-"), or "".
std::string re2_error_fragment(const std::string& error);

// Edit distance, for did-you-mean.
size_t edit_distance(const std::string& a, const std::string& b);
// The closest candidate within a sensible distance, or "".
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace reflex::compiler
