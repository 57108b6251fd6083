// Internal model of the simulator: the cluster, the job, and one incident's
// emitted lines before they are rendered into files.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "sim/rng.h"
#include "sim/sim.h"
#include "sim/timefmt.h"

namespace reflex::sim {

struct SimGpu {
  int index = 0;
  std::string bdf;  // 0000:18:00.0
  std::string bus;  // 0000:18:00 (as NVRM prints it)
  std::string serial, uuid;
  int sw = 0;
  std::vector<int> nics;  // first = the NIC its rank uses
};
struct SimNic {
  int index = 0;
  std::string name, bdf, netdev, ip, gid;
  int sw = 0;
  int leaf = 0;       // index into Cluster::leaves
  int leaf_port = 0;  // port on that leaf
};
struct SimSwitch {
  std::string id, bdf, root_port;
};
struct SimHost {
  std::string name, ip;
  int rack = 0, su = 0;
  std::vector<SimGpu> gpus;
  std::vector<SimNic> nics;
  std::vector<SimSwitch> sws;
  std::vector<std::string> nvsw_bdf;
  std::string nvl_domain;
};
struct SimLeaf {
  std::string name;
  int su = 0, rail = 0, lid = 0;
  std::vector<int> spines;
};
struct SimStorage {
  std::string name, kind, ip, exp;
};

struct Cluster {
  std::string name;
  int gpg = 8;
  bool pairing22 = false;
  bool roce = false;
  std::vector<SimHost> hosts;
  std::vector<SimLeaf> leaves;
  std::vector<std::string> spines;
  std::vector<SimStorage> storage;
};

struct Job {
  std::string id;
  std::vector<int> hosts;  // host index per position; rank = pos * gpg + gpu
  std::vector<int> pos;    // per host index: position or -1
  bool compact = false;
  int gpg = 8;
  int rank(int host, int gpu) const { return pos[static_cast<size_t>(host)] * gpg + gpu; }
};

Cluster build_cluster(const SimOptions& o, uint64_t seed);
Job build_job(const Cluster& c, Rng& r, int compact_mode);
// topology.json (interfaces.md §1) for this cluster and job.
std::string topology_json(const Cluster& c, const Job& j);

// ---- emitted lines ----
enum Chan : uint8_t { kKern, kApp, kFm, kSel, kSmi, kCounters, kPstore, kSm, kChanCount };

// Placeholders inside Line::text, filled at render time from the line's clock:
//   \x01  PyTorch/glog time  "305 10:11:12.345678901" (the level letter precedes it)
//   \x02  "2026-03-05 10:11:12" (Megatron / torchrun brackets)
struct Line {
  Us t = 0;  // true time; the host clock is applied when rendering
  uint32_t seq = 0;
  Chan chan = kKern;
  int16_t lrank = -1;  // local rank for app lines (per-rank files)
  bool timed = false;  // text holds placeholders
  std::string text;
};

struct HostProfile {
  enum Kern : uint8_t { kDmesgRaw, kDmesgT, kSyslog, kJournal, kDmesgIso } kern = kSyslog;
  enum App : uint8_t { kCri, kYmd, kRaw } app = kCri;
  bool per_rank_files = false;
  bool thread_tag = false;  // newer kernels: "[ T1946]"
  bool kern_gz = false;
  Us skew = 0;            // host clock - true time
  Us app_skew = 0;        // app clock - true time
  Us boot = 0;            // boot instant (host clock)
  std::string nccl_name;  // name inside NCCL prefixes (host or pod name)
  int pid_base = 0;       // rank processes: pid_base + lrank
};

struct LatentNote {
  std::string kind, device;
};

struct Truth {
  std::string scenario, fault_class, device, chain, root_event, regime;
  bool localizable = true;
  bool false_alarm = false;  // nothing was faulty (truth.json "false_alarm")
  Us t0 = 0;
  std::vector<std::string> eviction, accept;
  std::vector<std::string> also;  // truth.json "also_acceptable" (written when not empty)
  std::vector<LatentNote> latent;
  std::vector<std::string> notes;
};

struct Incident {
  Cluster* c = nullptr;
  Job job;
  std::vector<std::vector<Line>> host_lines;  // by host index
  std::vector<Line> sm_lines;                 // subnet manager host (not in topology)
  std::vector<Us> dead_at;                    // host stops logging after this (true time)
  std::vector<uint8_t> app_lost;              // host's application log not collected
  std::vector<HostProfile> prof;
  std::vector<uint8_t> want_smi, want_counters;  // per host extra captures
  uint32_t seq = 0;
  Us t_start = 0, t_end = 0;
  Truth truth;
  // incident-wide drift
  int torch_variant = 0;
  int nccl_variant = 0;
  int iter_style = 0;
  double step_s = 8;
  Us timeout_ms = 600000;
  std::string nccl_version;
  bool smi_all = false, counters_all = false;
  // GPU clock throttling seen in nvidia-smi CSV samples (root, latent or spikes).
  struct Throttle {
    int h, g;
    Us from, to;
    unsigned
        reason;  // clocks_event_reasons bit: 0x20 SW thermal, 0x40 HW thermal, 0x80 HW power brake
  };
  std::vector<Throttle> throttles;
  std::vector<std::pair<int, int>> counters_done;  // (host, nic) already sampled by a scenario
  // Hard mode: every host's tensor-parallel communicator prints its NCCL
  // version banner; a host may run another build; BMCs (hosts/<name>, not in
  // the topology) hold SEL lines.
  bool banner_per_host = false;
  std::vector<std::string> host_nccl_version;  // per host; empty = nccl_version everywhere
  std::map<std::string, std::vector<Line>> bmc_sel;
  // Thin evidence (hard.cpp, --families new): no topology.json in the bundle;
  // a paste: only the template's own lines (no background, noise, latents,
  // training log).
  bool no_topology = false;
  bool paste = false;
};

}  // namespace reflex::sim
