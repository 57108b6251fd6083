#include "causal_graph.h"

#include <algorithm>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/reverse_graph.hpp>
#include <boost/graph/strong_components.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "reflex/compiler.h"

namespace reflex::compiler {

CausalGraph build_causal_graph(const KnowledgeBase& kb) {
  CausalGraph cg;
  auto add = [&](const std::string& name, bool latent, bool symptom, bool root, SourceLoc loc) {
    cg.index[name] = cg.nodes.size();
    cg.nodes.push_back({name, latent, symptom, root, std::move(loc)});
  };
  for (const auto& s : kb.signatures)
    if (!s.suspect)
      add(s.name, false, s.symptom != SymptomKind::none, !s.fault_class.empty(), s.loc);
  for (const auto& l : kb.latents) add(l.name, true, false, !l.fault_class.empty(), l.loc);
  cg.g = CausalGraph::Graph(cg.nodes.size());
  for (const auto& r : kb.rules) {
    auto a = cg.index.find(r.cause), b = cg.index.find(r.effect);
    if (a == cg.index.end() || b == cg.index.end()) continue;
    boost::add_edge(a->second, b->second, cg.edges.size(), cg.g);
    cg.edges.push_back(&r);
  }
  return cg;
}

namespace {

// Records every vertex a BFS discovers.
struct Recorder : boost::default_bfs_visitor {
  std::vector<bool>* seen;
  template <class V, class G>
  void discover_vertex(V v, const G&) const {
    (*seen)[v] = true;
  }
};

template <class G>
std::vector<bool> multi_bfs(const G& g, size_t n, const std::vector<size_t>& sources) {
  std::vector<bool> seen(n, false);
  std::vector<boost::default_color_type> color(n, boost::white_color);
  auto cmap = boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, g));
  Recorder rec;
  rec.seen = &seen;
  boost::queue<typename boost::graph_traits<G>::vertex_descriptor> q;
  for (size_t s : sources)
    if (color[s] == boost::white_color) boost::breadth_first_visit(g, s, q, rec, cmap);
  return seen;
}

}  // namespace

std::vector<Cycle> find_cycles(const CausalGraph& cg) {
  const size_t n = cg.nodes.size();
  std::vector<int> comp(n);
  if (n == 0) return {};
  int ncomp = boost::strong_components(
      cg.g, boost::make_iterator_property_map(comp.begin(), boost::get(boost::vertex_index, cg.g)));
  std::vector<std::vector<size_t>> members(static_cast<size_t>(ncomp));
  for (size_t v = 0; v < n; ++v) members[static_cast<size_t>(comp[v])].push_back(v);
  auto eidx = boost::get(boost::edge_index, cg.g);
  std::vector<Cycle> out;
  for (auto& m : members) {
    bool self = false;
    if (m.size() == 1) {
      for (auto e : boost::make_iterator_range(boost::out_edges(m[0], cg.g)))
        if (boost::target(e, cg.g) == m[0]) self = true;
      if (!self) continue;
    }
    // Start at the alphabetically first member so the output is stable.
    size_t start = *std::min_element(m.begin(), m.end(), [&](size_t a, size_t b) {
      return cg.nodes[a].name < cg.nodes[b].name;
    });
    int c = comp[start];
    // BFS inside the component back to `start` (shortest cycle through it).
    std::vector<long> parent_edge(n, -1);
    std::vector<size_t> parent(n, n);
    std::vector<bool> seen(n, false);
    std::vector<size_t> q{start};
    seen[start] = true;
    long closing = -1;
    size_t closing_from = n;
    for (size_t qi = 0; qi < q.size() && closing < 0; ++qi) {
      size_t u = q[qi];
      std::vector<std::pair<std::string, decltype(*boost::out_edges(u, cg.g).first)>> outs;
      for (auto e : boost::make_iterator_range(boost::out_edges(u, cg.g)))
        outs.push_back({cg.nodes[boost::target(e, cg.g)].name, e});
      std::sort(outs.begin(), outs.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& [nm, e] : outs) {
        size_t v = boost::target(e, cg.g);
        if (comp[v] != c) continue;
        if (v == start) {
          closing = static_cast<long>(eidx[e]);
          closing_from = u;
          break;
        }
        if (!seen[v]) {
          seen[v] = true;
          parent[v] = u;
          parent_edge[v] = static_cast<long>(eidx[e]);
          q.push_back(v);
        }
      }
    }
    if (closing < 0) continue;
    Cycle cy;
    std::vector<size_t> rev_v, rev_e;
    rev_e.push_back(static_cast<size_t>(closing));
    for (size_t v = closing_from; v != start; v = parent[v]) {
      rev_v.push_back(v);
      rev_e.push_back(static_cast<size_t>(parent_edge[v]));
    }
    cy.vertices.push_back(start);
    cy.vertices.insert(cy.vertices.end(), rev_v.rbegin(), rev_v.rend());
    cy.edges.assign(rev_e.rbegin(), rev_e.rend());
    out.push_back(cy);
  }
  return out;
}

std::vector<bool> reaches_symptom(const CausalGraph& cg) {
  std::vector<size_t> sources;
  for (size_t v = 0; v < cg.nodes.size(); ++v)
    if (cg.nodes[v].symptom) sources.push_back(v);
  auto rg = boost::make_reverse_graph(cg.g);
  return multi_bfs(rg, cg.nodes.size(), sources);
}

std::vector<bool> reached_from_root(const CausalGraph& cg) {
  std::vector<size_t> sources;
  for (size_t v = 0; v < cg.nodes.size(); ++v)
    if (cg.nodes[v].root) sources.push_back(v);
  return multi_bfs(cg.g, cg.nodes.size(), sources);
}

std::vector<size_t> observable_from(const CausalGraph& cg, size_t v) {
  auto seen = multi_bfs(cg.g, cg.nodes.size(), {v});
  std::vector<size_t> out;
  for (size_t u = 0; u < seen.size(); ++u)
    if (seen[u] && !cg.nodes[u].latent) out.push_back(u);
  return out;
}

}  // namespace reflex::compiler

namespace reflex {

namespace {
std::string dot_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}
std::string secs(double s) {
  std::ostringstream os;
  os << s << "s";
  return os.str();
}
}  // namespace

std::string causal_graph_dot(const KnowledgeBase& kb) {
  std::ostringstream os;
  os << "digraph reflex {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n";
  for (const auto& s : kb.signatures) {
    if (s.suspect) continue;
    os << "  \"" << dot_escape(s.name) << "\" [label=\"" << dot_escape(s.name) << "\\n"
       << to_string(s.kind);
    if (!s.fault_class.empty()) os << " / " << dot_escape(s.fault_class);
    os << "\"";
    if (s.symptom != SymptomKind::none)
      os << ", shape=doubleoctagon";
    else if (!s.fault_class.empty())
      os << ", style=bold";
    os << "];\n";
  }
  for (const auto& l : kb.latents) {
    os << "  \"" << dot_escape(l.name) << "\" [label=\"" << dot_escape(l.name) << "\\n"
       << to_string(l.kind);
    if (!l.fault_class.empty()) os << " / " << dot_escape(l.fault_class);
    os << "\", shape=ellipse, style=dashed];\n";
  }
  for (const auto& r : kb.rules) {
    os << "  \"" << dot_escape(r.cause) << "\" -> \"" << dot_escape(r.effect) << "\" [label=\""
       << dot_escape(r.name) << "\\n"
       << secs(r.min_s) << " .. " << secs(r.max_s) << " p=" << r.strength << "\"];\n";
  }
  os << "}\n";
  return os.str();
}

std::string causal_graph_json(const KnowledgeBase& kb) {
  using nlohmann::json;
  json nodes = json::array(), edges = json::array();
  for (const auto& s : kb.signatures)
    if (!s.suspect)
      nodes.push_back(
          {{"name", s.name},
           {"type", "signature"},
           {"device", to_string(s.kind)},
           {"fault_class", s.fault_class.empty() ? json(nullptr) : json(s.fault_class)},
           {"symptom", s.symptom == SymptomKind::none ? json(nullptr) : json(to_string(s.symptom))},
           {"loc", s.loc.str()}});
  for (const auto& l : kb.latents)
    nodes.push_back({{"name", l.name},
                     {"type", "latent"},
                     {"device", to_string(l.kind)},
                     {"fault_class", l.fault_class.empty() ? json(nullptr) : json(l.fault_class)},
                     {"symptom", nullptr},
                     {"loc", l.loc.str()}});
  for (const auto& r : kb.rules) {
    json where = json::array();
    for (const auto& w : r.where) {
      auto ref = [](const DeviceRef& d) {
        std::string s = d.side == DeviceRef::Side::cause ? "cause" : "effect";
        return d.binding.empty() ? s : s + "." + d.binding;
      };
      where.push_back(ref(w.lhs) + " " + to_string(w.rel) + " " + ref(w.rhs));
    }
    edges.push_back({{"rule", r.name},
                     {"cause", r.cause},
                     {"effect", r.effect},
                     {"min_s", r.min_s},
                     {"max_s", r.max_s},
                     {"skew_s", r.skew_s},
                     {"strength", r.strength},
                     {"where", where},
                     {"loc", r.loc.str()}});
    if (r.lasting_s >= 0) edges.back()["while_cause_lasts_s"] = r.lasting_s;
  }
  json out = {{"nodes", nodes}, {"edges", edges}};
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace reflex
