// The cascade knowledge base and events that several files of engine_test
// share: PCIe fatal -> GPU off the bus -> CUDA error -> watchdog on every rank.
#pragma once

#include <string>
#include <vector>

#include "test_util.h"

namespace rt {

// A small cascade vocabulary: PCIe fatal -> GPU off the bus -> CUDA error on
// the rank -> watchdog timeouts on every rank.
inline KbBuilder cascade_kb() {
  KbBuilder b;
  b.sig("t_pcie_fatal", DeviceKind::pcie_port, "pcie", Severity::critical);
  b.sig("t_gpu_off_bus", DeviceKind::gpu, "gpu_fallen_off_bus", Severity::critical).action =
      "drain {host}; reseat or replace {device}";
  b.sig("t_cuda_error", DeviceKind::rank, "", Severity::major, SymptomKind::crash);
  b.sig("t_watchdog", DeviceKind::rank, "", Severity::major, SymptomKind::hang);
  b.sig("t_benign", DeviceKind::host);
  b.sig("t_xid13", DeviceKind::gpu, "user_code", Severity::warning);
  b.rule("t_pcie_fatal", "t_gpu_off_bus", {W("effect", Relation::below, "cause")}, 0, 30, 0.9);
  b.rule("t_gpu_off_bus", "t_cuda_error", {W("effect", Relation::runs_on, "cause")}, 0, 60, 0.9, 1);
  b.rule("t_xid13", "t_cuda_error", {W("effect", Relation::runs_on, "cause")}, 0, 60, 0.5, 1);
  b.rule("t_cuda_error", "t_watchdog", {W("effect", Relation::same_job, "cause")}, 0, 1800, 0.8, 5);
  b.rule("t_gpu_off_bus", "t_watchdog", {W("effect", Relation::same_job, "cause")}, 0, 1800, 0.5,
         5);
  return b;
}

inline std::vector<Event> cascade_events(int bad_host, int bad_gpu, int hosts) {
  std::vector<Event> v;
  std::string h = "node-" + std::to_string(bad_host);
  v.push_back(ev("t_benign", "node-0", DeviceKind::host, "node-0", 10, "node-0/kernel"));
  v.push_back(ev("t_xid13", gpu(0, 1), DeviceKind::gpu, "node-0", 20, "node-0/kernel"));
  v.push_back(
      ev("t_pcie_fatal", pcie(bad_host, bad_gpu), DeviceKind::pcie_port, h, 100, h + "/kernel"));
  v.push_back(
      ev("t_gpu_off_bus", gpu(bad_host, bad_gpu), DeviceKind::gpu, h, 100.5, h + "/kernel"));
  int bad_rank = bad_host * 8 + bad_gpu;
  v.push_back(ev("t_cuda_error", rank("job-1", bad_rank), DeviceKind::rank, h, 101, h + "/app"));
  for (int r = 0; r < hosts * 8; ++r) {
    if (r == bad_rank) continue;
    std::string rh = "node-" + std::to_string(r / 8);
    v.push_back(
        ev("t_watchdog", rank("job-1", r), DeviceKind::rank, rh, 700 + r * 0.01, rh + "/app"));
  }
  return v;
}

inline bool root_devices_contain(const Diagnosis& d, const std::string& dev) {
  for (auto& r : d.root_causes)
    if (r.device == dev) return true;
  return false;
}

}  // namespace rt
