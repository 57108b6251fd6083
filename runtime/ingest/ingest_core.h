// What every stage of an Ingestor's line walk shares: its inputs (knowledge
// base, topology, options), the matcher and the parser, the storm filter and
// the sink, and the counters and notes the report is built from. The stages
// (block_scan.h, line_match.h, multiline.h, emit_event.h, op_record.h,
// replay.h) hold a reference to this, not to the whole Ingestor::Impl.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "matcher.h"
#include "reflex/ingest.h"
#include "reflex/log_format.h"
#include "storms.h"

namespace reflex::ingest {

// Chunk mode counts every line on arrival; of those, the parser counts
// again the ones it parses: the report takes the latter out.
struct LineCounts {
  uint64_t chunk_lines = 0, chunk_bytes = 0;    // lines/bytes seen in chunk mode
  uint64_t parsed_lines = 0, parsed_bytes = 0;  // of those, counted again by the parser
};

struct IngestCore {
  // `origin`: a --threads worker's, whose matcher shares origin's compiled
  // patterns (Matcher::share) instead of compiling its own.
  IngestCore(const KnowledgeBase& k, const Topology& t, IngestOptions o, const Matcher* origin);
  IngestCore(const IngestCore&) = delete;
  IngestCore& operator=(const IngestCore&) = delete;

  const KnowledgeBase& kb;
  const Topology& topo;
  IngestOptions opts;
  Matcher matcher;
  bool ok = true;
  FormatStats fstats;
  LineParser parser;
  IngestStats stats;  // own counters; format counters are merged on read
  LineCounts counts;
  StormCounters storm_counters;
  StormFilter storms;
  EventSink sink;
  StormFilter::Emit emit_fn;  // counts the event, then hands it to the sink
  std::vector<std::string> notes;

  // A line that looks like fault evidence (a `suspect` matched) but that no
  // signature recognised: counted per suspect, the first few kept verbatim.
  static constexpr size_t kMaxUnrecognised = 300;
  void count_unrecognised(uint32_t si, uint64_t n);
  void note_unrecognised(uint32_t si, std::string_view file, uint64_t line_no,
                         std::string_view raw);
};

}  // namespace reflex::ingest
