// Semantic analysis: small named passes over the AST of one unit, run in
// order by run_pipeline(). Passes record what they resolve in Sema; lowering
// (lower() in pipeline.cpp) turns the resolved entities into a KnowledgeBase.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ast.h"
#include "diagnostics.h"
#include "reflex/kb.h"

namespace reflex::compiler {

// A signature after `extends` and overrides: its effective statements.
struct ResolvedSig {
  const Decl* decl = nullptr;
  std::vector<const Member*> members;  // effective, in order
  std::set<std::string> allows;
  bool abstract = false;
  bool ok = true;           // false: errors already reported; skip deeper checks
  bool pattern_ok = false;  // all parts compile in RE2 and Hyperscan
  bool parent_ok = true;    // the `extends` chain resolved (else skip completeness checks)
  Signature sig;            // the typed form (filled by check_signatures)
  std::map<std::string, SrcRange> field_use;  // for locations of later checks
  std::vector<SrcRange> example_ranges, near_miss_ranges;
};

struct ResolvedLatent {
  const Decl* decl = nullptr;
  std::vector<const Member*> members;
  std::set<std::string> allows;
  bool ok = true;
  Latent latent;
};

// A group after expansion: the events it stands for, nested groups flattened.
struct ResolvedGroup {
  const Decl* decl = nullptr;
  bool ok = true;  // false: an error was reported in it; uses are not reported again
  enum class State { fresh, visiting, done } state = State::fresh;
  std::vector<std::string> events;  // first occurrence order, each once
  // For notes: the member of this group through which each event came in.
  std::map<std::string, const Ident*> origin;
};

struct ResolvedRule {
  const Decl* decl = nullptr;
  std::vector<const Member*> members;
  std::set<std::string> allows;
  bool ok = true;
  std::vector<Rule> rules;              // one per effect
  std::vector<SrcRange> effect_ranges;  // parallel to rules
};

struct Sema {
  Sema(std::vector<SourceFile>& f, DiagEngine& d, const CompileOptions& o)
      : files(f), diags(d), options(o) {}

  std::vector<SourceFile>& files;
  DiagEngine& diags;
  const CompileOptions& options;

  // Symbol tables (first definition wins; duplicates are reported).
  std::map<std::string, const Decl*> signatures, latents, rules, patterns, classes, natures, tests;
  std::map<std::string, const Decl*> groups;                  // share the event namespace
  std::map<std::string, std::vector<const Decl*>> overrides;  // "kind name" -> overrides
  const Decl* kb_decl = nullptr;

  std::map<std::string, ResolvedSig> sigs;  // all, abstract included
  std::map<std::string, ResolvedLatent> latent_defs;
  std::map<std::string, ResolvedRule> rule_defs;
  std::map<std::string, ResolvedGroup> group_defs;
  std::set<std::string> used_groups;                // named by a rule or another group
  std::map<std::string, std::string> pattern_text;  // resolved regex of each pattern
  std::set<std::string> bad_patterns;               // did not compile
  std::set<std::string> used_patterns;
  std::vector<KbTest> tests_lowered;
  std::vector<FaultClass> class_list;
  // Names each file refers to (for unused-import).
  std::map<std::string, std::set<std::string>> refs_by_file;
  // Declaring file of each top-level name.
  std::map<std::string, std::string> file_of;

  const std::set<std::string>* allows_of(const Decl* d) const;
  std::map<const Decl*, std::set<std::string>> decl_allows;

  void ref(const std::string& from_file, const std::string& name) {
    refs_by_file[from_file].insert(name);
  }
};

// The passes, in pipeline order.
void pass_headers(Sema& s);
void pass_symbols(Sema& s);
void pass_members(Sema& s);
void pass_classes(Sema& s);
void pass_patterns(Sema& s);
void pass_inheritance(Sema& s);
void pass_signatures(Sema& s);
void pass_latents(Sema& s);
void pass_groups(Sema& s);
void pass_rules(Sema& s);
void pass_examples(Sema& s);
void pass_tests(Sema& s);
void pass_graph(Sema& s);
// import declaration -> display path of the file it resolved to
void pass_usage(Sema& s, const std::map<const Decl*, std::string>& import_targets);

void run_pipeline(Sema& s);

// Regex helpers shared by passes.
bool hyperscan_check(const std::string& pattern, std::string* error);
bool re2_check(const std::string& pattern, std::string* error);
// What the passes call: RE2 (CompileOptions::check_regex) or the syntax scan.
bool regex_check(const Sema& s, const std::string& pattern, std::string* error);
std::set<std::string> regex_capture_names(const Sema& s, const std::string& pattern);

// Lowering: the resolved unit as the runtime's KnowledgeBase.
KnowledgeBase lower(const Sema& s);

}  // namespace reflex::compiler
