// EngineOptions::fault_incidents, which `reflex watch --redis` sets: fault
// evidence the KB rates major or critical opens an incident of its own in
// streaming mode (answered with a null trigger, as diagnose_all() answers
// it); a later job symptom joins it; a healed fault's answer is withdrawn by
// an empty revision. Off (plain `reflex watch`): nothing without a symptom.
// Hand-built knowledge bases (tests/engine's helpers), not the shipped KB.
#include <gtest/gtest.h>

#include <map>

#include "engine_test_kbs.h"
#include "test_util.h"

using namespace rt;

namespace {

struct Stream {
  explicit Stream(const KnowledgeBase& kb, bool on, int hosts = 2) {
    EngineOptions o;
    o.settle_s = 60;
    o.fault_incidents = on;
    e = std::make_unique<Engine>(std::make_shared<KnowledgeBase>(kb),
                                 topo(topo_json(hosts, {{"job-1", {0, 1}}})), o);
    e->set_callback([this](const Diagnosis& d) { got.push_back(d); });
  }
  std::unique_ptr<Engine> e;
  std::vector<Diagnosis> got;
};

bool names(const Diagnosis& d, const std::string& device) {
  for (const RootCause& rc : d.root_causes)
    if (rc.device == device) return true;
  return false;
}

}  // namespace

TEST(FaultIncidents, OffOnlySymptomsOpenIncidents) {
  Stream r(cascade_kb().kb, false);
  r.e->feed_event(
      ev("t_pcie_fatal", pcie(1, 3), DeviceKind::pcie_port, "node-1", 100, "node-1/kernel"));
  r.e->feed_event(
      ev("t_gpu_off_bus", gpu(1, 3), DeviceKind::gpu, "node-1", 100.5, "node-1/kernel"));
  r.e->feed_event(ev("t_benign", "node-0", DeviceKind::host, "node-0", 400, "node-0/kernel"));
  r.e->flush();
  EXPECT_TRUE(r.got.empty());
  EXPECT_EQ(r.e->stats().incidents_opened, 0u);
}

TEST(FaultIncidents, CriticalFaultAloneIsAnsweredAfterSettleWithNullTrigger) {
  Stream r(cascade_kb().kb, true);
  r.e->feed_event(
      ev("t_pcie_fatal", pcie(1, 3), DeviceKind::pcie_port, "node-1", 100, "node-1/kernel"));
  r.e->feed_event(
      ev("t_gpu_off_bus", gpu(1, 3), DeviceKind::gpu, "node-1", 100.5, "node-1/kernel"));
  EXPECT_EQ(r.e->stats().incidents_opened, 1u);  // the GPU joined the PCIe fault's incident
  EXPECT_EQ(r.e->stats().open_incidents, 1u);
  r.e->feed_event(ev("t_benign", "node-0", DeviceKind::host, "node-0", 130, "node-0/kernel"));
  EXPECT_TRUE(r.got.empty());  // settle not over (event time)
  r.e->feed_event(ev("t_benign", "node-0", DeviceKind::host, "node-0", 161, "node-0/kernel"));
  ASSERT_EQ(r.got.size(), 1u);
  const Diagnosis& d = r.got[0];
  EXPECT_FALSE(d.trigger.has_value());
  ASSERT_FALSE(d.root_causes.empty());
  EXPECT_EQ(d.root_causes[0].device, pcie(1, 3));
  // The same answer diagnose_all() gives over the same events.
  auto batch = diagnose_events(
      cascade_kb().kb, *topo(topo_json(2, {{"job-1", {0, 1}}})),
      {ev("t_pcie_fatal", pcie(1, 3), DeviceKind::pcie_port, "node-1", 100, "node-1/kernel"),
       ev("t_gpu_off_bus", gpu(1, 3), DeviceKind::gpu, "node-1", 100.5, "node-1/kernel")});
  ASSERT_EQ(batch.size(), 1u);
  ASSERT_FALSE(batch[0].root_causes.empty());
  EXPECT_EQ(batch[0].root_causes[0].device, d.root_causes[0].device);
}

TEST(FaultIncidents, MinorEvidenceOpensNothing) {
  Stream r(cascade_kb().kb, true);
  r.e->feed_event(ev("t_xid13", gpu(0, 1), DeviceKind::gpu, "node-0", 20, "node-0/kernel"));
  r.e->feed_event(ev("t_benign", "node-0", DeviceKind::host, "node-0", 400, "node-0/kernel"));
  r.e->flush();
  EXPECT_TRUE(r.got.empty());
  EXPECT_EQ(r.e->stats().incidents_opened, 0u);
}

TEST(FaultIncidents, LaterJobSymptomJoinsAndTheNodeAnswerIsWithdrawn) {
  Stream r(cascade_kb().kb, true);
  r.e->feed_event(
      ev("t_pcie_fatal", pcie(1, 3), DeviceKind::pcie_port, "node-1", 100, "node-1/kernel"));
  r.e->feed_event(
      ev("t_gpu_off_bus", gpu(1, 3), DeviceKind::gpu, "node-1", 100.5, "node-1/kernel"));
  r.e->feed_event(ev("t_benign", "node-0", DeviceKind::host, "node-0", 161, "node-0/kernel"));
  ASSERT_EQ(r.got.size(), 1u);
  std::string node_incident = r.got[0].incident;
  // The job fails on the GPU 10 minutes later: the same incident, now a job's.
  r.e->feed_event(
      ev("t_watchdog", rank("job-1", 2), DeviceKind::rank, "node-0", 700, "node-0/app"));
  EXPECT_EQ(r.e->stats().incidents_opened, 1u);
  r.e->feed_event(ev("t_benign", "node-0", DeviceKind::host, "node-0", 800, "node-0/kernel"));
  r.e->flush();
  std::map<std::string, Diagnosis> latest;
  for (const Diagnosis& d : r.got) latest[d.incident] = d;
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_TRUE(latest[node_incident].root_causes.empty());  // withdrawn
  EXPECT_GT(latest[node_incident].revision, 1);
  for (auto& [id, d] : latest)
    if (id != node_incident) {
      ASSERT_TRUE(d.trigger.has_value());
      EXPECT_TRUE(names(d, pcie(1, 3)) || names(d, gpu(1, 3))) << id;
    }
}

TEST(FaultIncidents, HealedFaultIsWithdrawn) {
  KbBuilder b;
  b.sig("t_link_down", DeviceKind::nic, "nic", Severity::major);
  b.sig("t_link_up", DeviceKind::nic);
  b.sig("t_benign", DeviceKind::host);
  for (auto& s : b.kb.signatures)
    if (s.name == "t_link_down") {
      s.cleared_by = {"t_link_up"};
      s.clear_within_s = 30;
    }
  EngineOptions o;
  o.settle_s = 10;  // shorter than the heal window: answered, then withdrawn
  o.fault_incidents = true;
  auto t = topo(topo_json(2, {{"job-1", {0, 1}}}));
  Engine e(std::make_shared<KnowledgeBase>(b.kb), t, o);
  std::vector<Diagnosis> got;
  e.set_callback([&](const Diagnosis& d) { got.push_back(d); });
  std::string nic = t->nic_by_name("node-1", "mlx5_0")->id;
  e.feed_event(ev("t_link_down", nic, DeviceKind::nic, "node-1", 100, "node-1/kernel"));
  e.feed_event(ev("t_benign", "node-0", DeviceKind::host, "node-0", 111, "node-0/kernel"));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(names(got[0], nic));
  e.feed_event(ev("t_link_up", nic, DeviceKind::nic, "node-1", 120, "node-1/kernel"));
  e.feed_event(ev("t_benign", "node-0", DeviceKind::host, "node-0", 140, "node-0/kernel"));
  e.flush();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].incident, got[0].incident);
  EXPECT_EQ(got[1].revision, 2);
  EXPECT_TRUE(got[1].root_causes.empty());
}
