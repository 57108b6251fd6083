// What discounts or bounds a cause, over hand-built knowledge bases: base
// rates (`background`), quorums (common mode) and `while cause lasts`.
#include <gtest/gtest.h>

#include "engine_test_kbs.h"
#include "test_util.h"

using namespace rt;

// Base rates: a cause the KB declares `background`, or one that most
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
