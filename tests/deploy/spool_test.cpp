// The agent's spool (runtime/deploy/spool.cpp) on its own: delivery
// resumes at the saved head after a reopen (a restart), segments roll and are
// dropped once delivered, the bound holds, garbage in the middle is skipped
// and the records after it kept.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "reflex/deploy/spool.h"

namespace reflex::deploy {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/reflex-spool-XXXXXX";
    path = ::mkdtemp(t);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::vector<SpoolRecord> recs(int from, int n) {
  std::vector<SpoolRecord> out;
  for (int i = from; i < from + n; ++i)
    out.push_back({"job:j", "id" + std::to_string(i), std::string(200, 'a' + i % 26)});
  return out;
}

// Every undelivered id, draining in batches of `batch`.
std::vector<std::string> drain(Spool& s, size_t batch) {
  std::vector<std::string> ids;
  std::string err;
  for (int guard = 0; guard < 10000 && s.events() > 0; ++guard) {
    std::vector<SpoolRecord> got;
    EXPECT_TRUE(s.peek(batch, &got, &err)) << err;
    if (got.empty()) break;
    for (const auto& r : got) ids.push_back(r.id);
    EXPECT_TRUE(s.consume(&err)) << err;
  }
  return ids;
}

std::vector<std::string> segments(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& de : fs::directory_iterator(dir))
    if (de.path().extension() == ".spool") out.push_back(de.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Spool, ResumesAtTheHeadAfterAReopen) {
  TempDir d;
  std::string err;
  {
    Spool s;
    ASSERT_TRUE(s.open(d.path, 1 << 20, &err)) << err;  // segments of 128 KiB
    ASSERT_TRUE(s.append(recs(0, 1500), &err)) << err;
    EXPECT_EQ(s.events(), 1500u);
    EXPECT_GT(segments(d.path).size(), 1u);  // one append spans segments
    std::vector<SpoolRecord> got;
    for (int i = 0; i < 70; ++i) {  // 700 delivered, then a "crash"
      ASSERT_TRUE(s.peek(10, &got, &err));
      ASSERT_TRUE(s.consume(&err));
    }
    EXPECT_EQ(s.events(), 800u);
  }
  Spool s;
  ASSERT_TRUE(s.open(d.path, 1 << 20, &err)) << err;
  EXPECT_EQ(s.events(), 800u);
  ASSERT_TRUE(s.append(recs(1500, 5), &err));
  auto ids = drain(s, 64);
  ASSERT_EQ(ids.size(), 805u);
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i], "id" + std::to_string(700 + i));
  EXPECT_EQ(s.events(), 0u);
  EXPECT_EQ(s.bytes(), 0u);
  EXPECT_TRUE(segments(d.path).empty());  // delivered segments are dropped
}

TEST(Spool, TheBoundHolds) {
  TempDir d;
  std::string err;
  Spool s;
  ASSERT_TRUE(s.open(d.path, 100 << 10, &err)) << err;
  size_t n = 0;
  while (s.room() >= Spool::encoded_size(recs(0, 1)[0]) && n < 10000) {
    ASSERT_TRUE(s.append(recs(static_cast<int>(n), 1), &err)) << err;
    ++n;
  }
  EXPECT_FALSE(s.append(recs(0, 1), &err));  // full: nothing written
  EXPECT_EQ(s.events(), n);
  EXPECT_LE(s.bytes(), uint64_t{100 << 10});
  EXPECT_EQ(drain(s, 100).size(), n);
}

TEST(Spool, GarbageInTheMiddleIsSkippedTheRestKept) {
  TempDir d;
  std::string err;
  {
    Spool s;
    ASSERT_TRUE(s.open(d.path, 64 << 20, &err)) << err;
    ASSERT_TRUE(s.append(recs(0, 10), &err));
  }
  auto segs = segments(d.path);
  ASSERT_EQ(segs.size(), 1u);
  {
    // Overwrite the 4th record's first bytes (its magic) with garbage.
    std::fstream f(segs[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(3 * Spool::encoded_size(recs(0, 1)[0])));
    f.write("garbage!", 8);
  }
  Spool s;
  ASSERT_TRUE(s.open(d.path, 64 << 20, &err)) << err;
  EXPECT_EQ(s.damaged_corrupt, 1u);
  EXPECT_EQ(s.damaged_truncated, 0u);
  EXPECT_FALSE(s.notes.empty());
  auto ids = drain(s, 4);
  std::vector<std::string> want;
  for (int i : {0, 1, 2, 4, 5, 6, 7, 8, 9}) want.push_back("id" + std::to_string(i));
  EXPECT_EQ(ids, want);
}

}  // namespace
}  // namespace reflex::deploy
