// The events whose line had no time of its own (EventTime::inherited): the
// line took the last earlier line's time, so the event happened at or after
// it, before the next event of its file that has a time of its own (else by
// the end of the input). A rule looking for the cause of such an event
// searches up to that bound, not up to the borrowed time (reasoner_walk.cpp);
// the event's own record, its order and what is printed are unchanged.
#pragma once
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace reflex::engine {

class EventIndex;

class InheritedTimes {
 public:
  void add(uint32_t ev) { events_.push_back(ev); }
  // Computes the bounds for what was added (a no-op when nothing was added
  // since the last call); the reasoner calls it before each diagnosis.
  void settle(const EventIndex& ix);
  // The latest time event `ev` may have happened at: `hi` when its time was
  // its own.
  int64_t latest(uint32_t ev, int64_t hi) const {
    if (latest_.empty()) return hi;
    auto it = latest_.find(ev);
    return it == latest_.end() ? hi : it->second;
  }

 private:
  std::vector<uint32_t> events_;
  std::unordered_map<uint32_t, int64_t> latest_;
  size_t settled_at_ = 0;  // the index's size when settle() last ran
};

}  // namespace reflex::engine
