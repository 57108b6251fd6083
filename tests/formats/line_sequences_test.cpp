// Line-to-line rules of the line parser: CRI joins, parses_alone, pasted
// prompts, kernel captures by file name or bug-report section, the year
// rollover, implausible times, garbage lines and host fields.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>

#include "format_rows.h"
#include "reflex/event.h"
#include "reflex/log_format.h"

namespace reflex::format_test {
namespace {

struct Fixture {
  FormatStats stats;
  LineParser p;
  LogRecord rec;
  uint64_t n = 0;
  explicit Fixture(std::optional<int> year = std::nullopt, std::string dir = "node-0017",
                   std::string file = "f.log", FormatOptions opts = {})
      : p{topo(), opts, &stats} {
    FileContext ctx;
    ctx.host_dir = dir;
    ctx.file = "hosts/" + dir + "/" + file;
    ctx.year = year;
    p.begin_file(ctx);
  }
  bool parse(std::string_view s) { return p.parse(s, ++n, &rec); }
};

TEST(FormatSequences, CriPartialLinesJoinTheFinalLine) {
  Fixture f;
  EXPECT_FALSE(f.parse("2024-03-05T10:11:12.000000001Z stdout P RuntimeError: NCCL commun"));
  EXPECT_FALSE(f.parse("2024-03-05T10:11:12.500Z stdout P icator was aborted on rank 3. "));
  ASSERT_TRUE(f.parse("2024-03-05T10:11:13Z stdout F Original reason for failure was: timeout"));
  EXPECT_EQ(f.rec.msg,
            "RuntimeError: NCCL communicator was aborted on rank 3. Original reason for failure "
            "was: timeout");
  EXPECT_EQ(format_time_us(*f.rec.time.wall),
            "2024-03-05T10:11:12.000000Z");  // the first part's time
  EXPECT_EQ(f.stats.cri_partial_joined, 2u);
}

// parses_alone (chunk mode leaves out the line before a hit line): only for
// two syslog lines with BSD times of the same month, never after a line
// that could be a pasted prompt or while a CRI join is open.
TEST(FormatSequences, ParsesAloneOnlyForSameMonthSyslogLines) {
  Fixture f(2026);
  const std::string_view mar1 = "Mar  5 10:00:00 node-0017 kernel: audit: ok";
  const std::string_view mar2 = "Mar  5 10:00:01 node-0017 kernel: NVRM: Xid (PCI:0000:18:00): 95";
  EXPECT_TRUE(f.p.parses_alone(mar1, mar2));
  EXPECT_FALSE(f.p.parses_alone("Feb 28 23:59:59 node-0017 kernel: audit: ok", mar2));
  EXPECT_FALSE(f.p.parses_alone("               NVRM: (PCI ID: 10de:26b5) installed", mar2));
  EXPECT_FALSE(f.p.parses_alone(mar1, "               NVRM: fallen off the bus."));
  EXPECT_FALSE(f.p.parses_alone("2026-03-05T10:00:00Z systemd[1]: ok", mar2));
  EXPECT_FALSE(f.p.parses_alone("", mar2));
  EXPECT_FALSE(f.p.parses_alone("Mar  5 10:00:00 user@gpu-07:~$ dmesg", mar2));
  // The record is the same with or without the line before it.
  Fixture with(2026), without(2026);
  ASSERT_TRUE(with.parse(mar1));
  ASSERT_TRUE(with.parse(mar2));
  ASSERT_TRUE(without.parse(mar2));
  EXPECT_EQ(with.rec.time.wall, without.rec.time.wall);
  EXPECT_EQ(with.rec.msg, without.rec.msg);
  EXPECT_EQ(with.rec.host, without.rec.host);
  EXPECT_EQ(with.rec.transport, without.rec.transport);
  // An open CRI join: no.
  EXPECT_FALSE(f.parse("2024-03-05T10:11:12.000000001Z stdout P RuntimeError: NCCL commun"));
  EXPECT_FALSE(f.p.parses_alone(mar1, mar2));
}

// A pasted prompt is skipped and counted; in pasted standard input (not in
// job output, where a job could print one) its command makes the following
// untimed lines kernel lines (lyulyul/shine-cluster#171 shows the prompt form).
TEST(FormatSequences, PastedPromptIsSkippedAndItsCommandSetsTheTransport) {
  Fixture job;
  EXPECT_FALSE(job.parse("user@gpu-07:~$ dmesg -T | grep -i xid"));
  ASSERT_TRUE(job.parse("NVRM: Xid (PCI:0000:dc:00): 79, GPU has fallen off the bus."));
  EXPECT_EQ(job.rec.transport, kTransportApp);
  Fixture f(std::nullopt, "node-0017", "stdin");
  EXPECT_FALSE(f.parse("user@gpu-07:~$ dmesg -T | grep -i xid"));
  EXPECT_EQ(f.stats.prompt_lines, 1u);
  ASSERT_TRUE(f.parse("NVRM: Xid (PCI:0000:dc:00): 79, GPU has fallen off the bus."));
  EXPECT_EQ(f.rec.transport, kTransportKernel);
  EXPECT_FALSE(
      f.parse("(htranstrack) wangcui@hoth:~/shared/STGTrack/H-TransTrack_test2$ nvidia-smi"));
  ASSERT_TRUE(f.parse("Unable to determine the device handle for GPU 0000:1C:00.0: Unknown Error"));
  EXPECT_EQ(f.rec.transport, kTransportApp);  // nvidia-smi output is the tool's, not the kernel's
  EXPECT_FALSE(f.parse("[root@node-0017 ~]# journalctl -k --no-pager"));
  ASSERT_TRUE(f.parse("NVRM: Xid (PCI:0000:dc:00): 79, GPU has fallen off the bus."));
  EXPECT_EQ(f.rec.transport, kTransportKernel);
  // an e-mail address is not a prompt
  ASSERT_TRUE(f.parse("contact admin@example.com for access"));
}

// A file that is a kernel capture by name holds kernel lines whatever their
// shape, unless --strict-transport.
TEST(FormatSequences, KernelCaptureByFileName) {
  for (const char* name : {"dmesg.txt", "kern.log.1", "console-ramoops-0", "messages"}) {
    Fixture f(std::nullopt, "node-0017", name);
    ASSERT_TRUE(f.parse("NVRM: Xid (PCI:0000:dc:00): 79, GPU has fallen off the bus."));
    EXPECT_EQ(f.rec.transport, kTransportKernel) << name;
  }
  Fixture app(std::nullopt, "node-0017", "train.log");
  ASSERT_TRUE(app.parse("NVRM: Xid (PCI:0000:dc:00): 79, GPU has fallen off the bus."));
  EXPECT_EQ(app.rec.transport, kTransportApp);
  FormatOptions strict;
  strict.strict_transport = true;
  Fixture st(std::nullopt, "node-0017", "dmesg.txt", strict);
  ASSERT_TRUE(st.parse("NVRM: Xid (PCI:0000:dc:00): 79, GPU has fallen off the bus."));
  EXPECT_EQ(st.rec.transport, kTransportApp);
}

// nvidia-bug-report.log: the section rule and header are skipped; the "dmesg:"
// section holds kernel lines, the nvidia-smi section does not (section layout
// of nvidia-bug-report.sh: a rule of underscores, a blank line, the header).
TEST(FormatSequences, BugReportSectionsSetTheTransport) {
  Fixture f(std::nullopt, "node-0017", "nvidia-bug-report.log");
  const std::string rule(44, '_');
  EXPECT_FALSE(f.parse(rule));
  EXPECT_FALSE(f.parse(""));
  EXPECT_FALSE(f.parse("dmesg:"));
  ASSERT_TRUE(f.parse("NVRM: Xid (PCI:0000:dc:00): 79, GPU has fallen off the bus."));
  EXPECT_EQ(f.rec.transport, kTransportKernel);
  EXPECT_FALSE(f.parse(rule));
  EXPECT_FALSE(f.parse("/usr/bin/nvidia-smi --query"));
  ASSERT_TRUE(f.parse("Unable to determine the device handle for GPU 0000:1C:00.0: Unknown Error"));
  EXPECT_EQ(f.rec.transport, kTransportApp);
  // the same rule in another file is a line like any other
  Fixture g;
  EXPECT_TRUE(g.parse(rule));
}

// Capture headers date the lines after them: nvidia-smi -q's "Timestamp"
// (shape of a real run: markbucklin/markbucklin:matlab-code-merge/codemess/
// matlab/ign/queryGpu.m) and the "Date:"/"uname:" prologue that
// nvidia-bug-report.sh writes.
TEST(FormatSequences, CaptureHeadersDateTheLinesAfterThem) {
  Fixture f(std::nullopt, "node-0017", "nvidia-smi-q.txt");
  ASSERT_TRUE(f.parse("Timestamp                           : Fri Dec 09 02:27:00 2016"));
  EXPECT_EQ(format_time_us(*f.rec.time.wall), "2016-12-09T02:27:00.000000Z");
  ASSERT_TRUE(f.parse("    Product Name                    : GeForce GTX TITAN Z"));
  EXPECT_TRUE(f.rec.time_inherited);
  EXPECT_TRUE(f.rec.time.inherited);  // carried to the event: a lower bound
  ASSERT_TRUE(f.parse("Dec  9 03:00:00 node-0017 kernel: a"));  // year-less: the header's year
  EXPECT_EQ(format_time_us(*f.rec.time.wall), "2016-12-09T03:00:00.000000Z");
  EXPECT_FALSE(f.rec.time.inherited);  // a line with its own time, after one without

  Fixture b(std::nullopt, "in", "nvidia-bug-report.log");
  ASSERT_TRUE(b.parse("Date: Thu Oct 27 08:50:11 PM -03 2022"));
  EXPECT_EQ(format_time_us(*b.rec.time.wall), "2022-10-27T23:50:11.000000Z");
  ASSERT_TRUE(
      b.parse("uname: Linux gpu-node-31 6.0.1-arch2-1 #1 SMP PREEMPT_DYNAMIC x86_64 GNU/Linux"));
  EXPECT_EQ(b.rec.host, "gpu-node-31");
  ASSERT_TRUE(b.parse("Oct 27 20:49:00 gpu-node-31 kernel: b"));
  EXPECT_EQ(format_time_us(*b.rec.time.wall), "2022-10-27T20:49:00.000000Z");
}

// Near-misses: a "Timestamp" without a full date, a "Date:" line outside a
// bug report, a date without a year.
TEST(FormatSequences, CaptureHeaderNearMisses) {
  Fixture f;
  ASSERT_TRUE(f.parse("Timestamp : soon"));
  EXPECT_FALSE(f.rec.time.wall.has_value());
  ASSERT_TRUE(f.parse("Timestamp : Fri Dec 09 02:27:00"));
  EXPECT_FALSE(f.rec.time.wall.has_value());
  ASSERT_TRUE(f.parse("Date: Thu Oct 27 08:50:11 PM -03 2022"));
  EXPECT_FALSE(f.rec.time.wall.has_value());
  ASSERT_TRUE(f.parse("uname: Linux gpu-node-31 6.0.1"));
  EXPECT_EQ(f.rec.host, "node-0017");
}

TEST(FormatSequences, YearRollsOverInOneFile) {
  Fixture f(2024);
  ASSERT_TRUE(f.parse("Dec 31 23:59:59 node-0017 kernel: a"));
  EXPECT_EQ(format_time_us(*f.rec.time.wall), "2024-12-31T23:59:59.000000Z");
  ASSERT_TRUE(f.parse("Jan  1 00:00:01 node-0017 kernel: b"));
  EXPECT_EQ(format_time_us(*f.rec.time.wall), "2025-01-01T00:00:01.000000Z");
}

TEST(FormatSequences, YearlessWithoutAnyYearIsFlagged) {
  Fixture f;
  ASSERT_TRUE(f.parse("Mar  5 10:11:12 node-0017 kernel: a"));
  EXPECT_TRUE(f.rec.time_implausible);
  EXPECT_EQ(f.stats.implausible_time, 1u);
  EXPECT_FALSE(f.stats.notes.empty());
}

TEST(FormatSequences, ImplausibleTimesAreKeptAndCounted) {
  Fixture f(2024);
  ASSERT_TRUE(f.parse("1999-12-31T23:59:59Z rtc lost power"));
  EXPECT_TRUE(f.rec.time_implausible);
  EXPECT_EQ(format_time_us(*f.rec.time.wall), "1999-12-31T23:59:59.000000Z");
  ASSERT_TRUE(f.parse("2031-01-01T00:00:00Z far future"));
  EXPECT_TRUE(f.rec.time_implausible);
  ASSERT_TRUE(f.parse("2024-06-01T00:00:00Z fine"));
  EXPECT_FALSE(f.rec.time_implausible);
  EXPECT_EQ(f.stats.implausible_time, 2u);
}

TEST(FormatSequences, TimesPastYear9999AreNotKept) {
  Fixture f(2024);
  ASSERT_TRUE(f.parse("2024-06-01T00:00:00Z fine"));
  // Four digits, but the offset takes it into year 10000: the line keeps the
  // previous line's time, as a line without one does, and is counted.
  ASSERT_TRUE(f.parse("9999-12-31T23:59:59-05:00 beyond"));
  EXPECT_TRUE(f.rec.time_inherited);
  EXPECT_EQ(format_time_us(*f.rec.time.wall), "2024-06-01T00:00:00.000000Z");
  EXPECT_EQ(f.stats.implausible_time, 1u);
}

TEST(FormatSequences, GarbageNulInvalidUtf8AndHugeLinesAreKeptAndCounted) {
  FormatStats stats;
  FormatOptions opts;
  opts.max_line_bytes = 64;
  LineParser p(topo(), opts, &stats);
  FileContext ctx;
  ctx.host_dir = "node-0017";
  ctx.source = FileSource::system_log;  // raw dmesg lines date the untimed one
  p.begin_file(ctx);
  LogRecord rec;
  std::string nul("[1.000000] a\0b", 14);
  ASSERT_TRUE(p.parse(nul, 1, &rec));
  EXPECT_EQ(rec.msg.size(), 3u);
  ASSERT_TRUE(p.parse("[2.000000] caf\xc3\xa9 ok", 2, &rec));  // valid UTF-8
  ASSERT_TRUE(p.parse("[3.000000] bad \xff\xfe bytes \xc3", 3, &rec));
  std::string huge(1000, 'x');
  ASSERT_TRUE(p.parse(huge, 4, &rec));
  EXPECT_EQ(rec.raw.size(), 64u);
  EXPECT_TRUE(rec.time_inherited);
  EXPECT_FALSE(p.parse("", 5, &rec));
  EXPECT_FALSE(p.parse("   \r", 6, &rec));
  ASSERT_TRUE(p.parse("\x01\x02\x03 {{{ [[[ <<< 2024-99-99", 7, &rec));
  EXPECT_EQ(stats.nul_bytes, 1u);
  EXPECT_EQ(stats.invalid_utf8, 1u);
  EXPECT_EQ(stats.truncated_long_lines, 1u);
  EXPECT_EQ(stats.lines, 7u);
}

TEST(FormatSequences, UnknownSyslogHostOnKnownDirectoryStaysOnDirectory) {
  Fixture f(2024);
  ASSERT_TRUE(f.parse("Mar  5 10:11:12 gpu-17-alias kernel: a"));
  EXPECT_EQ(f.rec.host, "node-0017");
  EXPECT_TRUE(f.rec.host_known);
  ASSERT_TRUE(f.parse("Mar  5 10:11:12 node-0018 kernel: b"));
  EXPECT_EQ(f.rec.host, "node-0018.cluster.local");
  EXPECT_EQ(f.rec.time.clock, "node-0018.cluster.local/kernel");
}

TEST(FormatSequences, CentralSyslogOnUnknownDirectoryKeepsUnknownHosts) {
  Fixture f(2024, "syslog-server");
  ASSERT_TRUE(f.parse("Mar  5 10:11:12 node-0420 kernel: a"));
  EXPECT_EQ(f.rec.host, "node-0420");
  EXPECT_FALSE(f.rec.host_known);
  EXPECT_GE(f.stats.unknown_hosts, 1u);
}

}  // namespace
}  // namespace reflex::format_test
