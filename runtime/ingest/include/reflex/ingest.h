// Ingest: log lines in, typed events on concrete devices out.
//   formats (LogReader) -> matcher (Hyperscan prefilter, RE2 captures)
//   -> device resolution (Topology) -> storms/dedup/aggregation -> sink.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "reflex/event.h"
#include "reflex/ingest_stats.h"
#include "reflex/kb.h"
#include "reflex/log_format.h"
#include "reflex/log_record.h"
#include "reflex/topology.h"

namespace reflex {

using EventSink = std::function<void(Event&&)>;

// Additive (--threads): what reading a bundle needs before its first line
// and without the knowledge base or the topology: its files in walk order
// (plan_bundle, with the listing's notes) and each file's size. Made ahead,
// e.g. on a second thread while the knowledge base loads, and then read by
// Ingestor::read_bundle(BundleListing), which reads what read_bundle(dir) would.
struct BundleListing {
  std::string dir;
  bool ok = false;
  std::string error;  // !ok: why, as read_bundle(dir) would say it
  BundlePlan plan;
  FormatStats stats;             // the listing's notes and counters
  std::vector<uintmax_t> bytes;  // each plan file's size (0: unknown or not a file)
  static BundleListing of(const std::string& dir);
};

// Thread-safety: every public member locks one internal mutex, so several
// threads may feed one Ingestor (the C API does); lines of one stream must
// still arrive in order for multi-line joins. The sink is called with the
// mutex held: it must not call back into the Ingestor. For throughput use one
// Ingestor per thread.
//
// Storm semantics (docs/architecture.md, "Where a log line goes"): per (signature, device) a `baseline` is
// judged first, then `aggregate`, then `dedup`.
//  - baseline FIELD above F x median of last N: fires when the value exceeds
//    F x median of the previous values; it judges only once it has seen at
//    least ceil(N/2) values (earlier lines are counted in below_baseline).
//  - aggregate count >= N within DUR: the event fires on the N-th line inside
//    a sliding window of DUR, carrying count/first/last of those N lines; the
//    window then restarts (a steady storm fires once per N lines, which dedup
//    may fold further). Lines below the threshold count in below_aggregate.
//  - dedup DUR [by F...]: repeats of (signature, device, F values) fold into
//    one event while they stay within DUR of the fold's first line; it is
//    emitted when a later line falls outside that window, when time advances
//    past it (any line's wall time, or advance_time()), or at finish().
class Ingestor {
 public:
  // kb and topo must outlive the Ingestor.
  Ingestor(const KnowledgeBase& kb, const Topology& topo, IngestOptions opts = {});
  ~Ingestor();
  Ingestor(const Ingestor&) = delete;
  Ingestor& operator=(const Ingestor&) = delete;

  void set_sink(EventSink sink);

  // Batch: every hosts/<host>/<file> of a bundle (interfaces.md §3), gz and rotated files included.
  // Returns false and sets *error for an unusable bundle (not a directory, ...).
  bool read_bundle(const std::string& dir, std::string* error);
  bool read_bundle(BundleListing listing, std::string* error);
  // One file's lines for one host (format detected per line).
  void read_file(const std::string& path, const std::string& bundle_relative,
                 const std::string& host_dir_name);
  // Streaming: one envelope (interfaces.md §4) per call.
  void feed_envelope(std::string_view json_line);
  // A single raw line with a known host and transport (used by tests / `log` statements).
  void feed_line(const std::string& host, Transport transport, std::string_view line,
                 std::string_view evidence_file, uint64_t line_no);
  // A record already parsed by the caller (its own LineParser / envelope
  // parsing). Allocates nothing when the message matches no pattern.
  void feed_record(const LogRecord& rec);
  // End of input: flush pending multi-line joins and storm summaries.
  void finish();
  // Runs fn under the Ingestor's lock with the storm summaries still open
  // (nothing is emitted while it runs). fn must not call back into the Ingestor.
  void with_open_storms(const std::function<void(const OpenStorms&)>& fn) const;
  // While read_bundle/read_file run (one call can take minutes): fn is called
  // between lines every 4,096 lines, under the lock, with the open storms, so
  // a store fed by the sink can commit on time (group commit). fn must not
  // call back into the Ingestor. Empty fn: none.
  void set_progress(std::function<void(const OpenStorms&)> fn);
  // Streaming: emit dedup folds whose window closed before `now` (wall clock).
  void advance_time(TimeUs now);

  // False when the knowledge base could not be prepared at all (then nothing
  // matches); notes say why. Signatures that fail individually are noted.
  bool ok() const;
  // Distinct patterns in the Hyperscan database (diagnostics / benchmarks).
  size_t pattern_count() const;
  // Lines of a storm taken from the line memo without a Hyperscan scan
  // (memo-first blocks; diagnostics / tests, not part of --stats).
  uint64_t memo_first_lines() const;
  // Off: every block of a chunk-mode file is scanned whole (tests compare).
  void set_memo_first(bool on);

  // The counters so far. The reference stays valid but is only refreshed by
  // the next stats() call; from several threads use stats_snapshot().
  const IngestStats& stats() const;
  IngestStats stats_snapshot() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Every signature's first-line pattern (distinct texts, KB order), for
// comparisons with grep/rg: re2 = as written; unnamed = RE2 syntax with named
// groups made plain (rg joins patterns with '|', so names would clash);
// posix_ere = rewritten for `grep -E` ((?P<name> and (?: become plain groups,
// \d becomes [0-9], lazy quantifiers greedy, inline flags dropped).
enum class PatternDialect { re2, unnamed, posix_ere };
std::vector<std::string> export_patterns(const KnowledgeBase& kb, PatternDialect dialect);

// Compiles kb's patterns into the matcher's database and stores it in
// kb->matcher_cache, for `reflexc build` to write into the artifact. False and
// *error when there is nothing to store (no patterns, or a pattern Hyperscan
// cannot take, which makes the matcher build its databases at every start).
bool precompile_patterns(KnowledgeBase* kb, std::string* error);

}  // namespace reflex
