// One line's matching: storm windows advanced by its time, multi-line joins
// moved on, then its first-line patterns confirmed, typed and judged
// (`when`) for every signature sharing them; a storm's repeated messages
// replay the line memo's outcome instead.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "emit_event.h"
#include "ingest_core.h"
#include "line_memo.h"
#include "multiline.h"
#include "op_record.h"

namespace reflex::ingest {

class LineProcessor {
 public:
  LineProcessor(IngestCore& core, MultilineJoins& joins, EventEmitter& events,
                OpRecorder& recorder);

  // raw: the pattern ids a block scan reported for the record's line
  // (ascending); nullptr = scan the message.
  // superset: raw are the line's hits (prefix included), else the message's own.
  void process(const LogRecord& rec, const uint32_t* raw = nullptr, size_t n_raw = 0,
               bool superset = true);
  // process() of a line whose message's own hits (`exact`) a memo-first
  // lookup found with memo entry `known` (no second hash or compare).
  void process_known(const LogRecord& rec, const std::vector<uint32_t>& exact,
                     const KnownMemo& known);

  bool line_memo_on() const { return line_memo_on_; }
  LineMemo& line_memo() { return line_memo_; }
  // Lines whose outcome was replayed from the line memo.
  uint64_t memo_replays() const { return memo_replays_; }

 private:
  // process() with a block's hits: they are a superset of the message's (the
  // line's prefix was scanned too), so a pattern counted as a transport
  // mismatch or an RE2 reject is first checked against a scan of the
  // message itself (lazily, once per line): counters stay exact.
  bool hit_in_msg(uint32_t p, const LogRecord& rec) {
    if (!hits_superset_) return true;
    if (!exact_known_) {
      core_.matcher.scan(rec.msg, &exact_hits_);
      exact_known_ = true;
    }
    return std::binary_search(exact_hits_.begin(), exact_hits_.end(), p);
  }
  // The first-line matching of process(), its effects recorded in
  // *recording_ when set (line memo).
  void match_line(const LogRecord& rec);
  void replay_outcome(const Outcome& o, const LogRecord& rec);
  void refuse_claim(const LogRecord& rec);
  void finish_line(const LogRecord& rec, bool matched, bool recognised, bool refused,
                   uint32_t suspect);

  IngestCore& core_;
  MultilineJoins& joins_;
  EventEmitter& events_;
  OpRecorder& recorder_;
  // Reused per line (no allocation once warm).
  std::vector<uint32_t> hits_;
  FieldValues caps_, tmp_;
  // Signatures with identical field declarations (names and types) type
  // captures identically: same class id.
  std::vector<uint32_t> typing_class_;
  WhenMemo when_memo_;
  std::vector<uint32_t> exact_hits_;
  bool hits_superset_ = false, exact_known_ = false;
  bool line_memo_on_ = true;
  LineMemo line_memo_;
  Outcome outcome_;
  Outcome* recording_ = nullptr;
  uint64_t memo_replays_ = 0;
  KnownMemo known_memo_;  // set by process_known for its process()
};

}  // namespace reflex::ingest
