// The engine's interface over hand-built knowledge bases: JSON and text
// renderings, streaming and flush, KB and topology reload, feeding from
// several threads, events read from JSON lines.
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

#include "engine_test_kbs.h"
#include "test_util.h"

using namespace rt;

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
