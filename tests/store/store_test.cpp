// EventIndex (in-memory) and SqliteStore (persistent, crash-safe) tests.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "reflex/store.h"

namespace reflex {
namespace {

namespace fs = std::filesystem;
constexpr TimeUs kSec = 1000000;

Event ev(const std::string& name, const std::string& dev, const std::string& host, TimeUs t,
         uint64_t seq = 0) {
  Event e;
  e.name = name;
  e.device = dev;
  e.host = host;
  e.time.wall = t;
  e.time.clock = host + "/kernel";
  e.seq = seq;
  e.fields = {{"xid", "79"}, {"bdf", "0000:18:00.0"}};
  e.evidence = "hosts/" + host + "/kern.log:12";
  e.line = "NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.";
  e.transport = kTransportKernel;
  return e;
}

TEST(EventIndex, RangeQueriesByNameDeviceHost) {
  EventIndex idx;
  // Inserted out of time order on purpose.
  idx.add(ev("a", "n1/gpu0", "n1", 30 * kSec));
  idx.add(ev("a", "n1/gpu1", "n1", 10 * kSec));
  idx.add(ev("b", "n2/gpu0", "n2", 20 * kSec));
  idx.add(ev("a", "n2/gpu0", "n2", 40 * kSec));
  auto a = idx.by_name("a", 0, 35 * kSec);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(*idx.get(a[0])->time.wall, 10 * kSec);
  EXPECT_EQ(*idx.get(a[1])->time.wall, 30 * kSec);
  EXPECT_EQ(idx.by_device("n2/gpu0", 0, 100 * kSec).size(), 2u);
  EXPECT_EQ(idx.by_host("n1", 15 * kSec, 100 * kSec).size(), 1u);
  EXPECT_TRUE(idx.by_name("zzz", 0, 100 * kSec).empty());
  auto all = idx.in_range(0, 100 * kSec);
  ASSERT_EQ(all.size(), 4u);
  for (size_t i = 1; i < all.size(); ++i)
    EXPECT_LE(*idx.get(all[i - 1])->time.wall, *idx.get(all[i])->time.wall);
  auto f = idx.first_of("a", 11 * kSec);
  ASSERT_TRUE(f);
  EXPECT_EQ(*idx.get(*f)->time.wall, 30 * kSec);
  EXPECT_EQ(idx.latest(), 40 * kSec);
}

TEST(EventIndex, PruneDropsOldEventsFromEveryIndex) {
  EventIndex idx;
  for (int i = 0; i < 100; ++i) idx.add(ev("a", "n/gpu" + std::to_string(i % 4), "n", i * kSec));
  EXPECT_EQ(idx.prune_before(60 * kSec), 60u);
  EXPECT_EQ(idx.size(), 40u);
  EXPECT_TRUE(idx.by_name("a", 0, 59 * kSec).empty());
  EXPECT_EQ(idx.by_name("a", 0, 1000 * kSec).size(), 40u);
  EXPECT_EQ(idx.by_device("n/gpu0", 0, 1000 * kSec).size(), 10u);
  EXPECT_EQ(idx.by_host("n", 0, 1000 * kSec).size(), 40u);
}

TEST(EventIndex, MonoOnlyEventsAreKeyedBySecondsSinceBoot) {
  EventIndex idx;
  Event e = ev("a", "n/gpu0", "n", 0);
  e.time.wall.reset();
  e.time.mono = 1843.308145;
  EXPECT_FALSE(EventIndex::timed_by_wall(e));
  EXPECT_EQ(EventIndex::key_time(e), 1843308145);
  idx.add(e);
  EXPECT_EQ(idx.by_name("a", 1843 * kSec, 1844 * kSec).size(), 1u);
}

class SqliteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("reflex-store-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "events.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string path_;
};

TEST_F(SqliteTest, RoundTripAndReplayInOrder) {
  std::string err;
  {
    StoreOptions o;
    o.batch_size = 3;
    auto s = SqliteStore::open(path_, &err, o);
    ASSERT_TRUE(s) << err;
    for (int i = 0; i < 10; ++i) {
      Event e = ev("xid79", "n/gpu0", "n", (10 - i) * kSec, i);
      if (i == 4) {
        e.time.wall.reset();
        e.time.mono = 12.5;
        e.line = "bad utf8 \xff\xfe";
        e.count = 7;
        e.first = 1;
        e.last = 2;
        e.bindings = {{"peer", "n/mlx5_0"}};
        e.placeholder_device = true;
      }
      ASSERT_TRUE(s->append(e, &err)) << err;
    }
    ASSERT_TRUE(s->commit(&err)) << err;
    EXPECT_EQ(s->committed(), 10u);
    ASSERT_TRUE(s->put_diagnosis({"inc-1", 1, 0, R"({"trigger":null})"}, &err)) << err;
    ASSERT_TRUE(s->put_diagnosis({"inc-1", 2, 0, R"({"trigger":{"event":"x"}})"}, &err)) << err;
  }
  auto s = SqliteStore::open(path_, &err);
  ASSERT_TRUE(s) << err;
  EXPECT_EQ(s->count_events(&err), 10);
  EXPECT_EQ(s->committed(), 10u);
  std::vector<Event> back;
  ASSERT_TRUE(s->replay(
      [&](Event&& e) {
        back.push_back(std::move(e));
        return true;
      },
      &err));
  ASSERT_EQ(back.size(), 10u);
  for (size_t i = 0; i < back.size(); ++i) EXPECT_EQ(back[i].seq, i);  // ingest order
  EXPECT_FALSE(back[4].time.wall.has_value());
  EXPECT_DOUBLE_EQ(*back[4].time.mono, 12.5);
  EXPECT_EQ(back[4].count, 7u);
  EXPECT_EQ(back[4].binding("peer") ? *back[4].binding("peer") : "", "n/mlx5_0");
  EXPECT_TRUE(back[4].placeholder_device);
  EXPECT_EQ(back[0].fields, (std::vector<std::pair<std::string, std::string>>{
                                {"xid", "79"}, {"bdf", "0000:18:00.0"}}));
  EXPECT_EQ(back[0].transport, kTransportKernel);
  std::vector<TimeUs> ts;
  ASSERT_TRUE(s->replay_range(
      2 * kSec, 5 * kSec,
      [&](Event&& e) {
        ts.push_back(*e.time.wall);
        return true;
      },
      &err));
  EXPECT_EQ(ts, (std::vector<TimeUs>{2 * kSec, 3 * kSec, 4 * kSec, 5 * kSec}));
  auto diags = s->latest_diagnoses(&err);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].revision, 2);
  EXPECT_EQ(s->integrity_check(), "ok");
}

TEST_F(SqliteTest, RefusesForeignAndNewerFiles) {
  std::string err;
  { std::ofstream(path_) << "this is not a database, just text that is long enough............"; }
  EXPECT_FALSE(SqliteStore::open(path_, &err));
  EXPECT_NE(err.find(path_), std::string::npos);
  fs::remove(path_);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE other(x)", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  err.clear();
  EXPECT_FALSE(SqliteStore::open(path_, &err));
  EXPECT_NE(err.find("not a Reflex"), std::string::npos) << err;
  fs::remove(path_);
  { ASSERT_TRUE(SqliteStore::open(path_, &err)); }
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  err.clear();
  EXPECT_FALSE(SqliteStore::open(path_, &err));
  EXPECT_NE(err.find("newer"), std::string::npos) << err;
}

TEST_F(SqliteTest, KillDashNineLosesNoCommittedEvent) {
  // A child inserts forever, committing every K events and reporting the
  // committed total through a pipe; we SIGKILL it mid-stream and reopen.
  constexpr size_t K = 50;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    std::string err;
    StoreOptions o;
    o.batch_size = K;
    o.commit_interval_s = 3600;  // whole batches only: the count below checks it
    auto s = SqliteStore::open(path_, &err, o);
    if (!s) _exit(3);
    for (uint64_t i = 0;; ++i) {
      if (!s->append(ev("xid95", "n/gpu" + std::to_string(i % 8), "n", i * 1000, i), &err))
        _exit(4);
      if ((i + 1) % K == 0) {
        uint64_t c = s->committed();
        if (write(fds[1], &c, sizeof c) != sizeof c) _exit(5);
      }
    }
  }
  close(fds[1]);
  uint64_t last = 0, c = 0;
  // Let it commit a good number of batches, then kill it without warning.
  while (last < 20 * K && read(fds[0], &c, sizeof c) == sizeof c) last = c;
  kill(pid, SIGKILL);
  // Reports that were already in the pipe are committed too.
  while (read(fds[0], &c, sizeof c) == sizeof c) last = c;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  ASSERT_GE(last, 20 * K);
  std::string err;
  auto s = SqliteStore::open(path_, &err);
  ASSERT_TRUE(s) << err;
  EXPECT_EQ(s->integrity_check(), "ok");
  int64_t n = s->count_events(&err);
  EXPECT_GE(n, static_cast<int64_t>(last));
  EXPECT_EQ(n % static_cast<int64_t>(K), 0) << "only whole batches are committed";
  // Replay reads every committed event back in order.
  uint64_t expect = 0;
  bool ordered = true;
  ASSERT_TRUE(s->replay(
      [&](Event&& e) {
        ordered &= e.seq == expect++;
        return true;
      },
      &err));
  EXPECT_TRUE(ordered);
  EXPECT_EQ(static_cast<int64_t>(expect), n);
}

// Counts rows through a second connection: what a reader (or a process that
// reopens the file after a crash) sees, i.e. only what was committed.
int64_t rows(const std::string& path, const char* table) {
  sqlite3* db = nullptr;
  int64_t n = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    std::string sql = std::string("SELECT count(*) FROM ") + table;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return n;
}

// A producer's open storms as a test controls them.
struct FakeStorms final : OpenStorms {
  uint64_t gen = 0;
  std::vector<Event> open;
  uint64_t generation() const override { return gen; }
  void for_each(const std::function<void(const Event&)>& fn) const override {
    for (const Event& e : open) fn(e);
  }
};

TEST_F(SqliteTest, GroupCommitByTimeAndByCount) {
  std::string err;
  StoreOptions o;
  o.batch_size = 4;
  o.commit_interval_s = 0.2;
  auto s = SqliteStore::open(path_, &err, o);
  ASSERT_TRUE(s) << err;
  EXPECT_FALSE(s->due_in()) << "nothing staged, nothing due";
  ASSERT_TRUE(s->append(ev("xid79", "n/gpu0", "n", kSec, 1), &err)) << err;
  ASSERT_TRUE(s->due_in());
  EXPECT_GT(*s->due_in(), 0.0);
  EXPECT_LE(*s->due_in(), 0.2);
  EXPECT_EQ(rows(path_, "events"), 0) << "staged, not committed yet";
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_EQ(*s->due_in(), 0.0);
  ASSERT_TRUE(s->sync(&err)) << err;
  EXPECT_EQ(rows(path_, "events"), 1) << "a quiet stream is committed after the interval";
  EXPECT_FALSE(s->due_in());
  // By count: the 4th staged event commits at once (append syncs by default).
  for (uint64_t i = 2; i <= 5; ++i) ASSERT_TRUE(s->append(ev("x", "n/gpu0", "n", kSec, i), &err));
  EXPECT_EQ(rows(path_, "events"), 5);
  EXPECT_EQ(s->committed(), 5u);
  // A diagnosis is due at once.
  ASSERT_TRUE(s->put_diagnosis({"inc-1", 1, 0, "{}"}, &err)) << err;
  EXPECT_EQ(rows(path_, "diagnoses"), 1);
}

TEST_F(SqliteTest, OpenStormsAreCommittedWithTheirRunningCountAndNeverTwice) {
  std::string err;
  StoreOptions o;
  o.commit_interval_s = 0.1;
  o.commit_in_append = false;
  FakeStorms storms;
  Event fold = ev("xid95", "n/gpu0", "n", 10 * kSec, 7);
  {
    auto s = SqliteStore::open(path_, &err, o);
    ASSERT_TRUE(s) << err;
    // The storm grows: the first change starts the clock, a commit follows
    // once it is commit_interval_s old, with the count as it is then.
    fold.count = 3;
    storms.open = {fold};
    storms.gen = 1;
    ASSERT_TRUE(s->sync(&err, &storms)) << err;
    EXPECT_EQ(rows(path_, "storms"), 0);
    ASSERT_TRUE(s->due_in());
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    storms.open[0].count = 40;
    storms.gen = 2;
    ASSERT_TRUE(s->sync(&err, &storms)) << err;
    EXPECT_EQ(rows(path_, "storms"), 1);
    EXPECT_EQ(rows(path_, "events"), 0);
    int64_t n = s->count_events(&err);
    EXPECT_EQ(n, 1);
    std::vector<Event> back;
    ASSERT_TRUE(s->replay(
        [&](Event&& e) {
          back.push_back(std::move(e));
          return true;
        },
        &err));
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].count, 40u);
    // Unchanged storms: nothing due, no rewrite.
    ASSERT_TRUE(s->sync(&err, &storms));
    EXPECT_FALSE(s->due_in());
    // The storm ends: its final event is appended and it leaves the open set;
    // one commit moves it from `storms` to `events`.
    fold.count = 55;
    ASSERT_TRUE(s->append(fold, &err)) << err;
    EXPECT_EQ(rows(path_, "events"), 0) << "commit_in_append=false: the owner commits";
    storms.open.clear();
    storms.gen = 3;
    ASSERT_TRUE(s->commit(&err, &storms)) << err;
    EXPECT_EQ(rows(path_, "storms"), 0);
    EXPECT_EQ(rows(path_, "events"), 1);
    // A second storm is committed, then more is staged and the store is
    // destroyed without a commit: it rolls back like a crash (a commit
    // without the storms could count a fold twice).
    storms.open = {ev("xid95", "n/gpu1", "n", 20 * kSec, 9)};
    storms.gen = 4;
    ASSERT_TRUE(s->commit(&err, &storms)) << err;
    ASSERT_TRUE(s->append(ev("xid79", "n/gpu2", "n", 21 * kSec, 10), &err));
  }
  EXPECT_EQ(rows(path_, "events"), 1);
  EXPECT_EQ(rows(path_, "storms"), 1) << "a storm cut off keeps its last committed count";
  // Another writer replaces only its own storm rows.
  auto s2 = SqliteStore::open(path_, &err, o);
  ASSERT_TRUE(s2) << err;
  FakeStorms mine;
  mine.open = {ev("xid95", "m/gpu0", "m", 30 * kSec, 1)};
  mine.gen = 1;
  ASSERT_TRUE(s2->commit(&err, &mine)) << err;
  EXPECT_EQ(rows(path_, "storms"), 2);
  mine.open.clear();
  mine.gen = 2;
  ASSERT_TRUE(s2->commit(&err, &mine)) << err;
  EXPECT_EQ(rows(path_, "storms"), 1);
  std::vector<TimeUs> ts;
  ASSERT_TRUE(s2->replay_range(
      0, 100 * kSec,
      [&](Event&& e) {
        ts.push_back(*e.time.wall);
        return true;
      },
      &err));
  EXPECT_EQ(ts, (std::vector<TimeUs>{10 * kSec, 20 * kSec}));
  EXPECT_EQ(s2->integrity_check(), "ok");
}

}  // namespace
}  // namespace reflex
