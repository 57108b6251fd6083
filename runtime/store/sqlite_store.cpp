// The persistent store: one SQLite file in WAL mode. Durability: every group
// commit is one transaction with synchronous=FULL, so a committed group
// survives a process kill and a power loss; an interrupted one rolls back on
// reopen. Group commit and storms: reflex/store.h.
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "reflex/store.h"

#include "reflex/event_json.h"

namespace reflex {

namespace {

std::string errmsg(sqlite3* db, const char* what) {
  return std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory");
}

bool exec(sqlite3* db, const char* sql, std::string* error) {
  char* msg = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
    if (error) *error = std::string(sql).substr(0, 40) + ": " + (msg ? msg : "error");
    sqlite3_free(msg);
    return false;
  }
  return true;
}

struct Stmt {
  sqlite3_stmt* s = nullptr;
  ~Stmt() { sqlite3_finalize(s); }
};

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  device TEXT NOT NULL,
  host TEXT NOT NULL,
  key_ts INTEGER NOT NULL,     -- wall us, else mono us, else 0 (EventIndex::key_time)
  wall INTEGER,                -- NULL for raw dmesg without boot_time
  seq INTEGER NOT NULL,
  json TEXT NOT NULL           -- event_to_record_json (reflex/event_json.h)
);
CREATE INDEX IF NOT EXISTS events_by_time ON events(key_ts);
CREATE INDEX IF NOT EXISTS events_by_name ON events(name, key_ts);
CREATE INDEX IF NOT EXISTS events_by_device ON events(device, key_ts);
-- Storm summaries (dedup folds) not closed at their writer's last commit:
-- still running, or cut off by a crash. A writer replaces only its own rows
-- (writer = a random id per open store) at each commit, so several writers,
-- or a crashed one's leftovers, never clash. Added to schema 1 without a
-- version bump: readers that do not know it still read `events` as before.
CREATE TABLE IF NOT EXISTS storms(
  id INTEGER PRIMARY KEY,
  writer INTEGER NOT NULL,
  name TEXT NOT NULL,
  device TEXT NOT NULL,
  host TEXT NOT NULL,
  key_ts INTEGER NOT NULL,
  wall INTEGER,
  seq INTEGER NOT NULL,
  json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS storms_by_writer ON storms(writer);
CREATE TABLE IF NOT EXISTS diagnoses(
  id INTEGER PRIMARY KEY,
  incident TEXT NOT NULL,
  revision INTEGER NOT NULL,
  created INTEGER NOT NULL,
  json TEXT NOT NULL,
  UNIQUE(incident, revision)
);
)sql";

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

using Clock = std::chrono::steady_clock;

// Binds the columns name..json shared by `events` and `storms` from `first`.
void bind_event(sqlite3_stmt* st, int first, const Event& ev, const std::string& js) {
  sqlite3_bind_text(st, first, ev.name.data(), static_cast<int>(ev.name.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(st, first + 1, ev.device.data(), static_cast<int>(ev.device.size()),
                    SQLITE_TRANSIENT);
  sqlite3_bind_text(st, first + 2, ev.host.data(), static_cast<int>(ev.host.size()),
                    SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, first + 3, EventIndex::key_time(ev));
  if (ev.time.wall)
    sqlite3_bind_int64(st, first + 4, *ev.time.wall);
  else
    sqlite3_bind_null(st, first + 4);
  sqlite3_bind_int64(st, first + 5, static_cast<sqlite3_int64>(ev.seq));
  sqlite3_bind_text(st, first + 6, js.data(), static_cast<int>(js.size()), SQLITE_TRANSIENT);
}

}  // namespace

struct SqliteStore::Impl {
  sqlite3* db = nullptr;
  sqlite3_stmt* insert = nullptr;
  sqlite3_stmt* insert_storm = nullptr;
  sqlite3_stmt* clear_storms = nullptr;
  StoreOptions o;
  int64_t writer = 0;  // this store's rows of `storms`
  bool in_txn = false;
  size_t in_batch = 0;      // events staged in the open transaction
  Clock::time_point since;  // first write staged in the open transaction
  bool diagnosis_staged = false;
  bool storms_used = false;                         // a commit has written this writer's storms
  uint64_t storms_written = 0;                      // generation they were written at
  std::optional<Clock::time_point> storms_changed;  // first seen != storms_written
  ~Impl() {
    sqlite3_finalize(insert);
    sqlite3_finalize(insert_storm);
    sqlite3_finalize(clear_storms);
    if (db) sqlite3_close_v2(db);  // an open transaction rolls back
  }
  bool begin(std::string* error) {
    if (in_txn) return true;
    if (!exec(db, "BEGIN IMMEDIATE", error)) return false;
    in_txn = true;
    since = Clock::now();
    return true;
  }
  double interval_left(Clock::time_point t0, Clock::time_point now) const {
    double age = std::chrono::duration<double>(now - t0).count();
    return std::max(0.0, o.commit_interval_s - age);
  }
};

SqliteStore::SqliteStore() : impl_(std::make_unique<Impl>()) {}

SqliteStore::~SqliteStore() {
  if (impl_->storms_used) return;  // see the header: rolls back like a crash
  std::string ignored;
  commit(&ignored);
}

std::unique_ptr<SqliteStore> SqliteStore::open(const std::string& path, std::string* error,
                                               StoreOptions opts) {
  std::unique_ptr<SqliteStore> s(new SqliteStore());
  Impl& m = *s->impl_;
  m.o = opts;
  if (m.o.batch_size == 0) m.o.batch_size = 1;
  if (!(m.o.commit_interval_s >= 0)) m.o.commit_interval_s = 0;  // NaN or negative: every sync
  {
    // Distinct per open store, also across processes and hosts sharing a file.
    std::random_device rd;
    std::mt19937_64 g((static_cast<uint64_t>(rd()) << 32) ^ rd() ^
                      static_cast<uint64_t>(::getpid()) ^
                      static_cast<uint64_t>(Clock::now().time_since_epoch().count()));
    m.writer = static_cast<int64_t>(g() >> 1);
  }
  auto fail = [&](const std::string& msg) -> std::unique_ptr<SqliteStore> {
    if (error) *error = path + ": " + msg;
    return nullptr;
  };
  if (sqlite3_open_v2(path.c_str(), &m.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK)
    return fail(errmsg(m.db, "cannot open"));
  sqlite3_busy_timeout(m.db, 5000);
  std::string err;
  // Reading the schema first also rejects files that are not SQLite at all.
  int user_version = 0;
  bool has_tables = false, is_reflex = false;
  {
    Stmt st;
    if (sqlite3_prepare_v2(m.db, "PRAGMA user_version", -1, &st.s, nullptr) != SQLITE_OK ||
        sqlite3_step(st.s) != SQLITE_ROW)
      return fail(errmsg(m.db, "not a database"));
    user_version = sqlite3_column_int(st.s, 0);
  }
  {
    Stmt st;
    if (sqlite3_prepare_v2(m.db, "SELECT count(*) FROM sqlite_master", -1, &st.s, nullptr) !=
            SQLITE_OK ||
        sqlite3_step(st.s) != SQLITE_ROW)
      return fail(errmsg(m.db, "not a database"));
    has_tables = sqlite3_column_int(st.s, 0) > 0;
  }
  if (has_tables) {
    Stmt st;
    if (sqlite3_prepare_v2(m.db, "SELECT value FROM meta WHERE key='application'", -1, &st.s,
                           nullptr) == SQLITE_OK &&
        sqlite3_step(st.s) == SQLITE_ROW) {
      auto* v = sqlite3_column_text(st.s, 0);
      is_reflex = v && std::string(reinterpret_cast<const char*>(v)) == "reflex";
    }
    if (!is_reflex) return fail("not a Reflex event database (no meta.application = reflex)");
    if (user_version > kSchemaVersion)
      return fail("schema version " + std::to_string(user_version) +
                  " is newer than this reflex supports (" + std::to_string(kSchemaVersion) + ")");
  }
  if (!exec(m.db, "PRAGMA journal_mode=WAL", &err) ||
      !exec(m.db, "PRAGMA synchronous=FULL", &err) || !exec(m.db, "BEGIN IMMEDIATE", &err))
    return fail(err);
  bool ok = exec(m.db, kSchema, &err) &&
            exec(m.db,
                 "INSERT OR IGNORE INTO meta(key, value) VALUES ('application', 'reflex'),"
                 " ('schema_version', '1'), ('created_by', 'reflex store')",
                 &err) &&
            exec(m.db, "PRAGMA user_version = 1", &err);
  // Future migrations go here, keyed on user_version.
  if (!ok) {
    exec(m.db, "ROLLBACK", nullptr);
    return fail(err);
  }
  if (!exec(m.db, "COMMIT", &err)) return fail(err);
  if (sqlite3_prepare_v2(m.db,
                         "INSERT INTO events(name, device, host, key_ts, wall, seq, json) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                         -1, &m.insert, nullptr) != SQLITE_OK ||
      sqlite3_prepare_v2(m.db,
                         "INSERT INTO storms(writer, name, device, host, key_ts, wall, seq, json) "
                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                         -1, &m.insert_storm, nullptr) != SQLITE_OK ||
      sqlite3_prepare_v2(m.db, "DELETE FROM storms WHERE writer = ?1", -1, &m.clear_storms,
                         nullptr) != SQLITE_OK)
    return fail(errmsg(m.db, "prepare"));
  Stmt st;
  if (sqlite3_prepare_v2(m.db, "SELECT count(*) FROM events", -1, &st.s, nullptr) == SQLITE_OK &&
      sqlite3_step(st.s) == SQLITE_ROW)
    s->committed_ =
        static_cast<uint64_t>(std::max<sqlite3_int64>(0, sqlite3_column_int64(st.s, 0)));
  return s;
}

bool SqliteStore::append(const Event& ev, std::string* error) {
  Impl& m = *impl_;
  if (!m.begin(error)) return false;
  std::string js = event_to_record_json(ev);
  sqlite3_reset(m.insert);
  bind_event(m.insert, 1, ev, js);
  if (sqlite3_step(m.insert) != SQLITE_DONE) {
    if (error) *error = errmsg(m.db, "insert event");
    return false;
  }
  ++m.in_batch;
  if (m.o.commit_in_append) return sync(error);
  return true;
}

std::optional<double> SqliteStore::due_in() const {
  const Impl& m = *impl_;
  auto now = Clock::now();
  std::optional<double> left;
  if (m.in_txn) {
    if (m.in_batch >= m.o.batch_size || m.diagnosis_staged) return 0.0;
    left = m.interval_left(m.since, now);
  }
  if (m.storms_changed) {
    double l = m.interval_left(*m.storms_changed, now);
    left = left ? std::min(*left, l) : l;
  }
  return left;
}

bool SqliteStore::sync(std::string* error, const OpenStorms* storms) {
  Impl& m = *impl_;
  if (storms && !m.storms_changed && storms->generation() != m.storms_written)
    m.storms_changed = Clock::now();
  auto left = due_in();
  if (!left || *left > 0) return true;
  return commit(error, storms);
}

bool SqliteStore::commit(std::string* error, const OpenStorms* storms) {
  Impl& m = *impl_;
  bool storms_due = storms && storms->generation() != m.storms_written;
  if (!m.in_txn && !storms_due) return true;
  if (!m.begin(error)) return false;
  if (storms_due) {
    sqlite3_reset(m.clear_storms);
    sqlite3_bind_int64(m.clear_storms, 1, m.writer);
    if (sqlite3_step(m.clear_storms) != SQLITE_DONE) {
      if (error) *error = errmsg(m.db, "clear storms");
      return false;
    }
    bool ok = true;
    storms->for_each([&](const Event& ev) {
      if (!ok) return;
      std::string js = event_to_record_json(ev);
      sqlite3_reset(m.insert_storm);
      sqlite3_bind_int64(m.insert_storm, 1, m.writer);
      bind_event(m.insert_storm, 2, ev, js);
      if (sqlite3_step(m.insert_storm) != SQLITE_DONE) {
        if (error) *error = errmsg(m.db, "insert storm");
        ok = false;
      }
    });
    if (!ok) return false;
    m.storms_used = true;
  }
  // A failed COMMIT (e.g. busy) keeps the transaction open for the next try.
  if (!exec(m.db, "COMMIT", error)) return false;
  m.in_txn = false;
  committed_ += m.in_batch;
  m.in_batch = 0;
  m.diagnosis_staged = false;
  if (storms) {
    m.storms_written = storms->generation();
    m.storms_changed.reset();
  }
  return true;
}

bool SqliteStore::put_diagnosis(const StoredDiagnosis& d, std::string* error) {
  Impl& m = *impl_;
  if (!m.begin(error)) return false;
  Stmt st;
  if (sqlite3_prepare_v2(m.db,
                         "INSERT OR REPLACE INTO diagnoses(incident, revision, created, json) "
                         "VALUES (?1, ?2, ?3, ?4)",
                         -1, &st.s, nullptr) != SQLITE_OK) {
    if (error) *error = errmsg(m.db, "prepare");
    return false;
  }
  sqlite3_bind_text(st.s, 1, d.incident.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(st.s, 2, d.revision);
  sqlite3_bind_int64(st.s, 3, d.created ? d.created : now_us());
  sqlite3_bind_text(st.s, 4, d.json.data(), static_cast<int>(d.json.size()), SQLITE_TRANSIENT);
  if (sqlite3_step(st.s) != SQLITE_DONE) {
    if (error) *error = errmsg(m.db, "insert diagnosis");
    return false;
  }
  // Rare and what an operator acts on: due now, not after the interval.
  m.diagnosis_staged = true;
  if (m.o.commit_in_append) return commit(error);
  return true;
}

std::vector<StoredDiagnosis> SqliteStore::latest_diagnoses(std::string* error) const {
  std::vector<StoredDiagnosis> out;
  Stmt st;
  if (sqlite3_prepare_v2(impl_->db,
                         "SELECT incident, revision, created, json FROM diagnoses d WHERE "
                         "revision = (SELECT max(revision) FROM diagnoses WHERE incident = "
                         "d.incident) ORDER BY incident",
                         -1, &st.s, nullptr) != SQLITE_OK) {
    if (error) *error = errmsg(impl_->db, "prepare");
    return out;
  }
  while (sqlite3_step(st.s) == SQLITE_ROW) {
    StoredDiagnosis d;
    d.incident = reinterpret_cast<const char*>(sqlite3_column_text(st.s, 0));
    d.revision = sqlite3_column_int(st.s, 1);
    d.created = sqlite3_column_int64(st.s, 2);
    d.json = reinterpret_cast<const char*>(sqlite3_column_text(st.s, 3));
    out.push_back(std::move(d));
  }
  return out;
}

namespace {
bool replay_query(sqlite3* db, const char* sql, TimeUs from, TimeUs to, bool bind,
                  const std::function<bool(Event&&)>& fn, std::string* error) {
  Stmt st;
  if (sqlite3_prepare_v2(db, sql, -1, &st.s, nullptr) != SQLITE_OK) {
    if (error) *error = errmsg(db, "prepare");
    return false;
  }
  if (bind) {
    sqlite3_bind_int64(st.s, 1, from);
    sqlite3_bind_int64(st.s, 2, to);
  }
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    const char* txt = reinterpret_cast<const char*>(sqlite3_column_text(st.s, 0));
    int len = sqlite3_column_bytes(st.s, 0);
    std::string why;
    auto ev = parse_event_json(std::string_view(txt ? txt : "", static_cast<size_t>(len)), &why);
    if (!ev) {
      if (error) *error = "corrupt event row: " + why;
      return false;
    }
    if (!fn(std::move(*ev))) return true;
  }
  if (rc != SQLITE_DONE) {
    if (error) *error = errmsg(db, "read events");
    return false;
  }
  return true;
}
}  // namespace

bool SqliteStore::replay(const std::function<bool(Event&&)>& fn, std::string* error) const {
  return replay_query(impl_->db,
                      "SELECT json FROM (SELECT json, 0 AS t, id FROM events UNION ALL "
                      "SELECT json, 1, id FROM storms) ORDER BY t, id",
                      0, 0, false, fn, error);
}

bool SqliteStore::replay_range(TimeUs from, TimeUs to, const std::function<bool(Event&&)>& fn,
                               std::string* error) const {
  return replay_query(impl_->db,
                      "SELECT json FROM (SELECT json, key_ts, 0 AS t, id FROM events WHERE key_ts "
                      "BETWEEN ?1 AND ?2 UNION ALL SELECT json, key_ts, 1, id FROM storms WHERE "
                      "key_ts BETWEEN ?1 AND ?2) ORDER BY key_ts, t, id",
                      from, to, true, fn, error);
}

int64_t SqliteStore::count_events(std::string* error) const {
  Stmt st;
  if (sqlite3_prepare_v2(impl_->db,
                         "SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM storms)", -1,
                         &st.s, nullptr) != SQLITE_OK ||
      sqlite3_step(st.s) != SQLITE_ROW) {
    if (error) *error = errmsg(impl_->db, "count");
    return -1;
  }
  return sqlite3_column_int64(st.s, 0);
}

std::string SqliteStore::integrity_check() const {
  Stmt st;
  if (sqlite3_prepare_v2(impl_->db, "PRAGMA integrity_check", -1, &st.s, nullptr) != SQLITE_OK)
    return errmsg(impl_->db, "integrity_check");
  if (sqlite3_step(st.s) != SQLITE_ROW) return errmsg(impl_->db, "integrity_check");
  const char* v = reinterpret_cast<const char*>(sqlite3_column_text(st.s, 0));
  return v ? v : "";
}

}  // namespace reflex
