// The incident graph every stage of the reasoner works on: events and
// hypotheses as nodes, rule instances as edges, the grounding's root
// candidates and the notes a diagnosis will carry. Private to the engine; the
// stages (walk, hypotheses, ranking, assembly) share one per diagnosis run.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "index.h"
#include "reflex/diagnosis.h"
#include "reflex/engine_options.h"

namespace reflex::engine::reasoning {

constexpr size_t kMaxDevices = 4096;  // related_devices() results worth probing

struct GEdge {
  uint32_t cause, effect;
  const Rule* rule;
  bool unknown;  // clocks could not be compared
  // A latent competing with an observed root candidate: usable for scoring and
  // chains, but it does not ground the effect (both stay root candidates).
  bool rival = false;
};

struct Hyp {
  const Latent* latent = nullptr;
  std::string device, host;
  int64_t t_est = kNoWall;  // latest time consistent with every effect
  bool valid = true;
  bool silent_unknown = false;
  // A silent latent on a host the input holds no line of: named by its peers.
  bool named_by_peer = false;
  int rival_roots = 0;   // distinct devices of the observed root candidates it explains
  size_t quorum_of = 0;  // with a quorum share: the devices the share was taken of
};

struct GNode {
  uint32_t ev = kNone;  // event index, or kNone for a hypothesis
  int hyp = -1;
  std::vector<uint32_t> in, out;  // edge ids
};

// The shared context of one run: the inputs, the graph and what every stage
// reads of a node. Plain data with the node queries beside it, so each stage
// keeps only its own state.
struct IncidentGraph {
  IncidentGraph(const KnowledgeBase& kb_in, const KbIndex& ki_in, const Topology& topo_in,
                EventIndex& ix_in, const EngineOptions& opts_in)
      : kb(kb_in), ki(ki_in), topo(topo_in), ix(ix_in), opts(opts_in) {}

  // The event's node, added when new (kNone when the node budget is spent).
  uint32_t node_of(uint32_t ev, bool* added);
  void add_edge(uint32_t cause, uint32_t effect, const Rule* r, bool unknown, bool rival = false);
  bool edge_valid(const GEdge& e) const {
    return nodes[e.cause].hyp < 0 || hyps[static_cast<size_t>(nodes[e.cause].hyp)].valid;
  }
  // Root candidates of the graph as it stands: the components no grounded
  // cause explains, with the winner of each (more independent evidence,
  // earlier) first and the others sympathetic to it.
  void ground();

  bool root_capable(uint32_t n) const;
  int64_t node_time(uint32_t n) const;
  // Arrival-order independent order of nodes (time, then evidence, ...).
  bool node_less(uint32_t a, uint32_t b) const {
    const GNode& ga = nodes[a];
    const GNode& gb = nodes[b];
    if ((ga.hyp >= 0) != (gb.hyp >= 0)) return ga.hyp < 0;
    if (ga.hyp >= 0) {
      const Hyp& ha = hyps[static_cast<size_t>(ga.hyp)];
      const Hyp& hb = hyps[static_cast<size_t>(gb.hyp)];
      if (ha.t_est != hb.t_est) return ha.t_est < hb.t_est;
      if (ha.latent->name != hb.latent->name) return ha.latent->name < hb.latent->name;
      return ha.device < hb.device;
    }
    return ix.before(ga.ev, gb.ev);
  }
  // Sorts nodes by node_less (by their events' keys when none is a hypothesis).
  void sort_nodes(std::vector<uint32_t>& v) const;
  Severity node_severity(uint32_t n) const;
  int independent_evidence(uint32_t n) const;
  // The events independent_evidence() counts, one per kind (the first, with
  // `count` = all of that kind in the span), oldest first.
  std::vector<EventRef> device_evidence(uint32_t n) const;
  uint64_t occurrences(uint32_t n) const;
  EventRef ref_of(uint32_t n) const;
  int nature_rank(const std::string& nature) const;
  const std::string& node_nature(uint32_t n) const;

  void note(std::string s) {
    if (seen_notes.insert(s).second) notes.push_back(std::move(s));
  }

  const KnowledgeBase& kb;
  const KbIndex& ki;
  const Topology& topo;
  EventIndex& ix;
  const EngineOptions& opts;

  std::vector<GNode> nodes;
  std::vector<GEdge> edges;
  std::vector<Hyp> hyps;
  U32Map node_of_ev;
  // ground()'s answer: per node, whether a grounded cause explains it; the
  // root candidates (winners first, then sympathetic); loser -> winner.
  std::vector<uint8_t> grounded;
  std::vector<uint32_t> roots;
  std::unordered_map<uint32_t, uint32_t> sympathetic_to;
  // The fault names that corroborate a device fault (independent_evidence):
  // a declared nature that evicts, not background. Filled once per run.
  std::vector<uint32_t> device_fault_names;
  bool truncated = false;  // a bound cut the search: said in the notes
  std::vector<std::string> notes;
  std::set<std::string> seen_notes;
};

}  // namespace reflex::engine::reasoning
