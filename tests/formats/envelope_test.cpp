// Streaming envelopes (interfaces.md §4): field aliases and defaults, what
// is skipped and counted, times out of range.
#include <gtest/gtest.h>

#include <string>

#include "format_rows.h"
#include "reflex/event.h"
#include "reflex/log_format.h"

namespace reflex::format_test {
namespace {

TEST(Envelope, FieldsAliasesAndDefaults) {
  FormatStats stats;
  std::string storage;
  LogRecord rec;
  ASSERT_TRUE(parse_envelope(
      R"({"host": "node-0017", "ts": "2026-03-05T10:11:12.345678Z", "source": "kernel", "msg": "NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus."})",
      topo(), 42, &stats, &storage, &rec));
  EXPECT_EQ(rec.host, "node-0017");
  EXPECT_TRUE(rec.host_known);
  EXPECT_EQ(format_time_us(*rec.time.wall), "2026-03-05T10:11:12.345678Z");
  EXPECT_EQ(rec.transport, kTransportKernel);
  EXPECT_EQ(rec.msg, "NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.");
  EXPECT_EQ(rec.time.clock, "node-0017/kernel");

  // Vector/Fluent Bit names; source omitted -> app; short host name.
  ASSERT_TRUE(parse_envelope(
      R"({"host": "node-0018", "timestamp": "2026-03-05T10:11:13Z", "message": "[rank5]: boom"})",
      topo(), 42, &stats, &storage, &rec));
  EXPECT_EQ(rec.host, "node-0018.cluster.local");
  EXPECT_EQ(rec.transport, kTransportApp);
  EXPECT_EQ(rec.rank_hint, 5);
  EXPECT_EQ(rec.msg, "boom");
  EXPECT_EQ(format_time_us(*rec.time.wall), "2026-03-05T10:11:13.000000Z");

  // ts omitted -> arrival; unknown host kept and counted.
  ASSERT_TRUE(parse_envelope(R"({"host": "node-0420", "msg": "x"})", topo(), 1709633472000000,
                             &stats, &storage, &rec));
  EXPECT_EQ(*rec.time.wall, 1709633472000000);
  EXPECT_EQ(rec.host, "node-0420");
  EXPECT_FALSE(rec.host_known);
  EXPECT_EQ(stats.unknown_hosts, 1u);

  // ts omitted, but the line carries its own time (docs/language.md §9 test lines).
  ASSERT_TRUE(parse_envelope(
      R"({"host": "node-0017", "source": "kernel", "msg": "[2026-03-05T10:11:12.000000+00:00] pcieport 0000:17:00.0: AER: x"})",
      topo(), 42, &stats, &storage, &rec));
  EXPECT_EQ(format_time_us(*rec.time.wall), "2026-03-05T10:11:12.000000Z");
  EXPECT_EQ(rec.msg, "pcieport 0000:17:00.0: AER: x");
  EXPECT_EQ(rec.transport, kTransportKernel);
}

TEST(Envelope, InvalidJsonAndMissingMsgAreCountedAndSkipped) {
  FormatStats stats;
  std::string storage;
  LogRecord rec;
  EXPECT_FALSE(
      parse_envelope("{\"host\": \"node-0017\", \"msg\": ", topo(), 0, &stats, &storage, &rec));
  EXPECT_FALSE(parse_envelope("not json", topo(), 0, &stats, &storage, &rec));
  EXPECT_FALSE(parse_envelope("[1,2]", topo(), 0, &stats, &storage, &rec));
  EXPECT_FALSE(parse_envelope(R"({"host": "node-0017"})", topo(), 0, &stats, &storage, &rec));
  EXPECT_FALSE(
      parse_envelope(R"({"host": "node-0017", "msg": 17})", topo(), 0, &stats, &storage, &rec));
  EXPECT_EQ(stats.skipped_invalid_json, 3u);
  EXPECT_EQ(stats.skipped_no_msg, 2u);
}

TEST(Envelope, TsPastYear9999IsArrivalAndCounted) {
  FormatStats stats;
  std::string storage;
  LogRecord rec;
  // 1e20 us would not fit int64 (a cast of it is undefined); the other is
  // year 58081; the string's offset reaches year 10000.
  for (const char* line :
       {R"({"host": "node-0017", "ts": 1e20, "msg": "x"})",
        R"({"host": "node-0017", "ts": -1e300, "msg": "x"})",
        R"({"host": "node-0017", "ts": 1770700707262408271, "msg": "x"})",
        R"({"host": "node-0017", "ts": "9999-12-31T23:59:59-05:00", "msg": "x"})"}) {
    ASSERT_TRUE(parse_envelope(line, topo(), 1709633472000000, &stats, &storage, &rec)) << line;
    EXPECT_EQ(*rec.time.wall, 1709633472000000) << line;
  }
  EXPECT_EQ(stats.implausible_time, 4u);
}

}  // namespace
}  // namespace reflex::format_test
