// The op stream of a --threads walk, replayed: a worker's ops become the
// events, storm windows and unrecognised lines one thread would have made,
// and its counters are added to the main Impl's.
#include "replay.h"

#include <utility>

namespace reflex::ingest {

void OpReplay::replay(const Op& op, const OpBatch& b, const std::string& file) {
  switch (op.kind) {
    case Op::advance:
      core_.storms.advance(op.t, core_.emit_fn);
      break;
    case Op::match:
      replay_time_.wall = op.wall;
      replay_time_.mono = op.mono;
      replay_time_.inherited = op.time_inherited;
      replay_time_.clock.assign(b.view(op.clock));
      replay_host_.assign(b.view(op.host));
      b.view_fields(op, &replay_fields_);
      events_.emit_event(op.si, replay_fields_, &replay_fields_, replay_time_, op.transport,
                         replay_host_, op.host_known, op.rank_hint, file, op.line_no,
                         b.view(op.line));
      break;
    case Op::unrecognised:
      if (op.line_no == 0)  // a count (OpRecorder::flush_unrecognised_counts)
        core_.count_unrecognised(op.si, op.repeat);
      else
        core_.note_unrecognised(op.si, file, op.line_no, b.view(op.line));
      break;
  }
}

void OpReplay::merge_listing_notes(BundleListing& listing) {
  FileCounters c;
  c.fstats = std::move(listing.stats);
  merge(c);
}

void OpReplay::merge(FileCounters& c) {
  FormatStats& fstats = core_.fstats;
  const FormatStats& f = c.fstats;
  fstats.lines += f.lines;
  fstats.bytes += f.bytes;
  fstats.invalid_utf8 += f.invalid_utf8;
  fstats.nul_bytes += f.nul_bytes;
  fstats.truncated_long_lines += f.truncated_long_lines;
  fstats.skipped_invalid_json += f.skipped_invalid_json;
  fstats.skipped_no_msg += f.skipped_no_msg;
  fstats.no_timestamp += f.no_timestamp;
  fstats.implausible_time += f.implausible_time;
  fstats.unknown_hosts += f.unknown_hosts;
  fstats.skipped_files += f.skipped_files;
  fstats.cri_partial_joined += f.cri_partial_joined;
  fstats.prompt_lines += f.prompt_lines;
  fstats.embedded_lines += f.embedded_lines;
  for (std::string& n : c.fstats.notes) add_note(&fstats, std::move(n));
  IngestStats& stats = core_.stats;
  const IngestStats& s = c.stats;
  stats.matched_lines += s.matched_lines;
  stats.truncated_long_lines += s.truncated_long_lines;
  stats.incomplete_multiline += s.incomplete_multiline;
  stats.prefilter_rejects += s.prefilter_rejects;
  stats.rejected_by_when += s.rejected_by_when;
  stats.transport_mismatch += s.transport_mismatch;
  for (const auto& [file, n] : s.transport_refused_by_file)
    stats.transport_refused_by_file[file] += n;
  for (const auto& [file, r] : s.refused_claims_by_file) {
    auto [it, fresh] = stats.refused_claims_by_file.try_emplace(file, r);
    if (!fresh) it->second.count += r.count;
  }
  LineCounts& counts = core_.counts;
  counts.parsed_lines += c.parsed_lines;
  counts.parsed_bytes += c.parsed_bytes;
  counts.chunk_lines += c.chunk_lines;
  counts.chunk_bytes += c.chunk_bytes;
}

}  // namespace reflex::ingest
