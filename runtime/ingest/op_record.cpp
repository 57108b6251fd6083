// A --threads worker's ops: what its line walk would have done to the state
// shared across files, recorded in line order for the main Impl's replay.
#include "op_record.h"

#include <algorithm>
#include <utility>

namespace reflex::ingest {

void OpRecorder::record_match(uint32_t si, const FieldValues& fields, const EventTime& time,
                              Transport transport, const std::string& host, bool host_known,
                              int rank_hint, uint64_t line_no, std::string_view line) {
  Op& op = add_op();
  op.kind = Op::match;
  op.transport = transport;
  op.host_known = host_known;
  op.rank_hint = rank_hint;
  op.si = si;
  op.wall = time.wall;
  op.mono = time.mono;
  op.time_inherited = time.inherited;
  op.clock = record_->keep(time.clock);
  op.host = record_->keep(host);
  op.line = record_->keep(line);
  op.line_no = line_no;
  record_->keep_fields(fields, &op);
}

void OpRecorder::record_unrecognised(uint32_t suspect, const LogRecord& rec) {
  const size_t n_sigs = core_.matcher.signatures().size();
  if (unrec_in_file_.size() != n_sigs) {
    unrec_in_file_.assign(n_sigs, 0);
    unrec_extra_.assign(n_sigs, 0);
  }
  if (++unrec_in_file_[suspect] > core_.opts.unrecognized_per_suspect) {
    ++unrec_extra_[suspect];
    return;
  }
  Op& op = add_op();
  op.kind = Op::unrecognised;
  op.transport = rec.transport;
  op.host_known = false;
  op.si = suspect;
  op.wall = rec.time.wall;
  op.mono = rec.time.mono;
  op.line_no = rec.line_no;
  op.line = record_->keep(rec.raw.substr(0, IngestCore::kMaxUnrecognised));
}

void OpRecorder::flush_unrecognised_counts() {
  for (uint32_t si = 0; si < unrec_extra_.size(); ++si) {
    if (!unrec_extra_[si]) continue;
    Op& op = add_op();
    op.kind = Op::unrecognised;
    op.si = si;
    op.repeat = unrec_extra_[si];
  }
  unrec_in_file_.assign(unrec_in_file_.size(), 0);
  unrec_extra_.assign(unrec_extra_.size(), 0);
}

// Advances with no event between them close the same folds, in the same
// (deadline) order, as one advance to the latest of them.
void OpRecorder::record_advance(TimeUs t) {
  if (!record_->ops.empty() && record_->ops.back().kind == Op::advance) {
    record_->ops.back().t = std::max(record_->ops.back().t, t);
    return;
  }
  add_op().t = t;
}

FileCounters OpRecorder::take_counters() {
  FileCounters c;
  std::swap(c.fstats, core_.fstats);
  std::swap(c.stats, core_.stats);
  LineCounts& n = core_.counts;
  c.parsed_lines = std::exchange(n.parsed_lines, 0);
  c.parsed_bytes = std::exchange(n.parsed_bytes, 0);
  c.chunk_lines = std::exchange(n.chunk_lines, 0);
  c.chunk_bytes = std::exchange(n.chunk_bytes, 0);
  return c;
}

}  // namespace reflex::ingest
