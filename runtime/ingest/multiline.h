// Multi-line joins: a signature whose first line matched waits, per stream
// (file and host), for its `then` lines; what one such wait holds, and the
// class that keeps the waits and turns a completed one into an event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "reflex/event.h"
#include "reflex/kb.h"
#include "reflex/log_record.h"
#include "reflex/signature_match.h"

namespace reflex::ingest {

struct IngestCore;
class EventEmitter;

// Interleaved multi-line messages one stream may have open at once.
inline constexpr size_t kMaxPendingPerStream = 16;

struct Pending {
  uint32_t sig = 0;
  uint32_t next_part = 1;
  int remaining = 0;
  FieldValues caps;
  std::string lines;  // raw lines joined with '\n'
  EventTime time;
  Transport transport = kTransportApp;
  std::string host;
  bool host_known = true;
  int rank_hint = -1;
  std::string file;
  uint64_t line_no = 0;
  uint64_t last_line_no = 0;  // line of the last part matched (file input)
};

struct Stream {
  std::vector<Pending> pending;
};

class MultilineJoins {
 public:
  MultilineJoins(IngestCore& core, EventEmitter& events) : core_(core), events_(events) {}

  // Some signature waits for a continuation line.
  bool waiting() const { return pending_total_ != 0; }
  // The line's stream's waits moved on; hits: its pattern ids (ascending).
  void advance_pending(const LogRecord& rec, const std::vector<uint32_t>& hits);
  // Signature si's first line matched: it waits for its next part.
  void start_pending(uint32_t si, const FieldValues& c, const LogRecord& rec);
  // Multi-line messages do not continue across files.
  void end_of_file_stream();

 private:
  Stream* find_stream(const LogRecord& rec, bool create);
  void drop_stream_pending(Stream* st);
  void complete(Pending&& p);

  IngestCore& core_;
  EventEmitter& events_;
  std::string stream_key_;
  std::unordered_map<std::string, Stream> streams_;
  size_t pending_total_ = 0;
};

}  // namespace reflex::ingest
