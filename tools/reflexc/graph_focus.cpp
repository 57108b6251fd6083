// A part of the causal event graph: the events within N rule steps of the
// focus, each pair of events joined once (a group rule is many pairs, and
// parallel edges are what made the whole-KB drawing unreadable).
#include "graph_focus.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "reflex/compiler.h"

namespace reflex::cli {
namespace {

struct Node {
  std::string kind, cls;
  bool symptom = false, latent = false;
};

std::map<std::string, Node> graph_nodes(const KnowledgeBase& kb) {
  std::map<std::string, Node> nodes;
  for (const Signature& s : kb.signatures)
    if (!s.suspect)
      nodes[s.name] = {to_string(s.kind), s.fault_class, s.symptom != SymptomKind::none, false};
  for (const Latent& l : kb.latents)
    nodes[l.name] = {to_string(l.kind), l.fault_class, false, true};
  return nodes;
}

std::string family_of(const KnowledgeBase& kb, const std::string& cls) {
  if (cls.empty()) return "";
  std::string std_cls = kb.standard_class(cls);
  return std_cls.empty() ? cls : std_cls;
}

std::string dot_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c == '\n' ? ' ' : c;
  }
  return o;
}

struct Selection {
  std::map<std::string, int> dist;  // event -> rule steps from the focus
  std::vector<const Rule*> rules;   // the rules walked
};

Selection select(const KnowledgeBase& kb, const std::map<std::string, Node>& nodes,
                 const std::set<std::string>& seeds, int depth) {
  Selection sel;
  std::multimap<std::string, const Rule*> touching;
  for (const Rule& r : kb.rules)
    if (nodes.count(r.cause) && nodes.count(r.effect)) {
      touching.emplace(r.cause, &r);
      if (r.effect != r.cause) touching.emplace(r.effect, &r);
    }
  std::vector<std::string> frontier(seeds.begin(), seeds.end());
  for (const std::string& s : seeds) sel.dist[s] = 0;
  for (int d = 0; d < depth && !frontier.empty(); ++d) {
    std::vector<std::string> next;
    for (const std::string& n : frontier) {
      auto [lo, hi] = touching.equal_range(n);
      for (auto it = lo; it != hi; ++it) {
        const Rule& r = *it->second;
        const std::string& other = r.cause == n ? r.effect : r.cause;
        if (sel.dist.emplace(other, d + 1).second) next.push_back(other);
      }
    }
    frontier = std::move(next);
  }
  // A rule is drawn when it was walked: both ends selected, one of them nearer than `depth`.
  for (const Rule& r : kb.rules) {
    auto c = sel.dist.find(r.cause), e = sel.dist.find(r.effect);
    if (c != sel.dist.end() && e != sel.dist.end() && std::min(c->second, e->second) < depth)
      sel.rules.push_back(&r);
  }
  return sel;
}

// A family's picture: the events outside the family are shown as one node
// per class they belong to (each name in its tooltip), so that a class with
// fifty events and a thousand rules still draws on a page.
std::string outside_key(const KnowledgeBase& kb, const Node& n) {
  if (n.symptom && n.cls.empty()) return "job-level symptoms";
  const std::string fam = family_of(kb, n.cls);
  return fam.empty() ? "other events (no class)" : "class " + fam;
}

std::string focus_dot(const KnowledgeBase& kb, const std::map<std::string, Node>& nodes,
                      const Selection& sel, bool collapse) {
  std::ostringstream os;
  os << "digraph reflex_focus {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\", "
        "fontsize=11];\n  edge [fontname=\"Helvetica\", fontsize=9, color=\"#555555\"];\n";
  std::map<std::string, std::string> shown;                // event -> the node it is drawn as
  std::map<std::string, std::vector<std::string>> groups;  // collapsed node -> its events
  std::set<std::string> linked;                            // events some drawn rule touches
  for (const Rule* r : sel.rules) linked.insert({r->cause, r->effect});
  for (const auto& [name, dist] : sel.dist) {
    const Node& n = nodes.at(name);
    if (collapse && (dist > 0 || !linked.count(name))) {
      std::string key = dist > 0 ? outside_key(kb, n) : "in no rule";
      shown[name] = key;
      groups[key].push_back(name);
      continue;
    }
    shown[name] = name;
    os << "  \"" << dot_escape(name) << "\" [label=\"" << dot_escape(name) << "\\n" << n.kind;
    if (!n.cls.empty()) os << " / " << dot_escape(n.cls);
    os << "\"";
    if (n.symptom) os << ", shape=doubleoctagon";
    if (n.latent) os << ", shape=ellipse";
    std::string style = n.latent ? "dashed" : "";
    if (dist == 0) {
      style += std::string(style.empty() ? "" : ",") + "filled,bold";
      os << ", fillcolor=\"#fde8e8\"";
    } else {
      os << ", color=\"#999999\", fontcolor=\"#444444\"";
    }
    if (!style.empty()) os << ", style=\"" << style << "\"";
    os << "];\n";
  }
  for (const auto& [key, members] : groups) {
    std::string tip;
    for (size_t i = 0; i < members.size() && i < 60; ++i) tip += (i ? " " : "") + members[i];
    os << "  \"" << dot_escape(key) << "\" [label=\"" << dot_escape(key) << "\\n(" << members.size()
       << " event" << (members.size() == 1 ? "" : "s")
       << ")\", shape=folder, color=\"#999999\", fontcolor=\"#444444\", tooltip=\""
       << dot_escape(tip) << "\"];\n";
  }
  // One edge per pair of drawn nodes: the first rule's name and how many more.
  std::map<std::pair<std::string, std::string>, std::vector<const Rule*>> pairs;
  for (const Rule* r : sel.rules) pairs[{shown[r->cause], shown[r->effect]}].push_back(r);
  for (const auto& [ce, rules] : pairs) {
    std::string label = rules[0]->name.substr(0, rules[0]->name.find(':'));
    if (rules.size() > 1) label += " (+" + std::to_string(rules.size() - 1) + ")";
    double p = 0;
    for (const Rule* r : rules) p = std::max(p, r->strength);
    os << "  \"" << dot_escape(ce.first) << "\" -> \"" << dot_escape(ce.second) << "\" [label=\""
       << dot_escape(label) << "\", tooltip=\"" << dot_escape(rules[0]->loc.str())
       << "\", penwidth=" << (p >= 0.8 ? 2 : 1) << "];\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace

bool focus_graph(const KnowledgeBase& kb, const GraphFocus& f, const std::string& format,
                 std::string* out, std::string* err) {
  const std::map<std::string, Node> nodes = graph_nodes(kb);
  std::set<std::string> seeds;
  for (const std::string& e : f.events) {
    if (!nodes.count(e)) {
      *err =
          "no event '" + e + "' in the knowledge base ('reflexc graph --format json' lists them)";
      return false;
    }
    seeds.insert(e);
  }
  for (const std::string& fam : f.families) {
    size_t before = seeds.size();
    for (const auto& [name, n] : nodes)
      if (family_of(kb, n.cls) == fam) seeds.insert(name);
    if (seeds.size() == before) {
      *err = "no event of class '" + fam + "' ('reflexc graph --list-families' lists them)";
      return false;
    }
  }
  const Selection sel = select(kb, nodes, seeds, f.depth);
  if (format == "json") {
    KnowledgeBase part;
    for (const Signature& s : kb.signatures)
      if (sel.dist.count(s.name)) part.signatures.push_back(s);
    for (const Latent& l : kb.latents)
      if (sel.dist.count(l.name)) part.latents.push_back(l);
    for (const Rule* r : sel.rules) part.rules.push_back(*r);
    *out = causal_graph_json(part);
  } else {
    *out = focus_dot(kb, nodes, sel, !f.families.empty());
  }
  return true;
}

std::string graph_families(const KnowledgeBase& kb) {
  std::map<std::string, int> count;
  for (const auto& [name, n] : graph_nodes(kb))
    if (!n.cls.empty()) ++count[family_of(kb, n.cls)];
  std::string s;
  for (const auto& [fam, n] : count) s += fam + " " + std::to_string(n) + "\n";
  return s;
}

}  // namespace reflex::cli
