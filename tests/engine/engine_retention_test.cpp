// `reflex watch` retention over hand-built knowledge bases: beyond max_events
// the oldest events are dropped, and every incident's answer stays the one an
// engine that never drops anything gives.
#include <gtest/gtest.h>

#include <map>

#include "engine_test_kbs.h"
#include "test_util.h"

using namespace rt;

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
