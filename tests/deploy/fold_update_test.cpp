// IngestOptions::announce_folds as the diagnoser's engine sees it (`reflex
// watch --redis` sets it): an agent sends a fold's first sighting at once and
// later the same event with the fold's count; the engine merges the update
// into the event (one event, the larger count), never adds a second one.
// Hand-built knowledge bases (tests/engine's helpers), not the shipped KB.
#include <gtest/gtest.h>

#include "engine_test_kbs.h"
#include "test_util.h"

using namespace rt;

namespace {

struct Stream {
  explicit Stream(bool announce) {
    EngineOptions o;
    o.settle_s = 60;
    o.fault_incidents = true;
    o.ingest.announce_folds = announce;
    e = std::make_unique<Engine>(std::make_shared<KnowledgeBase>(cascade_kb().kb),
                                 topo(topo_json(2, {{"job-1", {0, 1}}})), o);
    e->set_callback([this](const Diagnosis& d) { got.push_back(d); });
  }
  std::unique_ptr<Engine> e;
  std::vector<Diagnosis> got;
};

Event first_sighting() {
  static Event e =
      ev("t_pcie_fatal", pcie(1, 3), DeviceKind::pcie_port, "node-1", 100, "node-1/kernel");
  return e;
}

Event update(uint64_t count, double last_s) {
  Event u = first_sighting();
  u.count = count;
  u.first = *u.time.wall;
  u.last = at(last_s);
  return u;
}

uint64_t count_of(const std::vector<Diagnosis>& ds, const std::string& name) {
  for (const Diagnosis& d : ds)
    for (const RootCause& rc : d.root_causes)
      for (const ChainLink& l : rc.chain)
        if (l.ev.event == name) return l.ev.count;
  return 0;
}

}  // namespace

TEST(FoldUpdate, TheUpdateIsMergedNotAdded) {
  Stream r(true);
  r.e->feed_event(first_sighting());
  r.e->feed_event(update(7, 130));
  r.e->feed_event(update(4, 110));  // an older update redelivered late: the larger count stands
  r.e->feed_event(update(7, 130));  // the same update again
  EXPECT_EQ(r.e->stats().events, 1u);
  r.e->feed_event(ev("t_benign", "node-0", DeviceKind::host, "node-0", 200, "node-0/kernel"));
  ASSERT_FALSE(r.got.empty());
  EXPECT_EQ(count_of(r.got, "t_pcie_fatal"), 7u);
}

TEST(FoldUpdate, AnUpdateAfterTheAnswerRevisesTheCount) {
  Stream r(true);
  r.e->feed_event(first_sighting());
  r.e->feed_event(ev("t_benign", "node-0", DeviceKind::host, "node-0", 161, "node-0/kernel"));
  ASSERT_EQ(r.got.size(), 1u) << "answered after settle on the first sighting alone";
  EXPECT_EQ(count_of(r.got, "t_pcie_fatal"), 1u);
  r.e->feed_event(update(12, 150));
  r.e->flush();
  EXPECT_EQ(r.e->stats().events, 2u);  // the first sighting and t_benign
  EXPECT_EQ(count_of({r.got.back()}, "t_pcie_fatal"), 12u);
}

TEST(FoldUpdate, OffARepeatIsAnotherEvent) {
  Stream r(false);
  r.e->feed_event(first_sighting());
  r.e->feed_event(update(7, 130));
  EXPECT_EQ(r.e->stats().events, 2u);
}
