// The reasoner's ranking stage: one score per root candidate (best chain to
// the symptoms, coverage, severity, corroboration, base rate, rivals), the
// order the candidates are listed in, and the text that says why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reasoner_graph.h"

namespace reflex::engine::reasoning {

struct Scored {
  uint32_t node;
  double score;
  std::vector<uint32_t> path;  // edge ids, root first
  int covered;
  std::string discount;  // base-rate note, when the score was discounted
  // What score_why() says, written only for the roots a diagnosis lists
  // (of up to kMaxScoredRoots scored): its formatting was a twentieth of
  // a diagnosis.
  double pbest;
  Severity sev;
  int extra, rival_of;
  uint32_t rival_node;
};

class Ranker {
 public:
  explicit Ranker(IncidentGraph& g) : g_(g), ki_(g.ki), ix_(g.ix), o_(g.opts) {}

  // The root candidates `roots` scored against the symptoms `syms`, best
  // first (at most kMaxScoredRoots of them, the most promising). Marks in
  // *covered_all (by node) each symptom some root explains.
  std::vector<Scored> rank(const std::vector<uint32_t>& roots, const std::vector<uint32_t>& syms,
                           bool fallback, bool null_trigger, std::vector<uint8_t>* covered_all);
  // `what` names what `symptoms` counts: "symptom", or "fault event" when the
  // incident has no job-level symptom and its fault evidence was diagnosed.
  std::string score_why(const Scored& sc, size_t symptoms, bool fallback,
                        const char* what = "symptom") const;

 private:
  // Per node: best path product from the root (< 0: not reached) and the edge
  // it came by; reset through `touched` between roots.
  struct PathSearch {
    std::vector<double> best;
    std::vector<uint32_t> pred;
    std::vector<uint32_t> touched;
  };
  std::vector<uint32_t> scoring_order(const std::vector<uint32_t>& roots) const;
  bool ranks_before(const Scored& a, const Scored& b, bool null_trigger) const;
  void best_paths(uint32_t r, PathSearch* ps) const;
  Scored score_root(uint32_t r, const std::vector<uint32_t>& syms, const PathSearch& ps,
                    bool fallback, std::vector<uint8_t>* covered_all);
  double base_rate(uint32_t ev, std::string* why);

  IncidentGraph& g_;
  const KbIndex& ki_;
  EventIndex& ix_;
  const EngineOptions& o_;
};

}  // namespace reflex::engine::reasoning
