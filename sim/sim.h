// reflex-sim: synthetic incident bundles (docs/interfaces.md §3) with ground truth, built
// from the causal chains by which a failed GPU, NIC, switch or host becomes the lines of a
// training job's logs, with noise, clock skew and format drift. The same options and seed
// write the same bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace reflex::sim {

struct SimOptions {
  uint64_t seed = 1;
  int count = 1;
  int hosts = 16;
  int gpus_per_host = 8;
  bool pairing_2_2 = false;            // 2 GPUs + 2 NICs per PCIe switch (else 1:1)
  std::vector<std::string> scenarios;  // empty = the default mix (ScenarioInfo::weight)
  bool stratified = true;              // counts follow the mix exactly; false = i.i.d. draws
  int noise_lines_per_host = 40;       // background volume knob
  int first_index = 1;                 // incident-NNNN numbering
  std::string out;                     // output directory
  int compact_ranks = -1;              // -1 auto (>= 256 hosts), 0 explicit list, 1 compact
  // Hard mode: the hard families below, each incident on its own
  // cluster of 1..`hosts` hosts (at most 64) with its own pairing and noise.
  bool hard = false;
  // Which hard families the default plan draws from: "default" (the set the
  // floors of tests/accuracy/sim_hard_floors.json hold), "new" (the families
  // added after it, see sim/hard.cpp) or "all". --scenario names any of them.
  std::string families = "default";
};

struct ScenarioInfo {
  std::string name;
  std::string fault_class;  // interfaces.md §6 class of the root ("" when not localizable)
  std::string device_kind;  // what truth.json names: gpu, nic, pcie, host, ...
  std::string source;       // section (§) and causal chain (Cnn) of the failure-mode
                            // notes it was written from, e.g. "§6 C01"
  double weight;            // share in the default mix (percent)
  std::string summary;
};

// Every scenario the generator knows, in a stable order.
const std::vector<ScenarioInfo>& scenarios();
// The hard mode's scenarios ("family.variant"), in a stable order: the
// default set (what `--hard` draws), or by `--families` (default|new|all).
const std::vector<ScenarioInfo>& hard_scenarios();
std::vector<ScenarioInfo> hard_scenarios(const std::string& families);

// Scenario per incident for the given options (exposed for tests).
std::vector<std::string> plan_scenarios(const SimOptions& opts, std::string* error);

using Progress = std::function<void(int done, int total)>;

// Writes opts.count bundles under opts.out. False + *error on bad options or I/O errors.
bool generate(const SimOptions& opts, std::string* error, const Progress& progress = {});

}  // namespace reflex::sim
