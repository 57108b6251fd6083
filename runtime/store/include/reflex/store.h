// Event storage for the engine and `reflex watch`.
//
// EventIndex: an in-memory, time-windowed index of recognized events — by
// name, by device and by host, each sorted by time — with O(log n) range
// queries and pruning by age. Events without a wall time (raw dmesg without
// boot_time) are keyed by their seconds since boot; `timed_by_wall()` tells.
//
// SqliteStore: the optional persistent store (`--db FILE`): WAL journal,
// versioned schema (PRAGMA user_version + a `meta` table), tables `events`,
// `storms` (storm summaries not closed at their writer's last commit) and
// `diagnoses` (diagnosis JSON text with incident id and revision).
//
// Group commit: writes are staged in one open transaction that is committed
// when `batch_size` events are staged or the oldest staged write is
// `commit_interval_s` old, whichever comes first (a staged diagnosis makes it
// due at once). A crash (even kill -9) loses only what was staged since the
// last commit — at most commit_interval_s of input — and the file stays
// readable. Storms: a dedup fold (ingest) is one event that is emitted only
// when the storm ends; a commit given the producer's OpenStorms also rewrites
// this writer's rows of `storms` with every fold still open and its running
// count, so a storm survives a crash with its count as of the last commit.
// Each line is counted once: a fold is either in `storms` or, once closed, in
// `events`, never both, because the caller commits under the producer's lock
// (Engine/Ingestor::with_open_storms, Ingestor::set_progress).
//
// Neither class is thread-safe; guard with a mutex or use one per thread.
// Nothing here throws.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "reflex/event.h"

namespace reflex {

class EventIndex {
 public:
  using Id = uint64_t;

  // Adds an event and returns its id (ids increase with insertion).
  Id add(Event ev);
  const Event* get(Id id) const;
  size_t size() const { return events_.size(); }

  // Ids of events in [from, to] (inclusive, microseconds), in time order
  // (insertion order among equal times).
  std::vector<Id> by_name(const std::string& name, TimeUs from, TimeUs to) const;
  std::vector<Id> by_device(const std::string& device, TimeUs from, TimeUs to) const;
  std::vector<Id> by_host(const std::string& host, TimeUs from, TimeUs to) const;
  // All events in [from, to] in time order.
  std::vector<Id> in_range(TimeUs from, TimeUs to) const;
  // Earliest event of a name at or after `from` (nullopt if none).
  std::optional<Id> first_of(const std::string& name, TimeUs from) const;

  // Drops every event whose key time is before `cutoff`; returns how many.
  size_t prune_before(TimeUs cutoff);
  // Latest key time seen (0 when empty).
  TimeUs latest() const { return latest_; }

  // The time an event is indexed under: wall, else mono seconds as us, else 0.
  static TimeUs key_time(const Event& ev);
  static bool timed_by_wall(const Event& ev) { return ev.time.wall.has_value(); }

 private:
  using Series = std::multimap<TimeUs, Id>;
  static std::vector<Id> range(const Series& s, TimeUs from, TimeUs to);
  static void erase_from(std::unordered_map<std::string, Series>& idx, const std::string& key,
                         TimeUs t, Id id);

  std::unordered_map<Id, Event> events_;
  Series all_;
  std::unordered_map<std::string, Series> by_name_, by_device_, by_host_;
  Id next_ = 1;
  TimeUs latest_ = 0;
};

struct StoredDiagnosis {
  std::string incident;  // stable incident id
  int revision = 0;
  TimeUs created = 0;  // when it was stored
  std::string json;    // the diagnosis document (interfaces.md §5)
};

struct StoreOptions {
  size_t batch_size = 1000;        // commit once this many events are staged...
  double commit_interval_s = 1.0;  // ...or once the oldest staged write is this old
  // append() and put_diagnosis() commit by themselves when a commit is due.
  // A writer that keeps open storms sets this false and calls sync() under
  // the producer's lock: append() usually runs in the producer's sink, where
  // the open storms cannot be read (the lock is held), and a commit without
  // them would leave a closed fold counted twice (in `events` and `storms`).
  bool commit_in_append = true;
};

class SqliteStore {
 public:
  static constexpr int kSchemaVersion = 1;

  // Opens or creates `path`. nullptr + *error when the file is not a Reflex
  // database, has a newer schema, or cannot be opened.
  static std::unique_ptr<SqliteStore> open(const std::string& path, std::string* error,
                                           StoreOptions opts = {});
  // Commits what is staged, unless this store has written open storms: then
  // it rolls back as a crash would (the last commit is consistent, a commit
  // without the storms might not be). Writers call commit(storms) first.
  ~SqliteStore();
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  // Stages an event (see StoreOptions::commit_in_append). false + *error on failure.
  bool append(const Event& ev, std::string* error);
  // Commits now. With `storms`, this writer's rows of `storms` are replaced
  // by the open storms when their generation changed since the last commit.
  // No-op when nothing is staged and the storms did not change.
  bool commit(std::string* error, const OpenStorms* storms = nullptr);
  // commit() when one is due: batch_size events staged, a staged write (or a
  // change of the storms' generation first seen here) commit_interval_s old,
  // or a staged diagnosis. Call it at least every commit_interval_s while
  // input flows (and at due_in() when it stops) for the 1 s guarantee.
  bool sync(std::string* error, const OpenStorms* storms = nullptr);
  // Seconds until sync() would commit (0: due now); nullopt: nothing pending.
  std::optional<double> due_in() const;
  // Rows of `events` committed so far (this process) + those already in the file.
  uint64_t committed() const { return committed_; }

  // Stages one diagnosis revision and makes a commit due now.
  bool put_diagnosis(const StoredDiagnosis& d, std::string* error);
  // Latest revision of every incident, by incident id.
  std::vector<StoredDiagnosis> latest_diagnoses(std::string* error) const;

  // Committed events in ingest order (by row id), then the storm summaries
  // of `storms` (each as of its writer's last commit); fn returns false to stop.
  bool replay(const std::function<bool(Event&&)>& fn, std::string* error) const;
  // The same with key time in [from, to], in time order.
  bool replay_range(TimeUs from, TimeUs to, const std::function<bool(Event&&)>& fn,
                    std::string* error) const;
  // Rows of `events` and `storms` in the file (what replay() reads).
  int64_t count_events(std::string* error) const;
  // "ok" when PRAGMA integrity_check passes, else its first message.
  std::string integrity_check() const;

 private:
  SqliteStore();
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint64_t committed_ = 0;
};

}  // namespace reflex
