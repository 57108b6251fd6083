// The Ingestor facade end to end through the real log-format parsers.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>

#include "fixture.h"
#include "reflex/ingest.h"

namespace reflex {
namespace {

namespace fs = std::filesystem;

class IngestorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kb_ = test::test_kb();
    topo_ = test::test_topology();
    ASSERT_TRUE(topo_);
    dir_ = fs::temp_directory_path() /
           ("reflex-ingest-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Ingestor> make(IngestOptions o = {}) {
    auto ing = std::make_unique<Ingestor>(kb_, *topo_, o);
    ing->set_sink([this](Event&& e) { events_.push_back(std::move(e)); });
    return ing;
  }
  // events_ anew from the bundle in dir_, per line or in chunk mode.
  std::unique_ptr<Ingestor> read_dir(bool chunk, IngestOptions o = {}) {
    events_.clear();
    o.chunk_mode = chunk;
    auto ing = make(o);
    std::string err;
    EXPECT_TRUE(ing->read_bundle(dir_.string(), &err)) << err;
    ing->finish();
    return ing;
  }
  std::string write(const std::string& rel, const std::string& text) {
    fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::vector<const Event*> named(const std::string& n) const {
    std::vector<const Event*> v;
    for (auto& e : events_)
      if (e.name == n) v.push_back(&e);
    return v;
  }

  KnowledgeBase kb_;
  std::unique_ptr<Topology> topo_;
  fs::path dir_;
  std::vector<Event> events_;
};

// A publicly posted Xid 79 line as dmesg prints it (raw).
const char* kXid79 = "[155044.078590] NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.";

TEST_F(IngestorTest, KernelXidLocatesTheGpu) {
  auto ing = make();
  ing->feed_line("node-0017", kTransportKernel, kXid79, "hosts/node-0017/dmesg", 7);
  ing->finish();
  auto ev = named("xid79_fallen_off_bus");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0]->device, "node-0017/gpu0");
  EXPECT_EQ(ev[0]->host, "node-0017");
  EXPECT_EQ(ev[0]->evidence, "hosts/node-0017/dmesg:7");
  EXPECT_EQ(ev[0]->line, kXid79);
  EXPECT_EQ(*ev[0]->field("bdf"), "0000:18:00.0");
  EXPECT_EQ(*ev[0]->field("xid"), "79");
  EXPECT_EQ(ev[0]->transport, kTransportKernel);
  EXPECT_FALSE(ev[0]->placeholder_device);
  EXPECT_EQ(ing->stats().per_signature_hits.at("xid79_fallen_off_bus"), 1u);
  EXPECT_EQ(events_.size(), 1u);  // xid13/95/119 share the pattern but refuse by `when`
}

TEST_F(IngestorTest, UserTransportCannotFireAKernelSignature) {
  // A `logger`-style line claiming an Xid (invented spoof of the Xid 79 line).
  auto ing = make();
  ing->feed_line("node-0017", kTransportSyslog,
                 "NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.", "syslog", 1);
  ing->feed_line("node-0017", kTransportApp,
                 "NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.", "app.log", 1);
  ing->finish();
  EXPECT_TRUE(events_.empty());
  EXPECT_GE(ing->stats().transport_mismatch, 2u);
}

TEST_F(IngestorTest, SyslogFileWithLoggerSpoof) {
  // RFC 3164 lines: a real kernel-tagged line and a `logger -t root` spoof.
  std::string p = write("hosts/node-0017/syslog",
                        "Mar  5 10:11:12 node-0017 root: NVRM: Xid (PCI:0000:18:00): 79, GPU has "
                        "fallen off the bus.\n"
                        "Mar  5 10:11:13 node-0017 kernel: NVRM: Xid (PCI:0000:9b:00): 79, GPU "
                        "has fallen off the bus.\n");
  {
    auto ing = make();
    ing->read_file(p, "hosts/node-0017/syslog", "node-0017");
    ing->finish();
    auto ev = named("xid79_fallen_off_bus");
    ASSERT_EQ(ev.size(), 1u);
    EXPECT_EQ(ev[0]->device, "node-0017/gpu3");
    EXPECT_EQ(ev[0]->evidence, "hosts/node-0017/syslog:2");
  }
  events_.clear();
  {
    IngestOptions o;
    o.strict_transport = true;  // `kernel:` in syslog text is forgeable: refuse it
    auto ing = make(o);
    ing->read_file(p, "hosts/node-0017/syslog", "node-0017");
    ing->finish();
    EXPECT_TRUE(named("xid79_fallen_off_bus").empty());
  }
}

TEST_F(IngestorTest, MultiLineFallenOffTheBusIsJoined) {
  // NVIDIA/NVSentinel's multi-line fallen-off message fixture, verbatim.
  std::string p = write("hosts/node-0017/dmesg",
                        "[ 1843.308145] NVRM: The NVIDIA GPU 0000:9b:00.0\n"
                        "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
                        "               NVRM: fallen off the bus and is not responding to "
                        "commands.\n"
                        "[ 1843.400000] unrelated line\n");
  auto ing = make();
  ing->read_file(p, "hosts/node-0017/dmesg", "node-0017");
  ing->finish();
  auto ev = named("gpu_fallen_off_bus_multiline");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0]->device, "node-0017/gpu3");
  EXPECT_EQ(*ev[0]->field("pci_id"), "10de:26b5");
  EXPECT_EQ(ev[0]->evidence, "hosts/node-0017/dmesg:1");
  EXPECT_EQ(std::count(ev[0]->line.begin(), ev[0]->line.end(), '\n'), 2);
  EXPECT_FALSE(ev[0]->time.wall.has_value());  // raw dmesg, no boot_time
  ASSERT_TRUE(ev[0]->time.mono.has_value());
  EXPECT_NEAR(*ev[0]->time.mono, 1843.308145, 1e-6);
}

TEST_F(IngestorTest, MultiLineGivesUpAfterTheLineLimit) {
  std::string text = "[ 1843.308145] NVRM: The NVIDIA GPU 0000:9b:00.0\n";
  for (int i = 0; i < 6; ++i) text += "[ 1843.30900" + std::to_string(i) + "] other\n";
  text += "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n";
  text += "               NVRM: fallen off the bus and is not responding to commands.\n";
  std::string p = write("hosts/node-0017/dmesg", text);
  auto ing = make();
  ing->read_file(p, "hosts/node-0017/dmesg", "node-0017");
  ing->finish();
  EXPECT_TRUE(named("gpu_fallen_off_bus_multiline").empty());
  EXPECT_EQ(ing->stats().incomplete_multiline, 1u);
}

TEST_F(IngestorTest, UnknownDevicesAndHostsArePlaceholdersNotDrops) {
  auto ing = make();
  ing->feed_line("node-0017", kTransportKernel,
                 "[10.0] NVRM: Xid (PCI:0000:aa:00): 79, GPU has fallen off the bus.", "k", 1);
  ing->feed_line("ghost-3", kTransportKernel, kXid79, "k2", 1);
  ing->finish();
  auto ev = named("xid79_fallen_off_bus");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0]->device, "node-0017/gpu@0000:aa:00.0");
  EXPECT_TRUE(ev[0]->placeholder_device);
  EXPECT_EQ(ev[1]->device, "ghost-3/gpu@0000:18:00.0");
  EXPECT_TRUE(ev[1]->placeholder_device);
  auto st = ing->stats();
  EXPECT_EQ(st.placeholder_devices, 2u);
  int placeholder_notes = 0;
  for (auto& n : st.notes) placeholder_notes += n.find("placeholder") != std::string::npos;
  EXPECT_EQ(placeholder_notes, 2);
}

TEST_F(IngestorTest, DedupFoldsAnXid95StormIntoOneEvent) {
  std::string text;
  // NVRM-style Xid 95 lines, `dmesg --time-format iso` prefix, one per 100 ms.
  for (int i = 0; i < 500; ++i) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "2026-03-05T10:11:%02d,%06d+00:00 NVRM: Xid (PCI:0000:18:00): 95, pid=1, "
                  "Uncontained: FBHUB. RST: Yes, D-RST: No\n",
                  (i / 10) % 60, (i % 10) * 100000);
    text += buf;
  }
  std::string p = write("hosts/node-0017/kern.log", text);
  auto ing = make();
  ing->read_file(p, "hosts/node-0017/kern.log", "node-0017");
  ing->finish();
  auto ev = named("xid95_uncontained_ecc");
  ASSERT_EQ(ev.size(), 1u) << "50 s of lines fold into one 60 s window";
  EXPECT_EQ(ev[0]->count, 500u);
  ASSERT_TRUE(ev[0]->first && ev[0]->last);
  EXPECT_EQ(*ev[0]->last - *ev[0]->first, 49900000);
  EXPECT_EQ(ing->stats().folded_by_dedup, 499u);
}

TEST_F(IngestorTest, GarbageIsCountedNotFatal) {
  std::string text = "plain garbage\n";
  text += std::string("NUL\0byte line", 13) + "\n";
  text += "invalid utf8 \xff\xfe\xc3\n";
  text += std::string(10 << 20, 'x') + "\n";  // a 10 MB line
  text += std::string(kXid79) + "\n";         // still ingests what follows
  std::string p = write("hosts/node-0017/kern.log", text);
  IngestOptions o;
  auto ing = make(o);
  ing->read_file(p, "hosts/node-0017/kern.log", "node-0017");
  ing->feed_envelope(R"({"host": "node-0017", "source": "kernel", "msg": "NVRM: Xid (PCI:00)");
  ing->feed_envelope("not json at all");
  ing->feed_envelope(R"({"host": "node-0017"})");
  ing->feed_envelope(
      R"({"host": "node-0017", "ts": "2026-03-05T10:11:12.345678Z", "source": "kernel", "msg": "NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus."})");
  ing->finish();
  auto st = ing->stats();
  EXPECT_GE(st.truncated_long_lines, 1u);
  EXPECT_GE(st.skipped_invalid_json, 2u);
  EXPECT_GE(st.skipped_no_msg + st.skipped_invalid_json, 3u);
  auto ev = named("xid79_fallen_off_bus");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1]->transport, kTransportKernel);
  ASSERT_TRUE(ev[1]->time.wall.has_value());
}

TEST_F(IngestorTest, ReadBundleWalksHosts) {
  write("hosts/node-0017/kern.log", std::string(kXid79) + "\n");
  write("hosts/node-0018/train.log",
        "[rank2]:[E603 17:48:01.005271823 ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=2398459, OpType=ALLREDUCE, "
        "NumelIn=8652160, NumelOut=8652160, Timeout(ms)=1800000) ran for 1800068 milliseconds "
        "before timing out.\n");
  auto ing = make();
  std::string err;
  ASSERT_TRUE(ing->read_bundle(dir_.string(), &err)) << err;
  ing->finish();
  ASSERT_EQ(named("xid79_fallen_off_bus").size(), 1u);
  auto wd = named("nccl_watchdog_timeout");
  ASSERT_EQ(wd.size(), 1u);
  EXPECT_EQ(wd[0]->device, "job/job-42/rank2");
  EXPECT_EQ(wd[0]->evidence, "hosts/node-0018/train.log:1");
  std::string missing;
  EXPECT_FALSE(make()->read_bundle((dir_ / "nope").string(), &missing));
  EXPECT_FALSE(missing.empty());
}

// A listing made ahead (--threads: on another thread while the KB loads)
// reads what the directory would, with one thread or two, and a listing of
// no bundle fails read_bundle with the directory's own message.
TEST_F(IngestorTest, ReadBundleFromAListingMadeAhead) {
  write("hosts/node-0017/kern.log", std::string(kXid79) + "\n");
  write("hosts/node-0017/boot_time", "not a time");  // a listing note
  write("hosts/node-0018/kern.log", std::string(kXid79) + "\n" + kXid79 + "\n");
  auto read = [&](bool ahead, unsigned threads) {
    events_.clear();
    IngestOptions o;
    o.threads = threads;
    auto ing = make(o);
    std::string err;
    EXPECT_TRUE(ahead ? ing->read_bundle(BundleListing::of(dir_.string()), &err)
                      : ing->read_bundle(dir_.string(), &err))
        << err;
    ing->finish();
    std::vector<std::string> got;
    for (const Event& e : events_) got.push_back(e.name + " " + e.device + " " + e.evidence);
    for (const std::string& n : ing->stats_snapshot().notes) got.push_back("note " + n);
    return got;
  };
  const auto by_dir = read(false, 1);
  ASSERT_EQ(std::count_if(by_dir.begin(), by_dir.end(),
                          [](const std::string& g) {
                            return g.find("boot_time is not an ISO-8601") != g.npos;
                          }),
            1)
      << ::testing::PrintToString(by_dir);
  EXPECT_EQ(read(true, 1), by_dir);
  EXPECT_EQ(read(true, 2), by_dir);
  EXPECT_EQ(read(false, 2), by_dir);

  const BundleListing none = BundleListing::of((dir_ / "nope").string());
  EXPECT_FALSE(none.ok);
  for (unsigned threads : {1u, 2u}) {
    IngestOptions o;
    o.threads = threads;
    std::string by_dir_err, ahead_err;
    EXPECT_FALSE(make(o)->read_bundle((dir_ / "nope").string(), &by_dir_err));
    EXPECT_FALSE(make(o)->read_bundle(none, &ahead_err));
    EXPECT_EQ(ahead_err, by_dir_err);
    EXPECT_NE(ahead_err.find("no such bundle directory"), std::string::npos) << ahead_err;
  }
}

}  // namespace
}  // namespace reflex

// ---- allocation on the hot path ----
// Counting allocator for this test binary: a line that matches nothing must
// not allocate inside the Ingestor (format parsing is measured by its owner).
#include "counting_new.h"

namespace reflex {
namespace {

TEST(IngestorAlloc, NonMatchingRecordsAllocateNothing) {
  KnowledgeBase kb = test::test_kb();
  auto topo = test::test_topology();
  ASSERT_TRUE(topo);
  Ingestor ing(kb, *topo);
  uint64_t events = 0;
  ing.set_sink([&](Event&&) { ++events; });
  const char* lines[] = {
      "systemd[1]: Started Session 42 of user root.",
      "node-0017:1234:5678 [3] NCCL INFO Channel 00/32 : 0[0] -> 1[1] via P2P/IPC",
      // near miss: an Xid-looking line without the code (invented)
      "NVRM: Xid (PCI:0000:18:00) happened",
  };
  LogRecord rec;
  rec.host = "node-0017";
  rec.transport = kTransportKernel;
  rec.file = "hosts/node-0017/kern.log";
  rec.time.wall = 1772705472000000;
  for (auto* l : lines) {  // warm up
    rec.msg = rec.raw = l;
    ing.feed_record(rec);
  }
  uint64_t before = g_allocs.load();
  for (int i = 0; i < 10000; ++i) {
    rec.msg = rec.raw = lines[i % 3];
    rec.line_no = static_cast<uint64_t>(i);
    ing.feed_record(rec);
  }
  EXPECT_EQ(g_allocs.load() - before, 0u);
  // ...and a matching one does produce an event (the test can fail both ways).
  rec.msg = rec.raw = "NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.";
  ing.feed_record(rec);
  ing.finish();
  EXPECT_EQ(events, 1u);
}

// Chunk mode: a line no pattern can match costs the block scan and the
// newline count, nothing else - no allocation per line. The same file ten
// times longer must read with (almost) the same number of allocations.
TEST_F(IngestorTest, BlockModeAllocatesNothingPerNonMatchingLine) {
  auto body = [](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) {
      char ts[64];
      std::snprintf(ts, sizeof ts, "2026-03-05T10:%02d:%02d,%06d+00:00 ", (i / 600) % 60,
                    (i / 10) % 60, (i % 10) * 100000);
      // invented benign chatter
      s +=
          std::string(ts) + "systemd[1]: Started Session " + std::to_string(i) + " of user root.\n";
    }
    // An Xid 79 line, so the test also sees the one line that matches
    s += "2026-03-05T11:00:00,000000+00:00 NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off "
         "the bus.\n";
    return s;
  };
  auto allocs_for = [&](int n) {
    std::string text = body(n);
    write("hosts/node-0017/kern.log", text);
    events_.clear();
    auto ing = make();
    std::string err;
    uint64_t before = g_allocs.load();
    EXPECT_TRUE(ing->read_bundle(dir_.string(), &err)) << err;
    uint64_t used = g_allocs.load() - before;
    ing->finish();
    EXPECT_EQ(named("xid79_fallen_off_bus").size(), 1u) << n << " lines";
    EXPECT_EQ(ing->stats().lines, static_cast<uint64_t>(n) + 1);
    EXPECT_EQ(ing->stats().bytes, text.size());
    return used;
  };
  uint64_t small = allocs_for(20000);   // ~1.6 MB: two read buffers
  uint64_t large = allocs_for(200000);  // ~16 MB: sixteen
  EXPECT_LE(large, small + 64) << "allocations grew with the number of non-matching lines";
}

// Signatures sharing one pattern share one typed copy of the captures only
// when their field declarations agree: a string field must see the raw text
// even right after a hex field of another signature normalised it.
TEST(IngestorTyping, SharedPatternWithDifferentFieldTypes) {
  KnowledgeBase kb;
  kb.meta.name = "typing";
  auto sig = [](const std::string& name, FieldType t, const std::string& value) {
    Signature s;
    s.name = name;
    s.kind = DeviceKind::host;
    s.sources = kTransportApp;
    s.patterns = {"code=(?P<code>\\w+)"};
    s.fields = {{"code", t}};
    s.when = test::leaf(Condition::Op::eq, "code", {value});
    return s;
  };
  kb.signatures.push_back(sig("as_hex", FieldType::hex, "0x1f"));
  kb.signatures.push_back(sig("as_string", FieldType::string, "0X1F"));
  kb.signatures.push_back(sig("as_hex_again", FieldType::hex, "0x1f"));
  kb.signatures.push_back(sig("as_string_lower", FieldType::string, "0x1f"));
  auto topo = test::test_topology();
  ASSERT_TRUE(topo);
  Ingestor ing(kb, *topo);
  std::vector<std::string> names;
  ing.set_sink([&](Event&& e) { names.push_back(e.name + ":" + *e.field("code")); });
  LogRecord rec;
  rec.host = "node-0017";
  rec.transport = kTransportApp;
  rec.time.wall = 1772705472000000;
  rec.msg = rec.raw = "invented line code=0X1F";
  ing.feed_record(rec);
  ing.finish();
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names,
            (std::vector<std::string>{"as_hex:0x1f", "as_hex_again:0x1f", "as_string:0X1F"}));
  EXPECT_EQ(ing.stats().rejected_by_when, 1u);  // as_string_lower
}

}  // namespace
}  // namespace reflex

#include <malloc.h>

namespace reflex {
namespace {

TEST(IngestorStorm, MemoryStaysBoundedUnderAnXid95Storm) {
  // NVSentinel#1120: hundreds of thousands of Xid 95 lines. The dedup state
  // is per (signature, device); the heap must not grow with the line count.
  KnowledgeBase kb = test::test_kb();
  auto topo = test::test_topology();
  ASSERT_TRUE(topo);
  Ingestor ing(kb, *topo);
  uint64_t events = 0, lines_in_events = 0;
  ing.set_sink([&](Event&& e) {
    ++events;
    lines_in_events += e.count;
  });
  const char* gpus[] = {"18:00", "9b:00"};
  std::string msg[2];
  for (int g = 0; g < 2; ++g)
    msg[g] = std::string("NVRM: Xid (PCI:0000:") + gpus[g] +
             "): 95, pid=1, name=python, Uncontained: FBHUB. RST: Yes, D-RST: No";
  LogRecord rec;
  rec.host = "node-0017";
  rec.transport = kTransportKernel;
  rec.file = "hosts/node-0017/kern.log";
  const TimeUs t0 = 1772705472000000;
  auto feed = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      rec.msg = rec.raw = msg[i % 2];
      rec.time.wall = t0 + static_cast<TimeUs>(i) * 1000;  // 1000 lines/s
      rec.line_no = static_cast<uint64_t>(i + 1);
      ing.feed_record(rec);
    }
  };
  constexpr int kHalf = 40000;
  feed(0, kHalf);
  size_t heap_mid = mallinfo2().uordblks;
  feed(kHalf, 2 * kHalf);
  size_t heap_end = mallinfo2().uordblks;
  EXPECT_LT(heap_end, heap_mid + (256u << 10)) << "heap grew with the storm";
  ing.finish();
  // Every line is accounted for in some folded event, and 80 s of storm on
  // 2 GPUs with a 60 s dedup window gives a handful of events, not 80,000.
  EXPECT_EQ(lines_in_events, static_cast<uint64_t>(2 * kHalf));
  EXPECT_LE(events, 4u);
  EXPECT_EQ(ing.stats().folded_by_dedup, 2u * kHalf - events);
}

}  // namespace
}  // namespace reflex

namespace reflex {
namespace {

// Chunk mode (only lines that can match are parsed) must give exactly the
// events of parsing every line: times inherited by untimed lines, multi-line
// joins, dedup folds and evidence line numbers included.
TEST_F(IngestorTest, ChunkModeEqualsPerLineMode) {
  std::string kern, train;
  for (int i = 0; i < 6000; ++i) {
    char ts[64];
    std::snprintf(ts, sizeof ts, "2026-03-05T10:%02d:%02d,%06d+00:00 ", (i / 600) % 60,
                  (i / 10) % 60, (i % 10) * 100000);
    if (i % 97 == 0) {
      kern += std::string(ts) + "NVRM: Xid (PCI:0000:18:00): 95, pid=1, Uncontained: FBHUB.\n";
    } else if (i % 333 == 0) {
      kern += std::string(ts) + "NVRM: Xid (PCI:0000:9b:00): 119, pid=2, Timeout after 6s\n";
    } else if (i == 4000) {  // NVSentinel's multi-line message, continuation lines untimed
      kern +=
          "[ 1843.308145] NVRM: The NVIDIA GPU 0000:9b:00.0\n"
          "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
          "               NVRM: fallen off the bus and is not responding to commands.\n";
    } else {
      kern += std::string(ts) + "systemd[1]: Started Session " + std::to_string(i) + ".\n";
    }
    // train.log: timed iteration lines, untimed NCCL lines, watchdog lines untimed.
    if (i % 3 == 0) {
      train += "2026-03-05 10:" + std::to_string(10 + (i / 600) % 50) + ":" +
               std::to_string(10 + (i / 20) % 30) + ",123 [INFO] iteration " + std::to_string(i) +
               "\n";
    } else if (i % 511 == 0) {
      train +=
          "node-0017:1234:5678 [1] [Rank 1] Watchdog caught collective operation timeout: "
          "WorkNCCL(SeqNum=" +
          std::to_string(i) + ", OpType=ALLREDUCE)\n";
    } else {
      train += "node-0017:1234:5678 [1] NCCL INFO Channel 00/32 : 0[0] -> 1[1] via P2P/IPC\n";
    }
  }
  write("hosts/node-0017/kern.log", kern);
  write("hosts/node-0017/train.log", train);
  auto run = [&](bool chunk) {
    auto ing = read_dir(chunk);
    std::vector<std::string> out;
    for (auto& e : events_) {
      std::string s = e.name + " " + e.device + " " + e.evidence + " " +
                      (e.time.wall ? std::to_string(*e.time.wall) : "-") + " " +
                      (e.time.mono ? std::to_string(*e.time.mono) : "-") + " " +
                      std::to_string(e.count) + " " + transport_name(e.transport);
      for (auto& [k, v] : e.fields) s += " " + k + "=" + v;
      out.push_back(s);
    }
    return std::make_pair(out, ing->stats_snapshot());
  };
  auto [per_line, st1] = run(false);
  auto [chunked, st2] = run(true);
  EXPECT_EQ(per_line, chunked);
  EXPECT_GT(per_line.size(), 20u);
  EXPECT_EQ(st1.lines, st2.lines);
  EXPECT_EQ(st1.bytes, st2.bytes);
  EXPECT_EQ(st1.per_signature_hits, st2.per_signature_hits);
  int multiline = 0;
  for (auto& s : chunked) multiline += s.rfind("gpu_fallen_off_bus_multiline", 0) == 0;
  EXPECT_EQ(multiline, 1);
}

// Chunk mode skips a line whose hits are all continuations (parts >= 1 of
// multi-line signatures) when no multi-line signature can be waiting for it.
// Here the last part of gpu_fallen_off_bus_multiline stands alone on many
// lines; two joins are whole, one with its parts 3 lines apart each (6 lines
// from its first: the window moves with each part it joins). Any skipped
// line that could have joined would lose an event or change a count.
TEST_F(IngestorTest, ChunkModeSkipsContinuationsNothingWaitsFor) {
  std::string dmesg;
  auto line = [&](int i, const char* msg) {
    char ts[32];
    std::snprintf(ts, sizeof ts, "[%5d.000000] ", 1000 + i);
    dmesg += std::string(ts) + msg + "\n";
  };
  const char* first = "NVRM: The NVIDIA GPU 0000:9b:00.0";
  const char* second = "NVRM: (PCI ID: 10de:26b5) installed in this system has";
  const char* last = "NVRM: fallen off the bus and is not responding to commands.";
  for (int i = 0; i < 3000; ++i) {
    if (i == 1000 || i == 2000) {
      line(i, first);
      line(i, second);
      line(i, last);
    } else if (i == 2500 || i == 2503 || i == 2506) {
      line(i, i == 2500 ? first : i == 2503 ? second : last);
    } else if (i % 7 == 0) {
      line(i, last);  // alone: no first part before it
    } else {
      line(i, "usb 1-1: new high-speed USB device number 2 using xhci_hcd");
    }
  }
  write("hosts/node-0017/dmesg", dmesg);
  auto run = [&](bool chunk) {
    auto ing = read_dir(chunk);
    std::vector<std::string> out;
    for (auto& e : events_) out.push_back(e.name + " " + e.evidence + " " + e.line);
    const IngestStats st = ing->stats_snapshot();
    out.push_back("incomplete " + std::to_string(st.incomplete_multiline) + " matched " +
                  std::to_string(st.matched_lines));
    return out;
  };
  const auto per_line = run(false);
  const auto chunked = run(true);
  EXPECT_EQ(per_line, chunked);
  EXPECT_EQ(named("gpu_fallen_off_bus_multiline").size(), 3u);
}

// Syslog lines (BSD times, no year) across a new year, with hits far apart:
// chunk mode parses a hit line without the line before it when both carry
// the same month (LineParser::parses_alone), and walks back when they do not.
// Here the hits stop in November (the host was down until December 31) and
// resume with the first January line, right after a December line: the year
// rollover (December, then January) is seen only through that line.
TEST_F(IngestorTest, ChunkModeSyslogYearRolloverEqualsPerLineMode) {
  // A dated line first gives the year-less lines their year.
  std::string kern = "2025-11-30T22:00:00+00:00 node-0017 systemd[1]: Starting.\n";
  for (int i = 0; i < 3000; ++i) {
    const char* day = i < 1500 ? "Nov 30" : i < 1800 ? "Dec 31" : "Jan  1";
    const int s = i % 1800;
    char ts[64];
    std::snprintf(ts, sizeof ts, "%s %02d:%02d:%02d node-0017 kernel: ", day, i < 1800 ? 23 : 0,
                  s / 60, s % 60);
    const bool hit = (i < 1500 && i % 97 == 0) || i >= 1800;
    if (hit)
      kern += std::string(ts) + "NVRM: Xid (PCI:0000:18:00): 95, pid=1, Uncontained: FBHUB.\n";
    else
      kern += std::string(ts) + "audit: type=1400 audit(" + std::to_string(i) + "): ok\n";
  }
  write("hosts/node-0017/kern.log", kern);
  auto run = [&](bool chunk) {
    read_dir(chunk);
    std::vector<std::string> out;
    for (auto& e : events_)
      out.push_back(e.evidence + " " + (e.time.wall ? format_time_us(*e.time.wall) : "-"));
    return out;
  };
  const auto per_line = run(false);
  const auto chunked = run(true);
  EXPECT_EQ(per_line, chunked);
  ASSERT_GT(per_line.size(), 2u);
  // The events after midnight are a year after those before it.
  EXPECT_EQ(per_line.front().substr(per_line.front().find(' ') + 6, 5), "11-30");
  EXPECT_EQ(per_line.back().substr(per_line.back().find(' ') + 6, 5), "01-01");
  EXPECT_EQ(std::stoi(per_line.back().substr(per_line.back().find(' ') + 1, 4)),
            std::stoi(per_line.front().substr(per_line.front().find(' ') + 1, 4)) + 1);
}

// Files larger than the bundle reader's 1 MB buffer: in chunk mode lines come
// as blocks straight from the read buffer, and lines that span two reads go
// through the per-line path. Events (evidence line numbers included) and
// counters must equal those of parsing every line.
TEST_F(IngestorTest, ChunkModeBlocksAcrossReadBuffers) {
  std::string kern;
  for (int i = 0; i < 40000; ++i) {
    char ts[64];
    std::snprintf(ts, sizeof ts, "2026-03-05T10:%02d:%02d,%06d+00:00 ", (i / 600) % 60,
                  (i / 10) % 60, (i % 10) * 100000);
    if (i % 89 == 0) {  // Xid line as in the test above (Xid 95 storm form)
      kern += std::string(ts) + "NVRM: Xid (PCI:0000:18:00): 95, pid=1, Uncontained: FBHUB.\n";
    } else {  // invented benign chatter of varying length
      kern += std::string(ts) + "systemd[1]: Started Session " + std::to_string(i) + " " +
              std::string(static_cast<size_t>(i % 37), 'x') + ".\n";
    }
  }
  ASSERT_GT(kern.size(), 2u << 20);
  write("hosts/node-0017/kern.log", kern);
  auto run = [&](bool chunk) {
    IngestOptions o;
    o.default_dedup_s = 0;
    auto ing = read_dir(chunk, o);
    std::vector<std::string> out;
    for (auto& e : events_) {
      std::string s = e.name + " " + e.device + " " + e.evidence + " " + std::to_string(e.count) +
                      " " + (e.time.wall ? std::to_string(*e.time.wall) : "-") + " " + e.line;
      out.push_back(s);
    }
    return std::make_pair(out, ing->stats_snapshot());
  };
  auto [per_line, st1] = run(false);
  auto [chunked, st2] = run(true);
  EXPECT_EQ(per_line, chunked);
  EXPECT_FALSE(chunked.empty());
  EXPECT_EQ(st1.lines, 40000u);
  EXPECT_EQ(st1.lines, st2.lines);
  EXPECT_EQ(st1.bytes, st2.bytes);
  EXPECT_EQ(st1.bytes, kern.size());
  EXPECT_EQ(st1.per_signature_hits, st2.per_signature_hits);
  EXPECT_EQ(st1.matched_lines, st2.matched_lines);
}

// A storm (most lines repeat a few messages behind a changing time prefix):
// after the first block, lines whose message is in the line memo skip the
// block scan (memo-first). Events and every counter must equal those of
// scanning each block whole, with lines whose message follows a word byte, a
// prefix of another width, or a prefix that the parser does not strip mixed in.
TEST_F(IngestorTest, MemoFirstStormEqualsWholeBlockScan) {
  std::string kern;
  for (int i = 0; i < 60000; ++i) {
    char ts[64];
    std::snprintf(ts, sizeof ts, "2026-03-05T10:%02d:%02d,%06d+00:00 ", (i / 1000) % 60,
                  (i / 17) % 60, (i % 17) * 50000);
    // The Xid 95 storm form, with a few pids and devices (the storm's messages).
    const std::string xid = "NVRM: Xid (PCI:0000:" + std::string(i % 2 ? "18" : "9b") +
                            ":00): 95, pid=" + std::to_string(i % 23) + ", Uncontained: FBHUB.";
    if (i % 7 == 3) {  // invented benign chatter
      kern += std::string(ts) + "systemd[1]: Started Session " + std::to_string(i) + ".\n";
    } else if (i % 101 == 5) {  // the same message behind a word byte: not a memo line
      kern += std::string(ts) + "x" + xid + "\n";
    } else if (i % 103 == 7) {  // a dmesg prefix of another width
      kern += "[ 1843.308145] " + xid + "\n";
    } else if (i % 107 == 9) {  // a prefix of the usual width that the parser keeps
      kern += std::string(std::strlen(ts) - 1, 'z') + " " + xid + "\n";
    } else if (i % 211 == 11) {  // another Xid, rarely (gpud xid testdata form)
      kern += std::string(ts) + "NVRM: Xid (PCI:0000:9b:00): 119, pid=2, Timeout after 6s\n";
    } else {
      kern += std::string(ts) + xid + "\n";
    }
  }
  ASSERT_GT(kern.size(), 3u << 20);
  write("hosts/node-0017/kern.log", kern);
  uint64_t memo_first = 0;
  auto run = [&](bool memo) {
    events_.clear();
    auto ing = make();
    ing->set_memo_first(memo);
    std::string err;
    EXPECT_TRUE(ing->read_bundle(dir_.string(), &err)) << err;
    ing->finish();
    if (memo) memo_first = ing->memo_first_lines();
    std::vector<std::string> out;
    for (auto& e : events_) {
      std::string s = e.name + " " + e.device + " " + e.evidence + " " + std::to_string(e.count) +
                      " " + (e.time.wall ? std::to_string(*e.time.wall) : "-") + " " + e.line;
      for (auto& [k, v] : e.fields) s += " " + k + "=" + v;
      out.push_back(s);
    }
    return std::make_pair(out, ing->stats_snapshot());
  };
  auto [whole, st1] = run(false);
  auto [memo, st2] = run(true);
  EXPECT_GT(memo_first, 30000u) << "the storm's lines were scanned, not taken from the memo";
  EXPECT_EQ(whole, memo);
  EXPECT_GT(memo.size(), 100u);
  EXPECT_EQ(st1.lines, st2.lines);
  EXPECT_EQ(st1.bytes, st2.bytes);
  EXPECT_EQ(st1.matched_lines, st2.matched_lines);
  EXPECT_EQ(st1.per_signature_hits, st2.per_signature_hits);
  EXPECT_EQ(st1.rejected_by_when, st2.rejected_by_when);
  EXPECT_EQ(st1.prefilter_rejects, st2.prefilter_rejects);
  EXPECT_EQ(st1.transport_mismatch, st2.transport_mismatch);
  EXPECT_EQ(st1.folded_by_dedup, st2.folded_by_dedup);
  EXPECT_EQ(st1.events, st2.events);
  EXPECT_EQ(st1.no_timestamp, st2.no_timestamp);
  EXPECT_EQ(st1.unknown_hosts, st2.unknown_hosts);
  EXPECT_EQ(st1.implausible_time, st2.implausible_time);
  EXPECT_EQ(st1.invalid_utf8, st2.invalid_utf8);
  EXPECT_EQ(st1.incomplete_multiline, st2.incomplete_multiline);
  EXPECT_EQ(st1.unrecognized_lines, st2.unrecognized_lines);
  EXPECT_EQ(st1.notes, st2.notes);
}

}  // namespace
}  // namespace reflex
