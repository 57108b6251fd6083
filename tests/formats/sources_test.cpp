// Who speaks for what (docs/formats.md): a kernel-shaped line counts as a
// kernel line only in a kernel capture or a system log, by name or
// declaration; a line in a known host's file naming another known host is
// refused unless the file is a central collector; sources.json declares.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "format_rows.h"
#include "reflex/log_format.h"
#include "reflex/sources.h"

namespace reflex::format_test {
namespace {

constexpr std::string_view kDmesgXid =
    "[ 9662.910385] NVRM: Xid (PCI:0000:3a:00): 79, GPU has fallen off the bus.";

struct File {
  FormatStats stats;
  LineParser p;
  LogRecord rec;
  uint64_t n = 0;
  explicit File(const std::string& name, std::string dir = "node-0017",
                FileSource source = FileSource::by_name, bool collector = false,
                bool own_host = false)
      : p{topo(), FormatOptions{}, &stats} {
    FileContext ctx;
    ctx.host_dir = std::move(dir);
    ctx.file = "hosts/" + ctx.host_dir + "/" + name;
    ctx.source = source;
    ctx.collector = collector;
    ctx.own_host = own_host;
    p.begin_file(ctx);
  }
  LogRecord& parse(std::string_view s) {
    EXPECT_TRUE(p.parse(s, ++n, &rec)) << s;
    return rec;
  }
};

TEST(Sources, KernelShapedLinesInJobOutputAreRefused) {
  for (const char* name : {"train.log", "rank3.out", "stdin", "alerts.log", "slurm-42.out"}) {
    File f(name);
    EXPECT_EQ(f.parse(kDmesgXid).refusal, Refusal::kernel_claim) << name;
    EXPECT_EQ(f.parse("Mar  5 10:41:03 node-0017 kernel: NVRM: Xid (PCI:0000:3a:00): 79").refusal,
              Refusal::kernel_claim)
        << name;
    // an application line is what job output is for
    EXPECT_EQ(f.parse("2026-03-05 10:41:03 [INFO] step 4181 | loss 1.981").refusal, Refusal::none);
  }
}

TEST(Sources, KernelCapturesAndSystemLogsSpeakForTheKernel) {
  for (const char* name : {"kern.log", "dmesg-T.txt", "talos-kern.log", "messages", "console.log",
                           "syslog", "syslog-xid.txt", "journal.txt", "nvidia-bug-report.log"}) {
    File f(name);
    const LogRecord& r = f.parse(kDmesgXid);
    EXPECT_EQ(r.refusal, Refusal::none) << name;
    EXPECT_EQ(r.transport, kTransportKernel) << name;
  }
  // A system log's untagged daemon line is not the kernel's; a capture's is.
  File sys("syslog");
  EXPECT_EQ(sys.parse("Mar  5 10:41:03 node-0017 sshd[12]: Accepted key").transport,
            kTransportSyslog);
  File cap("kern.log");
  EXPECT_EQ(cap.parse("NVRM: Xid (PCI:0000:3a:00): 79").transport, kTransportKernel);
}

TEST(Sources, DeclarationsBeatTheName) {
  File declared("train.log", "node-0017", FileSource::kernel_capture);
  EXPECT_EQ(declared.parse("NVRM: Xid (PCI:0000:3a:00): 79").transport, kTransportKernel);
  EXPECT_EQ(declared.parse(kDmesgXid).refusal, Refusal::none);
  File job("syslog", "node-0017", FileSource::job_output);
  EXPECT_EQ(job.parse(kDmesgXid).refusal, Refusal::kernel_claim);
  File caller("train.log", "node-0017", FileSource::caller);
  EXPECT_EQ(caller.parse(kDmesgXid).refusal, Refusal::none);
}

// A refused line dates no later line: a forged time cannot move the job's.
TEST(Sources, ARefusedLineDatesNothing) {
  File f("train.log");
  f.parse(kDmesgXid);
  const LogRecord& next = f.parse("some untimed line");
  EXPECT_FALSE(next.time.mono.has_value());
  EXPECT_EQ(next.transport, kTransportApp);
}

TEST(Sources, AHostSpeaksForItself) {
  // topo() knows node-0017 and node-0018.
  const std::string_view other = "Mar  5 10:41:03 node-0018 sshd[1]: Accepted key";
  File own("syslog");
  const LogRecord& r = own.parse(other);
  EXPECT_EQ(r.refusal, Refusal::foreign_host);
  EXPECT_EQ(r.host, "node-0018.cluster.local");  // the topology's name
  EXPECT_EQ(own.parse("Mar  5 10:41:03 node-0017 sshd[1]: Accepted key").refusal, Refusal::none);
  File collector("syslog", "node-0017", FileSource::by_name, /*collector=*/true);
  EXPECT_EQ(collector.parse(other).refusal, Refusal::none);
  EXPECT_EQ(collector.rec.host, "node-0018.cluster.local");
  // A directory the topology does not know: the field wins (interfaces.md §3).
  File loghost("syslog", "loghost");
  EXPECT_EQ(loghost.parse(other).refusal, Refusal::none);
  EXPECT_EQ(loghost.rec.host, "node-0018.cluster.local");
  // An agent's own host, even unknown to the topology, speaks for itself:
  // a known other host is refused, an unknown name is its own alias.
  File agent("syslog", "gpu-new-01", FileSource::by_name, false, /*own_host=*/true);
  EXPECT_EQ(agent.parse(other).refusal, Refusal::foreign_host);
  const LogRecord& alias = agent.parse("Mar  5 10:41:03 ip-10-0-0-5 sshd[1]: Accepted key");
  EXPECT_EQ(alias.refusal, Refusal::none);
  EXPECT_EQ(alias.host, "gpu-new-01");
}

TEST(Sources, DeclarationsFileAndGlobs) {
  SourceDeclarations d;
  std::string err;
  ASSERT_TRUE(parse_source_declarations(
      R"({"kernel_capture": ["hosts/*/console.txt", "alerts.log"], "collector": ["remote.log"]})",
      "sources.json", &d, &err))
      << err;
  FileContext ctx;
  d.apply("hosts/node-0017/console.txt", &ctx);
  EXPECT_EQ(ctx.source, FileSource::kernel_capture);
  FileContext by_name;
  d.apply("hosts/node-0018/alerts.log", &by_name);
  EXPECT_EQ(by_name.source, FileSource::kernel_capture);
  FileContext coll;
  d.apply("hosts/loghost/remote.log", &coll);
  EXPECT_TRUE(coll.collector);
  EXPECT_EQ(coll.source, FileSource::by_name);
  // What sources.json holds reads back the same.
  SourceDeclarations again;
  ASSERT_TRUE(parse_source_declarations(d.to_json(), "x", &again, &err)) << err;
  EXPECT_EQ(again.kernel_capture, d.kernel_capture);
  EXPECT_EQ(again.collector, d.collector);
  for (const char* bad : {R"({"kernel": ["x"]})", R"({"collector": "x"})", R"({"collector": [""]})",
                          R"({"collector": ["a"], "collector": ["b"]})", "[1]", "{"}) {
    SourceDeclarations out;
    EXPECT_FALSE(parse_source_declarations(bad, "sources.json", &out, &err)) << bad;
    EXPECT_NE(err.find("sources.json"), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace reflex::format_test
