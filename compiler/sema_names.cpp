// Passes over names: file headers, symbol tables, which statements each block
// allows, fault classes, named patterns, `extends` and `override`.
#include <algorithm>
#include <mutex>

#include "reflex/artifact.h"
#include "reflex/pattern.h"
#include "sema.h"
#include "sema_util.h"

namespace reflex::compiler {

// Many signatures share a pattern (via `extends` and named patterns): each
// distinct text is compiled once per process.
namespace {
struct CheckCache {
  std::mutex mu;
  std::map<std::string, std::string> re2, hs;  // pattern -> error ("" = ok)
};
CheckCache& cache() {
  static CheckCache c;
  return c;
}
}  // namespace

bool re2_check(const std::string& pattern, std::string* error) {
  {
    std::lock_guard<std::mutex> lock(cache().mu);
    if (auto it = cache().re2.find(pattern); it != cache().re2.end()) {
      *error = it->second;
      return it->second.empty();
    }
  }
  std::string err;
  bool ok = re2_pattern_ok(pattern, &err);
  std::lock_guard<std::mutex> lock(cache().mu);
  if (cache().re2.size() > 100000) cache().re2.clear();
  cache().re2[pattern] = ok ? "" : (err.empty() ? "invalid pattern" : err);
  *error = cache().re2[pattern];
  return ok;
}

bool hyperscan_check(const std::string& pattern, std::string* error) {
  {
    std::lock_guard<std::mutex> lock(cache().mu);
    if (auto it = cache().hs.find(pattern); it != cache().hs.end()) {
      *error = it->second;
      return it->second.empty();
    }
  }
  std::string err;
  bool ok = hyperscan_pattern_ok(pattern, &err);
  std::lock_guard<std::mutex> lock(cache().mu);
  if (cache().hs.size() > 100000) cache().hs.clear();
  cache().hs[pattern] = ok ? "" : (err.empty() ? "invalid pattern" : err);
  *error = cache().hs[pattern];
  return ok;
}

namespace {
// The syntax scan of CompileOptions::check_regex = false: balanced groups and
// classes, no dangling escape; on success the `(?P<name>` groups, if wanted.
bool scan_regex(const std::string& p, std::string* error, std::set<std::string>* names) {
  int depth = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      if (++i == p.size()) return *error = "trailing backslash", false;
    } else if (c == '[') {
      size_t j = i + 1;
      if (j < p.size() && p[j] == '^') ++j;
      if (j < p.size() && p[j] == ']') ++j;  // a leading ']' is a literal
      for (; j < p.size() && p[j] != ']'; ++j)
        if (p[j] == '\\') ++j;
      if (j >= p.size()) return *error = "missing ]", false;
      i = j;
    } else if (c == '(') {
      ++depth;
      if (p.compare(i, 4, "(?P<") == 0) {
        const size_t end = p.find('>', i + 4);
        if (end == std::string::npos || end == i + 4) return *error = "bad named group", false;
        if (names) names->insert(p.substr(i + 4, end - i - 4));
      }
    } else if (c == ')') {
      if (depth-- == 0) return *error = "unexpected )", false;
    }
  }
  if (depth != 0) return *error = "missing )", false;
  return true;
}
}  // namespace

bool regex_check(const Sema& s, const std::string& pattern, std::string* error) {
  if (s.options.check_regex) return re2_check(pattern, error);
  return scan_regex(pattern, error, nullptr);
}

std::set<std::string> regex_capture_names(const Sema& s, const std::string& pattern) {
  if (s.options.check_regex) return pattern_capture_names(pattern);
  std::set<std::string> names;
  std::string err;
  if (!scan_regex(pattern, &err, &names)) names.clear();
  return names;
}

const std::set<std::string>* Sema::allows_of(const Decl* d) const {
  auto it = decl_allows.find(d);
  return it == decl_allows.end() ? nullptr : &it->second;
}

// ---- headers: `reflex 1` first in every file; one knowledge_base ----
void pass_headers(Sema& s) {
  for (auto& f : s.files) {
    if (!f.parsed) continue;
    SrcRange start{f.path, 1, 1, 1};
    if (f.decls.empty() || f.decls[0].kind != Decl::Kind::version) {
      SrcRange at = f.decls.empty() ? start : f.decls[0].range;
      auto& d = s.diags.report(DiagId::language_version, at,
                               f.decls.empty() ? "empty file: expected `reflex 1` first"
                                               : "missing `reflex 1` at the start of the file");
      DiagEngine::note(d, "every .rfx file starts with the language version it is written in");
    }
    for (size_t i = 0; i < f.decls.size(); ++i) {
      const Decl& d = f.decls[i];
      if (d.kind == Decl::Kind::version) {
        if (i != 0) {
          s.diags.report(DiagId::language_version, d.range,
                         "`reflex` must be the first statement of the file");
        } else if (!d.values.empty() && d.values[0].text != "1" && !d.values[0].text.empty()) {
          s.diags.report(DiagId::language_version, d.values[0].range,
                         "unsupported language version " + d.values[0].text +
                             "; this compiler reads version 1");
        }
      }
      if (d.kind == Decl::Kind::kb) {
        if (s.kb_decl != nullptr) {
          auto& diag = s.diags.report(DiagId::duplicate_kb, d.range,
                                      "`knowledge_base` is declared a second time");
          DiagEngine::note(diag, s.kb_decl->range, "first declared here");
          continue;
        }
        s.kb_decl = &d;
        if (d.values.size() > 2 && !d.values[2].text.empty()) {
          std::string err;
          if (!engine_version_satisfies(engine_version(), d.values[2].text, &err)) {
            s.diags.report(DiagId::engine_requirement, d.values[2].range,
                           err.empty() ? std::string("this engine is ") + engine_version() +
                                             "; the knowledge base requires " + d.values[2].text
                                       : err);
          }
        }
      }
    }
  }
}

// ---- symbol tables and duplicates ----
void pass_symbols(Sema& s) {
  for (auto& f : s.files) {
    for (const auto& d : f.decls) {
      std::map<std::string, const Decl*>* table = nullptr;
      const char* what = "";
      switch (d.kind) {
        case Decl::Kind::signature:
          table = &s.signatures;
          what = "event";
          break;
        case Decl::Kind::latent:
          table = &s.latents;
          what = "event";
          break;
        case Decl::Kind::group:
          table = &s.groups;
          what = "group";
          break;
        case Decl::Kind::rule:
          table = &s.rules;
          what = "rule";
          break;
        case Decl::Kind::pattern:
          table = &s.patterns;
          what = "pattern";
          break;
        case Decl::Kind::class_:
          table = &s.classes;
          what = "class";
          break;
        case Decl::Kind::nature:
          table = &s.natures;
          what = "nature";
          break;
        case Decl::Kind::test:
          table = &s.tests;
          what = "test";
          break;
        case Decl::Kind::override_:
          if (!d.name.text.empty()) s.overrides[d.override_kind + " " + d.name.text].push_back(&d);
          continue;
        default:
          continue;
      }
      if (d.name.text.empty()) continue;
      // Signatures, latents and groups share one namespace: rules name any of them.
      const Decl* prev = nullptr;
      if (d.kind == Decl::Kind::signature || d.kind == Decl::Kind::latent ||
          d.kind == Decl::Kind::group) {
        if (auto it = s.signatures.find(d.name.text); it != s.signatures.end()) prev = it->second;
        if (auto it = s.latents.find(d.name.text); it != s.latents.end()) prev = it->second;
        if (auto it = s.groups.find(d.name.text); it != s.groups.end()) prev = it->second;
      } else if (auto it = table->find(d.name.text); it != table->end()) {
        prev = it->second;
      }
      if (prev != nullptr) {
        bool prev_group = prev->kind == Decl::Kind::group;
        bool mixed = prev_group != (d.kind == Decl::Kind::group);
        std::string msg = mixed ? "'" + d.name.text + "' is already declared as " +
                                      (prev_group ? "a group" : "an event") +
                                      "; groups and events share one namespace"
                                : std::string("duplicate ") + what + " '" + d.name.text + "'";
        auto& diag = s.diags.report(DiagId::duplicate_decl, d.name.range, msg);
        DiagEngine::note(diag, prev->name.range, "previously declared here");
        continue;
      }
      (*table)[d.name.text] = &d;
      s.file_of[d.name.text] = d.file;
    }
  }
}

// ---- which statements each block allows; duplicates; allow NAME ----
namespace {

bool allowed_in(const Decl& d, Member::Kind k) {
  using K = Member::Kind;
  switch (d.kind) {
    case Decl::Kind::signature:
      switch (k) {
        case K::on:
        case K::from:
        case K::match:
        case K::field:
        case K::when:
        case K::locate:
        case K::class_:
        case K::severity:
        case K::nature:
        case K::description:
        case K::action:
        case K::remediation:
        case K::symptom:
        case K::aggregate:
        case K::dedup:
        case K::baseline:
        case K::cleared_by:
        case K::example:
        case K::near_miss:
        case K::allow:
        case K::suspect:
        case K::background:
        case K::check:
          return true;
        default:
          return false;
      }
    case Decl::Kind::latent:
      switch (k) {
        case K::on:
        case K::class_:
        case K::severity:
        case K::nature:
        case K::description:
        case K::action:
        case K::remediation:
        case K::silent:
        case K::quorum:
        case K::allow:
        case K::check:
        case K::odd_one_out:
          return true;
        default:
          return false;
      }
    case Decl::Kind::rule:
      switch (k) {
        case K::cause:
        case K::where:
        case K::within:
        case K::skew:
        case K::while_cause_lasts:
        case K::strength:
        case K::allow:
          return true;
        default:
          return false;
      }
    case Decl::Kind::test:
      switch (k) {
        case K::topology:
        case K::log:
        case K::bundle:
        case K::expect_root:
        case K::expect_no_root:
        case K::expect_event:
          return true;
        default:
          return false;
      }
    default:
      return false;
  }
}

bool overridable(const std::string& kind, Member::Kind k) {
  using K = Member::Kind;
  if (k == K::allow) return true;
  if (kind == "rule")
    return k == K::strength || k == K::within || k == K::skew || k == K::while_cause_lasts;
  bool common = k == K::action || k == K::severity || k == K::description || k == K::remediation ||
                k == K::check;
  if (kind == "latent") return common;
  return common || k == K::aggregate || k == K::dedup || k == K::baseline || k == K::cleared_by ||
         k == K::background;
}

bool single(Member::Kind k) {
  using K = Member::Kind;
  switch (k) {
    case K::field:
    case K::when:
    case K::locate:
    case K::example:
    case K::near_miss:
    case K::allow:
    case K::where:
    case K::log:
    case K::expect_root:
    case K::expect_no_root:
    case K::expect_event:
    case K::odd_one_out:  // several: a device that differs in any of them
      return false;
    default:
      return true;
  }
}

const char* block_name(const Decl& d) {
  switch (d.kind) {
    case Decl::Kind::signature:
      return "a signature";
    case Decl::Kind::latent:
      return "a latent";
    case Decl::Kind::rule:
      return "a rule";
    case Decl::Kind::test:
      return "a test";
    default:
      return "this block";
  }
}

}  // namespace

void pass_members(Sema& s) {
  std::vector<std::string> warning_names;
  for (const auto& info : diagnostic_catalog())
    if (!info.name.empty()) warning_names.push_back(info.name);
  for (auto& f : s.files) {
    for (const auto& d : f.decls) {
      auto& allows = s.decl_allows[&d];
      if (d.broken) continue;  // recovery may have invented statements
      std::map<Member::Kind, const Member*> seen;
      for (const auto& m : d.members) {
        const std::string kw = member_keyword(m.kind);
        if (d.kind == Decl::Kind::override_) {
          if (!overridable(d.override_kind, m.kind)) {
            auto& diag = s.diags.report(DiagId::override_statement, m.range,
                                        "`" + kw + "` cannot be overridden");
            DiagEngine::note(
                diag, d.override_kind == "rule"
                          ? "a rule override may replace strength, within, skew, while cause lasts"
                      : d.override_kind == "latent"
                          ? "a latent override may replace action, severity, "
                            "description, remediation"
                          : "a signature override may replace action, severity, "
                            "description, remediation, aggregate, dedup, baseline, "
                            "cleared_by");
            continue;
          }
        } else if (!allowed_in(d, m.kind)) {
          s.diags.report(DiagId::misplaced_statement, m.range,
                         "`" + kw + "` is not allowed in " + block_name(d));
          continue;
        }
        if (single(m.kind)) {
          if (auto it = seen.find(m.kind); it != seen.end()) {
            auto& diag =
                s.diags.report(DiagId::duplicate_statement, m.range, "`" + kw + "` given twice");
            DiagEngine::note(diag, it->second->range, "first given here");
          } else {
            seen[m.kind] = &m;
          }
        }
        if (m.kind == Member::Kind::allow && !m.idents.empty()) {
          const std::string& n = m.idents[0].text;
          if (!is_warning_name(n)) {
            auto& diag = s.diags.report(DiagId::unknown_warning, m.idents[0].range,
                                        "unknown warning '" + n + "'", &allows);
            std::string near = closest(n, warning_names);
            if (!near.empty()) DiagEngine::note(diag, "did you mean '" + near + "'?");
          }
          allows.insert(n);
        }
      }
      // field declared twice in one block
      std::map<std::string, const Member*> fields;
      for (const auto& m : d.members) {
        if (m.kind != Member::Kind::field || m.idents.empty()) continue;
        auto [it, fresh] = fields.emplace(m.idents[0].text, &m);
        if (!fresh) {
          auto& diag = s.diags.report(DiagId::duplicate_statement, m.idents[0].range,
                                      "field '" + m.idents[0].text + "' declared twice");
          DiagEngine::note(diag, it->second->idents[0].range, "first declared here");
        }
      }
    }
  }
}

// ---- fault classes: parents exist, no cycles ----
void pass_classes(Sema& s) {
  std::vector<std::string> names;
  for (const auto& [n, d] : s.classes) names.push_back(n);
  for (const auto& [n, d] : s.classes) {
    FaultClass fc;
    fc.name = n;
    fc.loc = to_loc(d->name.range);
    if (!d->values.empty()) fc.description = d->values[0].text;
    if (d->parent) {
      fc.parent = d->parent->text;
      s.ref(d->file, fc.parent);
      if (!s.classes.count(fc.parent)) {
        auto& diag = s.diags.report(DiagId::class_parent, d->parent->range,
                                    "unknown parent class '" + fc.parent + "'");
        std::string near = closest(fc.parent, names);
        if (!near.empty())
          DiagEngine::note(diag, s.classes.at(near)->name.range, "did you mean '" + near + "'?");
      } else {
        // Walk up; a chain longer than the number of classes is a cycle.
        std::string cur = fc.parent;
        std::vector<std::string> chain{n};
        for (size_t steps = 0; steps <= s.classes.size() && !cur.empty(); ++steps) {
          chain.push_back(cur);
          if (cur == n) {
            std::string path;
            for (size_t i = 0; i < chain.size(); ++i) path += (i ? " < " : "") + chain[i];
            s.diags.report(DiagId::class_cycle, d->name.range,
                           "class '" + n + "' is its own ancestor: " + path);
            break;
          }
          auto it = s.classes.find(cur);
          if (it == s.classes.end() || !it->second->parent) break;
          cur = it->second->parent->text;
        }
      }
    }
    s.class_list.push_back(fc);
  }
  // Keep declaration order (files are sorted; map order is by name).
  std::stable_sort(s.class_list.begin(), s.class_list.end(),
                   [](const FaultClass& a, const FaultClass& b) {
                     return std::tie(a.loc.file, a.loc.line) < std::tie(b.loc.file, b.loc.line);
                   });
}

// ---- named patterns ----
bool resolve_regex(Sema& s, const RegexExpr& e, const std::string& file, std::string* out,
                   std::set<std::string>* visiting) {
  std::string text;
  bool ok = true;
  for (const auto& a : e.atoms) {
    std::string part;
    if (!a.is_ref) {
      part = a.text;
    } else {
      s.used_patterns.insert(a.text);
      s.ref(file, a.text);
      auto it = s.patterns.find(a.text);
      if (it == s.patterns.end()) {
        std::vector<std::string> names;
        for (const auto& [n, d] : s.patterns) names.push_back(n);
        auto& diag =
            s.diags.report(DiagId::unknown_pattern, a.range, "unknown pattern '" + a.text + "'");
        std::string near = closest(a.text, names);
        if (!near.empty())
          DiagEngine::note(diag, s.patterns.at(near)->name.range, "did you mean '" + near + "'?");
        ok = false;
        continue;
      }
      if (auto done = s.pattern_text.find(a.text); done != s.pattern_text.end()) {
        part = done->second;
      } else if (visiting->count(a.text)) {
        s.diags.report(DiagId::unknown_pattern, a.range,
                       "pattern '" + a.text + "' refers to itself");
        ok = false;
        continue;
      } else if (visiting->size() > static_cast<size_t>(s.options.max_nesting_depth)) {
        s.diags.report(DiagId::nesting_too_deep, a.range,
                       "patterns refer to patterns more than " +
                           std::to_string(s.options.max_nesting_depth) + " levels deep");
        ok = false;
        continue;
      } else {
        visiting->insert(a.text);
        const Decl* pd = it->second;
        if (!resolve_regex(s, pd->pattern, pd->file, &part, visiting)) ok = false;
        visiting->erase(a.text);
        if (ok) s.pattern_text[a.text] = part;
      }
      if (s.bad_patterns.count(a.text)) ok = false;
    }
    // An alternation must not swallow its neighbours when concatenated.
    if (e.atoms.size() > 1 && part.find('|') != std::string::npos) part = "(?:" + part + ")";
    text += part;
  }
  *out = text;
  return ok;
}

void pass_patterns(Sema& s) {
  for (const auto& [name, d] : s.patterns) {
    if (d->broken) continue;
    std::set<std::string> visiting{name};
    std::string text;
    if (!resolve_regex(s, d->pattern, d->file, &text, &visiting)) {
      s.bad_patterns.insert(name);
      continue;
    }
    std::string err;
    if (!regex_check(s, text, &err)) {
      s.diags.report(DiagId::regex_re2, s.diags.narrow(d->pattern.range, re2_error_fragment(err)),
                     "RE2 rejects the pattern: " + err);
      s.bad_patterns.insert(name);
    } else if (s.options.check_regex && s.options.check_hyperscan && !hyperscan_check(text, &err)) {
      s.diags.report(DiagId::regex_hyperscan, d->pattern.range,
                     "Hyperscan rejects the pattern: " + err);
      s.bad_patterns.insert(name);
    }
    s.pattern_text[name] = text;
  }
}

// ---- extends and overrides: the effective statements of each declaration ----
namespace {

bool accumulates(Member::Kind k) {
  using K = Member::Kind;
  return k == K::field || k == K::example || k == K::near_miss || k == K::when || k == K::allow;
}

// Statements of `own` with those replaced by the override's (same keyword).
std::vector<const Member*> apply_override(const std::vector<const Member*>& own, const Decl* ov) {
  if (ov == nullptr) return own;
  std::set<Member::Kind> replaced;
  for (const auto& m : ov->members) replaced.insert(m.kind);
  std::vector<const Member*> out;
  for (const auto* m : own)
    if (!replaced.count(m->kind) || m->kind == Member::Kind::allow) out.push_back(m);
  for (const auto& m : ov->members) out.push_back(&m);
  return out;
}

}  // namespace

const Decl* find_override(Sema& s, const std::string& kind, const Decl* target) {
  auto it = s.overrides.find(kind + " " + target->name.text);
  if (it == s.overrides.end() || it->second.empty()) return nullptr;
  return it->second.front();
}

namespace {

// Overrides: the target exists, at most one per declaration.
void check_overrides(Sema& s) {
  for (const auto& [key, list] : s.overrides) {
    const Decl* first = list.front();
    const std::string& kind = first->override_kind;
    const auto& table = kind == "rule" ? s.rules : kind == "latent" ? s.latents : s.signatures;
    if (!table.count(first->name.text)) {
      std::vector<std::string> names;
      for (const auto& [n, d] : table) names.push_back(n);
      for (const Decl* o : list) {
        auto& diag = s.diags.report(DiagId::override_undefined, o->name.range,
                                    "override of undefined " + kind + " '" + o->name.text + "'");
        std::string near = closest(o->name.text, names);
        if (!near.empty())
          DiagEngine::note(diag, table.at(near)->name.range, "did you mean '" + near + "'?");
      }
    } else {
      s.ref(first->file, first->name.text);
    }
    for (size_t i = 1; i < list.size(); ++i) {
      auto& diag = s.diags.report(DiagId::override_twice, list[i]->name.range,
                                  kind + " '" + list[i]->name.text + "' is overridden twice");
      DiagEngine::note(diag, first->name.range, "first overridden here");
    }
  }
}

// Inherit from a resolved parent: some statements accumulate, the child's
// (`own`) replace the rest; a child's `locate ... as B` replaces the parent's B.
void inherit(const ResolvedSig& parent, const std::vector<const Member*>& own, ResolvedSig& r) {
  std::set<Member::Kind> replaced;
  std::set<std::string> child_locates;
  for (const auto* m : own) {
    if (!accumulates(m->kind)) replaced.insert(m->kind);
    if (m->kind == Member::Kind::locate)
      child_locates.insert(m->idents.size() > 2 ? m->idents[2].text : "");
  }
  for (const auto* m : parent.members) {
    if (m->kind == Member::Kind::locate) {
      if (child_locates.count(m->idents.size() > 2 ? m->idents[2].text : "")) continue;
    } else if (replaced.count(m->kind)) {
      continue;
    }
    r.members.push_back(m);
  }
}

// One signature's effective statements (its `extends` chain first, `stack`
// the chain so far, bounded by max_nesting_depth); false if it has errors.
bool resolve_signature(Sema& s, const std::string& name, std::vector<std::string>& stack,
                       const std::vector<std::string>& sig_names) {
  if (s.sigs.count(name)) return s.sigs[name].ok;
  const Decl* d = s.signatures.at(name);
  ResolvedSig r;
  r.decl = d;
  r.abstract = d->is_abstract;
  r.ok = !d->broken;
  std::vector<const Member*> own;
  for (const auto& m : d->members) own.push_back(&m);
  const Decl* ov = find_override(s, "signature", d);
  own = apply_override(own, ov);
  if (auto a = s.allows_of(d)) r.allows = *a;
  if (ov) {
    if (auto a = s.allows_of(ov)) r.allows.insert(a->begin(), a->end());
  }
  if (d->parent) {
    const std::string& p = d->parent->text;
    s.ref(d->file, p);
    if (!s.signatures.count(p)) {
      auto& diag = s.diags.report(DiagId::unknown_parent, d->parent->range,
                                  "unknown parent signature '" + p + "'");
      std::string near = closest(p, sig_names);
      if (!near.empty())
        DiagEngine::note(diag, s.signatures.at(near)->name.range, "did you mean '" + near + "'?");
      r.ok = false;
      r.parent_ok = false;
    } else if (stack.size() > static_cast<size_t>(s.options.max_nesting_depth)) {
      s.diags.report(DiagId::nesting_too_deep, d->parent->range,
                     "`extends` chain deeper than " + std::to_string(s.options.max_nesting_depth) +
                         " signatures");
      r.ok = false;
      r.parent_ok = false;
    } else if (std::find(stack.begin(), stack.end(), p) != stack.end()) {
      std::string path;
      for (const auto& n : stack) path += n + " extends ";
      s.diags.report(DiagId::extends_cycle, d->parent->range,
                     "signature '" + name + "' extends itself: " + path + p);
      r.ok = false;
      r.parent_ok = false;
    } else {
      stack.push_back(p);
      bool pok = resolve_signature(s, p, stack, sig_names);
      stack.pop_back();
      const ResolvedSig& parent = s.sigs[p];
      if (!pok) r.ok = false;
      if (!parent.parent_ok) r.parent_ok = false;
      r.allows.insert(parent.allows.begin(), parent.allows.end());
      inherit(parent, own, r);
    }
  }
  for (const auto* m : own) r.members.push_back(m);
  s.sigs[name] = std::move(r);
  return s.sigs[name].ok;
}

}  // namespace

void pass_inheritance(Sema& s) {
  check_overrides(s);
  std::vector<std::string> sig_names;
  for (const auto& [n, d] : s.signatures) sig_names.push_back(n);
  for (const auto& [name, d] : s.signatures) {
    std::vector<std::string> stack{name};
    resolve_signature(s, name, stack, sig_names);
  }
  for (const auto& [name, d] : s.latents) {
    ResolvedLatent r;
    r.decl = d;
    r.ok = !d->broken;
    std::vector<const Member*> own;
    for (const auto& m : d->members) own.push_back(&m);
    const Decl* ov = find_override(s, "latent", d);
    r.members = apply_override(own, ov);
    if (auto a = s.allows_of(d)) r.allows = *a;
    s.latent_defs[name] = std::move(r);
  }
  for (const auto& [name, d] : s.rules) {
    ResolvedRule r;
    r.decl = d;
    r.ok = !d->broken;
    std::vector<const Member*> own;
    for (const auto& m : d->members) own.push_back(&m);
    const Decl* ov = find_override(s, "rule", d);
    r.members = apply_override(own, ov);
    if (auto a = s.allows_of(d)) r.allows = *a;
    s.rule_defs[name] = std::move(r);
  }
}

}  // namespace reflex::compiler
