// The transport interface's contract on the embedded bus (the default): the
// Redis implementation is held to the same by the tests/deploy/*.py runs.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "reflex/bus.h"

using namespace reflex::bus;

TEST(EmbeddedBus, PublishReadWithCursor) {
  auto b = make_embedded_bus();
  std::string err;
  ASSERT_TRUE(b->publish_events(
      {{"job:a", {"1", "p1"}}, {"job:a", {"2", "p2"}}, {"host:h", {"3", "p3"}}}, &err));
  std::vector<Entry> out;
  std::string cursor = "0";
  ASSERT_TRUE(b->read_events("job:a", &cursor, 1, &out, &err));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, "1");
  ASSERT_TRUE(b->read_events("job:a", &cursor, 10, &out, &err));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].payload, "p2");
  ASSERT_TRUE(b->read_events("job:a", &cursor, 10, &out, &err));
  EXPECT_EQ(out.size(), 2u);  // nothing new
  std::vector<std::string> shards;
  ASSERT_TRUE(b->list_shards(&shards, &err));
  EXPECT_EQ(shards, (std::vector<std::string>{"host:h", "job:a"}));
}

TEST(EmbeddedBus, ReadManyAdvancesEachCursorOnItsOwn) {
  auto b = make_embedded_bus();
  std::string err;
  ASSERT_TRUE(b->publish_events(
      {{"job:a", {"1", "p1"}}, {"job:b", {"2", "p2"}}, {"job:a", {"3", "p3"}}}, &err));
  std::string ca = "0", cb = "0", cn = "0";
  std::vector<Entry> a, bb, none;
  ASSERT_TRUE(
      b->read_many({{"job:a", &ca, &a}, {"job:b", &cb, &bb}, {"job:none", &cn, &none}}, 1, &err));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].id, "1");
  ASSERT_EQ(bb.size(), 1u);
  EXPECT_EQ(bb[0].id, "2");
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(cn, "0");
  ASSERT_TRUE(b->read_many({{"job:a", &ca, &a}, {"job:b", &cb, &bb}}, 10, &err));
  ASSERT_EQ(a.size(), 2u);  // appended after the first read
  EXPECT_EQ(a[1].id, "3");
  EXPECT_EQ(bb.size(), 1u);  // nothing new in job:b
}

TEST(EmbeddedBus, LeaseIsExclusiveUntilItLapses) {
  auto b = make_embedded_bus();
  std::string err;
  bool held = false;
  ASSERT_TRUE(b->lease("s", "d1", 100, &held, &err));
  EXPECT_TRUE(held);
  ASSERT_TRUE(b->lease("s", "d2", 100, &held, &err));
  EXPECT_FALSE(held);
  ASSERT_TRUE(b->lease("s", "d1", 100, &held, &err));  // renewal
  EXPECT_TRUE(held);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  ASSERT_TRUE(b->lease("s", "d2", 100, &held, &err));  // lapsed: taken over
  EXPECT_TRUE(held);
  ASSERT_TRUE(b->release("s", "d1", &err));  // not d1's: no effect
  ASSERT_TRUE(b->lease("s", "d1", 100, &held, &err));
  EXPECT_FALSE(held);
}

TEST(EmbeddedBus, AnAnswerIsPublishedOnce) {
  auto b = make_embedded_bus();
  std::string err;
  bool published = false;
  ASSERT_TRUE(b->publish_diagnosis("s", "inc-1", 1, "A", "{}", &published, &err));
  EXPECT_TRUE(published);
  ASSERT_TRUE(b->publish_diagnosis("s", "inc-1", 1, "A", "{}", &published, &err));
  EXPECT_FALSE(published);  // a new owner re-deriving it
  ASSERT_TRUE(b->publish_diagnosis("s", "inc-1", 2, "B", "{}", &published, &err));
  EXPECT_TRUE(published);  // a different answer
}

TEST(EmbeddedBus, TrimByAgeDropsOnlyOlderEntries) {
  auto b = make_embedded_bus();
  std::string err;
  bool published = false;
  ASSERT_TRUE(
      b->publish_events({{"s", {"1", "p1"}}, {"s", {"2", "p2"}}, {"t", {"3", "p3"}}}, &err));
  ASSERT_TRUE(b->publish_diagnosis("s", "inc-1", 1, "A", "{}", &published, &err));
  int64_t removed = 0;
  ASSERT_TRUE(b->trim("s", 3600 * 1000, &removed, &err));  // all younger than an hour
  EXPECT_EQ(removed, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(b->trim("s", 0, &removed, &err));  // all older than now
  EXPECT_EQ(removed, 3);                         // two events, one diagnosis
  std::vector<Entry> out;
  std::string cursor = "0";
  ASSERT_TRUE(b->read_events("s", &cursor, 10, &out, &err));
  EXPECT_TRUE(out.empty());
  cursor = "0";
  ASSERT_TRUE(b->read_events("t", &cursor, 10, &out, &err));
  EXPECT_EQ(out.size(), 1u);  // another shard is untouched
}

TEST(EmbeddedBus, MembersLapseAndLeave) {
  auto b = make_embedded_bus();
  std::string err;
  std::vector<std::string> live;
  ASSERT_TRUE(b->members("d2", 100, &live, &err));
  ASSERT_TRUE(b->members("d1", 100000, &live, &err));
  EXPECT_EQ(live, (std::vector<std::string>{"d1", "d2"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  ASSERT_TRUE(b->members("d1", 100000, &live, &err));
  EXPECT_EQ(live, (std::vector<std::string>{"d1"}));  // d2 lapsed
  ASSERT_TRUE(b->members("d1", 0, &live, &err));      // d1 leaves
  EXPECT_TRUE(live.empty());
}

TEST(RedisBus, BadUrlsAreRefusedAndPasswordsRedacted) {
  std::string err;
  EXPECT_EQ(make_redis_bus("http://x", {}, &err), nullptr);
  EXPECT_NE(err.find("redis://"), std::string::npos);
  EXPECT_EQ(make_redis_bus("redis://127.0.0.1:99999", {}, &err), nullptr);
  EXPECT_EQ(make_redis_bus("redis://u:secret@127.0.0.1:6379/x", {}, &err), nullptr);
  EXPECT_EQ(err.find("secret"), std::string::npos);
  EXPECT_EQ(redact_url("redis://u:secret@h:1"), "redis://u:***@h:1");
  EXPECT_NE(make_redis_bus("redis://u:p@127.0.0.1:6379/2", {}, &err), nullptr);
  EXPECT_EQ(events_key("job:a"), "reflex:{job:a}:events");
}

TEST(RedisBus, UnreachableIsAnErrorNotACrash) {
  std::string err;
  Options o;
  o.timeout_ms = 200;
  auto b = make_redis_bus("redis://127.0.0.1:1", o, &err);  // nothing listens on port 1
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(b->publish_events({{"s", {"1", "p"}}}, &err));
  EXPECT_NE(err.find("127.0.0.1"), std::string::npos);
  bool held = true;
  EXPECT_FALSE(b->lease("s", "d", 100, &held, &err));
}

TEST(RedisBus, SentinelUrlsAreParsedOrRefused) {
  std::string err;
  EXPECT_NE(make_redis_bus("redis+sentinel://127.0.0.1:26379,h2,h3:26380/mymaster", {}, &err),
            nullptr)
      << err;
  EXPECT_NE(make_redis_bus("redis+sentinel://u:p@h1/mymaster/3", {}, &err), nullptr) << err;
  // No primary name: Sentinel needs one to answer.
  EXPECT_EQ(make_redis_bus("redis+sentinel://h1:26379", {}, &err), nullptr);
  EXPECT_NE(err.find("primary name"), std::string::npos) << err;
  EXPECT_EQ(make_redis_bus("redis+sentinel://h1:26379/", {}, &err), nullptr);
  // An empty or bad entry in the sentinel list.
  EXPECT_EQ(make_redis_bus("redis+sentinel://h1,,h2/m", {}, &err), nullptr);
  EXPECT_NE(err.find("sentinel address"), std::string::npos) << err;
  EXPECT_EQ(make_redis_bus("redis+sentinel://u:secret@h1:0/m", {}, &err), nullptr);
  EXPECT_EQ(err.find("secret"), std::string::npos) << err;
  EXPECT_EQ(make_redis_bus("redis+sentinel://h1/m/x", {}, &err), nullptr);
  EXPECT_NE(err.find("database"), std::string::npos) << err;
  EXPECT_EQ(redact_url("redis+sentinel://u:secret@h1:1,h2:2/m"),
            "redis+sentinel://u:***@h1:1,h2:2/m");
}

TEST(RedisBus, APasswordWithoutUserIsRedactedToo) {
  EXPECT_EQ(redact_url("redis://secret@h:1"), "redis://***@h:1");
  EXPECT_EQ(redact_url("redis://h:1"), "redis://h:1");
}

TEST(RedisBus, NoSentinelReachableIsAnErrorNamingThemAll) {
  std::string err;
  Options o;
  o.timeout_ms = 200;
  auto b = make_redis_bus("redis+sentinel://127.0.0.1:1,127.0.0.1:2/mymaster", o, &err);
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(b->publish_events({{"s", {"1", "p"}}}, &err));
  EXPECT_NE(err.find("127.0.0.1:1"), std::string::npos) << err;
  EXPECT_NE(err.find("127.0.0.1:2"), std::string::npos) << err;
  EXPECT_NE(err.find("mymaster"), std::string::npos) << err;
}
