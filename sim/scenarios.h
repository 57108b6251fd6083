// Scenario table (internal): metadata + the template that emits it.
#pragma once

#include <vector>

#include "sim/ctx.h"
#include "sim/sim.h"

namespace reflex::sim {

struct ScenarioDef {
  ScenarioInfo info;
  void (*run)(Ctx&, Us t0);
};
const std::vector<ScenarioDef>& scenario_defs();

// Background and sympathetic noise (§7.2) and latent faults (§7.3).
void add_incident_noise(Ctx& x, int root_host);
void add_latent_faults(Ctx& x, int root_host);
// Per-host background volume + NCCL init chatter + captures (CSV, counters),
// generated while that host's files are written (bounded memory at scale).
void add_host_background(Ctx& x, int h, int lines);

}  // namespace reflex::sim
