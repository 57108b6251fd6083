// Event storage for the engine and `reflex watch`.
//
// EventIndex: an in-memory, time-windowed index of recognized events — by
// name, by device and by host, each sorted by time — with O(log n) range
// queries and pruning by age. Events without a wall time (raw dmesg without
// boot_time) are keyed by their seconds since boot; `timed_by_wall()` tells.
//
// SqliteStore: the optional persistent store (`--db FILE`): WAL journal,
// versioned schema (PRAGMA user_version + a `meta` table), tables `events`
// and `diagnoses` (diagnosis JSON text with incident id and revision),
// batched transactions. A crash (even kill -9) loses at most the events of
// the open batch; every committed batch survives and the file stays readable.
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
  TimeUs created = 0;    // when it was stored
  std::string json;      // the diagnosis document (spec §5)
};

class SqliteStore {
 public:
  static constexpr int kSchemaVersion = 1;

  // Opens or creates `path`. nullptr + *error when the file is not a Reflex
  // database, has a newer schema, or cannot be opened.
  static std::unique_ptr<SqliteStore> open(const std::string& path, std::string* error,
                                           size_t batch_size = 1000);
  ~SqliteStore();
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  // Queues an event; commits when the batch is full. false + *error on failure.
  bool append(const Event& ev, std::string* error);
  // Commits the open batch (no-op when empty).
  bool commit(std::string* error);
  // Events committed so far (this process) + those already in the file.
  uint64_t committed() const { return committed_; }

  // Stores one diagnosis revision (committed immediately, with any open batch).
  bool put_diagnosis(const StoredDiagnosis& d, std::string* error);
  // Latest revision of every incident, by incident id.
  std::vector<StoredDiagnosis> latest_diagnoses(std::string* error) const;

  // Committed events in ingest order (by row id); fn returns false to stop.
  bool replay(const std::function<bool(Event&&)>& fn, std::string* error) const;
  // Committed events with key time in [from, to], in time order.
  bool replay_range(TimeUs from, TimeUs to, const std::function<bool(Event&&)>& fn,
                    std::string* error) const;
  int64_t count_events(std::string* error) const;
  // "ok" when PRAGMA integrity_check passes, else its first message.
  std::string integrity_check() const;

 private:
  SqliteStore();
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint64_t committed_ = 0;
};

// Event <-> the store's JSON column format (every Event member, lossless;
// not the `reflex events` output format). Never throws; invalid UTF-8 is
// replaced.
std::string event_to_store_json(const Event& ev);
std::optional<Event> event_from_store_json(std::string_view json, std::string* error);

}  // namespace reflex
