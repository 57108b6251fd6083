// The compiled causal graph as a Boost.Graph: vertices are signatures and
// latents, edges are rules (cause -> effect). Small; built on demand.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <map>
#include <string>
#include <vector>

#include "reflex/kb.h"

namespace reflex::compiler {

struct CausalGraph {
  using Graph =
      boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property,
                            boost::property<boost::edge_index_t, size_t>>;
  struct Node {
    std::string name;
    bool latent = false;
    bool symptom = false;
    bool root = false;  // has a fault class
    SourceLoc loc;
  };
  Graph g;
  std::vector<Node> nodes;
  std::vector<const Rule*> edges;  // by edge index
  std::map<std::string, size_t> index;
};

CausalGraph build_causal_graph(const KnowledgeBase& kb);

// Cycles (each as a vertex sequence v0 -> v1 -> ... -> v0, with the rule of each step).
struct Cycle {
  std::vector<size_t> vertices;
  std::vector<size_t> edges;
};
std::vector<Cycle> find_cycles(const CausalGraph& cg);
// Vertices from which some symptom is reachable (reverse BFS from the symptoms).
std::vector<bool> reaches_symptom(const CausalGraph& cg);
// Vertices reachable from some root (BFS from the roots).
std::vector<bool> reached_from_root(const CausalGraph& cg);
// Observable (non-latent) vertices reachable from v, v included.
std::vector<size_t> observable_from(const CausalGraph& cg, size_t v);

}  // namespace reflex::compiler
