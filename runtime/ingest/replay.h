// The main Impl's side of a --threads walk: each worker's ops replayed, file
// by file in walk order, into the one event emitter and storm filter, and
// each file's counters merged, so that events, sequence numbers, notes and
// counters are one thread's (the worker's side: op_record.h).
#pragma once

#include <string>

#include "emit_event.h"
#include "ingest_core.h"
#include "threaded_walk.h"

namespace reflex::ingest {

class OpReplay {
 public:
  OpReplay(IngestCore& core, EventEmitter& events) : core_(core), events_(events) {}

  // One op of batch b, recorded while reading `file`.
  void replay(const Op& op, const OpBatch& b, const std::string& file);
  // The listing's notes and counters, said before any file's, as the walk's are.
  void merge_listing_notes(BundleListing& listing);
  // A file's counters, as its worker left them.
  void merge(FileCounters& c);

 private:
  IngestCore& core_;
  EventEmitter& events_;
  // The replay's reused strings for an op's host and time (no malloc per op).
  std::string replay_host_;
  EventTime replay_time_;
  FieldValues replay_fields_;
};

}  // namespace reflex::ingest
