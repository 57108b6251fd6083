// Ingestor::Impl's counters as it reports them (stats()): its own merged
// with the parser's, the storm filter's and the event emitter's.
#include "ingest_impl.h"

namespace reflex {

void Ingestor::Impl::refresh_view() const {
  view = stats;
  // Chunk mode counts every line on arrival; the parser saw only some of them.
  view.lines = fstats.lines - counts.parsed_lines + counts.chunk_lines;
  view.bytes = fstats.bytes - counts.parsed_bytes + counts.chunk_bytes;
  view.skipped_invalid_json = fstats.skipped_invalid_json;
  view.skipped_no_msg = fstats.skipped_no_msg;
  view.invalid_utf8 = fstats.invalid_utf8;
  view.nul_bytes = fstats.nul_bytes;
  view.truncated_long_lines = fstats.truncated_long_lines + stats.truncated_long_lines;
  view.unknown_hosts = fstats.unknown_hosts;
  view.no_timestamp = fstats.no_timestamp;
  view.implausible_time = fstats.implausible_time;
  view.skipped_files = fstats.skipped_files;
  view.folded_by_dedup = storm_counters.folded_by_dedup;
  view.below_aggregate = storm_counters.below_aggregate;
  view.below_baseline = storm_counters.below_baseline;
  view.per_signature_hits.clear();
  const auto& sigs = matcher.signatures();
  const std::vector<uint64_t>& sig_hits = events.sig_hits();
  for (size_t i = 0; i < sigs.size(); ++i)
    if (sig_hits[i]) view.per_signature_hits[sigs[i].sig->name] += sig_hits[i];
  view.notes = fstats.notes;
  view.notes.insert(view.notes.end(), notes.begin(), notes.end());
  if (const uint64_t unnoted = events.placeholders_unnoted())
    view.notes.push_back(std::to_string(unnoted) +
                         " more devices not in the topology (placeholders)");
}

}  // namespace reflex
