// --threads: what the workers of one bundle walk hand the replay, and the
// walk they share. A worker Ingestor::Impl reads whole files and records, in
// line order, what the sequential walk would do to the state shared across
// files (storm windows advancing, events built, located and folded,
// unrecognised lines); the main Impl replays that file by file in walk
// order, so events, their sequence numbers, storms, notes and counters are
// those of one thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reflex/event.h"
#include "reflex/ingest_stats.h"
#include "reflex/kb.h"
#include "reflex/log_format.h"
#include "reflex/signature_match.h"

namespace reflex::ingest {

// An op's texts (line, host, clock) are ranges of its batch's arena, not
// strings of their own: one op per matched line, and a malloc + copy per
// string (the clock "<host>/kernel" is past the small-string size) made
// the worker's side of the hand-over ~14% of its CPU on the telemetry mix.
// Captured fields travel the same way, as (name, value) ranges in the
// batch: a FieldValues per op was a malloc on the worker and a free on the
// replay's thread, ~6% of the threaded telemetry run's CPU in malloc/free.
struct Text {
  uint32_t off = 0, len = 0;
};

struct Op {
  enum Kind : uint8_t { advance, match, unrecognised } kind = advance;
  Transport transport = kTransportApp;
  bool host_known = true;
  bool time_inherited = false;  // match: EventTime::inherited
  int rank_hint = -1;
  uint32_t si = 0;
  TimeUs t = 0;  // advance
  std::optional<TimeUs> wall;
  std::optional<double> mono;
  Text clock, host, line;
  uint64_t line_no = 0;
  uint32_t field_first = 0, field_count = 0;  // OpBatch::fields
  uint64_t repeat = 1;  // unrecognised: lines of si counted, none of them a sample
};

struct OpBatch {
  std::vector<Op> ops;
  std::string text;  // the arena of the ops' Text ranges
  std::vector<std::pair<Text, Text>> fields;
  Text keep(std::string_view v) {
    Text t{static_cast<uint32_t>(text.size()), static_cast<uint32_t>(v.size())};
    text.append(v);
    return t;
  }
  std::string_view view(Text t) const { return std::string_view(text).substr(t.off, t.len); }
  void keep_fields(const FieldValues& fv, Op* op) {
    op->field_first = static_cast<uint32_t>(fields.size());
    op->field_count = static_cast<uint32_t>(fv.size());
    for (const auto& [name, value] : fv) fields.emplace_back(keep(name), keep(value));
  }
  // Into *out, reusing its strings' storage.
  void view_fields(const Op& op, FieldValues* out) const {
    out->resize(op.field_count);
    for (uint32_t i = 0; i < op.field_count; ++i) {
      const auto& [name, value] = fields[op.field_first + i];
      (*out)[i].first.assign(view(name));
      (*out)[i].second.assign(view(value));
    }
  }
  void clear() {
    ops.clear();
    text.clear();
    fields.clear();
  }
};

// One file's counters, as a worker left them.
struct FileCounters {
  FormatStats fstats;
  IngestStats stats;
  uint64_t parsed_lines = 0, parsed_bytes = 0, chunk_lines = 0, chunk_bytes = 0;
};

// One file of a --threads walk: the worker appends ops, the replay takes them.
struct FileSlot {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<OpBatch> batches;
  bool done = false;
  std::string error;  // an exception in the worker
  FileCounters counters;
};

// What the workers and the replay of one --threads walk share. Workers
// stay at most `ahead` (kAhead a thread) files past the replay: with 2 a
// thread, the worker past a host's large CSV waited at the window's edge,
// ~25 ms of a core in a 0.37 s telemetry run. A batch is handed over at
// kBatch ops or kBatchText bytes of arena (long lines), whichever first; a
// slot holds kMaxQueued batches (~512K ops) before its worker waits for
// the replay (with 32, files of more than 64K ops ahead of it did).
struct ThreadedWalk {
  static constexpr size_t kAhead = 4, kBatch = 2048, kBatchText = size_t{1} << 20, kMaxQueued = 256,
                          kStreamBytes = size_t{1} << 20;
  // Files of at most this many bytes may be read out of walk order.
  static constexpr uintmax_t kOutOfOrderBytes = uintmax_t{16} << 20;
  BundlePlan plan;
  std::string dir;
  size_t ahead = kAhead;
  std::deque<FileSlot> slots;
  std::mutex window_mu;  // guards what follows, up to spare_mu
  std::condition_variable window_cv;
  size_t replayed = 0;
  std::vector<uintmax_t> bytes;  // each file's size, for largest-first picks
  std::vector<uint8_t> taken;
  size_t lowest_untaken = 0, n_taken = 0;
  // Every file has a worker: the walk's end, where the replay is to keep up.
  std::atomic<bool> all_taken{false};
  // The next file for a worker (SIZE_MAX: none left); *in_order when it is
  // the lowest untaken one, whose worker may wait for the replay.
  size_t pick(bool* in_order);
  // Replayed batches, emptied with their capacity kept, for the workers to
  // fill again (the ops' vectors and arenas are not allocated per batch).
  std::mutex spare_mu;
  std::vector<OpBatch> spare;
  OpBatch fresh_batch();
};

// Whether a bundle of files of these sizes can keep several threads busy.
bool files_keep_threads_busy(const std::vector<uintmax_t>& sizes);

}  // namespace reflex::ingest
