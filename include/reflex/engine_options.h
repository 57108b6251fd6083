// The engine's option and statistics types, apart from its entry points
// (reflex/engine.h), so the engine's internals and anything that only passes
// options around include these without the Engine API.
#pragma once

#include <cstddef>
#include <cstdint>

#include "reflex/ingest_stats.h"

namespace reflex {

struct EngineOptions {
  double settle_s = 60;          // wait for late evidence after the first symptom
  double clock_skew_s = 2.0;     // global tolerance between two different clocks
  double incident_gap_s = 3600;  // a symptom this long after an incident's last one opens a new one
  double linger_s = 1800;        // a diagnosed incident still takes late evidence this long
  double order_unknown_penalty = 0.8;  // per chain link whose clocks cannot be compared
  double latent_penalty = 0.85;        // a hypothesis ranks below equal observed evidence
  size_t max_root_causes = 5;
  size_t max_candidates_per_rule = 512;  // per effect event and rule (nearest in time first)
  size_t max_nodes = 50000;              // per incident graph
  size_t max_unexplained = 50;
  size_t max_events = 4000000;  // streaming retention; the oldest half is dropped beyond it
  // Streaming: fault evidence the KB rates major or critical that no open
  // incident of its job (or host) covers opens an incident of its own,
  // diagnosed after settle_s with a null trigger as diagnose_all() does; a
  // later job symptom joins it. An answer that no longer names what it named
  // (healed, or now a job incident's) is followed by an empty revision of
  // its id. Off: only job-level symptoms open incidents.
  bool fault_incidents = false;
  IngestOptions ingest;
};

struct EngineStats {
  uint64_t events = 0;
  uint64_t symptoms = 0;
  uint64_t incidents_opened = 0;
  uint64_t diagnoses_emitted = 0;  // every revision counts
  uint64_t revisions = 0;          // emitted diagnoses with revision > 1
  uint64_t open_incidents = 0;
  uint64_t reloads = 0, failed_reloads = 0;
  uint64_t dropped_events = 0;  // retention
  uint64_t indexed_events = 0;  // events held in the index now (bounded by max_events)
  IngestStats ingest;           // summed over ingestors (one per reload)
};

}  // namespace reflex
