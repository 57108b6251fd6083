// Matcher, locate and storm-filter units (no log-format parsing involved).
#include <gtest/gtest.h>

#include <algorithm>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <thread>

#include <re2/re2.h>

#include "block_factor.h"
#include "fixture.h"
#include "locate.h"
#include "matcher.h"
#include "reflex/artifact.h"
#include "reflex/ingest.h"
#include "storms.h"

// The matcher must not allocate for a line that matches nothing.
#include "counting_new.h"

namespace reflex {
namespace {

using ingest::Matcher;

struct MatchCase {
  const char* line;        // a real line (source cited)
  const char* pattern_of;  // signature whose first pattern must hit, or nullptr for none
};

class MatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kb_ = test::test_kb();
    std::string err;
    ASSERT_TRUE(m_.build(kb_, &err, &notes_)) << err;
    m_.reserve_hits(&hits_);
  }
  bool hits_signature(const std::string& line, const std::string& sig) {
    m_.scan(line, &hits_);
    for (uint32_t p : hits_)
      for (uint32_t s : m_.patterns()[p].first_of)
        if (m_.signatures()[s].sig->name == sig) return true;
    return false;
  }
  KnowledgeBase kb_;
  Matcher m_;
  std::vector<std::string> notes_;
  std::vector<uint32_t> hits_;
};

TEST_F(MatcherTest, SharedPatternsAreDeduplicated) {
  // Four Xid signatures share one pattern text: one database entry for them.
  size_t xid_patterns = 0;
  for (const auto& p : m_.patterns())
    if (p.text == test::kXidPattern) {
      ++xid_patterns;
      EXPECT_EQ(p.first_of.size(), 4u);
    }
  EXPECT_EQ(xid_patterns, 1u);
  // 4 Xid sigs -> 1; the multi-line one has 3 parts; 4 other single-line sigs.
  EXPECT_EQ(m_.patterns().size(), 1u + 3u + 4u);
  EXPECT_TRUE(m_.has_multiline());
}

TEST_F(MatcherTest, TableOfRealLines) {
  const MatchCase cases[] = {
      // leptonai/gpud xid testdata (dmesg -T prefix stripped by formats)
      {"NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of "
       "waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).",
       "xid119_gsp_timeout"},
      // NVIDIA/NVSentinel test fixture: Xid 13
      {"NVRM: Xid (PCI:0000:b5:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp "
       "Exception on (GPC 1, TPC 3, SM 0): Out Of Range Address",
       "xid13_graphics_exception"},
      // NVIDIA/NVSentinel test fixture: mlx5 command timeout
      {"mlx5_core 0000:03:00.0: wait_func:1195:(pid 1967079): ENABLE_HCA(0x104) timeout. Will "
       "cause a leak of a command resource",
       "mlx5_cmd_timeout"},
      // PyTorch watchdog line as posted in NVIDIA/nccl#1730
      {"[rank118]:[E603 17:48:01.005271823 ProcessGroupNCCL.cpp:632] [Rank 118] Watchdog caught "
       "collective operation timeout: WorkNCCL(SeqNum=2398459, OpType=ALLREDUCE, "
       "NumelIn=8652160, NumelOut=8652160, Timeout(ms)=1800000) ran for 1800068 milliseconds "
       "before timing out.",
       "nccl_watchdog_timeout"},
      // NVIDIA/NVSentinel fixture: SXid is not an Xid (near miss)
      {"nvidia-nvswitch0: SXid (PCI:0000:c3:00.0): 24007, Fatal, Link 28 sourcetrack timeout "
       "error (First)",
       nullptr},
      // leptonai/gpud: fallen off without Xid number is a different signature (not in this KB)
      {"NVRM: GPU 0000:29:00.0: GPU has fallen off the bus.", nullptr},
      // benign chatter (invented)
      {"systemd[1]: Started Session 42 of user root.", nullptr},
  };
  for (const auto& c : cases) {
    if (c.pattern_of) {
      EXPECT_TRUE(hits_signature(c.line, c.pattern_of)) << c.line;
    } else {
      m_.scan(c.line, &hits_);
      bool any_first = false;
      for (uint32_t p : hits_) any_first |= !m_.patterns()[p].first_of.empty();
      EXPECT_FALSE(any_first) << c.line;
    }
  }
}

TEST_F(MatcherTest, ConfirmRunsRe2OnceForSharedPattern) {
  std::string line = "NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.";
  m_.scan(line, &hits_);
  ASSERT_EQ(hits_.size(), 1u);
  FieldValues caps;
  ASSERT_TRUE(m_.confirm(hits_[0], line, &caps));
  // Each signature then accepts or refuses the shared captures by its `when`.
  int accepted = 0;
  for (uint32_t s : m_.patterns()[hits_[0]].first_of) {
    FieldValues c = caps;
    if (m_.signatures()[s].compiled->accept(&c, nullptr)) {
      ++accepted;
      EXPECT_EQ(m_.signatures()[s].sig->name, "xid79_fallen_off_bus");
    }
  }
  EXPECT_EQ(accepted, 1);
}

TEST_F(MatcherTest, NoAllocationForNonMatchingLines) {
  std::string lines[] = {
      "systemd[1]: Started Session 42 of user root.",
      "node-0017:1234:5678 [3] NCCL INFO Channel 00/32 : 0[0] -> 1[1] via P2P/IPC",
      "x",
      std::string(4096, 'a'),
  };
  for (auto& l : lines) m_.scan(l, &hits_);  // warm up
  uint64_t before = g_allocs.load();
  for (int i = 0; i < 1000; ++i)
    for (auto& l : lines) m_.scan(l, &hits_);
  EXPECT_EQ(g_allocs.load() - before, 0u);
}

// A --threads worker's matcher: the origin's compiled patterns, its own
// scratch. Two threads scan and confirm at once (each scan uses scratch, so
// a shared scratch would be a race TSan/ASan or wrong hits show) and get the
// origin's answers, also after the origin is gone.
TEST_F(MatcherTest, SharedMatcherScansLikeItsOriginFromAnotherThread) {
  const std::string lines[] = {
      "NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.",
      "systemd[1]: Started Session 42 of user root.",
      "mlx5_core 0000:03:00.0: wait_func:1195:(pid 1967079): ENABLE_HCA(0x104) timeout. Will "
      "cause a leak of a command resource",
  };
  std::vector<std::vector<uint32_t>> want;
  std::vector<FieldValues> want_caps;
  for (const std::string& l : lines) {
    m_.scan(l, &hits_);
    want.push_back(hits_);
    FieldValues caps;
    if (!hits_.empty()) m_.confirm(hits_[0], l, &caps);
    want_caps.push_back(caps);
  }
  auto origin = std::make_unique<Matcher>();
  std::string err;
  ASSERT_TRUE(origin->build(kb_, &err, nullptr)) << err;
  auto copy = std::make_unique<Matcher>();
  ASSERT_TRUE(copy->share(*origin, &err)) << err;
  EXPECT_EQ(&copy->patterns(), &origin->patterns());  // shared, not compiled again
  std::atomic<int> wrong{0};
  auto run = [&](const Matcher& m) {
    std::vector<uint32_t> hits;
    m.reserve_hits(&hits);
    for (int i = 0; i < 2000; ++i)
      for (size_t k = 0; k < std::size(lines); ++k) {
        m.scan(lines[k], &hits);
        FieldValues caps;
        if (!hits.empty()) m.confirm(hits[0], lines[k], &caps);
        if (hits != want[k] || caps != want_caps[k]) ++wrong;
      }
  };
  std::thread other([&] { run(*copy); });
  run(*origin);
  other.join();
  EXPECT_EQ(wrong.load(), 0);
  origin.reset();  // the origin goes first; the copy keeps what it shares
  run(*copy);
  EXPECT_EQ(wrong.load(), 0);
}

TEST(MatcherBuild, PrefilterAndFallbackForHyperscanRefusals) {
  KnowledgeBase kb;
  Signature s;
  s.name = "lookahead";
  s.patterns = {"foo(?=bar)"};  // RE2 refuses lookarounds too, so the signature is left out
  kb.signatures.push_back(s);
  Signature t;
  t.name = "backref_free";
  t.patterns = {R"(\bword\b)"};  // Hyperscan supports \b; RE2 too
  kb.signatures.push_back(t);
  ingest::Matcher m;
  std::string err;
  std::vector<std::string> notes;
  ASSERT_TRUE(m.build(kb, &err, &notes));
  EXPECT_EQ(m.signatures().size(), 1u);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("lookahead"), std::string::npos);
}

// The precompiled database (reflexc build) must behave exactly like a fresh
// compile, and anything wrong with it must fall back to compiling.
std::vector<std::vector<uint32_t>> scan_all(const Matcher& m,
                                            const std::vector<std::string>& lines) {
  std::vector<std::vector<uint32_t>> out;
  std::vector<uint32_t> hits;
  m.reserve_hits(&hits);
  for (const std::string& l : lines) {
    m.scan(l, &hits);
    out.push_back(hits);
  }
  std::string block;
  for (const std::string& l : lines) block += l + "\n";
  std::vector<Matcher::BlockLine> bl;
  m.scan_block(block, &bl, &hits);
  for (const auto& b : bl) {
    std::vector<uint32_t> ids(hits.begin() + b.hit_begin, hits.begin() + b.hit_begin + b.hit_count);
    ids.insert(ids.begin(), b.begin);  // which line, then its pattern ids
    out.push_back(ids);
  }
  return out;
}

const std::vector<std::string> kCacheLines = {
    // gpud xid testdata, NVSentinel mlx5 command timeout, NVIDIA/nccl#1730 watchdog
    "NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of "
    "waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).",
    "mlx5_core 0000:03:00.0: wait_func:1195:(pid 1967079): ENABLE_HCA(0x104) timeout. Will "
    "cause a leak of a command resource",
    "systemd[1]: Started Session 42 of user root.",
    "[rank118]:[E603 17:48:01.005271823 ProcessGroupNCCL.cpp:632] [Rank 118] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=2398459, OpType=ALLREDUCE, "
    "NumelIn=8652160, NumelOut=8652160, Timeout(ms)=1800000) ran for 1800068 milliseconds "
    "before timing out.",
    "NVRM: GPU 0000:29:00.0: GPU has fallen off the bus.",
};

TEST(MatcherCache, PrecompiledDatabaseMatchesLikeAFreshCompile) {
  KnowledgeBase kb = test::test_kb();
  std::string err;
  ASSERT_TRUE(precompile_patterns(&kb, &err)) << err;
  ASSERT_FALSE(kb.matcher_cache.empty());
  // It survives the artifact's serialisation byte for byte.
  auto back = kb_from_cbor(kb_to_cbor(kb), &err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(back->matcher_cache.key, kb.matcher_cache.key);
  EXPECT_EQ(back->matcher_cache.data, kb.matcher_cache.data);

  KnowledgeBase plain = test::test_kb();
  Matcher fresh, cached;
  std::vector<std::string> notes;
  ASSERT_TRUE(fresh.build(plain, &err, &notes));
  ASSERT_TRUE(cached.build(*back, &err, &notes));
  EXPECT_FALSE(fresh.from_cache());
  EXPECT_TRUE(cached.from_cache());
  EXPECT_TRUE(notes.empty());
  auto a = scan_all(fresh, kCacheLines), b = scan_all(cached, kCacheLines);
  EXPECT_EQ(a, b);
  size_t with_hits = 0;
  for (size_t i = 0; i < kCacheLines.size(); ++i) with_hits += !a[i].empty();
  EXPECT_EQ(with_hits, 3u);  // the test can fail: the three fault lines hit, the others not
}

TEST(MatcherCache, DamagedStaleOrForeignCacheIsCompiledWithANote) {
  KnowledgeBase good = test::test_kb();
  std::string err;
  ASSERT_TRUE(precompile_patterns(&good, &err)) << err;
  auto damaged = [&](auto mutate, const char* why) {
    KnowledgeBase kb = good;
    mutate(kb);
    KnowledgeBase uncached = kb;  // the same KB compiled from scratch
    uncached.matcher_cache = {};
    Matcher reference;
    std::vector<std::string> ignore;
    ASSERT_TRUE(reference.build(uncached, &err, &ignore));
    auto expected = scan_all(reference, kCacheLines);
    Matcher m;
    std::vector<std::string> notes;
    ASSERT_TRUE(m.build(kb, &err, &notes)) << why;
    EXPECT_FALSE(m.from_cache()) << why;
    bool noted = false;
    for (const auto& n : notes) noted |= n.find("precompiled pattern database not used") == 0;
    EXPECT_TRUE(noted) << why;
    EXPECT_EQ(scan_all(m, kCacheLines), expected) << why;
  };
  damaged(
      [](KnowledgeBase& kb) { kb.matcher_cache.data[kb.matcher_cache.data.size() / 2] ^= 0x40; },
      "a flipped byte in the database");
  damaged([](KnowledgeBase& kb) { kb.matcher_cache.data.resize(3); }, "truncated header");
  damaged(
      [](KnowledgeBase& kb) { kb.matcher_cache.data.resize(kb.matcher_cache.data.size() - 100); },
      "truncated database");
  damaged([](KnowledgeBase& kb) { kb.matcher_cache.key[0] ^= 1; }, "another machine's key");
  damaged(
      [](KnowledgeBase& kb) {
        kb.signatures.back().patterns[0] += "x";  // edited after the artifact was built
      },
      "stale patterns");
}

TEST(BlockFactor, CutsARepeatedOrOptionalPrefixAtALongLiteral) {
  using ingest::block_factor;
  // Groups without quantifier are opened (their captures dropped); the cut
  // starts at the first literal run of 8 or more.
  EXPECT_EQ(block_factor(R"((?:NVRM: )?\bXid (?:\((?P<bdf>[0-9a-f:.]+)\): )?(?P<xid>\d+),)"
                         R"(\s*(?P<msg>.*caused by previous Xid (?P<prev>\d+).*)$)"),
            R"(caused by previous Xid \d+.*$)");
  // An all-literal alternation counts by its shortest branch.
  EXPECT_EQ(block_factor(R"(NVRM: .*(?:Reset required \[NV_ERR_RESET_REQUIRED\]|NV_ERR_RESET))"),
            R"((?:Reset required \[NV_ERR_RESET_REQUIRED\]|NV_ERR_RESET))");
  // Without a long literal, the best run of 5+ if 12 literal characters stay.
  EXPECT_EQ(block_factor(R"(x+ (?P<u>[A-Z]+)\s+(Fatal|Nonfatal)\s+XC[01]\s+i[01]\s+Link\s+\d+)"),
            R"((Fatal|Nonfatal)\s+XC[01]\s+i[01]\s+Link\s+\d+)");
  // After the last wide repeat that has a long literal after it, widened
  // back over the literals and literal alternations before that literal.
  EXPECT_EQ(block_factor(R"(index=(?P<i>\d+);.*?pci\.bus_id=(?P<b>[0-9A-F:.]+);.*?)"
                         R"(clocks_(?:event|throttle)_reasons\.active=(?P<r>0x[0-9A-F]*[4-9A-F]))"),
            R"(clocks_(?:event|throttle)_reasons\.active=0x[0-9A-F]*[4-9A-F])");
  EXPECT_EQ(block_factor(R"(\d+, (?:[^,]*, )*?temperature\.gpu=\d+, throttled=\d+)"),
            R"(temperature\.gpu=\d+, throttled=\d+)");
  // A narrow repeat (\d+) after the first long literal does not move the cut.
  EXPECT_EQ(block_factor(R"(\w+: caused by previous Xid \d+ and more words here)"),
            R"(: caused by previous Xid \d+ and more words here)");
  // Left alone: a literal start, nothing quantified before the literal, too
  // little kept, a top-level alternation, a (?i) switch, \Q..\E, a
  // quantified group (not opened).
  for (const char* t : {"NVRM: .*(?i:error|fail)", "ab: caused by previous Xid \\d+", "\\d+ short",
                        "a+ caused by previous Xid|b", "(?i)a+ caused by previous Xid",
                        "a+\\Qcaused by previous Xid\\E", "a+(?:caused by previous Xid)?", ""})
    EXPECT_EQ(block_factor(t), t) << t;
}

// A factor matches wherever its pattern matches (the block scan's hits are
// a superset): RE2 over patterns of every shape the cut handles and real
// lines they match.
TEST(BlockFactor, FactorMatchesWhereverThePatternDoes) {
  struct Case {
    const char* pattern;
    const char* line;
  };
  const Case cases[] = {
      {R"((?:NVRM: )?\bXid (?:\((?:PCI:)?(?P<bdf>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2})"
       R"((?:\.[0-7])?)?(?:\.\.\.)?\): )?(?P<xid>\d+),\s*(?P<msg>.*caused by previous Xid )"
       R"((?P<prev>\d+).*)$)",
       // source: NVIDIA/open-gpu-kernel-modules#1150 (real line)
       "NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous "
       "Xid 149"},
      {R"(\[(?:PG (?:ID )?[^\]]*? )?Rank (\d+)\] Watchdog caught collective operation timeout: )"
       R"(WorkNCCL\(SeqNum=(\d+), OpType=(\w+).*Timeout\(ms\)=(\d+)\) ran for (\d+) milliseconds)",
       // source: NVIDIA/nccl#1730 (real line)
       "[rank118]:[E603 17:48:01.005271823 ProcessGroupNCCL.cpp:632] [Rank 118] Watchdog caught "
       "collective operation timeout: WorkNCCL(SeqNum=2398459, OpType=ALLREDUCE, NumelIn=8652160, "
       "NumelOut=8652160, Timeout(ms)=1800000) ran for 1800068 milliseconds before timing out."},
      {R"((?:(EXT[234]-fs|XFS|BTRFS)(?: \(([^)]+)\))?: )?Remounting filesystem read-only)",
       "EXT4-fs (nvme0n1p1): Remounting filesystem read-only"},
      {R"(\s*(HW Slowdown|HW Thermal Slowdown|SW Thermal Slowdown)\s*:\s*Active\b)",
       "        HW Slowdown                       : Active"},
      {R"((?:INFO: )?task (.+?):(\d+) blocked for more than (\d+) seconds)",
       "INFO: task python3:12345 blocked for more than 120 seconds."},
      // cut after the last `.*?` (kb/thermal.rfx gpu_thermal_throttling_named and its example)
      {R"(index=(?P<index>\d+);.*?pci\.bus_id=(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:)"
       R"([0-9A-Fa-f]{2}\.[0-7]);.*?clocks_(?:event|throttle)_reasons\.active=(?P<reasons>0x)"
       R"([0-9A-Fa-f]*(?:[2-9A-Fa-f][0-9A-Fa-f]|[89A-Fa-f]))(?:[^0-9A-Fa-f]|$))",
       "index=7; pci.bus_id=00000000:DB:00.0; temperature.gpu=95; clocks.sm=1303 MHz; "
       "clocks_event_reasons.active=0x0000000000000040; power.draw=622.58 W"},
  };
  for (const Case& c : cases) {
    const std::string f = ingest::block_factor(c.pattern);
    EXPECT_NE(f, c.pattern) << "not cut: " << c.pattern;
    RE2 whole(c.pattern), factor(f);
    ASSERT_TRUE(whole.ok() && factor.ok()) << c.pattern << " -> " << f;
    ASSERT_TRUE(RE2::PartialMatch(c.line, whole)) << c.line;
    EXPECT_TRUE(RE2::PartialMatch(c.line, factor)) << f << " on " << c.line;
  }
}

// With a cut pattern, scan_block reports the lines and hits of the exact
// patterns: a line only the factor matches is dropped.
TEST(BlockFactor, BlockScanDropsLinesOnlyTheFactorMatches) {
  KnowledgeBase kb;
  Signature s;
  s.name = "cut_me";
  s.kind = DeviceKind::host;
  s.sources = kTransportKernel;
  s.patterns = {R"((?:\[\w+\] )?(?P<unit>\w+): watchdog thread terminated (?P<n>\d+))"};
  s.severity = Severity::warning;
  kb.signatures.push_back(s);
  s.name = "plain";
  s.patterns = {R"(plain marker)"};
  kb.signatures.push_back(s);
  Matcher m;
  std::string err;
  ASSERT_TRUE(m.build(kb, &err, nullptr)) << err;
  ASSERT_TRUE(m.chunk_mode());
  uint32_t cut = 0;
  for (uint32_t p = 0; p < m.patterns().size(); ++p)
    if (m.patterns()[p].text == kb.signatures[0].patterns[0]) cut = p;
  EXPECT_TRUE(m.patterns()[cut].cut);
  const std::string block =
      "[k] gpu: watchdog thread terminated 7\n"        // the pattern: a hit
      ": watchdog thread terminated 8\n"               // the factor alone: dropped
      ": watchdog thread terminated 9 plain marker\n"  // kept for the other pattern only
      "nothing here\n";
  std::vector<Matcher::BlockLine> lines;
  std::vector<uint32_t> hits;
  m.scan_block(block, &lines, &hits);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(block.substr(lines[0].begin, lines[0].end - lines[0].begin),
            "[k] gpu: watchdog thread terminated 7");
  ASSERT_EQ(lines[0].hit_count, 1u);
  EXPECT_EQ(hits[lines[0].hit_begin], cut);
  EXPECT_EQ(block[lines[1].begin + 2], 'w');
  ASSERT_EQ(lines[1].hit_count, 1u);
  EXPECT_NE(hits[lines[1].hit_begin], cut);
}

TEST(MatcherBuild, ExportPatternsForGrep) {
  KnowledgeBase kb = test::test_kb();
  auto re2 = export_patterns(kb, PatternDialect::re2);
  auto ere = export_patterns(kb, PatternDialect::posix_ere);
  auto unnamed = export_patterns(kb, PatternDialect::unnamed);
  ASSERT_EQ(unnamed.size(), re2.size());
  EXPECT_EQ(re2[0], test::kXidPattern);
  EXPECT_EQ(
      unnamed[0],
      R"(NVRM: Xid \((?:PCI:)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\): (\d+),)");
  ASSERT_EQ(re2.size(), ere.size());
  EXPECT_EQ(re2.size(), 6u);  // distinct first-line patterns (4 Xid sigs share one)
  for (auto& p : ere) {
    EXPECT_EQ(p.find("(?"), std::string::npos) << p;
    EXPECT_EQ(p.find("\\d"), std::string::npos) << p;
  }
}

// ---- locate ----

class LocateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    topo_ = test::test_topology();
    ASSERT_TRUE(topo_);
    kb_ = test::test_kb();
  }
  ingest::Located loc(const std::string& sig, FieldValues f, const std::string& host,
                      bool known = true, int rank_hint = -1) {
    const Signature* s = kb_.find_signature(sig);
    LogRecord rec;
    rec.host = host;
    rec.host_known = known;
    rec.rank_hint = rank_hint;
    const Locator* own = s->locators.empty() ? nullptr : &s->locators[0];
    return ingest::locate_device(*topo_, *s, s->kind, own, f, rec);
  }
  std::unique_ptr<Topology> topo_;
  KnowledgeBase kb_;
};

TEST_F(LocateTest, GpuByBdfOnTheLinesHost) {
  auto l = loc("xid79_fallen_off_bus", {{"bdf", "0000:9b:00.0"}, {"xid", "79"}}, "node-0017");
  EXPECT_EQ(l.id, "node-0017/gpu3");
  EXPECT_FALSE(l.placeholder);
  // The same BDF on another host is that host's GPU.
  auto o = loc("xid79_fallen_off_bus", {{"bdf", "0000:18:00.0"}}, "node-0018");
  EXPECT_EQ(o.id, "node-0018/gpu0");
}

TEST_F(LocateTest, UnknownBdfBecomesPlaceholder) {
  auto l = loc("xid79_fallen_off_bus", {{"bdf", "0000:aa:00.0"}}, "node-0017");
  EXPECT_EQ(l.id, "node-0017/gpu@0000:aa:00.0");
  EXPECT_TRUE(l.placeholder);
  EXPECT_EQ(l.host, "node-0017");
}

TEST_F(LocateTest, UnknownHostKeepsItsName) {
  auto l = loc("xid79_fallen_off_bus", {{"bdf", "0000:18:00.0"}}, "mystery-7", false);
  EXPECT_EQ(l.id, "mystery-7/gpu@0000:18:00.0");
  EXPECT_TRUE(l.placeholder);
}

TEST_F(LocateTest, NicAndPciePort) {
  EXPECT_EQ(loc("mlx5_cmd_timeout", {{"bdf", "0000:19:00.0"}}, "node-0017").id, "node-0017/mlx5_0");
  auto p = loc("pcie_aer_corrected_storm", {{"port", "0000:17:00.0"}}, "node-0017");
  EXPECT_EQ(p.id, "node-0017/pcie/0000:17:00.0");
  EXPECT_FALSE(p.placeholder);
  auto q = loc("pcie_aer_corrected_storm", {{"port", "0000:50:00.0"}}, "node-0017");
  EXPECT_EQ(q.id, "node-0017/pcie/0000:50:00.0");
  EXPECT_TRUE(q.placeholder);
}

TEST_F(LocateTest, RankThroughTheJobOfTheHost) {
  auto r = loc("nccl_watchdog_timeout", {{"rank", "1"}}, "node-0017");
  EXPECT_EQ(r.id, "job/job-42/rank1");
  EXPECT_FALSE(r.placeholder);
  auto h = loc("nccl_watchdog_timeout", {}, "node-0018", true, 2);  // from rank_hint
  EXPECT_EQ(h.id, "job/job-42/rank2");
  auto none = loc("nccl_watchdog_timeout", {{"rank", "7"}}, "node-0099", false);
  EXPECT_TRUE(none.placeholder);
}

TEST_F(LocateTest, JobSignatureWithoutLocateUsesTheHostsJob) {
  auto j = loc("iteration_slowdown", {{"ms", "100"}}, "node-0018");
  EXPECT_EQ(j.id, "job/job-42");
  EXPECT_EQ(j.host, "");
  auto p = loc("iteration_slowdown", {{"ms", "100"}}, "node-0099", false);
  EXPECT_TRUE(p.placeholder);
}

// ---- storms ----

Event make_event(const std::string& name, const std::string& dev, TimeUs t, uint64_t seq,
                 FieldValues f = {}) {
  Event e;
  e.name = name;
  e.device = dev;
  e.time.wall = t;
  e.seq = seq;
  e.fields = std::move(f);
  return e;
}

constexpr TimeUs kSec = 1000000;

TEST(Storms, DedupFoldsWithinWindowAndEmitsWhenClosed) {
  Signature sig;
  sig.name = "xid95";
  sig.dedup.window_s = 60;
  ingest::StormCounters c;
  ingest::StormFilter f(0, &c);
  std::vector<Event> out;
  auto emit = [&](Event&& e) { out.push_back(std::move(e)); };
  TimeUs t0 = 1700000000 * kSec;
  for (int i = 0; i < 10; ++i) f.add(0, sig, make_event("xid95", "n/gpu0", t0 + i * kSec, i), emit);
  EXPECT_TRUE(out.empty());  // the window is still open
  f.add(0, sig, make_event("xid95", "n/gpu1", t0 + 5 * kSec, 20), emit);   // another device
  f.add(0, sig, make_event("xid95", "n/gpu0", t0 + 61 * kSec, 30), emit);  // outside: closes
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].count, 10u);
  EXPECT_EQ(*out[0].first, t0);
  EXPECT_EQ(*out[0].last, t0 + 9 * kSec);
  EXPECT_EQ(c.folded_by_dedup, 9u);
  f.advance(t0 + 200 * kSec, emit);  // time passes: both remaining folds close
  ASSERT_EQ(out.size(), 3u);
  f.flush(emit);
  EXPECT_EQ(out.size(), 3u);
}

TEST(Storms, DedupByFieldKeepsDistinctValuesApart) {
  Signature sig;
  sig.dedup.window_s = 60;
  sig.dedup.by_fields = {"code"};
  ingest::StormCounters c;
  ingest::StormFilter f(0, &c);
  std::vector<Event> out;
  auto emit = [&](Event&& e) { out.push_back(std::move(e)); };
  for (int i = 0; i < 6; ++i)
    f.add(0, sig, make_event("s", "d", i * kSec, i, {{"code", i % 2 ? "a" : "b"}}), emit);
  f.flush(emit);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].count + out[1].count, 6u);
}

TEST(Storms, AggregateFiresOnlyAtThreshold) {
  Signature sig;
  sig.aggregate.count_at_least = 5;
  sig.aggregate.within_s = 10;
  ingest::StormCounters c;
  ingest::StormFilter f(0, &c);
  std::vector<Event> out;
  auto emit = [&](Event&& e) { out.push_back(std::move(e)); };
  // 4 lines spread over 40 s: never 5 within 10 s.
  for (int i = 0; i < 4; ++i) f.add(0, sig, make_event("a", "p", i * 10 * kSec, i), emit);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(c.below_aggregate, 4u);
  // A burst of 5 within 2 s fires once, carrying the window.
  for (int i = 0; i < 5; ++i)
    f.add(0, sig, make_event("a", "p", 100 * kSec + i * 400000, 10 + i), emit);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].count, 5u);
  EXPECT_EQ(*out[0].first, 100 * kSec);
  EXPECT_EQ(*out[0].last, 100 * kSec + 4 * 400000);
}

TEST(Storms, BaselineFiresAboveFactorTimesMedian) {
  Signature sig;
  sig.baseline.field = "ms";
  sig.baseline.factor = 1.2;
  sig.baseline.window = 8;
  ingest::StormCounters c;
  ingest::StormFilter f(0, &c);
  std::vector<Event> out;
  auto emit = [&](Event&& e) { out.push_back(std::move(e)); };
  double vals[] = {1000, 1010, 990,  1005, 1500,  // 1500 arrives with 4 values: judged (>=N/2)
                   1001, 995,  1002, 1300, 1100};
  for (int i = 0; i < 10; ++i)
    f.add(0, sig, make_event("it", "job/j", i * kSec, i, {{"ms", std::to_string(vals[i])}}), emit);
  ASSERT_EQ(out.size(), 2u);  // 1500 and 1300 (> 1.2 x ~1003); 1100 is not
  EXPECT_EQ(*out[0].field("ms"), std::to_string(1500.0));
  EXPECT_EQ(*out[1].field("ms"), std::to_string(1300.0));
  EXPECT_EQ(c.below_baseline, 8u);
}

// `baseline FIELD below F x median` (throughput: MFU, tokens/s) fires on drops.
TEST(Storms, BaselineBelowFiresUnderFactorTimesMedian) {
  Signature sig;
  sig.baseline.field = "mfu";
  sig.baseline.factor = 0.93;
  sig.baseline.window = 8;
  sig.baseline.below = true;
  ingest::StormCounters c;
  ingest::StormFilter f(0, &c);
  std::vector<Event> out;
  auto emit = [&](Event&& e) { out.push_back(std::move(e)); };
  double vals[] = {38.3, 38.9, 39.2, 37.2, 31.0,   // 31.0 < 0.93 x ~38.6: fires
                   38.0, 38.4, 45.0, 35.1, 36.5};  // a rise never fires; 35.1 < 35.8 fires
  for (int i = 0; i < 10; ++i)
    f.add(0, sig, make_event("it", "job/j", i * kSec, i, {{"mfu", std::to_string(vals[i])}}), emit);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(*out[0].field("mfu"), std::to_string(31.0));
  EXPECT_EQ(*out[1].field("mfu"), std::to_string(35.1));
}

// The baseline keeps its window sorted (median in O(1)); its decisions must
// be those of the definition: F x the median of the previous values (the
// mean of the two middle ones for an even count), judged from ceil(N/2)
// values on, the window holding the last N values. Random walks with ties
// and level shifts, odd and even windows, against a direct computation.
TEST(Storms, BaselineMatchesAReferenceMedianOnRandomSeries) {
  for (int window : {1, 2, 7, 8, 50}) {
    Signature sig;
    sig.baseline.field = "ms";
    sig.baseline.factor = 1.08;
    sig.baseline.window = window;
    ingest::StormCounters c;
    ingest::StormFilter f(0, &c);
    std::vector<double> hist;
    uint64_t seed = 12345u + static_cast<uint64_t>(window);
    auto rnd = [&]() {  // xorshift: deterministic, no <random> distribution differences
      seed ^= seed << 13;
      seed ^= seed >> 7;
      seed ^= seed << 17;
      return seed;
    };
    int fired = 0, expected_fired = 0;
    for (int i = 0; i < 3000; ++i) {
      double level = (i / 500) % 2 ? 1300 : 1000;  // lasting shifts
      double v = level + static_cast<double>(rnd() % 200);
      if (rnd() % 7 == 0) v = 1000;  // ties
      bool expect = false;
      size_t n = static_cast<size_t>(window);
      std::vector<double> w(hist.size() > n ? hist.end() - static_cast<long>(n) : hist.begin(),
                            hist.end());
      if (w.size() >= (n + 1) / 2 && !w.empty()) {
        std::sort(w.begin(), w.end());
        double med = w.size() % 2 ? w[w.size() / 2] : (w[w.size() / 2] + w[w.size() / 2 - 1]) / 2;
        expect = v > 1.08 * med;
      }
      FieldValues fv{{"ms", std::to_string(v)}};
      bool got = f.baseline_passes(0, sig, fv, "job/j");
      ASSERT_EQ(got, expect) << "window " << window << " line " << i << " value " << v;
      fired += got;
      expected_fired += expect;
      hist.push_back(std::stod(fv[0].second));
    }
    EXPECT_GT(expected_fired, 0) << "window " << window;  // the series does fire
    EXPECT_EQ(fired, expected_fired);
    EXPECT_EQ(f.state_entries(), 1u);
  }
}

TEST(Storms, BaselineNeedsHalfAWindowOfHistory) {
  Signature sig;
  sig.baseline.field = "ms";
  sig.baseline.factor = 1.2;
  sig.baseline.window = 8;
  ingest::StormCounters c;
  ingest::StormFilter f(0, &c);
  std::vector<Event> out;
  auto emit = [&](Event&& e) { out.push_back(std::move(e)); };
  double vals[] = {100, 500, 900};  // wild, but fewer than 4 values of history
  for (int i = 0; i < 3; ++i)
    f.add(0, sig, make_event("it", "job/j", i, i, {{"ms", std::to_string(vals[i])}}), emit);
  EXPECT_TRUE(out.empty());
}

TEST(Storms, StateStaysBoundedUnderAMillionLineStorm) {
  // NVSentinel#1120: 800,000 Xid 95 lines on few devices. State is per key.
  Signature dd;
  dd.dedup.window_s = 60;
  Signature ag;
  ag.aggregate.count_at_least = 100;
  ag.aggregate.within_s = 1;
  ingest::StormCounters c;
  ingest::StormFilter f(0, &c);
  uint64_t emitted = 0;
  auto emit = [&](Event&&) { ++emitted; };
  for (int i = 0; i < 800000; ++i) {
    TimeUs t = static_cast<TimeUs>(i) * 1000;  // 1000 lines/s for 800 s
    f.add(0, dd, make_event("xid95", "n/gpu" + std::to_string(i % 8), t, i), emit);
    f.add(1, ag, make_event("aer", "n/pcie/0000:17:00.0", t, i), emit);
    if (i % 1000 == 0) f.advance(t, emit);
  }
  // 8 dedup folds + 1 aggregate ring, whatever the line count.
  EXPECT_LE(f.state_entries(), 9u + 1u);
  f.flush(emit);
  // Dedup: ~14 windows of 60 s per GPU; aggregate: one event per 100 lines.
  EXPECT_LT(emitted, 8u * 15u + 8001u);
  EXPECT_GT(emitted, 8000u);
}

}  // namespace
}  // namespace reflex
