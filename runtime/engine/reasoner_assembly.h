// The reasoner's last stage: one Diagnosis from an incident's symptoms and
// root candidates (ranked by the ranking stage), with each root cause's KB
// text, device, chain to the trigger and confidence, the eviction set, the
// unexplained symptoms and the notes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reasoner_graph.h"
#include "reasoner_hypotheses.h"
#include "reasoner_rank.h"

namespace reflex::engine::reasoning {

class DiagnosisAssembly {
 public:
  DiagnosisAssembly(IncidentGraph& g, Ranker& rank, Hypotheses& hyp)
      : g_(g), rank_(rank), hyp_(hyp), kb_(g.kb), ki_(g.ki), topo_(g.topo), ix_(g.ix), o_(g.opts) {}

  // `extra_unexplained`: symptoms of no rooted incident, listed unexplained
  // here; `null_trigger`: no job symptom (the fault evidence is diagnosed);
  // `fallback`: no rule connects the roots to the symptoms.
  Diagnosis diagnose(const std::vector<uint32_t>& syms, const std::vector<uint32_t>& roots,
                     const std::vector<uint32_t>& extra_unexplained, bool null_trigger,
                     bool fallback);
  // Whether the last diagnose()'s first root was discounted as background.
  bool top_background() const { return top_background_; }

 private:
  RootCause root_cause(const Scored& sc, const EventRef& root, size_t symptoms, bool fallback,
                       bool null_trigger, bool* order_unknown);
  std::string host_of(const std::string& device) const;
  std::string most_specific_device(const Event& ev, const std::string& dev) const;
  std::vector<ChainLink> chain_of(const Scored& sc, const EventRef& root,
                                  bool* order_unknown) const;
  void choose_evictions(Diagnosis* d, const std::vector<Scored>& scored);
  void unexplained_notes(Diagnosis* d, const std::vector<uint32_t>& syms,
                         const std::vector<uint8_t>& covered_all,
                         const std::vector<uint32_t>& extra_unexplained, bool null_trigger,
                         bool fallback, bool chain_without_order);

  IncidentGraph& g_;
  Ranker& rank_;
  Hypotheses& hyp_;
  const KnowledgeBase& kb_;
  const KbIndex& ki_;
  const Topology& topo_;
  EventIndex& ix_;
  const EngineOptions& o_;
  bool top_background_ = false;
};

}  // namespace reflex::engine::reasoning
