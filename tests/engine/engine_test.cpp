// Engine unit tests over hand-built knowledge bases (no .rfx, no compiler):
// the backward walk, ranking, latents, incidents, clocks. The other subjects
// of this executable are in engine_*_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "engine_test_kbs.h"
#include "test_util.h"

using namespace rt;

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

// A host-level line of a class the KB mostly finds on a GPU (CUDA's
// "uncorrectable ECC error" names no GPU): the host is named, and the
// confidence says the device is a guess (at most medium). A host-level class
// on the same host stays high.
TEST(Engine, HostStandingInForAGpuClassIsAtMostMedium) {
  for (const char* cls : {"gpu_fallen_off_bus", "host_kernel"}) {
    auto b = cascade_kb();
    b.sig("t_host_line", DeviceKind::host, cls, Severity::critical);
    b.sig("t_host_more", DeviceKind::host, "host_kernel", Severity::critical);
    b.sig("t_gpu_more", DeviceKind::gpu, "gpu_fallen_off_bus", Severity::critical);
    b.rule("t_host_line", "t_cuda_error", {W("effect", Relation::runs_on, "cause")}, 0, 60, 0.9, 1);
    auto t = topo(topo_json(1, {{"job-1", {0}}}));
    std::vector<Event> v;
    v.push_back(ev("t_host_line", "node-0", DeviceKind::host, "node-0", 100, "node-0/app"));
    v.push_back(
        ev("t_cuda_error", rank("job-1", 2), DeviceKind::rank, "node-0", 101, "node-0/app"));
    auto ds = diagnose_events(b.kb, *t, v);
    ASSERT_EQ(ds.size(), 1u);
    ASSERT_FALSE(ds[0].root_causes.empty());
    EXPECT_EQ(ds[0].root_causes[0].device, "node-0") << cls;
    EXPECT_EQ(ds[0].root_causes[0].confidence,
              std::string(cls) == "host_kernel" ? "high" : "medium")
        << cls;
  }
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

// Without a job symptom, a major consequence the KB gives no class of its
// own (an Xid 94, the echo of an ECC fault) is walked back too: its latent
// cause is named over an older, minor application fault on another GPU.
TEST(Engine, AClasslessConsequenceWithoutSymptomReachesItsCause) {
  auto b = cascade_kb();
  b.sig("t_echo", DeviceKind::gpu, "", Severity::major);
  b.latent("t_mem_fault", DeviceKind::gpu, "gpu_memory", /*silent=*/false);
  b.rule("t_mem_fault", "t_echo", {W("effect", Relation::same, "cause")}, 0, 60, 0.5);
  auto t = topo(topo_json(1, {{"job-1", {0}}}));
  std::vector<Event> v;
  v.push_back(ev("t_xid13", gpu(0, 1), DeviceKind::gpu, "node-0", 100, "node-0/kernel"));
  v.push_back(ev("t_echo", gpu(0, 2), DeviceKind::gpu, "node-0", 100 + 4 * 86400, "node-0/kernel"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_FALSE(ds.empty());
  EXPECT_FALSE(ds[0].trigger);
  ASSERT_FALSE(ds[0].root_causes.empty());
  EXPECT_EQ(ds[0].root_causes[0].device, gpu(0, 2));
  EXPECT_EQ(ds[0].root_causes[0].fault_class, "gpu_memory");
  EXPECT_TRUE(ds[0].root_causes[0].latent);
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
