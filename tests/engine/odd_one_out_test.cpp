// The odd one out (runtime/engine/odd_one_out.cpp): a latent with
// `odd_one_out EVENT.FIELD among REL` stands only on the device whose value
// differs from what most of its peers show, and names nobody without a majority.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

using namespace rt;

namespace {

KbBuilder odd_kb(Relation among = Relation::same_job) {
  KbBuilder b;
  b.kb.classes.push_back({"nccl_software", "", "", {}});
  b.sig("t_banner", DeviceKind::host);
  b.sig("t_watchdog", DeviceKind::rank, "", Severity::major, SymptomKind::hang);
  b.sig("t_gpu_fault", DeviceKind::gpu, "gpu_hw", Severity::critical);
  Latent& l = b.latent("t_build_differs", DeviceKind::host, "nccl_software", /*silent=*/false);
  l.severity = Severity::major;
  l.description = "{host} runs NCCL {version}";
  l.odd_one_out.push_back({"t_banner", "version", among});
  b.rule("t_build_differs", "t_watchdog", {W("effect", Relation::same_job, "cause")}, 0, 7200, 0.5,
         30);
  b.rule("t_gpu_fault", "t_watchdog", {W("effect", Relation::same_job, "cause")}, 0, 1800, 0.8, 5);
  return b;
}

Event banner(int host, const std::string& version, double t) {
  std::string h = "node-" + std::to_string(host);
  Event e = ev("t_banner", h, DeviceKind::host, h, t, h + "/app");
  e.fields.push_back({"version", version});
  return e;
}

// Banners (one value per host), then every rank of `hosts` hosts times out.
std::vector<Event> hang(const std::vector<std::vector<std::string>>& versions) {
  std::vector<Event> v;
  for (size_t h = 0; h < versions.size(); ++h)
    for (const auto& ver : versions[h]) v.push_back(banner(static_cast<int>(h), ver, 10 + h));
  for (int r = 0; r < static_cast<int>(versions.size()) * 8; ++r) {
    std::string rh = "node-" + std::to_string(r / 8);
    v.push_back(ev("t_watchdog", rank("job-1", r), DeviceKind::rank, rh, 1900, rh + "/app"));
  }
  return v;
}

bool any_root(const Diagnosis& d, const std::string& event) {
  for (auto& r : d.root_causes)
    if (r.event == event) return true;
  return false;
}

}  // namespace

TEST(OddOneOut, TheHostWhoseBuildDiffersIsNamed) {
  auto b = odd_kb();
  auto t = topo(topo_json(4, {{"job-1", {0, 1, 2, 3}}}));
  auto ds = diagnose_events(b.kb, *t, hang({{"2.19.3"}, {"2.19.3"}, {"2.20.5"}, {"2.19.3"}}));
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  const RootCause& r = ds[0].root_causes[0];
  EXPECT_EQ(r.event, "t_build_differs");
  EXPECT_EQ(r.device, "node-2");
  EXPECT_EQ(r.fault_class, "nccl_software");
  EXPECT_TRUE(r.latent);
  EXPECT_EQ(r.explains, 32);
  EXPECT_EQ(r.description, "node-2 runs NCCL 2.20.5");  // {version} from its differing line
  // Only the odd host carries it.
  for (auto& o : ds[0].root_causes) {
    if (o.event == "t_build_differs") {
      EXPECT_EQ(o.device, "node-2");
    }
  }
  bool noted = false;
  for (auto& n : ds[0].notes)
    noted |= n.find(
                 "the odd one out, t_banner version = 2.20.5 on node-2, while 3 of the 4 "
                 "devices of its same_job group show 2.19.3 (hosts/node-2/test.log:") !=
             std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(OddOneOut, TwoHostsThatDisagreeNameNobody) {
  auto b = odd_kb();
  auto t = topo(topo_json(2, {{"job-1", {0, 1}}}));
  auto ds = diagnose_events(b.kb, *t, hang({{"2.19.3"}, {"2.20.5"}}));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_FALSE(any_root(ds[0], "t_build_differs"));
  bool noted = false;
  for (auto& n : ds[0].notes)
    noted |= n ==
             "t_banner version differs among the 2 devices of node-0's same_job group "
             "(2.19.3 on 1, 2.20.5 on 1) with no majority: t_build_differs cannot tell "
             "which is the odd one";
  EXPECT_TRUE(noted);
}

TEST(OddOneOut, AFleetUpgradedHalfWayNamesNobody) {
  // Every host shows both builds (an earlier run's banners still in the log):
  // no value is a minority, whatever the order.
  auto b = odd_kb();
  auto t = topo(topo_json(4, {{"job-1", {0, 1, 2, 3}}}));
  auto ds = diagnose_events(b.kb, *t,
                            hang({{"2.19.3", "2.20.5"},
                                  {"2.19.3", "2.20.5"},
                                  {"2.20.5", "2.19.3"},
                                  {"2.19.3", "2.20.5"}}));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_FALSE(any_root(ds[0], "t_build_differs"));
}

TEST(OddOneOut, PeersAreTheDevicesOfTheDeclaredRelation) {
  // Job 1 (hosts 0-2) agrees on one build, job 2 (hosts 3-5) on another: under
  // same_job nobody differs from their own peers; under `any` nobody holds a
  // majority of six either.
  for (Relation among : {Relation::same_job, Relation::any}) {
    auto b = odd_kb(among);
    auto t = topo(topo_json(6, {{"job-1", {0, 1, 2}}, {"job-2", {3, 4, 5}}}));
    std::vector<Event> v;
    for (int h = 0; h < 6; ++h) v.push_back(banner(h, h < 3 ? "2.19.3" : "2.21.5", 10 + h));
    for (int r = 0; r < 24; ++r) {
      std::string rh = "node-" + std::to_string(r / 8);
      v.push_back(ev("t_watchdog", rank("job-1", r), DeviceKind::rank, rh, 1900, rh + "/app"));
    }
    for (auto& d : diagnose_events(b.kb, *t, v))
      EXPECT_FALSE(any_root(d, "t_build_differs")) << to_string(among);
  }
  // Under `any`, host 5 alone on another build among six is odd.
  auto b = odd_kb(Relation::any);
  auto t = topo(topo_json(6, {{"job-1", {0, 1, 2, 3, 4, 5}}}));
  auto ds = diagnose_events(
      b.kb, *t, hang({{"2.19.3"}, {"2.19.3"}, {"2.19.3"}, {"2.19.3"}, {"2.19.3"}, {"2.18.6"}}));
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  EXPECT_EQ(ds[0].root_causes[0].device, "node-5");
}

TEST(OddOneOut, AStrongerObservedCauseOfTheHangStaysFirst) {
  // The odd build competes with what explains the hang (it has evidence of its
  // own), but a GPU fault tied to it by a stronger rule stays first.
  auto b = odd_kb();
  auto t = topo(topo_json(4, {{"job-1", {0, 1, 2, 3}}}));
  auto v = hang({{"2.19.3"}, {"2.19.3"}, {"2.20.5"}, {"2.19.3"}});
  v.push_back(ev("t_gpu_fault", gpu(1, 4), DeviceKind::gpu, "node-1", 1000, "node-1/kernel"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  EXPECT_EQ(ds[0].root_causes[0].device, gpu(1, 4));
  EXPECT_TRUE(any_root(ds[0], "t_build_differs"));
}

TEST(OddOneOut, ItOutranksAWeakObservedExplanation) {
  // A minor event that a weak rule ties to the hang does not hide the host
  // whose build differs: both explain the ranks, the odd one by more.
  auto b = odd_kb();
  b.sig("t_minor", DeviceKind::host, "host_kernel", Severity::minor);
  b.rule("t_minor", "t_watchdog", {W("effect", Relation::same_job, "cause")}, 0, 1800, 0.2, 5);
  auto t = topo(topo_json(4, {{"job-1", {0, 1, 2, 3}}}));
  auto v = hang({{"2.19.3"}, {"2.19.3"}, {"2.20.5"}, {"2.19.3"}});
  v.push_back(ev("t_minor", "node-3", DeviceKind::host, "node-3", 1000, "node-3/kernel"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_GE(ds[0].root_causes.size(), 2u);
  EXPECT_EQ(ds[0].root_causes[0].device, "node-2");
  EXPECT_EQ(ds[0].root_causes[0].event, "t_build_differs");
  EXPECT_TRUE(any_root(ds[0], "t_minor"));
}
