// What the hard families share: the base rate of benign lines, running one of
// the standard templates under them, a rank's exit and its propagation, and
// the families' templates, which hard.cpp lists in its tables.
#pragma once

#include <string>
#include <vector>

#include "sim/templates.h"

namespace reflex::sim {

inline std::string rank_id(Ctx& x, int h, int g) {
  return "job/" + x.J.id + "/rank" + std::to_string(x.rank(h, g));
}

// The standard template of that name (scenarios.cpp).
const ScenarioDef& base_def(const std::string& name);
// Runs one of the named standard templates, drawn at random, and returns the
// host of its root (-1 for cluster-level roots).
int run_base(Ctx& x, const std::vector<std::string>& names, Us t0);
// The earliest instant host h's kernel can have logged, with an hour of margin.
Us after_boot(Ctx& x, int h);
// Benign lines: nvidia-peermem's invalid context, one correctable AER event.
void peermem_invalid_context(Ctx& x, int h, Us t);
void corrected_aer(Ctx& x, int h, Us t);
// On `share` of the hosts, the benign kinds at their own steady rates over [from, to].
void base_rate_background(Ctx& x, double share, Us from, Us to);
// A rank (h, g) has exited: torchrun tears the host down and the others fail.
Us rank_gone(Ctx& x, int h, int g, Us t_exit, int exitcode, double p_errored);

// ---- the default families (hard_default.cpp) ----
void hard_background(Ctx& x, Us t0);
void hard_prior_fault(Ctx& x, Us t0);
void hard_psu_brake(Ctx& x, Us t0);
void hard_leaf_rail(Ctx& x, Us t0);
void hard_odd_nccl(Ctx& x, Us t0);
void hard_two_wave(Ctx& x, Us t0);
void hard_snippet(Ctx& x, Us t0);

// ---- the families added later (`--families new`) ----
// software and one device among its peers (hard_new.cpp)
void new_nccl_segv(Ctx& x, Us t0);
void new_duplicate_gpu(Ctx& x, Us t0);
void new_nvlink_one(Ctx& x, Us t0);
void new_nic_fw(Ctx& x, Us t0);
void new_one_rank_exception(Ctx& x, Us t0);
// a link failing (hard_links.cpp)
void new_nic_pcie(Ctx& x, Us t0);
void new_ber_ib(Ctx& x, Us t0);
void new_ber_pcie(Ctx& x, Us t0);
// thin evidence (hard_thin.cpp)
void new_thin_one_host(Ctx& x, Us t0);
void new_thin_no_topology(Ctx& x, Us t0);
void new_thin_paste(Ctx& x, Us t0);

}  // namespace reflex::sim
