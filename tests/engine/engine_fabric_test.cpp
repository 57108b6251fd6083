// Faults of the fabric over hand-built knowledge bases: a leaf switch named
// from the same rail down on several hosts, and a link down that healed.
#include <gtest/gtest.h>

#include "engine_test_kbs.h"
#include "test_util.h"

using namespace rt;

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
