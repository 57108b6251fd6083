// What the incident templates share: time units, picking a job host or a GPU,
// device ids as truth.json names them, and the templates themselves, which
// live in one file per device family and are listed by the scenario table
// (scenarios.cpp).
#pragma once

#include <string>

#include "sim/ctx.h"
#include "sim/scenarios.h"

namespace reflex::sim {

inline Us ms(double v) {
  return static_cast<Us>(v * 1000.0);
}
inline Us sec(double v) {
  return static_cast<Us>(v * 1e6);
}
inline Us hours(double v) {
  return static_cast<Us>(v * 3600e6);
}

inline int job_host(Ctx& x) {
  return x.J.hosts[static_cast<size_t>(x.r.index(x.J.hosts.size()))];
}
inline int any_gpu(Ctx& x) {
  return x.r.index(static_cast<size_t>(x.C.gpg));
}
inline std::string gpu_id(Ctx& x, int h, int g) {
  return x.hn(h) + "/gpu" + std::to_string(g);
}
inline std::string nic_id(Ctx& x, int h, int n) {
  return x.hn(h) + "/" + x.H(h).nics[static_cast<size_t>(n)].name;
}

// Uncorrectable AER from `reporter` about `source`, with the old/new kernel
// string drift; `driver` prints the device-side lines.
void aer_fatal(Ctx& x, int h, Us t, const std::string& reporter, const std::string& source,
               const char* driver, bool fatal);

// ---- the templates (run by ScenarioDef::run) ----
// GPU and its links (scenarios_gpu.cpp)
void sc_pcie_switch_fatal(Ctx& x, Us t0);
void sc_gpu_fallen_off_bus(Ctx& x, Us t0);
void sc_hbm_dbe(Ctx& x, Us t0);
void sc_sram_dbe(Ctx& x, Us t0);
void sc_gsp(Ctx& x, Us t0);
void sc_gpu_hw(Ctx& x, Us t0);
void sc_nvlink(Ctx& x, Us t0);
void sc_nvswitch(Ctx& x, Us t0);
void sc_nvlink5(Ctx& x, Us t0);
// network (scenarios_net.cpp)
void sc_nic_link_down(Ctx& x, Us t0);
void sc_nic_health(Ctx& x, Us t0);
void sc_leaf(Ctx& x, Us t0);
void sc_optic(Ctx& x, Us t0);
// host, software, storage, thermal, unknown (scenarios_host.cpp)
void sc_silent_host(Ctx& x, Us t0);
void sc_psu(Ctx& x, Us t0);
void sc_mce(Ctx& x, Us t0);
void sc_host_oom(Ctx& x, Us t0);
void sc_cuda_oom(Ctx& x, Us t0);
void sc_illegal_access(Ctx& x, Us t0);
void sc_nccl_mismatch(Ctx& x, Us t0);
void sc_nfs(Ctx& x, Us t0);
void sc_thermal(Ctx& x, Us t0);
void sc_unknown(Ctx& x, Us t0);

}  // namespace reflex::sim
