// Storm control between the matcher and the sink: `baseline`, `aggregate` and
// `dedup` of docs/language.md §5, in that order. State is kept per
// (signature, device[, dedup key]) only, so memory is bounded by the number of
// distinct keys, never by the number of lines (an 800,000-line Xid 95 storm on
// one GPU is one entry). Semantics are documented in reflex/ingest.h.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "reflex/event.h"
#include "reflex/kb.h"
#include "reflex/signature_match.h"

namespace reflex::ingest {

struct StormCounters {
  uint64_t folded_by_dedup = 0;
  uint64_t below_aggregate = 0;
  uint64_t below_baseline = 0;
};

class StormFilter final : public OpenStorms {
 public:
  using Emit = std::function<void(Event&&)>;
  StormFilter(double default_dedup_s, StormCounters* counters) noexcept
      : default_dedup_s_(default_dedup_s), c_(counters) {}
  // IngestOptions::announce_folds: a fold's first line is emitted when the
  // fold opens, and the fold again when it closes only if it grew (an update
  // of that event, which the consumer merges).
  void set_announce(bool on) { announce_ = on; }

  // One matched event of signature `sig` (index `sig_idx` is its identity).
  // Calls emit zero or more times (the event itself, or a closed fold).
  // baseline_judged: the caller already ran baseline_passes() for this line.
  void add(uint32_t sig_idx, const Signature& sig, Event&& ev, const Emit& emit,
           bool baseline_judged = false);
  static bool has_baseline(const Signature& sig) {
    return !sig.baseline.field.empty() && sig.baseline.window > 0;
  }
  // The baseline stage alone, before the event is built (most lines of a
  // fail-slow signature are normal and are dropped here): false, and counted
  // in below_baseline, when the value is not anomalous.
  bool baseline_passes(uint32_t sig_idx, const Signature& sig, const FieldValues& fields,
                       const std::string& device);
  // A line that an open dedup fold absorbs (no baseline, no aggregate): the
  // fold is updated as add() would and true is returned, with no Event
  // built; false = build the event and add() it.
  bool try_fold(uint32_t sig_idx, const Signature& sig, const std::string& device,
                const FieldValues& fields, const EventTime& time);
  // Emits every dedup fold whose window closed before `now` (wall time).
  void advance(TimeUs now, const Emit& emit);
  // Emits every open fold (end of input).
  void flush(const Emit& emit);

  // The open dedup folds (OpenStorms): what a store commits as storms still
  // running, so a crash keeps a storm's count as of the last commit.
  uint64_t generation() const override { return generation_; }
  void for_each(const std::function<void(const Event&)>& fn) const override;

  // State entries (for tests: bounded memory under storms).
  size_t state_entries() const { return aggregate_.size() + baseline_.size() + dedup_.size(); }

  // The time used by windows: wall time, else seconds since boot, else none.
  static bool window_time(const Event& ev, TimeUs* t) { return window_time(ev.time, t); }
  static bool window_time(const EventTime& time, TimeUs* t);

 private:
  struct AggState {
    std::vector<TimeUs> ring;  // at most N timestamps (circular)
    size_t head = 0, size = 0;
  };
  struct BaseState {
    std::vector<double> ring;    // last N values (circular)
    std::vector<double> sorted;  // the same values, sorted: the median is O(1)
    size_t head = 0, size = 0;
  };
  struct Fold {
    Event ev;  // the first event; count/first/last updated
    TimeUs first = 0, last = 0;
    bool timed = false;
    bool wall = false;
    // announce_: what was emitted when the fold opened (count, first, last),
    // so a fold that did not grow is not emitted again.
    bool announced = false;
    uint64_t said_count = 0;
    TimeUs said_first = 0, said_last = 0;
  };

  bool pass_baseline(uint32_t sig_idx, const Signature& sig, const std::string* raw,
                     const std::string& device);
  bool pass_aggregate(uint32_t sig_idx, const Signature& sig, Event* ev);
  void dedup(uint32_t sig_idx, const Signature& sig, Event&& ev, const Emit& emit);
  // A closed fold: its event with first/last, unless announce_ said all of it.
  void close_fold(Fold&& done, const Emit& emit);
  double dedup_window(const Signature& sig) const {
    return sig.dedup.window_s > 0 ? sig.dedup.window_s : default_dedup_s_;
  }

  double default_dedup_s_;
  StormCounters* c_;
  bool announce_ = false;
  std::unordered_map<std::string, AggState> aggregate_;
  std::unordered_map<std::string, BaseState> baseline_;
  std::unordered_map<std::string, Fold> dedup_;
  // Wall-time folds by deadline, to close them as time advances.
  std::set<std::pair<TimeUs, std::string>> deadlines_;
  std::string key_;          // reused lookup key (no allocation per line)
  uint64_t generation_ = 0;  // bumped on every change to dedup_ (OpenStorms)
};

}  // namespace reflex::ingest
