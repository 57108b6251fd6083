// A --threads worker's side of the op stream: in place of the effects that
// cross files (storm windows advancing, events, unrecognised lines) the
// worker's line walk records ops, which the main Impl replays in walk order
// (replay.h); and the file's counters, handed over when it is read.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ingest_core.h"
#include "threaded_walk.h"

namespace reflex::ingest {

class OpRecorder {
 public:
  explicit OpRecorder(IngestCore& core) : core_(core) {}

  // A --threads worker records into *batch from now on (the walk swaps its
  // contents on hand-over; the pointer stays).
  void record_into(OpBatch* batch) { record_ = batch; }
  bool on() const { return record_ != nullptr; }

  // Set by a --threads worker: hands *record_ over and leaves it empty. Called
  // before an op is added to a full batch, so a batch stays near kBatch ops
  // or kBatchText bytes even inside a 1 MB block of lines (checked per block,
  // they grew to 16,384 ops and 4 MB, past L2: the replay read them from
  // memory; the threaded telemetry run is ~3% faster with them small).
  std::function<void()> hand_over;

  void record_match(uint32_t si, const FieldValues& fields, const EventTime& time,
                    Transport transport, const std::string& host, bool host_known, int rank_hint,
                    uint64_t line_no, std::string_view line);
  void record_unrecognised(uint32_t suspect, const LogRecord& rec);
  void flush_unrecognised_counts();
  void record_advance(TimeUs t);
  // The file's counters, left at zero for the next file.
  FileCounters take_counters();

 private:
  Op& add_op() {
    if (hand_over && (record_->ops.size() >= ThreadedWalk::kBatch ||
                      record_->text.size() >= ThreadedWalk::kBatchText))
      hand_over();
    return record_->ops.emplace_back();
  }

  IngestCore& core_;
  OpBatch* record_ = nullptr;
  // A worker's unrecognised lines of this file past each suspect's first
  // opts.unrecognized_per_suspect: never samples (the first few of each suspect in
  // walk order), so they travel as one count per suspect, not one op each
  // (a benign mlx5 chatter line in every 13th kernel line made 100,000 ops).
  std::vector<uint64_t> unrec_in_file_, unrec_extra_;
};

}  // namespace reflex::ingest
