// The pass pipeline, the graph analyses, usage warnings and lowering.
#include <algorithm>

#include "causal_graph.h"
#include "sema.h"

namespace reflex::compiler {

namespace {

SrcRange range_of(const SourceLoc& l, const std::string& name) {
  return SrcRange{l.file, l.line, l.col, static_cast<int>(std::max<size_t>(1, name.size()))};
}

const std::set<std::string>* allows_for(const Sema& s, const std::string& name) {
  if (auto it = s.sigs.find(name); it != s.sigs.end()) return &it->second.allows;
  if (auto it = s.latent_defs.find(name); it != s.latent_defs.end()) return &it->second.allows;
  return nullptr;
}

}  // namespace

// ---- the causal graph: cycles, reachability, indistinguishable roots ----
void pass_graph(Sema& s) {
  if (!s.options.analyse_graph) return;
  KnowledgeBase kb = lower(s);
  CausalGraph cg = build_causal_graph(kb);
  for (const auto& cy : find_cycles(cg)) {
    std::string path;
    for (size_t v : cy.vertices) path += cg.nodes[v].name + " -> ";
    path += cg.nodes[cy.vertices.front()].name;
    const Rule* first = cg.edges[cy.edges.front()];
    auto& d = s.diags.report(DiagId::causal_cycle, range_of(first->loc, first->name),
                             "causal cycle: " + path);
    for (size_t e : cy.edges) {
      const Rule* r = cg.edges[e];
      DiagEngine::note(d, range_of(r->loc, r->name),
                       "rule '" + r->name + "': " + r->cause + " -> " + r->effect);
    }
  }
  auto to_symptom = reaches_symptom(cg);
  auto from_root = reached_from_root(cg);
  bool any_symptom = std::any_of(cg.nodes.begin(), cg.nodes.end(),
                                 [](const CausalGraph::Node& n) { return n.symptom; });
  for (size_t v = 0; v < cg.nodes.size(); ++v) {
    const auto& n = cg.nodes[v];
    if (any_symptom && !to_symptom[v]) {
      auto& d = s.diags.report(DiagId::unreachable_event, range_of(n.loc, n.name),
                               std::string(n.latent ? "latent" : "event") + " '" + n.name +
                                   "' cannot be reached from any symptom",
                               allows_for(s, n.name));
      DiagEngine::note(d, "no chain of rules leads from it to an event with `symptom`");
    }
    if (n.symptom && !n.root && !from_root[v]) {
      auto& d = s.diags.report(DiagId::unexplained_symptom, range_of(n.loc, n.name),
                               "no root cause can explain symptom '" + n.name + "'",
                               allows_for(s, n.name));
      DiagEngine::note(d, "add a rule from an event or latent with a `class` to it");
    }
  }
  // Roots are told apart by the observable events they can produce.
  std::map<std::vector<size_t>, std::vector<size_t>> by_evidence;
  for (size_t v = 0; v < cg.nodes.size(); ++v) {
    if (!cg.nodes[v].root) continue;
    auto obs = observable_from(cg, v);
    if (obs.empty()) continue;
    by_evidence[obs].push_back(v);
  }
  for (const auto& [obs, roots] : by_evidence) {
    if (roots.size() < 2) continue;
    for (size_t i = 1; i < roots.size(); ++i) {
      const auto& n = cg.nodes[roots[i]];
      const auto& first = cg.nodes[roots[0]];
      std::string evidence;
      for (size_t o : obs) evidence += (evidence.empty() ? "" : ", ") + cg.nodes[o].name;
      auto& d =
          s.diags.report(DiagId::indistinguishable_roots, range_of(n.loc, n.name),
                         "root '" + n.name + "' cannot be told apart from '" + first.name + "'",
                         allows_for(s, n.name));
      DiagEngine::note(d, range_of(first.loc, first.name),
                       "'" + first.name + "' explains exactly the same events: " + evidence);
    }
  }
}

// ---- usage: unused imports, patterns and groups ----
void pass_usage(Sema& s, const std::map<const Decl*, std::string>& import_targets) {
  for (const auto& [d, target] : import_targets) {
    const auto& refs = s.refs_by_file[d->file];
    bool used = false;
    for (const auto& name : refs) {
      auto fo = s.file_of.find(name);
      if (fo != s.file_of.end() && fo->second == target) used = true;
    }
    if (!used) {
      auto& diag = s.diags.report(DiagId::unused_import, d->values[0].range,
                                  "nothing from '" + d->values[0].text + "' is used in this file");
      DiagEngine::note(diag, "remove the import, or refer to one of its declarations");
    }
  }
  for (const auto& [name, d] : s.groups) {
    if (s.used_groups.count(name) || d->broken) continue;
    auto& diag =
        s.diags.report(DiagId::unused_group, d->name.range, "group '" + name + "' is never used");
    DiagEngine::note(diag, "name it on either side of a rule's `->`, or remove it");
  }
  for (const auto& [name, d] : s.patterns) {
    if (s.used_patterns.count(name) || d->broken) continue;
    s.diags.report(DiagId::unused_pattern, d->name.range, "pattern '" + name + "' is never used",
                   s.allows_of(d));
  }
}

void run_pipeline(Sema& s) {
  pass_headers(s);
  pass_symbols(s);
  pass_members(s);
  pass_classes(s);
  pass_patterns(s);
  pass_inheritance(s);
  pass_signatures(s);
  pass_latents(s);
  pass_groups(s);
  pass_rules(s);
  pass_examples(s);
  pass_tests(s);
  pass_graph(s);
}

// ---- lowering ----
KnowledgeBase lower(const Sema& s) {
  KnowledgeBase kb;
  if (s.kb_decl) {
    const auto& v = s.kb_decl->values;
    if (v.size() > 0) kb.meta.name = v[0].text;
    if (v.size() > 1) kb.meta.version = v[1].text;
    if (v.size() > 2) kb.meta.requires_engine = v[2].text;
  }
  kb.meta.language_version = 1;
  kb.classes = s.class_list;
  // Declaration order across the (sorted) files; abstract signatures vanish.
  auto by_loc = [](const auto& a, const auto& b) {
    return std::tie(a.loc.file, a.loc.line, a.loc.col, a.name) <
           std::tie(b.loc.file, b.loc.line, b.loc.col, b.name);
  };
  for (const auto& [name, d] : s.natures)
    kb.natures.push_back(
        Nature{name, d->values.empty() ? "" : d->values[0].text, d->evicts, to_loc(d->name.range)});
  std::sort(kb.natures.begin(), kb.natures.end(), by_loc);
  for (const auto& [name, r] : s.sigs)
    if (!r.abstract && r.ok) kb.signatures.push_back(r.sig);
  std::sort(kb.signatures.begin(), kb.signatures.end(), by_loc);
  for (const auto& [name, r] : s.latent_defs)
    if (r.ok) kb.latents.push_back(r.latent);
  std::sort(kb.latents.begin(), kb.latents.end(), by_loc);
  for (const auto& [name, r] : s.rule_defs)
    if (r.ok) kb.rules.insert(kb.rules.end(), r.rules.begin(), r.rules.end());
  std::stable_sort(kb.rules.begin(), kb.rules.end(), by_loc);
  kb.tests = s.tests_lowered;
  return kb;
}

}  // namespace reflex::compiler
