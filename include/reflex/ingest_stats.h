// What ingest is told (IngestOptions) and what it counted (IngestStats): part
// of the engine's options and statistics (reflex/engine_options.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace reflex {

struct IngestOptions {
  bool strict_transport = false;    // refuse syslog text tagged "kernel:" as kernel
  size_t max_line_bytes = 1 << 20;  // longer lines are truncated and counted
  double default_dedup_s = 0;       // dedup window for signatures without one
  // Files of text formats are scanned a chunk at a time and only lines that
  // can match are parsed (docs/architecture.md, "Where a log line goes"). false = parse every line
  // (tests, exact per-line format counters).
  bool chunk_mode = true;
  // read_bundle: files read by this many threads, merged in walk order
  // (events, storms, counters and notes identical to one thread).
  unsigned threads = 1;
  // Unrecognized (suspect-flagged) lines kept verbatim in IngestStats: at most
  // this many, and the first unrecognized_per_suspect of each suspect (per
  // file when reading with threads). `reflex events --unrecognized` raises both.
  size_t unrecognized_samples = 24;
  uint64_t unrecognized_per_suspect = 3;
  // Streaming (the agent, `reflex watch`): a dedup fold's first line is
  // emitted at once (the event the fold would be if it closed now); when the
  // fold closes having grown, it is emitted again with its count/first/last:
  // an update of that event (same name, device, evidence, time and line),
  // which an engine with this option merges into it instead of adding one.
  // Off (batch): a fold is emitted once, when it closes.
  bool announce_folds = false;
};

// A line that looked like fault evidence but matched no signature.
struct UnrecognizedLine {
  std::string suspect;   // the KB's `suspect` signature that flagged it
  std::string evidence;  // "hosts/node-1/kern.log:12"
  std::string line;      // raw, cut at 300 bytes
};

// A line whose source cannot make the claim its shape makes (docs/formats.md,
// "Who speaks for what"): a kernel line in a file that is not a kernel
// capture, or a line in one host's file naming another host. A signature
// would have taken it; it is never evidence. Kept per file: the first such
// line and how many.
struct RefusedClaim {
  std::string why;       // "kernel line outside a kernel capture", "names another host (...)"
  std::string evidence;  // "hosts/node-0017/train.log:21"
  std::string would_be;  // the signature that would have taken it
  std::string line;      // raw, cut at 300 bytes
  uint64_t count = 0;    // such lines in the file
};

struct IngestStats {
  uint64_t lines = 0, bytes = 0;
  uint64_t matched_lines = 0, events = 0;
  uint64_t skipped_invalid_json = 0, skipped_no_msg = 0;
  uint64_t invalid_utf8 = 0, nul_bytes = 0, truncated_long_lines = 0;
  uint64_t unknown_hosts = 0, placeholder_devices = 0;
  uint64_t no_timestamp = 0, implausible_time = 0;
  uint64_t folded_by_dedup = 0, below_aggregate = 0;
  // Lines a fail-slow baseline judged normal or that arrived before the
  // baseline had enough history; multi-line messages whose continuation never
  // came; RE2 refusing a Hyperscan candidate; lines that a signature's pattern
  // matched but its typing/`when` refused.
  uint64_t below_baseline = 0, incomplete_multiline = 0;
  uint64_t prefilter_rejects = 0, rejected_by_when = 0;
  uint64_t transport_mismatch = 0;  // pattern matched, but not through the signature's `from`
  // Lines refused for transport only (no signature took them), per file: a
  // kernel message that arrived as an app line, say.
  std::map<std::string, uint64_t> transport_refused_by_file;
  // Claims refused for their source, per file (RefusedClaim).
  std::map<std::string, RefusedClaim> refused_claims_by_file;
  // What Reflex did not understand: lines a `suspect` flagged that matched no
  // signature, per suspect, and the first few of them.
  uint64_t unrecognized_lines = 0;
  std::map<std::string, uint64_t> unrecognized_by_suspect;
  std::vector<UnrecognizedLine> unrecognized_samples;
  uint64_t skipped_files = 0;  // unreadable/binary files under hosts/ (formats)
  // The pattern database came precompiled with the artifact (no compile at start).
  bool precompiled_patterns = false;
  std::map<std::string, uint64_t> per_signature_hits;
  std::vector<std::string>
      notes;  // said once each ("raw dmesg on node-3 without boot_time: ordered within host only")
};

}  // namespace reflex
