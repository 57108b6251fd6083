// The reasoner's hypotheses stage: latent causes (no log line of their own)
// placed where the walk met a rule from a latent, judged (silent hosts against
// their peers, quorums, the odd one out) and, once placed, tried against the
// later symptoms they could explain (causal reach across waves).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "odd_one_out.h"
#include "reasoner_graph.h"

namespace reflex::engine::reasoning {

class Hypotheses {
 public:
  explicit Hypotheses(IncidentGraph& g)
      : g_(g), kb_(g.kb), ki_(g.ki), topo_(g.topo), ix_(g.ix), o_(g.opts), in_(g.ix.interner()) {}

  // After grounding: hypothesis nodes and edges for the (effect node, rule)
  // requests of the walk whose effects nothing observed explains, or whose
  // latent rivals observed root candidates.
  void hypothesise(const std::vector<std::pair<uint32_t, const Rule*>>& requests);
  // Causal reach (incidents over time): a hypothesis placed by narrow evidence
  // is tried against the other symptoms; true when it explains new ones.
  bool extend_reach(const std::vector<uint32_t>& starts);
  // The note that says why a hypothesis stands; an odd_one_out latent's first
  // differing line goes to *odd_ev (its fields fill the latent's text).
  void note_hypothesis(const Hyp& h, std::optional<Event>* odd_ev);

 private:
  struct LatentRequest {
    uint32_t n;
    const Rule* r;
    bool rival;  // n is an observed root candidate the latent would rival
  };
  std::optional<std::vector<std::string>> latent_devices(uint32_t n, const Rule& r,
                                                         const Latent& lat);
  bool odd_evidence(const std::string& latent);
  void compute_odd();  // the odd-one-out pass, once
  uint32_t hyp_node(const Latent* lat, const std::string& dev);
  void link_hypothesis(uint32_t hn, uint32_t n, const Rule* r, bool rival);
  size_t quorum_population(const std::string& dev, const std::vector<LatentRequest>& reqs);
  void hypothesise_group(const Latent& lat, const std::string& dev,
                         const std::vector<LatentRequest>& reqs);
  void judge_silent(size_t first);
  bool latent_fits(const Hyp& h, const Rule& r, uint32_t effect_ev) const;

  IncidentGraph& g_;
  const KnowledgeBase& kb_;
  const KbIndex& ki_;
  const Topology& topo_;
  EventIndex& ix_;
  const EngineOptions& o_;
  Interner& in_;

  OddOneOutPass odd_;  // `odd_one_out` latents: where each may stand
  // (latent, device) -> its hypothesis node; a std::map, so walks over it
  // (judge_silent, extend_reach) go in a deterministic order.
  std::map<std::pair<std::string, std::string>, uint32_t> hyp_node_;
};

}  // namespace reflex::engine::reasoning
