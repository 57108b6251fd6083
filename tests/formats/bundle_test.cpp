// Bundle walker (interfaces.md §3): sorted hosts and files, gzip + rotated files oldest
// first, boot_time and timezone, the year from the bundle's own dated lines.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "reflex/event.h"
#include "reflex/log_format.h"

namespace reflex {
namespace {

namespace fs = std::filesystem;

class TempBundle {
 public:
  TempBundle() {
    char tmpl[] = "/tmp/reflex-bundle-XXXXXX";
    root_ = mkdtemp(tmpl);
  }
  ~TempBundle() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  void write(const std::string& rel, const std::string& text) {
    fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  void write_gz(const std::string& rel, const std::string& text) {
    fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    gzFile gz = gzopen(p.c_str(), "wb");
    ASSERT_TRUE(gz);
    gzwrite(gz, text.data(), unsigned(text.size()));
    gzclose(gz);
  }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

struct Seen {
  std::string file;
  uint64_t line_no;
  std::string raw;
  LogRecord rec;
  std::string host, msg;
};

std::vector<Seen> walk(const std::string& dir, const Topology& topo, FormatStats* stats, bool* ok,
                       std::string* error) {
  std::vector<Seen> out;
  LineParser p(topo, FormatOptions{}, stats);
  const FileContext* cur = nullptr;
  *ok = for_each_bundle_line(
      dir,
      [&](const BundleLine& bl) {
        if (bl.ctx != cur) {
          cur = bl.ctx;
          p.begin_file(*bl.ctx);
        }
        Seen s{bl.ctx->file, bl.line_no, std::string(bl.raw), {}, {}, {}};
        if (p.parse(bl.raw, bl.line_no, &s.rec)) {
          s.host = s.rec.host;
          s.msg = std::string(s.rec.msg);
          out.push_back(std::move(s));
        }
      },
      stats, error);
  return out;
}

TEST(Bundle, WalksHostsFilesRotationGzipBootTimeAndTimezone) {
  TempBundle b;
  b.write("topology.json", R"({"hosts": [{"name": "node-0017"}, {"name": "node-0018"}]})");
  b.write("truth.json", R"({"root_cause": {"device": "node-0017/gpu3"}})");
  // node-0017: raw dmesg, rotated oldest first; boot_time places it on the wall clock.
  b.write_gz("hosts/node-0017/kern.log.2.gz", "[10.000000] oldest\n[11.000000] older\n");
  b.write("hosts/node-0017/kern.log.1", "[12.000000] old\n");
  b.write("hosts/node-0017/kern.log", "[13.000000] newest\r\n[14.000000] no newline at end");
  b.write("hosts/node-0017/boot_time", "2024-03-05T10:00:00Z\n");
  b.write("hosts/node-0017/timezone", "America/Los_Angeles\n");
  b.write("hosts/node-0017/app/rank0.log", "[Mar 05 2024 02:05:00] [ERROR] [tid 1] fm says hi\n");
  // node-0018: year-less syslog; the year comes from node-0017's dated FM line.
  b.write("hosts/node-0018/syslog", "Mar  5 10:11:12 node-0018 kernel: a\n");
  b.write("hosts/node-0018/timezone", "+05:30");
  // a host directory that is not in the topology is still read
  b.write("hosts/ufm-01/opensm.log", "Mar 05 10:11:12 123456 [7F1A2B3C] 0x02 -> trap\n");
  // binary junk is skipped with a note
  b.write("hosts/node-0018/core.bin", std::string("\x7f"
                                                  "ELF\0\0\0\0\0\0\0\0\x01\x02\0\0",
                                                  16));
  b.write("hosts/README", "not a host");

  TopologyError terr;
  auto topo = Topology::load_file(b.root() + "/topology.json", &terr);
  ASSERT_TRUE(topo) << terr.str();
  FormatStats stats;
  bool ok;
  std::string error;
  auto seen = walk(b.root(), *topo, &stats, &ok, &error);
  ASSERT_TRUE(ok) << error;

  std::vector<std::string> order;
  for (auto& s : seen) order.push_back(s.file + ":" + std::to_string(s.line_no) + " " + s.msg);
  EXPECT_EQ(order, (std::vector<std::string>{
                       "hosts/node-0017/kern.log.2.gz:1 oldest",
                       "hosts/node-0017/kern.log.2.gz:2 older",
                       "hosts/node-0017/kern.log.1:1 old",
                       "hosts/node-0017/kern.log:1 newest",
                       "hosts/node-0017/kern.log:2 no newline at end",
                       "hosts/node-0017/app/rank0.log:1 [ERROR] [tid 1] fm says hi",
                       "hosts/node-0018/syslog:1 a",
                       "hosts/ufm-01/opensm.log:1 0x02 -> trap",
                   }));
  ASSERT_EQ(seen.size(), 8u);
  // boot_time + seconds since boot.
  EXPECT_EQ(format_time_us(*seen[0].rec.time.wall), "2024-03-05T10:00:10.000000Z");
  EXPECT_EQ(seen[0].rec.transport, kTransportKernel);
  // FM time is local (Los Angeles, UTC-8 on 2024-03-05).
  EXPECT_EQ(format_time_us(*seen[5].rec.time.wall), "2024-03-05T10:05:00.000000Z");
  // Year from the bundle (2024), zone +05:30.
  EXPECT_EQ(format_time_us(*seen[6].rec.time.wall), "2024-03-05T04:41:12.000000Z");
  EXPECT_EQ(seen[6].host, "node-0018");
  EXPECT_TRUE(seen[7].rec.host_known == false);
  EXPECT_EQ(seen[7].host, "ufm-01");
  EXPECT_EQ(stats.skipped_files, 2u);  // core.bin and hosts/README
  bool binary_noted = false;
  for (auto& n : stats.notes) binary_noted |= n.find("core.bin looks binary") != std::string::npos;
  EXPECT_TRUE(binary_noted) << ::testing::PrintToString(stats.notes);
}

TEST(Bundle, UntimedLeadingLinesTakeTheFilesFirstTime) {
  TempBundle b;
  // NCCL init chatter has no time; the first timed line lends its time to it.
  b.write("hosts/node-0017/train.log",
          "node-0017:1:2 [3] NCCL WARN NET/IB : Got async event : port error\n"
          "node-0017:1:2 [3] NCCL INFO init failed\n"
          "2024-03-05 10:11:12,000 ERROR launcher: rank 3 failed\n"
          "node-0017:1:2 [3] NCCL INFO after\n");
  auto topo = Topology::empty();
  FormatStats stats;
  bool ok;
  std::string error;
  auto seen = walk(b.root(), *topo, &stats, &ok, &error);
  ASSERT_TRUE(ok) << error;
  ASSERT_EQ(seen.size(), 4u);
  for (auto& s : seen) {
    ASSERT_TRUE(s.rec.time.wall) << s.raw;
    EXPECT_EQ(format_time_us(*s.rec.time.wall), "2024-03-05T10:11:12.000000Z") << s.raw;
  }
  EXPECT_TRUE(seen[0].rec.time_inherited);
  EXPECT_FALSE(seen[2].rec.time_inherited);
  EXPECT_EQ(seen[0].rec.rank_hint, 3);
  EXPECT_EQ(stats.no_timestamp, 0u);
}

TEST(Bundle, MissingOrNonDirectoryBundleIsAnError) {
  FormatStats stats;
  std::string error;
  auto nothing = [](const BundleLine&) {};
  EXPECT_FALSE(for_each_bundle_line("/nonexistent/reflex-bundle", nothing, &stats, &error));
  EXPECT_NE(error.find("no such bundle"), std::string::npos) << error;
  TempBundle b;
  b.write("file", "x");
  error.clear();
  EXPECT_FALSE(for_each_bundle_line(b.root() + "/file", nothing, &stats, &error));
  EXPECT_NE(error.find("not a directory"), std::string::npos) << error;
  error.clear();
  EXPECT_FALSE(for_each_bundle_line(b.root(), nothing, &stats, &error));
  EXPECT_NE(error.find("no hosts/ directory"), std::string::npos) << error;
}

TEST(Bundle, CorruptGzipIsNotedAndTheWalkGoesOn) {
  TempBundle b;
  std::string gz;
  {
    b.write_gz("tmp.gz", std::string(100000, 'a') + "\n");
    std::ifstream in(b.root() + "/tmp.gz", std::ios::binary);
    gz.assign(std::istreambuf_iterator<char>(in), {});
  }
  b.write("hosts/node-0017/kern.log.3.gz", gz.substr(0, gz.size() / 2));  // truncated
  b.write("hosts/node-0017/kern.log", "[1.000000] fine\n");
  auto topo = Topology::empty();
  FormatStats stats;
  bool ok;
  std::string error;
  auto seen = walk(b.root(), *topo, &stats, &ok, &error);
  ASSERT_TRUE(ok) << error;
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().msg, "fine");
  bool noted = false;
  for (auto& n : stats.notes) noted |= n.find("kern.log.3.gz") != std::string::npos;
  EXPECT_TRUE(noted) << ::testing::PrintToString(stats.notes);
}

// A FIFO in a host directory would block the walk; it is skipped and said.
// An epoch boot_time past year 9999 ("inf", "1e300") is not an instant.
TEST(Bundle, FifoIsNotedAndAnInfiniteBootTimeIsRefused) {
  TempBundle b;
  b.write("hosts/node-0017/kern.log", "[1.000000] fine\n");
  b.write("hosts/node-0017/boot_time", "inf\n");
  b.write("hosts/node-0018/boot_time", "1e300\n");
  b.write("hosts/node-0018/kern.log", "[2.000000] also fine\n");
  ASSERT_EQ(::mkfifo((b.root() + "/hosts/node-0017/pipe.log").c_str(), 0600), 0);
  auto topo = Topology::empty();
  FormatStats stats;
  bool ok;
  std::string error;
  auto seen = walk(b.root(), *topo, &stats, &ok, &error);
  ASSERT_TRUE(ok) << error;
  ASSERT_EQ(seen.size(), 2u);
  for (auto& s : seen) EXPECT_FALSE(s.rec.time.wall) << s.raw;  // boot-relative only
  EXPECT_EQ(stats.skipped_files, 1u);
  std::string all;
  for (auto& n : stats.notes) all += n + "\n";
  EXPECT_NE(all.find("hosts/node-0017/pipe.log is not a regular file"), std::string::npos) << all;
  EXPECT_NE(all.find("hosts/node-0017/boot_time is not an ISO-8601 instant ('inf"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("hosts/node-0018/boot_time is not an ISO-8601 instant ('1e300"),
            std::string::npos)
      << all;
}

// A host directory the walk may not read is said, not skipped in silence.
TEST(Bundle, UnreadableHostDirectoryIsNoted) {
  TempBundle b;
  b.write("hosts/node-0017/kern.log", "[1.000000] fine\n");
  b.write("hosts/node-0018/kern.log", "[2.000000] hidden\n");
  const std::string hidden = b.root() + "/hosts/node-0018";
  ASSERT_EQ(::chmod(hidden.c_str(), 0), 0);
  if (::access(hidden.c_str(), R_OK) == 0) {
    ::chmod(hidden.c_str(), 0755);
    GTEST_SKIP() << "running as root: mode 000 is still readable";
  }
  auto topo = Topology::empty();
  FormatStats stats;
  bool ok;
  std::string error;
  auto seen = walk(b.root(), *topo, &stats, &ok, &error);
  ::chmod(hidden.c_str(), 0755);
  ASSERT_TRUE(ok) << error;
  std::string all;
  for (auto& n : stats.notes) all += n + "\n";
  EXPECT_NE(all.find("cannot read hosts/node-0018"), std::string::npos) << all;
}

// count_newlines (SIMD, 16 bytes at a time, counters folded every 255
// rounds) against a plain count: every length up to 300 at every start
// offset mod 16, dense and sparse newlines, and long runs past the fold.
TEST(CountNewlines, EqualsAPlainCount) {
  std::string buf;
  uint32_t x = 7;
  for (int i = 0; i < 200000; ++i) {
    x = x * 1103515245u + 12345u;
    buf += (x >> 16) % 5 == 0 ? '\n' : static_cast<char>('a' + (x >> 20) % 26);
  }
  auto plain = [](std::string_view v) {
    return static_cast<uint64_t>(std::count(v.begin(), v.end(), '\n'));
  };
  for (size_t off = 0; off < 16; ++off)
    for (size_t len = 0; len <= 300; ++len) {
      std::string_view v(buf.data() + off, len);
      ASSERT_EQ(count_newlines(v), plain(v)) << off << " " << len;
    }
  EXPECT_EQ(count_newlines(buf), plain(buf));
  std::string all(16 * 255 * 3 + 5, '\n');  // every byte: the byte counters must not wrap
  EXPECT_EQ(count_newlines(all), all.size());
  std::string none(100000, 'x');
  EXPECT_EQ(count_newlines(none), 0u);
}

}  // namespace
}  // namespace reflex
