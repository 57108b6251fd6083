// Engine unit tests over hand-built knowledge bases (no .rfx, no compiler):
// the backward walk, ranking, latents, incidents, clocks, streaming.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "test_util.h"

using namespace rt;

namespace {

// A small cascade vocabulary: PCIe fatal -> GPU off the bus -> CUDA error on
// the rank -> watchdog timeouts on every rank.
KbBuilder cascade_kb() {
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

std::vector<Event> cascade_events(int bad_host, int bad_gpu, int hosts) {
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

bool root_devices_contain(const Diagnosis& d, const std::string& dev) {
  for (auto& r : d.root_causes)
    if (r.device == dev) return true;
  return false;
}

}  // namespace

TEST(Engine, CascadeAcrossHostsNamesTheSwitch) {
  auto b = cascade_kb();
  auto t = topo(topo_json(2, {{"job-1", {0, 1}}}));
  auto ds = diagnose_events(b.kb, *t, cascade_events(1, 3, 2));
  ASSERT_EQ(ds.size(), 1u);
  const Diagnosis& d = ds[0];
  ASSERT_TRUE(d.trigger);
  EXPECT_EQ(d.trigger->event, "t_cuda_error");
  EXPECT_EQ(d.trigger->device, rank("job-1", 11));
  ASSERT_FALSE(d.root_causes.empty());
  const RootCause& top = d.root_causes[0];
  EXPECT_EQ(top.device, pcie(1, 3));
  EXPECT_EQ(top.fault_class, "pcie");
  ASSERT_EQ(top.chain.size(), 3u);
  EXPECT_EQ(top.chain[0].ev.event, "t_pcie_fatal");
  EXPECT_EQ(top.chain[1].ev.event, "t_gpu_off_bus");
  EXPECT_EQ(top.chain[1].relation, "effect below cause");
  EXPECT_EQ(top.chain[1].rule, "test/kb.rfx:" + std::to_string(b.kb.rules[0].loc.line));
  EXPECT_EQ(top.chain[2].ev.event, "t_cuda_error");
  // The GPU is explained (a consequence), not blamed.
  EXPECT_FALSE(root_devices_contain(d, gpu(1, 3)));
  EXPECT_TRUE(d.unexplained.empty());
  EXPECT_EQ(top.explains, 16);
  EXPECT_EQ(d.eviction_set.front(), pcie(1, 3));
  EXPECT_EQ(d.job, "job/job-1");
}

TEST(Engine, CascadeMovesWithTheFault) {
  // Same scenario on another switch: the answer follows the data.
  auto b = cascade_kb();
  auto t = topo(topo_json(3, {{"job-1", {0, 1, 2}}}));
  auto ds = diagnose_events(b.kb, *t, cascade_events(2, 6, 3));
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  EXPECT_EQ(ds[0].root_causes[0].device, pcie(2, 6));
}

TEST(Engine, ActionPlaceholdersAndSubclass) {
  auto b = cascade_kb();
  b.kb.classes.push_back({"gpu_bus_loss_variant", "gpu_fallen_off_bus", "", {}});
  for (auto& s : b.kb.signatures)
    if (s.name == "t_gpu_off_bus") {
      s.fault_class = "gpu_bus_loss_variant";
      // {nope}: a field this line did not carry; {bdf}{alt_bdf}: alternatives.
      s.action = "drain {host}; replace {device} at {bdf}{alt_bdf} link {nope}";
    }
  auto t = topo(topo_json(1, {{"job-1", {0}}}));
  std::vector<Event> v;
  Event x = ev("t_gpu_off_bus", gpu(0, 2), DeviceKind::gpu, "node-0", 100, "node-0/kernel");
  x.fields.push_back({"bdf", "0000:31:00.0"});
  v.push_back(x);
  v.push_back(ev("t_cuda_error", rank("job-1", 2), DeviceKind::rank, "node-0", 101, "node-0/app"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  auto& r = ds[0].root_causes[0];
  EXPECT_EQ(r.fault_class, "gpu_fallen_off_bus");
  EXPECT_EQ(r.subclass, "gpu_bus_loss_variant");
  EXPECT_EQ(r.action, "drain node-0; replace node-0/gpu2 at 0000:31:00.0 link unknown");
}

// A line that names no GPU (`Xid (PCI:...)`) lands on "<host>/gpu@unknown":
// the root and the eviction set name the host that logged it, not that id.
TEST(Engine, RootOnAnUnnamedDeviceIsItsHost) {
  auto b = cascade_kb();
  auto t = topo(topo_json(1, {{"job-1", {0}}}));
  std::vector<Event> v;
  Event x =
      ev("t_gpu_off_bus", "node-0/gpu@unknown", DeviceKind::gpu, "node-0", 100, "node-0/kernel");
  x.placeholder_device = true;
  v.push_back(x);
  v.push_back(ev("t_cuda_error", rank("job-1", 2), DeviceKind::rank, "node-0", 101, "node-0/app"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  EXPECT_EQ(ds[0].root_causes[0].device, "node-0");
  EXPECT_EQ(ds[0].eviction_set, std::vector<std::string>{"node-0"});
}

TEST(Engine, FanInNamesTheOneGpu) {
  KbBuilder b;
  b.sig("t_nvl_fatal", DeviceKind::gpu, "nvlink", Severity::critical);
  b.sig("t_nvl_remote", DeviceKind::gpu, "nvlink", Severity::minor);
  b.sig("t_watchdog", DeviceKind::rank, "", Severity::major, SymptomKind::hang);
  b.rule("t_nvl_fatal", "t_nvl_remote", {W("effect", Relation::nvlink_peer, "cause")}, 0, 10, 0.9,
         2);
  // Remote errors also look like they explain each other (sympathetic).
  b.rule("t_nvl_remote", "t_nvl_remote", {W("effect", Relation::nvlink_peer, "cause")}, -1, 1, 0.5,
         1);
  b.rule("t_nvl_remote", "t_watchdog", {W("effect", Relation::runs_on, "cause")}, 0, 1800, 0.8, 5);
  b.rule("t_nvl_fatal", "t_watchdog", {W("effect", Relation::runs_on, "cause")}, 0, 1800, 0.8, 5);
  auto t = topo(topo_json(8, {{"job-1", {0, 1, 2, 3, 4, 5, 6, 7}}}, /*nvl_domain=*/true));
  std::vector<Event> v;
  v.push_back(ev("t_nvl_fatal", gpu(2, 5), DeviceKind::gpu, "node-2", 100, "node-2/kernel"));
  for (int h = 0; h < 8; ++h)
    for (int g = 0; g < 8; ++g) {
      if (h == 2 && g == 5) continue;
      std::string hn = "node-" + std::to_string(h);
      v.push_back(
          ev("t_nvl_remote", gpu(h, g), DeviceKind::gpu, hn, 100.2 + 0.01 * g, hn + "/kernel"));
    }
  for (int r = 0; r < 64; ++r) {
    std::string hn = "node-" + std::to_string(r / 8);
    v.push_back(ev("t_watchdog", rank("job-1", r), DeviceKind::rank, hn, 700, hn + "/app"));
  }
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 1u);
  const Diagnosis& d = ds[0];
  ASSERT_FALSE(d.root_causes.empty());
  EXPECT_EQ(d.root_causes[0].device, gpu(2, 5));
  EXPECT_EQ(d.root_causes[0].event, "t_nvl_fatal");
  // None of the 63 sympathetic reports is blamed.
  for (auto& r : d.root_causes) EXPECT_NE(r.event, "t_nvl_remote") << r.device;
  EXPECT_TRUE(d.unexplained.empty());
  EXPECT_EQ(d.root_causes[0].explains, 64);
}

TEST(Engine, LinkFaultOnBothEndsBlamesTheEndWithIndependentEvidence) {
  KbBuilder b;
  b.sig("t_nvl_err", DeviceKind::gpu, "nvlink", Severity::major);
  b.sig("t_ecc_dbe", DeviceKind::gpu, "gpu_memory", Severity::critical);
  b.sig("t_watchdog", DeviceKind::rank, "", Severity::major, SymptomKind::hang);
  b.rule("t_nvl_err", "t_nvl_err", {W("effect", Relation::nvlink_peer, "cause")}, -1, 1, 0.8, 1);
  b.rule("t_nvl_err", "t_watchdog", {W("effect", Relation::same_job, "cause")}, 0, 1800, 0.8, 5);
  auto t = topo(topo_json(1, {{"job-1", {0}}}));
  for (int variant = 0; variant < 2; ++variant) {
    // The end with the extra evidence reports slightly *later*, and it is
    // GPU 1 in one variant and GPU 2 in the other.
    int culprit = variant == 0 ? 1 : 2, other = variant == 0 ? 2 : 1;
    std::vector<Event> v;
    v.push_back(ev("t_ecc_dbe", gpu(0, culprit), DeviceKind::gpu, "node-0", 99, "node-0/kernel"));
    v.push_back(ev("t_nvl_err", gpu(0, other), DeviceKind::gpu, "node-0", 100.0, "node-0/kernel"));
    v.push_back(
        ev("t_nvl_err", gpu(0, culprit), DeviceKind::gpu, "node-0", 100.3, "node-0/kernel"));
    for (int r = 0; r < 8; ++r)
      v.push_back(
          ev("t_watchdog", rank("job-1", r), DeviceKind::rank, "node-0", 700, "node-0/app"));
    auto ds = diagnose_events(b.kb, *t, v);
    ASSERT_EQ(ds.size(), 1u);
    ASSERT_FALSE(ds[0].root_causes.empty());
    EXPECT_EQ(ds[0].root_causes[0].device, gpu(0, culprit)) << "variant " << variant;
    // The sympathetic end is at most an alternative, ranked lower, and both
    // ends are in the eviction set.
    for (size_t i = 1; i < ds[0].root_causes.size(); ++i)
      EXPECT_LT(ds[0].root_causes[i].score, ds[0].root_causes[0].score);
    auto& ev_set = ds[0].eviction_set;
    EXPECT_NE(std::find(ev_set.begin(), ev_set.end(), gpu(0, other)), ev_set.end());
  }
}

namespace {
KbBuilder silent_kb() {
  KbBuilder b;
  b.sig("t_peer_error", DeviceKind::gpu);  // names the remote NIC as binding "peer"
  b.sig("t_watchdog", DeviceKind::rank, "", Severity::major, SymptomKind::hang);
  b.sig("t_info", DeviceKind::host);
  b.latent("t_host_died", DeviceKind::host, "host_kernel", /*silent=*/true);
  b.rule("t_host_died", "t_peer_error", {W("effect.peer", Relation::on, "cause")}, 0, 60, 0.8);
  b.rule("t_peer_error", "t_watchdog", {W("effect", Relation::same_job, "cause")}, 0, 1800, 0.8, 5);
  return b;
}

std::vector<Event> silent_events(int dead, bool dead_logs_after) {
  std::vector<Event> v;
  auto hn = [](int h) { return "node-" + std::to_string(h); };
  // Everyone logs a little before; node-3 logs least of all overall.
  for (int h = 0; h < 4; ++h) {
    if (h == 3) continue;
    for (int k = 0; k < 5; ++k)
      v.push_back(ev("t_info", hn(h), DeviceKind::host, hn(h), 10 + k * 10, hn(h) + "/kernel"));
  }
  if (dead_logs_after)
    v.push_back(ev("t_info", hn(dead), DeviceKind::host, hn(dead), 130, hn(dead) + "/kernel"));
  for (int h = 0; h < 4; ++h) {
    if (h == dead) continue;
    for (int g = 0; g < 8; ++g) {
      Event e =
          ev("t_peer_error", gpu(h, g), DeviceKind::gpu, hn(h), 120 + g * 0.1, hn(h) + "/app");
      e.bindings.push_back({"peer", nic(dead, g)});
      v.push_back(e);
    }
  }
  v.push_back(ev("t_info", hn(3), DeviceKind::host, hn(3), 150, hn(3) + "/kernel"));
  for (int r = 0; r < 32; ++r) {
    if (r / 8 == dead) continue;
    v.push_back(
        ev("t_watchdog", rank("job-1", r), DeviceKind::rank, hn(r / 8), 700, hn(r / 8) + "/app"));
  }
  return v;
}
}  // namespace

TEST(Engine, HostThatDiedSilentlyIsHypothesised) {
  auto b = silent_kb();
  auto t = topo(topo_json(4, {{"job-1", {0, 1, 2, 3}}}));
  auto ds = diagnose_events(b.kb, *t, silent_events(2, false));
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  auto& r = ds[0].root_causes[0];
  EXPECT_EQ(r.device, "node-2");
  EXPECT_EQ(r.fault_class, "host_kernel");
  EXPECT_TRUE(r.latent);
  EXPECT_EQ(r.action, "check BMC of node-2");
  EXPECT_TRUE(r.chain[0].ev.latent);
  EXPECT_TRUE(r.chain[0].ev.evidence.empty());
  bool noted = false;
  for (auto& n : ds[0].notes) noted |= n.find("logged nothing after") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Engine, SilentLatentNeedsTheHostToHaveGoneQuiet) {
  auto b = silent_kb();
  auto t = topo(topo_json(4, {{"job-1", {0, 1, 2, 3}}}));
  auto ds = diagnose_events(b.kb, *t, silent_events(2, /*dead_logs_after=*/true));
  ASSERT_EQ(ds.size(), 1u);
  for (auto& r : ds[0].root_causes) EXPECT_NE(r.device, "node-2");
  // And node-3, which logged least, is never blamed for that.
  for (auto& r : ds[0].root_causes) EXPECT_NE(r.device, "node-3");
  EXPECT_FALSE(ds[0].unexplained.empty());
}

TEST(Engine, TwoConcurrentIncidentsStayApart) {
  auto b = cascade_kb();
  b.sig("t_ecc", DeviceKind::gpu, "gpu_memory", Severity::critical);
  b.rule("t_ecc", "t_cuda_error", {W("effect", Relation::runs_on, "cause")}, 0, 60, 0.9, 1);
  auto t = topo(topo_json(2, {{"job-a", {0}}, {"job-b", {1}}}));
  std::vector<Event> v;
  v.push_back(ev("t_gpu_off_bus", gpu(0, 1), DeviceKind::gpu, "node-0", 100, "node-0/kernel"));
  v.push_back(ev("t_cuda_error", rank("job-a", 1), DeviceKind::rank, "node-0", 101, "node-0/app"));
  for (int r = 0; r < 8; ++r)
    if (r != 1)
      v.push_back(
          ev("t_watchdog", rank("job-a", r), DeviceKind::rank, "node-0", 700, "node-0/app"));
  v.push_back(ev("t_ecc", gpu(1, 4), DeviceKind::gpu, "node-1", 105, "node-1/kernel"));
  v.push_back(ev("t_cuda_error", rank("job-b", 4), DeviceKind::rank, "node-1", 106, "node-1/app"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 2u);
  std::map<std::string, std::string> by_job;
  for (auto& d : ds) {
    ASSERT_FALSE(d.root_causes.empty());
    by_job[d.job] = d.root_causes[0].device;
    EXPECT_TRUE(d.unexplained.empty()) << d.job;
  }
  EXPECT_EQ(by_job["job/job-a"], gpu(0, 1));
  EXPECT_EQ(by_job["job/job-b"], gpu(1, 4));
  EXPECT_NE(ds[0].incident, ds[1].incident);
}

TEST(Engine, ClockSkewOfAFewSecondsIsTolerated) {
  auto b = cascade_kb();
  auto t = topo(topo_json(2, {{"job-1", {0, 1}}}));
  // node-1's application clock runs 2.5 s behind its kernel clock: the CUDA
  // error appears to precede the GPU loss.
  std::vector<Event> v;
  v.push_back(ev("t_gpu_off_bus", gpu(1, 2), DeviceKind::gpu, "node-1", 100, "node-1/kernel"));
  v.push_back(
      ev("t_cuda_error", rank("job-1", 10), DeviceKind::rank, "node-1", 97.5, "node-1/app"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  EXPECT_EQ(ds[0].root_causes[0].device, gpu(1, 2));
  EXPECT_EQ(ds[0].root_causes[0].chain.size(), 2u);

  // Beyond rule skew (1 s) + global tolerance (2 s) the rule no longer links them.
  v[1].time.wall = at(96.5);
  auto far = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(far.size(), 1u);
  for (auto& r : far[0].root_causes) EXPECT_EQ(r.chain.size(), 1u);

  // Within one clock the order is exact: no tolerance at all.
  v[1].time.wall = at(99.5);
  v[1].time.clock = "node-1/kernel";
  auto same = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(same.size(), 1u);
  for (auto& r : same[0].root_causes) EXPECT_EQ(r.chain.size(), 1u);
}

TEST(Engine, TopologyWithoutOptionalFields) {
  auto b = cascade_kb();
  auto t = topo(topo_json(2, {{"job-1", {0, 1}}}, false, /*minimal=*/true));
  std::vector<Event> v;
  // GPUs known only by the BDF in the line: placeholders.
  Event x = ev("t_gpu_off_bus", "node-1/gpu@0000:18:00.0", DeviceKind::gpu, "node-1", 100,
               "node-1/kernel");
  x.placeholder_device = true;
  v.push_back(x);
  v.push_back(ev("t_pcie_fatal", "node-1/pcie/0000:17:00.0", DeviceKind::pcie_port, "node-1", 99,
                 "node-1/kernel"));
  v.push_back(ev("t_cuda_error", rank("job-1", 9), DeviceKind::rank, "node-1", 101, "node-1/app"));
  for (int r = 0; r < 16; ++r)
    if (r != 9)
      v.push_back(ev("t_watchdog", rank("job-1", r), DeviceKind::rank,
                     "node-" + std::to_string(r / 8), 700,
                     "node-" + std::to_string(r / 8) + "/app"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  // Without the PCIe tree the switch cannot be tied to the GPU: the GPU is
  // the best-supported device, and it is still named.
  EXPECT_TRUE(root_devices_contain(ds[0], "node-1/gpu@0000:18:00.0"));
  EXPECT_TRUE(ds[0].root_causes[0].device == "node-1/gpu@0000:18:00.0" ||
              ds[0].root_causes[0].device == "node-1/pcie/0000:17:00.0");
}

TEST(Engine, FailSlowIsTracedToTheThrottlingGpuNotThePrintingRank) {
  KbBuilder b;
  b.sig("t_step_slow", DeviceKind::job, "", Severity::major, SymptomKind::slowdown);
  b.sig("t_throttle", DeviceKind::gpu, "thermal_power", Severity::warning);
  b.sig("t_iter_log", DeviceKind::rank);
  b.rule("t_throttle", "t_step_slow", {W("cause", Relation::in, "effect")}, 0, 600, 0.7, 5);
  auto t = topo(topo_json(2, {{"job-1", {0, 1}}}));
  for (int variant = 0; variant < 2; ++variant) {
    int hot_h = variant, hot_g = variant == 0 ? 5 : 3;
    std::vector<Event> v;
    for (int k = 0; k < 10; ++k)
      v.push_back(ev("t_throttle", gpu(hot_h, hot_g), DeviceKind::gpu,
                     "node-" + std::to_string(hot_h), 900 + k * 9,
                     "node-" + std::to_string(hot_h) + "/kernel"));
    // One peer throttles once, earlier.
    v.push_back(ev("t_throttle", gpu(1 - hot_h, 2), DeviceKind::gpu,
                   "node-" + std::to_string(1 - hot_h), 850,
                   "node-" + std::to_string(1 - hot_h) + "/kernel"));
    v.push_back(ev("t_iter_log", rank("job-1", 0), DeviceKind::rank, "node-0", 990, "node-0/app"));
    v.push_back(ev("t_step_slow", "job/job-1", DeviceKind::job, "node-0", 1000, "node-0/app"));
    auto ds = diagnose_events(b.kb, *t, v);
    ASSERT_EQ(ds.size(), 1u);
    ASSERT_FALSE(ds[0].root_causes.empty());
    EXPECT_EQ(ds[0].root_causes[0].device, gpu(hot_h, hot_g)) << "variant " << variant;
    EXPECT_EQ(ds[0].trigger->device, "job/job-1");
    // One entry per device: the ten throttle events are one candidate.
    std::set<std::string> devs;
    for (auto& r : ds[0].root_causes) EXPECT_TRUE(devs.insert(r.device + r.event).second);
  }
}

TEST(Engine, RawDmesgWithoutBootTimeIsOrderedWithinItsClock) {
  auto b = cascade_kb();
  auto t = topo(topo_json(1, {{"job-1", {0}}}));
  std::vector<Event> v;
  v.push_back(ev("t_pcie_fatal", pcie(0, 3), DeviceKind::pcie_port, "node-0", std::nullopt,
                 "node-0/kernel", 1000.0));
  v.push_back(ev("t_gpu_off_bus", gpu(0, 3), DeviceKind::gpu, "node-0", std::nullopt,
                 "node-0/kernel", 1000.2));
  v.push_back(ev("t_cuda_error", rank("job-1", 3), DeviceKind::rank, "node-0", 100, "node-0/app"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  auto& r = ds[0].root_causes[0];
  EXPECT_EQ(r.device, pcie(0, 3));
  ASSERT_EQ(r.chain.size(), 3u);
  EXPECT_FALSE(r.chain[1].order_unknown);  // same kernel clock: compared by mono
  EXPECT_TRUE(r.chain[2].order_unknown);   // kernel mono vs app wall: unknown
  auto j = nlohmann::json::parse(diagnosis_to_json(ds[0]));
  EXPECT_TRUE(j["root_causes"][0]["chain"][0]["ts"].is_null());
  EXPECT_DOUBLE_EQ(j["root_causes"][0]["chain"][0]["mono"].get<double>(), 1000.0);
  bool noted = false;
  for (auto& n : ds[0].notes) noted |= n.find("wall-clock") != std::string::npos;
  EXPECT_TRUE(noted);

  // Mono order within the clock is enforced: GPU loss *before* the AER is not
  // explained by it.
  v[0].time.mono = 1000.5;
  auto rev = diagnose_events(b.kb, *t, v);
  ASSERT_FALSE(rev[0].root_causes.empty());
  EXPECT_EQ(rev[0].root_causes[0].device, gpu(0, 3));
}

TEST(Engine, FaultEvidenceWithoutSymptomHasNullTrigger) {
  auto b = cascade_kb();
  auto t = topo(topo_json(1, {{"job-1", {0}}}));
  std::vector<Event> v;
  v.push_back(
      ev("t_pcie_fatal", pcie(0, 4), DeviceKind::pcie_port, "node-0", 100, "node-0/kernel"));
  v.push_back(ev("t_gpu_off_bus", gpu(0, 4), DeviceKind::gpu, "node-0", 100.1, "node-0/kernel"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_FALSE(ds[0].trigger);
  ASSERT_FALSE(ds[0].root_causes.empty());
  EXPECT_EQ(ds[0].root_causes[0].device, pcie(0, 4));
  EXPECT_FALSE(ds[0].notes.empty());
  auto j = nlohmann::json::parse(diagnosis_to_json(ds[0]));
  EXPECT_TRUE(j["trigger"].is_null());
}

TEST(Engine, NoEvidenceAtAllLeavesTheSymptomUnexplained) {
  auto b = cascade_kb();
  auto t = topo(topo_json(1, {{"job-1", {0}}}));
  std::vector<Event> v;
  for (int r = 0; r < 8; ++r)
    v.push_back(ev("t_watchdog", rank("job-1", r), DeviceKind::rank, "node-0", 700, "node-0/app"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_TRUE(ds[0].root_causes.empty());
  EXPECT_EQ(ds[0].unexplained.size(), 8u);
  ASSERT_TRUE(ds[0].trigger);
  EXPECT_TRUE(diagnose_events(b.kb, *t, {}).at(0).root_causes.empty());
}

TEST(Engine, UnconnectedFaultEvidenceIsStillListed) {
  // No rule ties the GPU loss to this symptom, but it is fault evidence of
  // the job: root_causes is empty only when there is none.
  auto b = cascade_kb();
  auto t = topo(topo_json(1, {{"job-1", {0}}}));
  std::vector<Event> v;
  v.push_back(ev("t_gpu_off_bus", gpu(0, 6), DeviceKind::gpu, "node-0", 100, "node-0/kernel"));
  v.push_back(ev("t_cuda_error", rank("job-1", 2), DeviceKind::rank, "node-0", 101, "node-0/app"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  EXPECT_EQ(ds[0].root_causes[0].device, gpu(0, 6));
  EXPECT_LT(ds[0].root_causes[0].score, 0.3);
  EXPECT_EQ(ds[0].unexplained.size(), 1u);
}

TEST(Engine, JsonShapeFollowsTheSpec) {
  auto b = cascade_kb();
  auto t = topo(topo_json(2, {{"job-1", {0, 1}}}));
  auto events = cascade_events(1, 3, 2);
  auto ds = diagnose_events(b.kb, *t, events);
  auto j = nlohmann::json::parse(diagnoses_to_json(ds));
  ASSERT_TRUE(j["trigger"].is_object());
  for (const char* k : {"event", "device", "ts"}) EXPECT_TRUE(j["trigger"].contains(k)) << k;
  std::string ts = j["trigger"]["ts"];
  EXPECT_EQ(ts, "2026-03-05T10:01:41.000000Z");
  ASSERT_TRUE(j["root_causes"].is_array());
  auto& r = j["root_causes"][0];
  for (const char* k : {"device", "fault_class", "event", "score", "action", "chain"})
    EXPECT_TRUE(r.contains(k)) << k;
  EXPECT_LE(r["score"].get<double>(), 1.0);
  EXPECT_GT(r["score"].get<double>(), 0.0);
  for (auto& l : r["chain"])
    for (const char* k : {"event", "device", "ts", "evidence", "line", "rule", "relation"})
      EXPECT_TRUE(l.contains(k)) << k;
  EXPECT_TRUE(r["chain"][0]["rule"].is_null());
  EXPECT_TRUE(r["chain"][1]["rule"].is_string());
  EXPECT_TRUE(j["unexplained"].is_array());
  EXPECT_TRUE(j["notes"].is_array());
  EXPECT_TRUE(j["incident"].is_string());
  EXPECT_EQ(j["revision"], 1);
  // One line for JSONL.
  EXPECT_EQ(diagnosis_to_json(ds[0], -1).find('\n'), std::string::npos);
  // Same input, same incident id.
  std::reverse(events.begin(), events.end());  // arrival order does not matter
  auto again = diagnose_events(b.kb, *t, events);
  EXPECT_EQ(again[0].incident, ds[0].incident);
  EXPECT_EQ(diagnoses_to_json(again), diagnoses_to_json(ds));
}

TEST(Engine, TextAndDotRenderings) {
  auto b = cascade_kb();
  auto t = topo(topo_json(2, {{"job-1", {0, 1}}}));
  auto ds = diagnose_events(b.kb, *t, cascade_events(1, 3, 2));
  std::string text = diagnoses_to_text(ds);
  EXPECT_NE(text.find("Root cause: " + pcie(1, 3)), std::string::npos) << text;
  EXPECT_NE(text.find("test/kb.rfx:"), std::string::npos);
  EXPECT_NE(text.find("action:"), std::string::npos);
  std::string dot = diagnoses_to_dot(ds);
  EXPECT_EQ(dot.rfind("digraph", 0), 0u);
  EXPECT_NE(dot.find(pcie(1, 3)), std::string::npos);
  EXPECT_EQ(dot.back(), '\n');
}

TEST(Engine, InvalidUtf8InLinesDoesNotThrow) {
  auto b = cascade_kb();
  auto t = topo(topo_json(1, {{"job-1", {0}}}));
  std::vector<Event> v;
  Event x = ev("t_gpu_off_bus", gpu(0, 1), DeviceKind::gpu, "node-0", 100, "node-0/kernel");
  static constexpr char kBad[] = "bad \xff\xfe utf8 \0 nul";  // embedded NUL: size from sizeof
  x.line = std::string(kBad, sizeof kBad - 1);
  v.push_back(x);
  auto ds = diagnose_events(b.kb, *t, v);
  EXPECT_NO_THROW(diagnoses_to_json(ds));
  EXPECT_FALSE(diagnoses_to_json(ds).empty());
}

TEST(Engine, StreamingSettlesThenRevisesOnLateEvidence) {
  auto b = cascade_kb();
  auto kb = std::make_shared<KnowledgeBase>(b.kb);
  auto t = topo(topo_json(1, {{"job-1", {0}}}));
  EngineOptions o;
  o.settle_s = 60;
  Engine e(kb, t, o);
  e.feed_event(ev("t_cuda_error", rank("job-1", 3), DeviceKind::rank, "node-0", 101, "node-0/app"));
  e.feed_event(ev("t_gpu_off_bus", gpu(0, 3), DeviceKind::gpu, "node-0", 100.5, "node-0/kernel"));
  EXPECT_TRUE(e.poll().empty());  // still settling
  e.feed_event(ev("t_benign", "node-0", DeviceKind::host, "node-0", 170, "node-0/kernel"));
  auto first = e.poll();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].revision, 1);
  ASSERT_FALSE(first[0].root_causes.empty());
  EXPECT_EQ(first[0].root_causes[0].device, gpu(0, 3));
  // Late evidence: the switch AER shipped late.
  e.feed_event(
      ev("t_pcie_fatal", pcie(0, 3), DeviceKind::pcie_port, "node-0", 100.2, "node-0/kernel"));
  EXPECT_TRUE(e.poll().empty());
  e.feed_event(ev("t_benign", "node-0", DeviceKind::host, "node-0", 240, "node-0/kernel"));
  auto second = e.poll();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].revision, 2);
  EXPECT_EQ(second[0].incident, first[0].incident);
  EXPECT_EQ(second[0].root_causes[0].device, pcie(0, 3));
  e.flush();  // nothing changed since: no new revision
  EXPECT_TRUE(e.poll().empty());
  auto st = e.stats();
  EXPECT_EQ(st.diagnoses_emitted, 2u);
  EXPECT_EQ(st.revisions, 1u);
  EXPECT_EQ(st.incidents_opened, 1u);
}

TEST(Engine, FlushDiagnosesOpenIncidents) {
  auto b = cascade_kb();
  Engine e(std::make_shared<KnowledgeBase>(b.kb), topo(topo_json(1, {{"job-1", {0}}})));
  std::vector<Diagnosis> got;
  e.set_callback([&](const Diagnosis& d) { got.push_back(d); });
  e.feed_event(ev("t_gpu_off_bus", gpu(0, 5), DeviceKind::gpu, "node-0", 100.5, "node-0/kernel"));
  e.feed_event(ev("t_cuda_error", rank("job-1", 5), DeviceKind::rank, "node-0", 101, "node-0/app"));
  EXPECT_TRUE(got.empty());
  e.flush();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].root_causes.at(0).device, gpu(0, 5));
}

TEST(Engine, ReloadSwapsAtomicallyAndRejectsBadKb) {
  auto b = cascade_kb();
  Engine e(std::make_shared<KnowledgeBase>(b.kb), topo(topo_json(1, {{"job-1", {0}}})));
  auto bad = std::make_shared<KnowledgeBase>(b.kb);
  bad->rules[0].cause = "no_such_event";
  std::string err;
  EXPECT_FALSE(e.reload(bad, nullptr, &err));
  EXPECT_NE(err.find("no_such_event"), std::string::npos);
  EXPECT_EQ(e.kb()->rules[0].cause, "t_pcie_fatal");  // old one kept
  auto newer = std::make_shared<KnowledgeBase>(b.kb);
  newer->meta.requires_engine = ">= 99.0.0";
  EXPECT_FALSE(e.reload(newer, nullptr, &err));
  auto good = std::make_shared<KnowledgeBase>(b.kb);
  good->rules[0].strength = 0.5;
  EXPECT_TRUE(e.reload(good, topo(topo_json(2, {{"job-1", {0, 1}}})), &err)) << err;
  EXPECT_EQ(e.kb()->rules[0].strength, 0.5);
  EXPECT_EQ(e.topology()->host_count(), 2u);
  auto st = e.stats();
  EXPECT_EQ(st.reloads, 1u);
  EXPECT_EQ(st.failed_reloads, 2u);
}

// The event index caches topology ids of device names: a diagnosis after a
// topology reload must use the new topology's relations, not the old ids.
TEST(Engine, DiagnosisAfterTopologyReloadUsesTheNewTopology) {
  auto b = cascade_kb();
  // Rank 5 runs on node-1/gpu5 here: the GPU of node-0 does not explain it.
  Engine e(std::make_shared<KnowledgeBase>(b.kb), topo(topo_json(2, {{"job-1", {1, 0}}})));
  std::vector<Diagnosis> got;
  e.set_callback([&](const Diagnosis& d) { got.push_back(d); });
  auto feed = [&](double t) {
    e.feed_event(ev("t_gpu_off_bus", gpu(0, 5), DeviceKind::gpu, "node-0", t, "node-0/kernel"));
    e.feed_event(
        ev("t_cuda_error", rank("job-1", 5), DeviceKind::rank, "node-0", t + 0.5, "node-0/app"));
    e.flush();
  };
  feed(100);
  ASSERT_EQ(got.size(), 1u);
  ASSERT_FALSE(got[0].root_causes.empty());
  EXPECT_EQ(got[0].root_causes[0].chain.size(), 1u);
  EXPECT_NE(got[0].root_causes[0].why.find("not connected"), std::string::npos)
      << got[0].root_causes[0].why;
  // A smaller topology (fewer device ids) where rank 5 runs on node-0/gpu5.
  std::string err;
  ASSERT_TRUE(e.reload(nullptr, topo(topo_json(1, {{"job-1", {0}}})), &err)) << err;
  feed(10000);
  ASSERT_EQ(got.size(), 2u);
  ASSERT_FALSE(got[1].root_causes.empty());
  EXPECT_EQ(got[1].root_causes[0].device, gpu(0, 5));
  ASSERT_EQ(got[1].root_causes[0].chain.size(), 2u);  // linked by the runs_on rule
  EXPECT_EQ(got[1].root_causes[0].why.find("not connected"), std::string::npos);
}

TEST(Engine, FeedingFromSeveralThreadsAtOnce) {
  auto b = cascade_kb();
  Engine e(std::make_shared<KnowledgeBase>(b.kb), topo(topo_json(4, {{"job-1", {0, 1, 2, 3}}})));
  std::atomic<int> delivered{0};
  e.set_callback([&](const Diagnosis&) { ++delivered; });
  std::vector<std::thread> th;
  for (int k = 0; k < 4; ++k)
    th.emplace_back([&, k] {
      std::string h = "node-" + std::to_string(k);
      for (int i = 0; i < 500; ++i)
        e.feed_event(ev("t_benign", h, DeviceKind::host, h, 10 + i * 0.01, h + "/kernel"));
      e.feed_event(ev("t_gpu_off_bus", gpu(k, 1), DeviceKind::gpu, h, 100, h + "/kernel"));
      e.feed_event(
          ev("t_cuda_error", rank("job-1", k * 8 + 1), DeviceKind::rank, h, 100.5, h + "/app"));
      e.tick();
    });
  for (auto& x : th) x.join();
  e.flush();
  auto st = e.stats();
  EXPECT_EQ(st.events, 4u * 502u);
  EXPECT_EQ(st.symptoms, 4u);
  EXPECT_GE(delivered.load(), 1);
}

TEST(Engine, EventFromJsonLine) {
  auto b = cascade_kb();
  auto t = topo(topo_json(1, {{"job-1", {0}}}));
  Event e;
  std::string err;
  ASSERT_TRUE(event_from_json(
      R"({"event":"t_gpu_off_bus","fault_class":"gpu_fallen_off_bus","device":"node-0/gpu3","host":"node-0","ts":"2026-03-05T10:01:40.500000Z","fields":{"bdf":"0000:41:00.0","xid":79},"evidence":"hosts/node-0/kern.log:7","line":"x","bindings":{"peer":"node-0/mlx5_1"}})",
      b.kb, *t, &e, &err))
      << err;
  EXPECT_EQ(e.name, "t_gpu_off_bus");
  EXPECT_EQ(e.kind, DeviceKind::gpu);
  EXPECT_EQ(*e.time.wall, at(100.5));
  ASSERT_NE(e.field("xid"), nullptr);
  EXPECT_EQ(*e.field("xid"), "79");
  ASSERT_NE(e.binding("peer"), nullptr);
  EXPECT_FALSE(e.time.clock.empty());
  EXPECT_FALSE(event_from_json("{not json", b.kb, *t, &e, &err));
  EXPECT_FALSE(event_from_json(R"({"device":"x"})", b.kb, *t, &e, &err));
  EXPECT_FALSE(
      event_from_json(R"({"event":"a","device":"x","ts":"yesterday"})", b.kb, *t, &e, &err));
  // Raw dmesg without boot time: ts null, mono kept.
  ASSERT_TRUE(event_from_json(
      R"({"event":"t_pcie_fatal","device":"node-0/pcie/0000:10:00.0","host":"node-0","ts":null,"mono":12.5})",
      b.kb, *t, &e, &err));
  EXPECT_FALSE(e.time.wall);
  EXPECT_DOUBLE_EQ(*e.time.mono, 12.5);
}

namespace {
// A leaf switch has no log line of its own; the NICs cabled to it report link
// down. Each link-down is a root candidate itself (it has a class).
KbBuilder leaf_kb() {
  KbBuilder b;
  b.kb.classes.push_back({"fabric_switch_fault", "", "", {}});
  b.sig("t_link_down", DeviceKind::nic, "nic", Severity::major);
  b.sig("t_watchdog", DeviceKind::rank, "", Severity::major, SymptomKind::hang);
  b.latent("t_leaf_failed", DeviceKind::fabric_switch, "fabric_switch_fault", /*silent=*/false);
  b.rule("t_leaf_failed", "t_link_down", {W("effect", Relation::attached, "cause")}, 0, 120, 0.8,
         10);
  // Any lost rail hangs every rank of the job: each link-down alone explains
  // every symptom, so only parsimony can make the leaf win.
  b.rule("t_link_down", "t_watchdog", {W("effect", Relation::same_job, "cause")}, 0, 1800, 0.8, 5);
  return b;
}

// hosts node-0..n-1; mlx5_0 on leaf-00, mlx5_1 on leaf-01 (rail-optimised).
std::string leaf_topo(int hosts) {
  std::string s = "{\"cluster\":\"test\",\"hosts\":[";
  for (int h = 0; h < hosts; ++h) {
    if (h) s += ",";
    s += "{\"name\":\"node-" + std::to_string(h) + "\",\"gpus\":[";
    for (int g = 0; g < 2; ++g) {
      if (g) s += ",";
      s += "{\"index\":" + std::to_string(g) + ",\"nics\":[\"mlx5_" + std::to_string(g) + "\"]}";
    }
    s += "],\"nics\":[";
    for (int g = 0; g < 2; ++g) {
      if (g) s += ",";
      s += "{\"name\":\"mlx5_" + std::to_string(g) + "\",\"fabric_switch\":\"leaf-0" +
           std::to_string(g) + "\"}";
    }
    s += "]}";
  }
  s += "],\"fabric\":[{\"name\":\"leaf-00\",\"tier\":\"leaf\"},{\"name\":\"leaf-01\",\"tier\":"
       "\"leaf\"}],\"jobs\":[{\"id\":\"job-1\",\"ranks\":{\"hosts\":[";
  for (int h = 0; h < hosts; ++h)
    s += std::string(h ? "," : "") + "\"node-" + std::to_string(h) + "\"";
  s += "],\"gpus_per_host\":2}}]}";
  return s;
}

// Link-down on mlx5_<rail> of each host in `down` at `t` (+0.1 s per host);
// every rank of the job hangs later.
std::vector<Event> leaf_events(int hosts, const std::vector<int>& down, int rail,
                               const std::vector<double>& t) {
  std::vector<Event> v;
  auto hn = [](int h) { return "node-" + std::to_string(h); };
  for (size_t i = 0; i < down.size(); ++i)
    v.push_back(ev("t_link_down", nic(down[i], rail), DeviceKind::nic, hn(down[i]), t[i],
                   hn(down[i]) + "/kernel"));
  for (int r = 0; r < hosts * 2; ++r)
    v.push_back(ev("t_watchdog", rank("job-1", r), DeviceKind::rank, hn(r / 2), 700 + r * 0.01,
                   hn(r / 2) + "/app"));
  return v;
}
}  // namespace

TEST(Engine, SameRailDownOnSeveralHostsNamesTheLeafSwitch) {
  auto b = leaf_kb();
  auto t = topo(leaf_topo(4));
  for (int rail : {0, 1}) {
    auto ds = diagnose_events(b.kb, *t, leaf_events(4, {0, 2}, rail, {100, 100.2}));
    ASSERT_EQ(ds.size(), 1u);
    ASSERT_FALSE(ds[0].root_causes.empty());
    auto& r = ds[0].root_causes[0];
    EXPECT_EQ(r.device, "fabric/leaf-0" + std::to_string(rail));
    EXPECT_TRUE(r.latent);
    EXPECT_EQ(r.event, "t_leaf_failed");
    EXPECT_EQ(r.fault_class, "fabric_switch_fault");
    ASSERT_EQ(r.chain.size(), 3u);  // leaf -> link down -> watchdog
    EXPECT_EQ(r.chain[1].ev.event, "t_link_down");
    EXPECT_EQ(r.explains, 8);
    // The NICs stay listed as (lower-ranked) alternatives; the hosts are not evicted.
    EXPECT_TRUE(root_devices_contain(ds[0], nic(0, rail)));
    EXPECT_TRUE(root_devices_contain(ds[0], nic(2, rail)));
    for (auto& alt : ds[0].root_causes) {
      if (!alt.latent) {
        EXPECT_LT(alt.score, r.score);
      }
    }
    EXPECT_EQ(ds[0].eviction_set, std::vector<std::string>{r.device});
  }
}

TEST(Engine, OneLinkDownBlamesTheNicNotTheLeaf) {
  auto b = leaf_kb();
  auto t = topo(leaf_topo(4));
  auto ds = diagnose_events(b.kb, *t, leaf_events(4, {1}, 0, {100}));
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  EXPECT_EQ(ds[0].root_causes[0].device, nic(1, 0));
  EXPECT_EQ(ds[0].root_causes[0].chain.size(), 2u);  // connected by the rule, not a fallback
  for (auto& r : ds[0].root_causes) EXPECT_FALSE(r.latent) << r.device;
}

TEST(Engine, LinkDownsTooFarApartForOneLeafFailureStayApart) {
  // Two link-downs on one leaf, 5 min apart: no single failure time fits the
  // rule window (2 min + skew), so the leaf is not proposed.
  auto b = leaf_kb();
  auto t = topo(leaf_topo(4));
  auto ds = diagnose_events(b.kb, *t, leaf_events(4, {0, 2}, 0, {100, 400}));
  ASSERT_FALSE(ds.empty());
  for (auto& d : ds)
    for (auto& r : d.root_causes) EXPECT_FALSE(r.latent) << r.device;
}

TEST(Engine, LinkDownsOnDifferentLeavesDoNotMakeALeafFailure) {
  auto b = leaf_kb();
  auto t = topo(leaf_topo(4));
  auto v = leaf_events(4, {0}, 0, {100});
  v.push_back(ev("t_link_down", nic(2, 1), DeviceKind::nic, "node-2", 100.1, "node-2/kernel"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_FALSE(ds.empty());
  for (auto& d : ds)
    for (auto& r : d.root_causes) EXPECT_FALSE(r.latent) << r.device;
}

// `reflex watch` runs for weeks: beyond max_events the oldest events are
// dropped (retention), the index stays bounded, and incidents keep coming out.
TEST(Engine, WatchRetentionKeepsTheIndexBoundedAndStillDiagnoses) {
  auto b = cascade_kb();
  auto t = topo(topo_json(4, {{"job-1", {0, 1, 2, 3}}}));
  EngineOptions o;
  o.settle_s = 60;
  o.max_events = 2000;
  Engine e(std::make_shared<KnowledgeBase>(b.kb), t, o);
  std::vector<Diagnosis> got;
  e.set_callback([&](const Diagnosis& d) { got.push_back(d); });
  constexpr int kPeriods = 12;
  constexpr double kPeriod = 8000;  // > incident gap + linger: one incident per period
  uint64_t max_indexed = 0;
  for (int p = 0; p < kPeriods; ++p) {
    double t0 = p * kPeriod;
    int h = p % 4, g = (p * 3) % 8;
    std::string hn = "node-" + std::to_string(h);
    // Background lines all period long, on every host.
    for (int i = 0; i < 1000; ++i) {
      std::string bh = "node-" + std::to_string(i % 4);
      double ts = t0 + i * (kPeriod / 1000.0);
      e.feed_event(ev("t_benign", bh, DeviceKind::host, bh, ts, bh + "/kernel"));
      if (i == 100) {
        e.feed_event(ev("t_gpu_off_bus", gpu(h, g), DeviceKind::gpu, hn, ts + 0.5, hn + "/kernel"));
        e.feed_event(ev("t_cuda_error", rank("job-1", h * 8 + g), DeviceKind::rank, hn, ts + 1,
                        hn + "/app"));
        for (int r = 0; r < 32; r += 5)
          e.feed_event(ev("t_watchdog", rank("job-1", r), DeviceKind::rank,
                          "node-" + std::to_string(r / 8), ts + 600 + r * 0.01,
                          "node-" + std::to_string(r / 8) + "/app"));
      }
      max_indexed = std::max(max_indexed, e.stats().indexed_events);
    }
  }
  e.flush();
  auto st = e.stats();
  EXPECT_GT(st.events, 5u * o.max_events);  // the stream was much longer than the retention
  EXPECT_GT(st.dropped_events, st.events / 2);
  EXPECT_LE(max_indexed, o.max_events + 1);
  EXPECT_LE(st.indexed_events, o.max_events + 1);
  EXPECT_EQ(st.incidents_opened, static_cast<uint64_t>(kPeriods));
  // Every period's incident came out (its latest revision), naming that period's GPU.
  std::map<std::string, Diagnosis> latest;
  std::vector<std::string> order;
  for (auto& d : got) {
    if (!latest.count(d.incident)) order.push_back(d.incident);
    latest[d.incident] = d;
  }
  ASSERT_EQ(order.size(), static_cast<size_t>(kPeriods));
  for (int p = 0; p < kPeriods; ++p) {
    const Diagnosis& d = latest[order[static_cast<size_t>(p)]];
    ASSERT_FALSE(d.root_causes.empty()) << p;
    EXPECT_EQ(d.root_causes[0].device, gpu(p % 4, (p * 3) % 8)) << p;
  }
}

// Incidents of one job 2 h apart (each its own) while the KB has a rule of a
// day: the retention still drops the earlier incidents' echoes (the NCCL-like
// watchdog wave, benign chatter) — they matter to an open incident only
// within their own chain of windows — and keeps what a diagnosis may blame
// for the KB's longest window. Every incident's answer is the one an engine
// that never drops anything gives.
TEST(Engine, WatchRetentionDropsOldEchoesWhileAnIncidentIsOpen) {
  auto b = cascade_kb();
  b.sig("t_old_ecc", DeviceKind::gpu, "gpu_memory", Severity::major);
  b.rule("t_old_ecc", "t_gpu_off_bus", {W("effect", Relation::same, "cause")}, 0, 86400, 0.3);
  auto t = topo(topo_json(4, {{"job-1", {0, 1, 2, 3}}}));
  auto kb = std::make_shared<KnowledgeBase>(b.kb);
  EngineOptions small, big;
  small.settle_s = big.settle_s = 60;
  small.max_events = 2000;
  big.max_events = 100000000;
  Engine e(kb, t, small), ref(kb, t, big);
  std::map<std::string, Diagnosis> got, want;
  e.set_callback([&](const Diagnosis& d) { got[d.incident] = d; });
  ref.set_callback([&](const Diagnosis& d) { want[d.incident] = d; });
  constexpr int kPeriods = 10;
  constexpr double kPeriod = 7200;  // > incident gap + linger, < the day-long rule
  uint64_t max_indexed = 0;
  for (int p = 0; p < kPeriods; ++p) {
    double t0 = p * kPeriod;
    int h = p % 4, g = (p * 3) % 8;
    std::string hn = "node-" + std::to_string(h);
    std::vector<Event> v;
    for (int i = 0; i < 300; ++i) {
      std::string bh = "node-" + std::to_string(i % 4);
      v.push_back(ev("t_benign", bh, DeviceKind::host, bh, t0 + i * 20.0, bh + "/kernel"));
    }
    if (p == 0)  // an ECC error long before the GPU that later falls off the bus
      v.push_back(ev("t_old_ecc", gpu(1, 2), DeviceKind::gpu, "node-1", 5, "node-1/kernel"));
    if (p == 5) {
      h = 1, g = 2, hn = "node-1";
    }
    v.push_back(ev("t_gpu_off_bus", gpu(h, g), DeviceKind::gpu, hn, t0 + 100.5, hn + "/kernel"));
    v.push_back(
        ev("t_cuda_error", rank("job-1", h * 8 + g), DeviceKind::rank, hn, t0 + 101, hn + "/app"));
    for (int r = 0; r < 32; ++r)
      if (r != h * 8 + g)
        for (int k = 0; k < 20; ++k)
          v.push_back(ev("t_watchdog", rank("job-1", r), DeviceKind::rank,
                         "node-" + std::to_string(r / 8), t0 + 700 + r * 0.01 + k,
                         "node-" + std::to_string(r / 8) + "/app"));
    std::stable_sort(v.begin(), v.end(), [](const Event& x, const Event& y) {
      return *x.time.wall < *y.time.wall;  // as a live stream arrives
    });
    for (auto& x : v) {
      e.feed_event(x);
      ref.feed_event(x);
      max_indexed = std::max(max_indexed, e.stats().indexed_events);
    }
  }
  e.flush();
  ref.flush();
  auto st = e.stats();
  EXPECT_EQ(ref.stats().dropped_events, 0u);
  EXPECT_GT(st.dropped_events, st.events / 2);
  EXPECT_LE(max_indexed, small.max_events + 700);  // one period's events on top at most
  EXPECT_EQ(st.incidents_opened, static_cast<uint64_t>(kPeriods));
  ASSERT_EQ(got.size(), want.size());
  for (auto& [id, d] : want) {
    ASSERT_TRUE(got.count(id)) << id;
    const Diagnosis& x = got[id];
    ASSERT_EQ(x.root_causes.size(), d.root_causes.size()) << id;
    for (size_t k = 0; k < d.root_causes.size(); ++k) {
      EXPECT_EQ(x.root_causes[k].device, d.root_causes[k].device) << id;
      EXPECT_EQ(x.root_causes[k].event, d.root_causes[k].event) << id;
      EXPECT_EQ(x.root_causes[k].chain.size(), d.root_causes[k].chain.size()) << id;
      EXPECT_EQ(x.root_causes[k].confidence, d.root_causes[k].confidence) << id;
      EXPECT_DOUBLE_EQ(x.root_causes[k].score, d.root_causes[k].score) << id;
    }
  }
}

// `cleared_by`: a link down that came back up within the window explains only
// what happened before the heal and is not blamed on its own.
TEST(Engine, HealedEventExplainsOnlyUntilTheHealAndIsNotBlamedAlone) {
  KbBuilder b;
  b.sig("t_link_down", DeviceKind::nic, "nic", Severity::major);
  b.sig("t_link_up", DeviceKind::nic);
  b.sig("t_watchdog", DeviceKind::rank, "", Severity::major, SymptomKind::hang);
  for (auto& s : b.kb.signatures)
    if (s.name == "t_link_down") {
      s.cleared_by = {"t_link_up"};
      s.clear_within_s = 30;
    }
  b.rule("t_link_down", "t_watchdog", {W("effect", Relation::same_job, "cause")}, 0, 1800, 0.8, 5);
  auto t = topo(topo_json(2, {{"job-1", {0, 1}}}));
  std::string nic = t->nic_by_name("node-1", "mlx5_0")->id;
  auto down = ev("t_link_down", nic, DeviceKind::nic, "node-1", 100, "node-1/kernel");
  auto up = ev("t_link_up", nic, DeviceKind::nic, "node-1", 104, "node-1/kernel");
  auto hang = ev("t_watchdog", rank("job-1", 2), DeviceKind::rank, "node-0", 700, "node-0/app");
  // Healed 4 s later, the hang 10 min after: not the root, not even as fallback.
  auto ds = diagnose_events(b.kb, *t, {down, up, hang});
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_TRUE(ds[0].root_causes.empty());
  bool noted = false;
  for (auto& n : ds[0].notes) noted |= n.find("cleared_by") != std::string::npos;
  EXPECT_TRUE(noted);
  // Alone (no symptom): not blamed either.
  ds = diagnose_events(b.kb, *t, {down, up});
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_TRUE(ds[0].root_causes.empty());
  // Not healed (no link up): the same link down is the root of the hang.
  ds = diagnose_events(b.kb, *t, {down, hang});
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  EXPECT_EQ(ds[0].root_causes[0].device, nic);
  // Healed, but the hang came before the heal: still explained by it.
  auto early = ev("t_watchdog", rank("job-1", 2), DeviceKind::rank, "node-0", 102, "node-0/app");
  ds = diagnose_events(b.kb, *t, {down, up, early});
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  EXPECT_EQ(ds[0].root_causes[0].device, nic);
}

// Base rates (issue 12): a cause the KB declares `background`, or one that most
// other hosts of the input show too, is discounted and the report says why.
namespace {

KbBuilder noise_kb() {
  KbBuilder b;
  b.sig("t_noise", DeviceKind::host, "host_kernel", Severity::critical);
  b.sig("t_fault", DeviceKind::gpu, "gpu_hw", Severity::major);
  b.sig("t_crash", DeviceKind::rank, "", Severity::major, SymptomKind::crash);
  b.rule("t_noise", "t_crash", {W("effect", Relation::same_job, "cause")}, 0, 600, 0.5);
  b.rule("t_fault", "t_crash", {W("effect", Relation::same_job, "cause")}, 0, 600, 0.5);
  return b;
}

std::vector<Event> noise_events(int noisy_hosts) {
  std::vector<Event> v;
  for (int h = 0; h < noisy_hosts; ++h) {
    std::string hn = "node-" + std::to_string(h);
    v.push_back(ev("t_noise", hn, DeviceKind::host, hn, 10 + h, hn + "/kernel"));
  }
  v.push_back(ev("t_fault", gpu(4, 2), DeviceKind::gpu, "node-4", 20, "node-4/kernel"));
  v.push_back(ev("t_crash", rank("job-1", 35), DeviceKind::rank, "node-4", 30, "node-4/app"));
  return v;
}

}  // namespace

TEST(Engine, CauseMostHostsShowIsDiscountedAsBackground) {
  auto b = noise_kb();
  auto t = topo(topo_json(5, {{"job-1", {0, 1, 2, 3, 4}}}));
  // One host with the (critical) noise: it outranks the major GPU fault.
  auto one = diagnose_events(b.kb, *t, noise_events(1));
  ASSERT_FALSE(one.empty());
  ASSERT_FALSE(one[0].root_causes.empty());
  EXPECT_EQ(one[0].root_causes[0].device, "node-0");
  // The same line on 4 of the 4 other hosts: background; the GPU is the root.
  auto many = diagnose_events(b.kb, *t, noise_events(4));
  ASSERT_FALSE(many.empty());
  ASSERT_FALSE(many[0].root_causes.empty());
  EXPECT_EQ(many[0].root_causes[0].device, gpu(4, 2));
  bool said = false;
  for (const auto& n : many[0].notes) said = said || n.find("also seen on") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(Engine, DeclaredBackgroundIsDiscountedButStandsAlone) {
  auto b = noise_kb();
  for (auto& s : b.kb.signatures)
    if (s.name == "t_noise") s.background = true;
  auto t = topo(topo_json(5, {{"job-1", {0, 1, 2, 3, 4}}}));
  auto ds = diagnose_events(b.kb, *t, noise_events(1));
  ASSERT_FALSE(ds.empty());
  ASSERT_FALSE(ds[0].root_causes.empty());
  EXPECT_EQ(ds[0].root_causes[0].device, gpu(4, 2));
  // Alone it is still the answer (nothing else explains the crash).
  std::vector<Event> alone = noise_events(1);
  alone.erase(alone.begin() + 1);
  auto ds2 = diagnose_events(b.kb, *t, alone);
  ASSERT_FALSE(ds2.empty());
  ASSERT_FALSE(ds2[0].root_causes.empty());
  EXPECT_EQ(ds2[0].root_causes[0].device, "node-0");
}

TEST(Engine, EvictionFollowsTheDeclaredNature) {
  // Whether a root is drained is the KB's word (`nature N "..." evicts`), not
  // a list of nature names in the engine: the same cascade under a nature
  // declared with and without `evicts`, and under one the KB never declared.
  for (int declared : {1, 0, -1}) {
    auto b = cascade_kb();
    for (auto& s : b.kb.signatures)
      if (s.name == "t_pcie_fatal") s.nature = "wiring";
    if (declared >= 0) b.kb.natures.push_back(Nature{"wiring", "test", declared == 1, {}});
    auto t = topo(topo_json(2, {{"job-1", {0, 1}}}));
    auto ds = diagnose_events(b.kb, *t, cascade_events(1, 3, 2));
    ASSERT_EQ(ds.size(), 1u);
    ASSERT_FALSE(ds[0].root_causes.empty());
    EXPECT_EQ(ds[0].root_causes[0].device, pcie(1, 3));
    EXPECT_EQ(ds[0].root_causes[0].nature, "wiring");
    if (declared == 0) {
      EXPECT_TRUE(ds[0].eviction_set.empty()) << "declared without evicts";
      bool noted = false;
      for (auto& n : ds[0].notes) noted |= n.find("no eviction: the root cause is wiring") == 0;
      EXPECT_TRUE(noted);
    } else {
      ASSERT_FALSE(ds[0].eviction_set.empty()) << "declared=" << declared;
      EXPECT_EQ(ds[0].eviction_set.front(), pcie(1, 3));
    }
  }
}

// ---- common mode: a latent with a quorum (docs/language.md §7.1) ----
namespace {
// Every GPU of a host throttling at once is one fault of the host; each
// throttle is a root candidate of its own (it has a class).
KbBuilder quorum_kb(int devices, double share) {
  KbBuilder b;
  b.sig("t_throttle", DeviceKind::gpu, "thermal_power", Severity::major);
  b.sig("t_slow", DeviceKind::job, "", Severity::minor, SymptomKind::slowdown);
  Latent& l = b.latent("t_host_power", DeviceKind::host, "thermal_power", /*silent=*/false);
  l.quorum_devices = devices;
  l.quorum_share = share;
  b.rule("t_host_power", "t_throttle", {W("effect", Relation::on, "cause")}, 0, 600, 0.8, 60);
  b.rule("t_throttle", "t_slow", {W("cause", Relation::in, "effect")}, -600, 7200, 0.8, 600);
  return b;
}

// GPUs `gpus` of node-1 throttle at 100 s (+0.1 s each); the job slows later.
std::vector<Event> throttle_events(const std::vector<int>& gpus) {
  std::vector<Event> v;
  for (size_t i = 0; i < gpus.size(); ++i)
    v.push_back(ev("t_throttle", gpu(1, gpus[i]), DeviceKind::gpu, "node-1",
                   100 + 0.1 * static_cast<double>(i), "node-1/app"));
  v.push_back(ev("t_slow", "job/job-1", DeviceKind::job, "node-0", 130, "node-0/app"));
  return v;
}
}  // namespace

TEST(Engine, QuorumMetNamesTheParentAndDiscountsItsMembers) {
  auto b = quorum_kb(2, 0.75);
  auto t = topo(topo_json(2, {{"job-1", {0, 1}}}));
  auto ds = diagnose_events(b.kb, *t, throttle_events({0, 1, 2, 3, 4, 5, 6}));  // 7 of 8
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  auto& r = ds[0].root_causes[0];
  EXPECT_EQ(r.device, "node-1");
  EXPECT_TRUE(r.latent);
  EXPECT_EQ(r.event, "t_host_power");
  ASSERT_EQ(r.chain.size(), 3u);  // host -> throttle -> slowdown
  for (auto& alt : ds[0].root_causes) {
    if (alt.latent) continue;
    EXPECT_LT(alt.score, r.score) << alt.device;
  }
  bool noted = false;
  for (auto& n : ds[0].notes) noted = noted || n.find("common mode") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Engine, QuorumShareNotMetKeepsTheGpusAndSaysWhy) {
  // 5 of 8 GPUs: at least 2 devices, but under 75% of the host's GPUs.
  auto b = quorum_kb(2, 0.75);
  auto t = topo(topo_json(2, {{"job-1", {0, 1}}}));
  auto ds = diagnose_events(b.kb, *t, throttle_events({0, 1, 2, 3, 4}));
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  for (auto& r : ds[0].root_causes) EXPECT_FALSE(r.latent) << r.device;
  EXPECT_EQ(ds[0].root_causes[0].device.rfind("node-1/gpu", 0), 0u);
  bool noted = false;
  for (auto& n : ds[0].notes)
    noted = noted || n.find("5 of 8 devices show its effects at once, its quorum needs 6") !=
                         std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Engine, QuorumCountAloneWithoutShare) {
  // `quorum 3`: two GPUs are not enough, three are, whatever the host's size.
  auto b = quorum_kb(3, 0);
  auto t = topo(topo_json(2, {{"job-1", {0, 1}}}));
  auto two = diagnose_events(b.kb, *t, throttle_events({0, 5}));
  ASSERT_EQ(two.size(), 1u);
  for (auto& r : two[0].root_causes) EXPECT_FALSE(r.latent) << r.device;
  auto three = diagnose_events(b.kb, *t, throttle_events({0, 5, 7}));
  ASSERT_EQ(three.size(), 1u);
  ASSERT_FALSE(three[0].root_causes.empty());
  EXPECT_EQ(three[0].root_causes[0].device, "node-1");
}

TEST(Engine, QuorumNeedsOneTimePoint) {
  // All 8 GPUs, but half of them an hour later: no onset fits the 10 min window for 6.
  auto b = quorum_kb(2, 0.75);
  auto t = topo(topo_json(2, {{"job-1", {0, 1}}}));
  auto v = throttle_events({0, 1, 2, 3});
  for (int g = 4; g < 8; ++g)
    v.push_back(ev("t_throttle", gpu(1, g), DeviceKind::gpu, "node-1", 3700 + g, "node-1/app"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_FALSE(ds.empty());
  for (auto& d : ds)
    for (auto& r : d.root_causes) EXPECT_FALSE(r.latent) << r.device;
}

// `while cause lasts + DUR` (docs/language.md §6): a throttle episode on
// node-1's GPU 0 (samples 100..140 s, folded) ended four minutes before the
// job slowed at 400 s; a PSU record on node-2 at 380 s came just before it.
namespace {
KbBuilder lasting_kb(double lasting_s) {
  KbBuilder b;
  b.sig("t_throttle", DeviceKind::gpu, "thermal_power", Severity::major);
  b.sig("t_psu", DeviceKind::host, "thermal_power", Severity::major);
  b.sig("t_slow", DeviceKind::job, "", Severity::minor, SymptomKind::slowdown);
  Rule& r =
      b.rule("t_throttle", "t_slow", {W("cause", Relation::in, "effect")}, -600, 7200, 0.8, 600);
  r.lasting_s = lasting_s;
  b.rule("t_psu", "t_slow", {W("cause", Relation::in, "effect")}, -600, 7200, 0.5, 600);
  return b;
}

std::vector<Event> ended_episode_events(double slow_at) {
  Event th = ev("t_throttle", gpu(1, 0), DeviceKind::gpu, "node-1", 140, "node-1/app");
  th.count = 5;
  th.first = at(100);
  th.last = at(140);
  return {th, ev("t_psu", "node-2", DeviceKind::host, "node-2", 380, "node-2/app"),
          ev("t_slow", "job/job-1", DeviceKind::job, "node-0", slow_at, "node-0/app")};
}
}  // namespace

TEST(Engine, WhileCauseLastsDropsAnEpisodeThatEndedBeforeTheEffectBegan) {
  auto t = topo(topo_json(3, {{"job-1", {0, 1, 2}}}));
  // Without the bound the long window lets the stronger, ended episode win.
  auto loose = diagnose_events(lasting_kb(-1).kb, *t, ended_episode_events(400));
  ASSERT_EQ(loose.size(), 1u);
  ASSERT_FALSE(loose[0].root_causes.empty());
  EXPECT_EQ(loose[0].root_causes[0].device, gpu(1, 0));
  // With it, the episode (ended at 140 s, +2 min = 260 s) cannot explain an onset at 400 s.
  auto bound = diagnose_events(lasting_kb(120).kb, *t, ended_episode_events(400));
  ASSERT_EQ(bound.size(), 1u);
  ASSERT_FALSE(bound[0].root_causes.empty());
  EXPECT_EQ(bound[0].root_causes[0].device, "node-2");
  for (auto& r : bound[0].root_causes) EXPECT_NE(r.device, gpu(1, 0));
  // An onset within the tolerance after the last sample is still the episode's.
  auto near = diagnose_events(lasting_kb(120).kb, *t, ended_episode_events(250));
  ASSERT_EQ(near.size(), 1u);
  ASSERT_FALSE(near[0].root_causes.empty());
  EXPECT_EQ(near[0].root_causes[0].device, gpu(1, 0));
}

TEST(Engine, WhileCauseLastsBoundsTheOnsetBeforeTheEpisodeToo) {
  // The job slowed at 0 s; the episode's samples start at 300 s: not its cause.
  auto t = topo(topo_json(3, {{"job-1", {0, 1, 2}}}));
  Event th = ev("t_throttle", gpu(1, 0), DeviceKind::gpu, "node-1", 340, "node-1/app");
  th.first = at(300);
  th.last = at(340);
  Event slow = ev("t_slow", "job/job-1", DeviceKind::job, "node-0", 0, "node-0/app");
  slow.first = at(0);
  slow.last = at(900);  // the slowdown's records keep coming through the episode
  // No rule ties the episode to the symptom: at most it is listed as evidence
  // nothing links (no chain to the slowdown).
  auto ds = diagnose_events(lasting_kb(120).kb, *t, {th, slow});
  ASSERT_EQ(ds.size(), 1u);
  for (auto& r : ds[0].root_causes) {
    if (r.device == gpu(1, 0)) {
      EXPECT_LT(r.chain.size(), 2u);
    }
  }
  auto loose = diagnose_events(lasting_kb(-1).kb, *t, {th, slow});
  ASSERT_EQ(loose.size(), 1u);
  ASSERT_FALSE(loose[0].root_causes.empty());
  EXPECT_EQ(loose[0].root_causes[0].device, gpu(1, 0));
  EXPECT_EQ(loose[0].root_causes[0].chain.size(), 2u);
}
