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
// The hard mode's families, with their host-count range.
struct HardDef {
  ScenarioDef def;
  int min_hosts, max_hosts;
  bool job = true;  // false: the bundle has no job (a snippet)
};
const std::vector<HardDef>& hard_scenario_defs();
// The families added after the default hard set (`--families new`): kept out of
// the default plan so that the default set and its floors stay as they are.
const std::vector<HardDef>& hard_new_scenario_defs();

// Template helpers shared by scenarios.cpp and hard.cpp.
void set_truth(Ctx& x, const std::string& dev, const std::string& cls, const std::string& chain,
               const std::string& event, Us t0, std::vector<std::string> evict);
// OpenSM log_trap_info line (§4.3) from a leaf with this LID (and port, when > 0).
void opensm_trap(Ctx& x, Us t, int type, int num, const char* what, int lid, int port);
// mlx5 "Link down" (cable unplugged first, sometimes) and NCCL's async port error.
void port_down_lines(Ctx& x, int h, int n, Us t, bool cable);

// Background and sympathetic noise (§7.2) and latent faults (§7.3).
void add_incident_noise(Ctx& x, int root_host);
void add_latent_faults(Ctx& x, int root_host);
// Per-host background volume + NCCL init chatter + captures (CSV, counters),
// generated while that host's files are written (bounded memory at scale).
void add_host_background(Ctx& x, int h, int lines);

}  // namespace reflex::sim
