// The event codec: what is written is read back field for field, odd values
// included (empty strings, unicode, the largest counts, no times at all).
#include "reflex/event_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "reflex/topology.h"

#include "../support/expect_event.h"

namespace reflex {
namespace {

void expect_same(const Event& a, const Event& b) {
  reflex::testing::expect_same_event(a, b);
}

Event full() {
  Event e;
  e.name = "gpu_lost";
  e.device = "node-0017/gpu3";
  e.kind = DeviceKind::gpu;
  e.host = "node-0017";
  e.time.wall = 1772707262408271;
  e.time.mono = 9662.301144;
  e.time.clock = "node-0017/kernel";
  e.time.inherited = true;  // the line had no time: ts is a lower bound
  // In key order: the line writes fields as an object, read back sorted.
  e.fields = {{"bdf", "0000:5c:00.0"}, {"empty", ""}, {"xid", "79"}};
  e.bindings = {{"peer", "node-0017/mlx5_1"}};
  e.evidence = "hosts/node-0017/kern.log:812";
  e.line = "NVRM: Xid (PCI:0000:5c:00): 79, pid=1\ncontinued";
  e.transport = kTransportKernel;
  e.count = 3;
  e.first = 1772707262000000;
  e.last = 1772707263000000;
  e.placeholder_device = true;
  e.seq = 42;
  return e;
}

Event odd() {
  Event e;
  e.name = "ünïcødé_event";
  e.device = "node-β/gpu0";
  e.line = "temp 85°C — throttled \"quoted\" \\ back\tslash \x01 ctl";
  e.fields = {{"", ""}, {"msg", "日本語"}};
  e.count = std::numeric_limits<uint64_t>::max();
  e.seq = std::numeric_limits<uint64_t>::max();
  e.time.wall = kMinRfc3339Us;  // before the epoch, the earliest a line can write
  return e;
}

TEST(EventRecord, RoundTripsEveryMember) {
  for (const Event& e : {full(), odd(), Event{"n", "d"}}) {
    std::string err;
    auto back = parse_event_json(event_to_record_json(e), &err);
    ASSERT_TRUE(back) << err;
    expect_same(e, *back);
  }
}

TEST(EventRecord, RecordIsStableWhenWrittenAgain) {
  Event e = full();
  std::string once = event_to_record_json(e);
  EXPECT_EQ(event_to_record_json(*parse_event_json(once, nullptr)), once);
}

TEST(EventLine, RoundTripsWhatTheLineCarries) {
  // The line leaves out what its reader takes from the KB (kind), the ingest
  // order and mono beside a wall time: those come back from the context.
  Event e = full();
  auto topo = Topology::empty();
  KnowledgeBase kb;
  std::string line = EventLineWriter(&kb).line(e);
  std::string err;
  auto back = parse_event_json(line, &err, &kb, topo.get());
  ASSERT_TRUE(back) << err;
  e.kind = back->kind;
  e.time.mono.reset();
  e.seq = 0;
  expect_same(e, *back);

  Event o = odd();
  o.time.wall.reset();
  o.time.mono = 0.5;
  back = parse_event_json(EventLineWriter().line(o), &err);
  ASSERT_TRUE(back) << err;
  o.seq = 0;
  o.first = o.last = std::nullopt;
  expect_same(o, *back);
}

// The line is written directly, not as a JSON tree: the same bytes as the
// tree gives, for every member and odd value (control bytes, DEL, quotes,
// invalid UTF-8, a mono time alone, a subclass, repeated field names).
TEST(EventLine, DirectLineIsTheTreesBytes) {
  KnowledgeBase kb;
  kb.classes.push_back({"gpu_hw", "", "GPU hardware", {}});
  kb.classes.push_back({"gpu_lost_sub", "gpu_hw", "a subclass", {}});
  Signature sig;
  sig.name = "gpu_lost";
  sig.fault_class = "gpu_lost_sub";
  kb.signatures.push_back(sig);
  std::vector<Event> events = {full(), odd(), Event{"n", "d"}};
  Event ctl = full();
  // A NUL, control bytes, DEL, escapes; adjacent literals keep "\x00" apart from "b".
  static const char kCtl[] =
      "a\x00"
      "b\x1f\x7f\x08\x0c\r\n\t\"\\/ end";
  ctl.line = std::string(kCtl, sizeof kCtl - 1);
  ctl.fields = {{"k\x02", "v\x1b"}};
  ctl.count = 1;
  ctl.first.reset();
  events.push_back(ctl);
  Event bad = full();
  bad.line = "bad \xff\xfe utf-8 \xc3";
  bad.host.clear();
  bad.time.wall.reset();
  bad.time.mono = 12.000001;
  bad.time.clock.clear();
  bad.bindings.clear();
  bad.last.reset();
  events.push_back(bad);
  Event dup = full();
  dup.fields = {{"a", "1"}, {"b", "2"}, {"a", "3"}};
  events.push_back(dup);
  const std::string evidence = "kern.log:7";
  const KnowledgeBase* kbs[] = {nullptr, &kb};
  for (const KnowledgeBase* k : kbs) {
    EventLineWriter w(k);
    for (const Event& e : events) {
      EXPECT_EQ(w.line(e), w.line_via_tree(e)) << e.name;
      EXPECT_EQ(w.line(e, &evidence), w.line_via_tree(e, &evidence)) << e.name;
    }
  }
}

TEST(EventLine, EvidenceOverride) {
  Event e = full();
  std::string ev = "kern.log:1";
  auto back = parse_event_json(EventLineWriter().line(e, &ev), nullptr);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->evidence, ev);
}

TEST(EventJson, RefusesWhatIsNotAnEvent) {
  std::string err;
  EXPECT_FALSE(parse_event_json("{not json", &err));
  EXPECT_EQ(err, "not a JSON object");
  EXPECT_FALSE(parse_event_json("[1,2]", &err));
  EXPECT_FALSE(parse_event_json(R"({"device":"x"})", &err));
  EXPECT_EQ(err, "missing \"event\"");
  EXPECT_FALSE(parse_event_json(R"({"event":"a"})", &err));
  EXPECT_EQ(err, "missing \"device\"");
  EXPECT_FALSE(parse_event_json(R"({"event":"a","device":"x","ts":"yesterday"})", &err));
  EXPECT_EQ(err, "bad \"ts\": yesterday");
  // Integer microseconds past year 9999 (a fuzzer's record: the line form
  // would write "58081-04-09T..." and refuse it on reading), on the record's
  // fast path and on the DOM path (a line) alike.
  EXPECT_FALSE(parse_event_json(R"({"name":"a","device":"x","ts":1770700707262408271})", &err));
  EXPECT_FALSE(parse_event_json(R"({"event":"a","device":"x","ts":1770700707262408271})", &err));
  EXPECT_EQ(err, "bad \"ts\": 1770700707262408271 us is outside years 0000-9999");
  EXPECT_FALSE(parse_event_json(R"({"event":"a","device":"x","ts":18446744073709551615})", &err));
  EXPECT_FALSE(parse_event_json(R"({"name":"a","device":"x","ts":-62167219200000001})", &err));
  EXPECT_TRUE(parse_event_json(R"({"name":"a","device":"x","ts":-62167219200000000})", &err));
  // first/last are informational: out of range, dropped, the event kept.
  auto e =
      parse_event_json(R"({"name":"a","device":"x","count":2,"first":1770700707262408271})", &err);
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->first);
  // a mistyped identity (the deployment's garbage test: device 7, device [])
  EXPECT_FALSE(parse_event_json(R"({"name":"a","device":[]})", &err));
  EXPECT_EQ(err, "\"device\" is not a string");
  EXPECT_FALSE(parse_event_json(R"({"event":7,"device":"x"})", &err));
  EXPECT_EQ(err, "\"event\" is not a string");
}

TEST(EventJson, ScalarFieldsBecomeText) {
  auto e = parse_event_json(
      R"({"event":"a","device":"x","fields":{"xid":79,"ok":true,"none":null},"count":-3})",
      nullptr);
  ASSERT_TRUE(e);
  ASSERT_NE(e->field("xid"), nullptr);
  EXPECT_EQ(*e->field("xid"), "79");
  EXPECT_EQ(*e->field("ok"), "true");
  EXPECT_EQ(*e->field("none"), "");
  EXPECT_EQ(e->count, 1u);  // a negative count is not a count
}

}  // namespace
}  // namespace reflex
