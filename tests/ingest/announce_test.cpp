// IngestOptions::announce_folds: a dedup fold's first line is emitted at once,
// its full count later as an update of the same event; off, nothing changes.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "fixture.h"
#include "reflex/ingest.h"

namespace reflex {
namespace {

// NVRM Xid 95 (a `dedup 60s` signature in the test KB), `dmesg --time-format
// iso` prefix, at second `s` of the minute.
std::string xid95_at(int s) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "2026-03-05T10:11:%02d,000000+00:00 NVRM: Xid (PCI:0000:18:00): 95, pid=1, "
                "Uncontained: FBHUB. RST: Yes, D-RST: No",
                s);
  return buf;
}

constexpr TimeUs kMinuteStart = 1772705460LL * 1000000;  // 2026-03-05T10:11:00Z

class AnnounceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kb_ = test::test_kb();
    topo_ = test::test_topology();
    ASSERT_TRUE(topo_);
  }
  std::unique_ptr<Ingestor> make(bool announce) {
    IngestOptions o;
    o.announce_folds = announce;
    auto ing = std::make_unique<Ingestor>(kb_, *topo_, o);
    ing->set_sink([this](Event&& e) { events_.push_back(std::move(e)); });
    return ing;
  }
  void feed(Ingestor& ing, int second, uint64_t line_no) {
    ing.feed_line("node-0017", kTransportKernel, xid95_at(second), "hosts/node-0017/kern.log",
                  line_no);
  }
  KnowledgeBase kb_;
  std::unique_ptr<Topology> topo_;
  std::vector<Event> events_;
};

TEST_F(AnnounceTest, FirstSightingAtOnceThenOneUpdate) {
  auto ing = make(true);
  feed(*ing, 1, 1);
  ASSERT_EQ(events_.size(), 1u) << "the first line of a fold is not held for its window";
  EXPECT_EQ(events_[0].count, 1u);
  ASSERT_TRUE(events_[0].first && events_[0].last);
  EXPECT_EQ(*events_[0].first, *events_[0].last);
  for (int i = 2; i <= 10; ++i) feed(*ing, i, static_cast<uint64_t>(i));
  EXPECT_EQ(events_.size(), 1u) << "repeats fold silently";
  ing->advance_time(kMinuteStart + 62 * 1000000LL);  // past the 60 s window
  ASSERT_EQ(events_.size(), 2u);
  const Event &a = events_[0], &u = events_[1];
  EXPECT_EQ(u.count, 10u) << "the update carries the whole fold, not the rest";
  EXPECT_EQ(*u.last - *u.first, 9000000);
  // The same event (what the engine merges by), only the count and span differ.
  EXPECT_EQ(u.name, a.name);
  EXPECT_EQ(u.device, a.device);
  EXPECT_EQ(u.evidence, a.evidence);
  EXPECT_EQ(u.line, a.line);
  EXPECT_EQ(u.time.wall, a.time.wall);
  EXPECT_EQ(u.seq, a.seq);
  ing->finish();
  EXPECT_EQ(events_.size(), 2u) << "a closed fold is not emitted again";
  EXPECT_EQ(ing->stats().folded_by_dedup, 9u);
}

TEST_F(AnnounceTest, AFoldThatNeverGrewIsNotRepeated) {
  auto ing = make(true);
  feed(*ing, 1, 1);
  ing->finish();
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].count, 1u);
}

TEST_F(AnnounceTest, ALineOutsideTheWindowClosesTheFoldAndAnnouncesTheNext) {
  auto ing = make(true);
  feed(*ing, 1, 1);
  feed(*ing, 2, 2);
  // 70 s after the first line: a new fold; the old one closes with count 2.
  ing->feed_line("node-0017", kTransportKernel,
                 "2026-03-05T10:12:11,000000+00:00 NVRM: Xid (PCI:0000:18:00): 95, pid=1, "
                 "Uncontained: FBHUB. RST: Yes, D-RST: No",
                 "hosts/node-0017/kern.log", 3);
  ASSERT_EQ(events_.size(), 3u);
  EXPECT_EQ(events_[0].count, 1u);
  EXPECT_EQ(events_[1].count, 2u);
  EXPECT_EQ(events_[1].evidence, events_[0].evidence);
  EXPECT_EQ(events_[2].count, 1u);
  EXPECT_EQ(events_[2].evidence, "hosts/node-0017/kern.log:3");
  ing->finish();
  EXPECT_EQ(events_.size(), 3u);
}

TEST_F(AnnounceTest, OffTheFoldIsEmittedOnceWhenItCloses) {
  auto ing = make(false);
  for (int i = 1; i <= 10; ++i) feed(*ing, i, static_cast<uint64_t>(i));
  EXPECT_TRUE(events_.empty()) << "batch: the fold waits for its window";
  ing->finish();
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].count, 10u);
}

}  // namespace
}  // namespace reflex
