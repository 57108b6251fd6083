// Per-line format detection (interfaces.md §3): one table row per format,
// checked by Formats.Parses. The rows live by format family in
// dmesg_rows_test.cpp, syslog_rows_test.cpp and app_rows_test.cpp; they use
// real lines from public fixtures, issue reports and vendor documentation,
// named per row, and mark framing that no source shows verbatim around a
// real message as "invented framing".
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "format_rows.h"
#include "reflex/event.h"
#include "reflex/log_format.h"

namespace reflex::format_test {

namespace {

const char* kTopo = R"({"hosts": [
  {"name": "node-0017", "ip": "10.1.0.17"},
  {"name": "node-0018.cluster.local", "ip": "10.1.0.18"},
  {"name": "bd-cpu18"},
  {"name": "ny2g1r12hh2"}]})";

}  // namespace

const Topology& topo() {
  static std::unique_ptr<Topology> t = [] {
    TopologyError err;
    auto p = Topology::load_text(kTopo, "test", &err);
    if (!p) ADD_FAILURE() << err.str();
    return p;
  }();
  return *t;
}

void PrintTo(const Row& r, std::ostream* os) {
  *os << r.name << ": " << r.line;
}

Row row(const char* name, std::string line) {
  Row r;
  r.name = name;
  r.line = std::move(line);
  return r;
}

namespace {

std::string show(const std::optional<TimeUs>& t) {
  return t ? format_time_us(*t) : "";
}

class Formats : public ::testing::TestWithParam<Row> {};

TEST_P(Formats, Parses) {
  const Row& r = GetParam();
  FormatStats stats;
  FormatOptions opts;
  opts.strict_transport = r.strict;
  LineParser p(topo(), opts, &stats);
  FileContext ctx;
  ctx.host_dir = r.dir;
  ctx.file = "hosts/" + r.dir + "/test.log";
  ctx.source = FileSource::system_log;  // the rows are about shapes: each line says its transport
  if (r.boot_time) ctx.boot_time_us = parse_rfc3339(*r.boot_time);
  ctx.tz_offset_s = r.tz;
  ctx.year = r.year;
  p.begin_file(ctx);
  LogRecord rec;
  uint64_t n = 0;
  for (auto& b : r.before) p.parse(b, ++n, &rec);
  ASSERT_TRUE(p.parse(r.line, ++n, &rec));
  EXPECT_EQ(rec.host, r.host);
  EXPECT_EQ(rec.host_known, r.host_known);
  EXPECT_EQ(show(rec.time.wall), r.wall);
  if (r.mono) {
    ASSERT_TRUE(rec.time.mono);
    EXPECT_NEAR(*rec.time.mono, *r.mono, 1e-6);
  }
  EXPECT_STREQ(transport_name(rec.transport), transport_name(r.transport));
  EXPECT_EQ(rec.msg, r.msg);
  EXPECT_EQ(rec.rank_hint, r.rank);
  EXPECT_EQ(rec.time_inherited, r.inherited);
  EXPECT_EQ(rec.raw, r.line);
  EXPECT_EQ(rec.file, ctx.file);
  EXPECT_EQ(rec.line_no, n);
  EXPECT_EQ(rec.time.clock, r.host + (r.transport == kTransportKernel ? "/kernel" : "/app"));
}

// Every family, in this order.
std::vector<Row> rows() {
  std::vector<Row> v;
  for (auto family : {dmesg_rows, stamp_rows, syslog_rows, journal_rows, app_rows, sidecar_rows,
                      context_rows, relative_time_rows, quoted_rows})
    for (Row& r : family()) v.push_back(std::move(r));
  return v;
}

INSTANTIATE_TEST_SUITE_P(Formats, Formats, ::testing::ValuesIn(rows()),
                         [](const auto& tp) { return std::string(tp.param.name); });

}  // namespace
}  // namespace reflex::format_test
