// The persistent store: one SQLite file in WAL mode. Durability: every batch
// is one transaction with synchronous=FULL, so a committed batch survives a
// process kill and a power loss; an interrupted batch rolls back on reopen.
#include <sqlite3.h>

#include <chrono>

#include "reflex/store.h"

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
  json TEXT NOT NULL           -- event_to_store_json
);
CREATE INDEX IF NOT EXISTS events_by_time ON events(key_ts);
CREATE INDEX IF NOT EXISTS events_by_name ON events(name, key_ts);
CREATE INDEX IF NOT EXISTS events_by_device ON events(device, key_ts);
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

}  // namespace

struct SqliteStore::Impl {
  sqlite3* db = nullptr;
  sqlite3_stmt* insert = nullptr;
  size_t batch_size = 1000;
  size_t in_batch = 0;
  ~Impl() {
    sqlite3_finalize(insert);
    if (db) sqlite3_close_v2(db);
  }
};

SqliteStore::SqliteStore() : impl_(std::make_unique<Impl>()) {}

SqliteStore::~SqliteStore() {
  std::string ignored;
  commit(&ignored);
}

std::unique_ptr<SqliteStore> SqliteStore::open(const std::string& path, std::string* error,
                                               size_t batch_size) {
  std::unique_ptr<SqliteStore> s(new SqliteStore());
  Impl& m = *s->impl_;
  m.batch_size = batch_size == 0 ? 1 : batch_size;
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
                         -1, &m.insert, nullptr) != SQLITE_OK)
    return fail(errmsg(m.db, "prepare"));
  std::string cerr;
  int64_t n = s->count_events(&cerr);
  s->committed_ = n > 0 ? static_cast<uint64_t>(n) : 0;
  return s;
}

bool SqliteStore::append(const Event& ev, std::string* error) {
  Impl& m = *impl_;
  if (m.in_batch == 0 && !exec(m.db, "BEGIN IMMEDIATE", error)) return false;
  std::string js = event_to_store_json(ev);
  sqlite3_reset(m.insert);
  sqlite3_bind_text(m.insert, 1, ev.name.data(), static_cast<int>(ev.name.size()),
                    SQLITE_TRANSIENT);
  sqlite3_bind_text(m.insert, 2, ev.device.data(), static_cast<int>(ev.device.size()),
                    SQLITE_TRANSIENT);
  sqlite3_bind_text(m.insert, 3, ev.host.data(), static_cast<int>(ev.host.size()),
                    SQLITE_TRANSIENT);
  sqlite3_bind_int64(m.insert, 4, EventIndex::key_time(ev));
  if (ev.time.wall)
    sqlite3_bind_int64(m.insert, 5, *ev.time.wall);
  else
    sqlite3_bind_null(m.insert, 5);
  sqlite3_bind_int64(m.insert, 6, static_cast<sqlite3_int64>(ev.seq));
  sqlite3_bind_text(m.insert, 7, js.data(), static_cast<int>(js.size()), SQLITE_TRANSIENT);
  if (sqlite3_step(m.insert) != SQLITE_DONE) {
    if (error) *error = errmsg(m.db, "insert event");
    return false;
  }
  ++m.in_batch;
  if (m.in_batch >= m.batch_size) return commit(error);
  return true;
}

bool SqliteStore::commit(std::string* error) {
  Impl& m = *impl_;
  if (m.in_batch == 0) return true;
  if (!exec(m.db, "COMMIT", error)) return false;
  committed_ += m.in_batch;
  m.in_batch = 0;
  return true;
}

bool SqliteStore::put_diagnosis(const StoredDiagnosis& d, std::string* error) {
  Impl& m = *impl_;
  if (!commit(error)) return false;
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
    auto ev = event_from_store_json(std::string_view(txt ? txt : "", static_cast<size_t>(len)), &why);
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
  return replay_query(impl_->db, "SELECT json FROM events ORDER BY id", 0, 0, false, fn, error);
}

bool SqliteStore::replay_range(TimeUs from, TimeUs to, const std::function<bool(Event&&)>& fn,
                               std::string* error) const {
  return replay_query(impl_->db,
                      "SELECT json FROM events WHERE key_ts BETWEEN ?1 AND ?2 ORDER BY key_ts, id",
                      from, to, true, fn, error);
}

int64_t SqliteStore::count_events(std::string* error) const {
  Stmt st;
  if (sqlite3_prepare_v2(impl_->db, "SELECT count(*) FROM events", -1, &st.s, nullptr) !=
          SQLITE_OK ||
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
