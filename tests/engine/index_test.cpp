// The engine's compact event store (runtime/engine/index.h): every Event
// comes back exactly as it was added, and the index's order on events is the
// one a comparison of the original strings gives.
#include "index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../support/expect_event.h"

using namespace reflex;
using reflex::engine::EventIndex;
using reflex::engine::Interner;

namespace {

Event make(const std::string& name, const std::string& device, const std::string& evidence) {
  Event e;
  e.name = name;
  e.device = device;
  e.kind = DeviceKind::gpu;
  e.host = "node-1";
  e.time.wall = 1'700'000'000'000'000;
  e.time.clock = "node-1/kernel";
  e.evidence = evidence;
  e.line = "raw line of " + name + " on " + device;
  return e;
}

void expect_same(const Event& a, const Event& b) {
  reflex::testing::expect_same_event(a, b);
}

TEST(EventIndex, EveryEventComesBackAsItWasAdded) {
  std::vector<Event> evs;
  evs.push_back(make("a", "node-1/gpu0", "hosts/node-1/kern.log:812"));
  Event storm = make("b", "node-1/gpu1", "hosts/node-1/kern.log:0");
  storm.count = 40;
  storm.first = *storm.time.wall - 5'000'000;
  storm.last = *storm.time.wall + 7'000'000;
  storm.fields = {{"xid", "79"}, {"pid", ""}, {"msg", std::string(3'000'000, 'x')}};
  storm.bindings = {{"rank", "job/j/rank3"}, {"peer", "node-2/gpu0"}};
  storm.transport = kTransportKernel;
  storm.placeholder_device = true;
  storm.seq = 99;
  evs.push_back(storm);
  // Evidence that is not "FILE:N" in canonical decimal, kept byte for byte.
  for (const char* odd : {"", "stdin", "f:007", "f:", "a:b:12x", "f:99999999999999999999",
                          "f:4294967296", "f:4294967295", "redis:1700-0"})
    evs.push_back(make("c", "node-1/gpu2", odd));
  Event nowall = make("d", "node-1", "dmesg:3");
  nowall.time.wall.reset();
  nowall.time.mono = -2.5;  // a value the index also uses as "none" internally
  nowall.kind = DeviceKind::host;
  nowall.host = "";
  nowall.line = "";
  evs.push_back(nowall);
  Event mono = make("d", "node-1", "dmesg:4");
  mono.time.mono = 12.25;
  evs.push_back(mono);

  Interner in;
  EventIndex ix(&in);
  for (auto& e : evs) ix.add(e);
  ASSERT_EQ(ix.size(), evs.size());
  for (uint32_t i = 0; i < evs.size(); ++i) {
    SCOPED_TRACE(evs[i].evidence);
    expect_same(ix.ev(i), evs[i]);
    EXPECT_EQ(ix.evidence(i), evs[i].evidence);
    EXPECT_EQ(ix.line(i), evs[i].line);
    EXPECT_EQ(ix.count(i), evs[i].count);
    EXPECT_EQ(ix.host(i), evs[i].host);
    EXPECT_EQ(ix.device(i), evs[i].device);
  }
  ASSERT_NE(ix.binding(1, "peer"), nullptr);
  EXPECT_EQ(*ix.binding(1, "peer"), "node-2/gpu0");
  EXPECT_EQ(ix.binding(1, "nope"), nullptr);
  EXPECT_EQ(ix.binding(0, "peer"), nullptr);
}

TEST(EventIndex, TiesAreOrderedByTheEvidenceStrings) {
  // Same time: before() falls back to evidence, name, device. Line numbers
  // compare as text ("10" < "9"), and a file that is a prefix of another
  // compares as the whole strings do.
  const std::vector<std::string> evidence = {"hosts/a/kern.log:9",
                                             "hosts/a/kern.log:10",
                                             "hosts/a/kern.log:100",
                                             "hosts/a/kern.log",
                                             "hosts/a/kern.log.1:5",
                                             "hosts/a/kern.log:",
                                             "hosts/a/kern.lo:7",
                                             "hosts/b:1",
                                             "",
                                             "hosts/a/kern.log:9x",
                                             "hosts/a/kern.log:09",
                                             "hosts/a/kern.log:4294967296"};
  Interner in;
  EventIndex ix(&in);
  for (auto& e : evidence) ix.add(make("a", "node-1/gpu0", e));
  for (uint32_t a = 0; a < evidence.size(); ++a)
    for (uint32_t b = 0; b < evidence.size(); ++b) {
      SCOPED_TRACE(evidence[a] + " vs " + evidence[b]);
      EXPECT_EQ(
          ix.before(a, b),
          a == b ? false : evidence[a] < evidence[b] || (evidence[a] == evidence[b] && a < b));
    }
}

TEST(EventIndex, HostsLoggingCountsEachHostOnceAndSeesNewEvents) {
  // The base-rate check's count is kept between diagnoses: it must change
  // when an event of that name arrives, and not when another name's does.
  Interner in;
  EventIndex ix(&in);
  auto on = [&](const std::string& name, const std::string& host, int n) {
    Event e = make(name, host + "/gpu0", "hosts/" + host + "/kern.log:" + std::to_string(n));
    e.host = host;
    e.time.clock = host + "/kernel";
    e.time.wall = *e.time.wall - n;  // out of order: the name's list is sorted lazily
    return ix.add(e);
  };
  on("x", "node-1", 1);
  on("x", "node-1", 2);
  on("x", "node-2", 3);
  const uint32_t x = in.find("x");
  EXPECT_EQ(ix.hosts_logging(x, 200000), 2u);
  EXPECT_EQ(ix.hosts_logging(x, 200000), 2u);
  on("y", "node-3", 4);
  EXPECT_EQ(ix.hosts_logging(x, 200000), 2u);
  EXPECT_EQ(ix.hosts_logging(in.find("y"), 200000), 1u);
  on("x", "node-3", 5);
  EXPECT_EQ(ix.hosts_logging(x, 200000), 3u);
  // A budget stops the count (a storm's hosts, not its every line).
  EXPECT_EQ(ix.hosts_logging(x, 1), 1u);
  EXPECT_EQ(ix.hosts_logging(x, 200000), 3u);
  Event nowall = make("x", "node-4", "dmesg:6");
  nowall.time.wall.reset();
  nowall.host = "node-4";
  nowall.time.clock = "node-4/kernel";
  ix.add(nowall);
  EXPECT_EQ(ix.hosts_logging(x, 200000), 4u);
  EXPECT_EQ(ix.hosts_logging(in.id("never-logged"), 200000), 0u);
}

}  // namespace
