// A matched signature becomes an event: its devices located in the topology
// (placeholders noted), then judged by the storm filter (baseline, dedup
// folds, aggregation) before the sink sees it. A --threads worker records
// the match for the replay instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ingest_core.h"
#include "locate.h"
#include "op_record.h"

namespace reflex::ingest {

class EventEmitter {
 public:
  EventEmitter(IngestCore& core, OpRecorder& recorder);

  // `line` and `fields` are copied only when an event is built (a storm's
  // repeat folded into an open fold copies neither); `movable`, when set, is
  // `fields` and may be moved from.
  void emit_event(uint32_t si, const FieldValues& fields, FieldValues* movable,
                  const EventTime& time, Transport transport, const std::string& host,
                  bool host_known, int rank_hint, std::string_view file, uint64_t line_no,
                  std::string_view line);

  // Per signature: the events it matched (before storms judged them).
  const std::vector<uint64_t>& sig_hits() const { return sig_hits_; }
  // Placeholder devices past the noted ones, said as one count.
  uint64_t placeholders_unnoted() const { return placeholder_unnoted_; }

 private:
  // The event's own device: a pure function of the signature, the located
  // field's value and the line's host and rank hint, so a storm's repeats
  // are looked up (normalising a BDF and the topology lookup are skipped).
  static constexpr size_t kLocateMemoEntries = 4096;
  Located locate_own(uint32_t si, const Signature& sig, const Locator* own,
                     const FieldValues& fields, const LogRecord& rec);
  void note_placeholder(const std::string& id);

  IngestCore& core_;
  OpRecorder& recorder_;
  uint64_t seq_ = 0;
  std::vector<uint64_t> sig_hits_;
  std::set<std::string> placeholder_seen_;
  uint64_t placeholder_unnoted_ = 0;
  std::unordered_map<std::string, Located> locate_memo_;
  std::string locate_key_;
  LogRecord locate_rec_;
};

}  // namespace reflex::ingest
