// Incidents over time, since one long log can hold several faults: a second
// symptom wave that a root explains joins that root's incident; without a job
// symptom the fault evidence is split by time gaps, the worst incident heads
// the document and the others follow newest first. Hand-built KBs (test
// vocabulary, not the shipped KB's).
#include <gtest/gtest.h>

#include <set>

#include "test_util.h"

using namespace rt;

namespace {

constexpr int kHosts = 20;  // more than a latent may be placed on from `same_job` alone
constexpr int kDead = 2;

std::string hn(int h) {
  return "node-" + std::to_string(h);
}

// A host dies silently. Its ring neighbours report IB errors toward it (the
// line names the remote NIC: narrow, places the latent); every other rank
// hangs until the watchdog ten minutes later (the rule names the whole job:
// too wide to place it). A last-resort latent on the job also explains the
// watchdogs, weakly, as the shipped KB's does.
KbBuilder two_wave_kb() {
  KbBuilder b;
  b.sig("t_peer_ib", DeviceKind::gpu, "", Severity::major, SymptomKind::crash);
  b.sig("t_watchdog", DeviceKind::rank, "", Severity::major, SymptomKind::hang);
  b.sig("t_info", DeviceKind::host);
  b.latent("t_host_died", DeviceKind::host, "host_kernel", /*silent=*/true);
  b.latent("t_hang_unexplained", DeviceKind::job, "user_code", /*silent=*/false).severity =
      Severity::major;
  b.rule("t_host_died", "t_peer_ib", {W("effect.peer", Relation::on, "cause")}, 5, 300, 0.85, 5);
  b.rule("t_host_died", "t_watchdog", {W("effect", Relation::same_job, "cause")}, 60, 3600, 0.5, 5);
  b.rule("t_hang_unexplained", "t_watchdog", {W("effect", Relation::in, "cause")}, 0, 7200, 0.1,
         30);
  return b;
}

std::vector<Event> first_wave() {
  std::vector<Event> v;
  for (int h = 0; h < kHosts; ++h)
    for (int k = 0; k < 3; ++k)
      v.push_back(ev("t_info", hn(h), DeviceKind::host, hn(h), 10 + k * 10, hn(h) + "/kernel"));
  for (int h : {kDead - 1, kDead + 1})
    for (int g = 0; g < 8; ++g) {
      Event e = ev("t_peer_ib", gpu(h, g), DeviceKind::gpu, hn(h), 120 + g * 0.1, hn(h) + "/app");
      e.bindings.push_back({"peer", nic(kDead, g)});
      v.push_back(e);
    }
  return v;
}

std::vector<Event> second_wave() {
  std::vector<Event> v;
  for (int r = 0; r < kHosts * 8; ++r) {
    const int h = r / 8;
    if (h == kDead || h == kDead - 1 || h == kDead + 1) continue;
    v.push_back(ev("t_watchdog", rank("job-1", r), DeviceKind::rank, hn(h), 720 + r * 0.001,
                   hn(h) + "/app"));
  }
  return v;
}

std::vector<int> all_hosts() {
  std::vector<int> v;
  for (int h = 0; h < kHosts; ++h) v.push_back(h);
  return v;
}

}  // namespace

TEST(Incidents, SecondWaveThatTheSilentHostExplainsJoinsItsIncident) {
  auto b = two_wave_kb();
  auto t = topo(topo_json(kHosts, {{"job-1", all_hosts()}}));
  std::vector<Event> v = first_wave();
  for (auto& e : second_wave()) v.push_back(e);
  const size_t watchdogs = second_wave().size();
  auto ds = diagnose_events(b.kb, *t, v);
  // One incident, headed by the dead host, not the job-wide guess of last resort.
  ASSERT_EQ(ds.size(), 1u);
  const Diagnosis& d = ds[0];
  ASSERT_FALSE(d.root_causes.empty());
  EXPECT_EQ(d.root_causes[0].device, hn(kDead));
  EXPECT_EQ(d.root_causes[0].event, "t_host_died");
  EXPECT_EQ(d.root_causes[0].explains, static_cast<int>(16 + watchdogs));
  EXPECT_EQ(d.symptoms, static_cast<int>(16 + watchdogs));
  EXPECT_TRUE(d.unexplained.empty());
  ASSERT_TRUE(d.trigger);
  EXPECT_EQ(d.trigger->event, "t_peer_ib");  // the first wave opened it
  bool noted = false;
  for (auto& n : d.notes) noted |= n.find("also explains " + std::to_string(watchdogs)) != n.npos;
  EXPECT_TRUE(noted);
}

TEST(Incidents, SecondWaveOutsideTheRootsWindowStaysApart) {
  // The same waves, but the watchdog comes before the rule's earliest effect
  // (1 min): the latent does not reach it and the job-wide guess keeps it.
  auto b = two_wave_kb();
  auto t = topo(topo_json(kHosts, {{"job-1", all_hosts()}}));
  std::vector<Event> v = first_wave();
  for (auto& e : second_wave()) {
    e.time.wall = at(125);
    v.push_back(e);
  }
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 2u);
  std::set<std::string> roots;
  for (auto& d : ds) {
    ASSERT_FALSE(d.root_causes.empty());
    roots.insert(d.root_causes[0].device);
  }
  EXPECT_EQ(roots, (std::set<std::string>{hn(kDead), "job/job-1"}));
}

TEST(Incidents, WatchRevisesTheFirstWavesIncidentWhenTheSecondArrives) {
  auto b = two_wave_kb();
  EngineOptions o;
  o.settle_s = 60;
  Engine e(std::make_shared<KnowledgeBase>(b.kb), topo(topo_json(kHosts, {{"job-1", all_hosts()}})),
           o);
  for (auto& x : first_wave()) e.feed_event(x);
  // Peers keep logging past the settle window: wave 1 is diagnosed alone.
  for (int h = 0; h < kHosts; ++h)
    if (h != kDead)
      e.feed_event(ev("t_info", hn(h), DeviceKind::host, hn(h), 300, hn(h) + "/kernel"));
  auto first = e.poll();
  ASSERT_EQ(first.size(), 1u);
  ASSERT_FALSE(first[0].root_causes.empty());
  EXPECT_EQ(first[0].root_causes[0].device, hn(kDead));
  for (auto& x : second_wave()) e.feed_event(x);
  e.flush();
  auto later = e.poll();
  ASSERT_FALSE(later.empty());
  for (auto& d : later) {
    EXPECT_EQ(d.incident, first[0].incident) << "the second wave opened an incident of its own";
    ASSERT_FALSE(d.root_causes.empty());
    EXPECT_EQ(d.root_causes[0].device, hn(kDead));
  }
  EXPECT_GT(later.back().revision, 1);
  EXPECT_GT(later.back().root_causes[0].explains, first[0].root_causes[0].explains);
}

namespace {

// Natures in the order the KB declares them (kb/classes.rfx: hardware before
// driver before application).
KbBuilder snippet_kb() {
  KbBuilder b;
  b.kb.natures.push_back(Nature{"hardware", "", true, {}});
  b.kb.natures.push_back(Nature{"driver", "", true, {}});
  b.kb.natures.push_back(Nature{"application", "", false, {}});
  b.sig("t_app_xid", DeviceKind::gpu, "user_code", Severity::major).nature = "application";
  b.sig("t_drv_err", DeviceKind::gpu, "gpu_hw", Severity::major).nature = "driver";
  b.sig("t_ecc", DeviceKind::gpu, "gpu_memory", Severity::major).nature = "hardware";
  b.sig("t_minor_hw", DeviceKind::gpu, "gpu_memory", Severity::minor).nature = "hardware";
  return b;
}

constexpr double kDay = 86400;

}  // namespace

TEST(Incidents, WithoutASymptomTheWorstFaultHeadsNotTheEarliestLine) {
  auto b = snippet_kb();
  auto t = topo(topo_json(1, {}));
  std::vector<Event> v;
  // Within one hour, all of one severity: the application line comes first.
  v.push_back(ev("t_app_xid", gpu(0, 1), DeviceKind::gpu, "node-0", 100, "node-0/kernel"));
  v.push_back(ev("t_drv_err", gpu(0, 2), DeviceKind::gpu, "node-0", 110, "node-0/kernel"));
  v.push_back(ev("t_ecc", gpu(0, 4), DeviceKind::gpu, "node-0", 120, "node-0/kernel"));
  v.push_back(ev("t_minor_hw", gpu(0, 5), DeviceKind::gpu, "node-0", 90, "node-0/kernel"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 1u);
  const auto& rc = ds[0].root_causes;
  ASSERT_EQ(rc.size(), 4u);
  EXPECT_FALSE(ds[0].trigger);
  EXPECT_EQ(rc[0].event, "t_ecc");       // major, hardware
  EXPECT_EQ(rc[1].event, "t_drv_err");   // major, driver
  EXPECT_EQ(rc[2].event, "t_app_xid");   // major, application
  EXPECT_EQ(rc[3].event, "t_minor_hw");  // minor: severity before nature
  EXPECT_EQ(ds[0].eviction_set, std::vector<std::string>{gpu(0, 4)});
}

TEST(Incidents, WithoutASymptomEventsDaysApartAreSeparateIncidentsWorstFirstThenNewest) {
  auto b = snippet_kb();
  auto t = topo(topo_json(1, {}));
  std::vector<Event> v;
  v.push_back(ev("t_app_xid", gpu(0, 1), DeviceKind::gpu, "node-0", 100, "node-0/kernel"));
  v.push_back(ev("t_ecc", gpu(0, 4), DeviceKind::gpu, "node-0", 3 * kDay, "node-0/kernel"));
  v.push_back(ev("t_app_xid", gpu(0, 1), DeviceKind::gpu, "node-0", 5 * kDay, "node-0/kernel"));
  v.push_back(
      ev("t_drv_err", gpu(0, 2), DeviceKind::gpu, "node-0", 5 * kDay + 60, "node-0/kernel"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 3u);
  for (auto& d : ds) {
    EXPECT_FALSE(d.trigger);
    ASSERT_FALSE(d.root_causes.empty());
  }
  // The principal: the hardware fault of day 3, though neither first nor last.
  EXPECT_EQ(ds[0].root_causes[0].event, "t_ecc");
  EXPECT_EQ(ds[0].root_causes.size(), 1u);  // the other days are not its candidates
  // Then newest first: day 5 (driver before application within it), day 0.
  EXPECT_EQ(ds[1].root_causes[0].event, "t_drv_err");
  ASSERT_EQ(ds[1].root_causes.size(), 2u);
  EXPECT_EQ(ds[1].root_causes[1].event, "t_app_xid");
  EXPECT_EQ(ds[2].root_causes[0].event, "t_app_xid");
  EXPECT_EQ(*ds[2].root_causes[0].chain[0].ev.time.wall, at(100));
  std::set<std::string> ids;
  for (auto& d : ds) ids.insert(d.incident);
  EXPECT_EQ(ids.size(), 3u);
}

TEST(Incidents, WithoutASymptomEvidenceWithinTheGapIsOneIncident) {
  auto b = snippet_kb();
  auto t = topo(topo_json(1, {}));
  EngineOptions o;
  o.incident_gap_s = 2 * kDay;  // the gap is the engine's option, not a constant
  std::vector<Event> v;
  v.push_back(ev("t_app_xid", gpu(0, 1), DeviceKind::gpu, "node-0", 100, "node-0/kernel"));
  v.push_back(ev("t_ecc", gpu(0, 4), DeviceKind::gpu, "node-0", 1.5 * kDay, "node-0/kernel"));
  auto ds = diagnose_events(b.kb, *t, v, o);
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_EQ(ds[0].root_causes.size(), 2u);
  EXPECT_EQ(ds[0].root_causes[0].event, "t_ecc");
}

TEST(Incidents, WithoutASymptomBackgroundAloneIsNoIncidentOfItsOwn) {
  auto b = snippet_kb();
  auto& bg = b.sig("t_bg", DeviceKind::host, "user_code", Severity::major);
  bg.background = true;
  auto t = topo(topo_json(1, {}));
  std::vector<Event> v;
  for (int d = 0; d < 3; ++d)
    v.push_back(ev("t_bg", "node-0", DeviceKind::host, "node-0", d * kDay, "node-0/kernel"));
  v.push_back(ev("t_minor_hw", gpu(0, 4), DeviceKind::gpu, "node-0", 4 * kDay, "node-0/kernel"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  EXPECT_EQ(ds[0].root_causes[0].event, "t_minor_hw");
  bool noted = false;
  for (auto& n : ds[0].notes) noted |= n.find("3 other stretch(es)") == 0;
  EXPECT_TRUE(noted);
  // Background and nothing else: the whole input is still diagnosed, once.
  v.pop_back();
  ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 1u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  EXPECT_EQ(ds[0].root_causes[0].event, "t_bg");
}

TEST(Incidents, WithoutASymptomManySmallIncidentsAreBounded) {
  auto b = snippet_kb();
  auto t = topo(topo_json(1, {}));
  std::vector<Event> v;
  v.push_back(ev("t_ecc", gpu(0, 4), DeviceKind::gpu, "node-0", 0, "node-0/kernel"));
  for (int d = 1; d <= 30; ++d)
    v.push_back(ev("t_app_xid", gpu(0, 1), DeviceKind::gpu, "node-0", d * kDay, "node-0/kernel"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 20u);
  EXPECT_EQ(ds[0].root_causes[0].event, "t_ecc");  // the worst, though the oldest
  EXPECT_EQ(*ds[1].root_causes[0].chain[0].ev.time.wall, at(30 * kDay));  // then the newest
  bool noted = false;
  for (auto& n : ds[0].notes) noted |= n.find("11 older of 31 incidents") == 0;
  EXPECT_TRUE(noted);
}

TEST(Incidents, PrincipalIsWhatItsRootExplainsNotHowManySymptomsItHolds) {
  // One job, two incidents more than an hour apart. X: a GPU off the bus
  // explains its rank's crash and two watchdogs.
  // Y: an application Xid explains one crash; nine watchdogs that came before
  // it are tied to it (a rule from them to the crash) but no root explains them.
  KbBuilder b;
  b.sig("t_gpu_off_bus", DeviceKind::gpu, "gpu_fallen_off_bus", Severity::critical);
  b.sig("t_xid13", DeviceKind::gpu, "user_code", Severity::warning);
  b.sig("t_cuda_error", DeviceKind::rank, "", Severity::major, SymptomKind::crash);
  b.sig("t_watchdog", DeviceKind::rank, "", Severity::major, SymptomKind::hang);
  b.rule("t_gpu_off_bus", "t_cuda_error", {W("effect", Relation::runs_on, "cause")}, 0, 60, 0.9, 1);
  b.rule("t_xid13", "t_cuda_error", {W("effect", Relation::runs_on, "cause")}, 0, 60, 0.5, 1);
  b.rule("t_cuda_error", "t_watchdog", {W("effect", Relation::same_job, "cause")}, 0, 1800, 0.8);
  b.rule("t_watchdog", "t_cuda_error", {W("effect", Relation::same_job, "cause")}, 0, 60, 0.3);
  auto t = topo(topo_json(2, {{"job-1", {0, 1}}}));
  std::vector<Event> v;
  v.push_back(ev("t_gpu_off_bus", gpu(0, 1), DeviceKind::gpu, "node-0", 99, "node-0/kernel"));
  v.push_back(ev("t_cuda_error", rank("job-1", 1), DeviceKind::rank, "node-0", 100, "node-0/app"));
  for (int r : {2, 3})
    v.push_back(ev("t_watchdog", rank("job-1", r), DeviceKind::rank, "node-0", 700, "node-0/app"));
  for (int r = 10; r < 16; ++r)
    v.push_back(
        ev("t_watchdog", rank("job-1", r), DeviceKind::rank, "node-1", 4950 + r, "node-1/app"));
  for (int r : {4, 5, 6})
    v.push_back(ev("t_watchdog", rank("job-1", r), DeviceKind::rank, "node-0", 4960, "node-0/app"));
  v.push_back(ev("t_xid13", gpu(1, 1), DeviceKind::gpu, "node-1", 4990, "node-1/kernel"));
  v.push_back(ev("t_cuda_error", rank("job-1", 9), DeviceKind::rank, "node-1", 5000, "node-1/app"));
  auto ds = diagnose_events(b.kb, *t, v);
  ASSERT_EQ(ds.size(), 2u);
  ASSERT_FALSE(ds[0].root_causes.empty());
  ASSERT_FALSE(ds[1].root_causes.empty());
  EXPECT_EQ(ds[1].symptoms, 10);  // the larger incident...
  EXPECT_EQ(ds[1].root_causes[0].explains, 1);
  EXPECT_EQ(ds[0].root_causes[0].device, gpu(0, 1));  // ...is not the principal
  EXPECT_EQ(ds[0].root_causes[0].explains, 3);
}
