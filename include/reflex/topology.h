// The cluster as the runtime sees it (interfaces.md §1) and the device ids of interfaces.md §2.
// Loading is all-or-nothing: a bad file yields an error naming the file, the
// JSON path and the problem, and no Topology.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reflex/kb.h"

namespace reflex {

struct TopologyError {
  std::string file;
  std::string json_path;  // e.g. "$.hosts[3].gpus[1].pcie_switch"
  std::string message;
  std::string str()
      const;  // "topology.json: $.hosts[3]...: GPU names switch 'sw9' that does not exist"
};

struct DeviceInfo {
  std::string id;  // interfaces.md §2 id
  DeviceKind kind = DeviceKind::host;
  std::string host;  // owning host ("" for fabric/job/storage)
  std::string bdf;   // normalised, when known
  bool placeholder = false;
};

class Topology {
 public:
  Topology();
  ~Topology();
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;

  // Never throws. On error returns nullptr and fills *err.
  static std::unique_ptr<Topology> load_file(const std::string& path, TopologyError* err);
  static std::unique_ptr<Topology> load_text(std::string_view json, const std::string& origin,
                                             TopologyError* err);
  // An empty topology (no hosts): every device becomes a placeholder.
  static std::unique_ptr<Topology> empty();

  const std::string& cluster() const;
  size_t host_count() const;
  std::vector<std::string> host_names() const;
  // Notes about degraded input ("host node-3 has no GPU BDFs: GPUs known by BDF only"),
  // each said once.
  const std::vector<std::string>& notes() const;

  // ---- resolution (ingest) ----
  // Exact name, then short name (before the first dot), then IP.
  std::optional<std::string> resolve_host(std::string_view name_or_ip) const;
  // A device on `host` by PCI address: GPU, NIC, PCIe switch/port or NVSwitch.
  std::optional<DeviceInfo> device_by_bdf(const std::string& host, std::string_view bdf) const;
  std::optional<DeviceInfo> gpu_by_index(const std::string& host, int index) const;
  std::optional<DeviceInfo> nic_by_name(const std::string& host,
                                        std::string_view mlx5_or_netdev) const;
  std::optional<DeviceInfo> nic_by_ip(std::string_view ip) const;  // cluster-wide
  std::optional<DeviceInfo> nvswitch_by_id(const std::string& host, std::string_view id) const;
  // Rank in a job ("" = the only job, or the first job listing the rank).
  std::optional<DeviceInfo> rank(std::string_view job, int rank) const;
  std::optional<DeviceInfo> fabric_switch(std::string_view name) const;
  std::optional<DeviceInfo> storage(std::string_view name_or_ip) const;
  // Jobs that have a rank on this host (in file order).
  std::vector<std::string> jobs_of_host(const std::string& host) const;
  // A batch input whose topology declares no job (a bundle, a paste, a
  // directory of hosts' logs) holds the hosts of one failure: take them as one
  // job, so `same_job` holds between devices of any two hosts (placeholders
  // included) and their symptoms are one incident. No effect when the
  // topology declares a job. Call before sharing the topology.
  // `name` (--job NAME): that job's name, so ranks are job/NAME/rankN and
  // every host's jobs_of_host is {NAME}; "" keeps placeholder ranks.
  void assume_one_job(const std::string& name = "");
  bool one_job() const;

  // ---- devices and relations (engine) ----
  std::optional<DeviceInfo> device(std::string_view id) const;  // also parses placeholder ids
  // True when `a REL b` holds (docs/language.md §3). Placeholders relate by host only.
  bool related(Relation rel, std::string_view a, std::string_view b) const;
  // Every device x of `kind` with `x REL b` (when x_is_lhs) or `b REL x`.
  // With `limit`, enumeration stops once more than `limit` are found: the
  // result then holds limit + 1 of them (enough to tell "too many"), so a
  // caller that only wants small sets does not pay for a 12,500-host job.
  std::vector<std::string> related_devices(Relation rel, std::string_view b, bool x_is_lhs,
                                           DeviceKind kind,
                                           size_t limit = static_cast<size_t>(-1)) const;
  // All devices of a kind (hosts in file order).
  std::vector<std::string> devices_of_kind(DeviceKind kind) const;

  // ---- integer device ids (engine hot paths) ----
  // A device of this topology by index, so that a caller that resolves a name
  // once can ask relations without hashing names again. Ids are dense
  // (0 .. device_count() - 1) and valid only for this Topology object.
  using DeviceId = int32_t;
  static constexpr DeviceId kNoDevice = -1;
  // Exact ids only: placeholders and unknown names give kNoDevice (the string
  // overloads above handle those).
  DeviceId id(std::string_view device) const;
  size_t device_count() const;
  const std::string& id_str(DeviceId d) const;  // "" for an id out of range
  // related(rel, a, b) for two devices of this topology: the same answer as the
  // string overload for their names. An id out of range relates to nothing
  // (except under `any`, which holds for every pair).
  bool related(Relation rel, DeviceId a, DeviceId b) const;
  // related_devices() for a device of this topology, as ids, in the same
  // order as the string overload returns their names (cleared first; empty
  // for an id out of range).
  void related_device_ids(Relation rel, DeviceId b, bool x_is_lhs, DeviceKind kind,
                          std::vector<DeviceId>* out, size_t limit = static_cast<size_t>(-1)) const;
  // `same_job` as one integer per device, for callers that compare one
  // device with many: the device's job (>= 0), kNoJob when it shares a job
  // with nothing (no job, or a kind same_job does not relate), kManyJobs
  // when it has several (ask related()). For two keys >= 0,
  // related(same_job, a, b) == (key(a) == key(b)); with a kNoJob key it is
  // false. kNoJob for an id out of range.
  static constexpr int32_t kNoJob = -1, kManyJobs = -2;
  int32_t same_job_key(DeviceId d) const;
  // Distinct for every loaded Topology of the process: caches of DeviceIds
  // keyed by it cannot confuse a reloaded topology with the old one.
  uint64_t uid() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace reflex
