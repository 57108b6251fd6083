// What one causal rule of the language means between two events: the time
// window, `cleared_by` healing and the `where` relations. The engine's
// backward walk and `reflexc test` coverage both decide with these, so a rule
// is evaluated in one place (docs/language.md §4).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "reflex/event.h"
#include "reflex/kb.h"
#include "reflex/topology.h"

namespace reflex::rules {

constexpr int64_t kNoWall = std::numeric_limits<int64_t>::min();

// The times of an event as rules see them: a folded storm spans first..last.
struct EventSpan {
  int64_t lo = kNoWall, hi = kNoWall;  // wall time range
  double mono = -1;                    // seconds since boot; < 0: none
  bool has_wall() const { return lo != kNoWall; }
};
EventSpan span_of(const Event& ev);

enum class WindowFit { outside, inside, unknown };
// Whether the effect falls in the rule's window after the cause: wall ranges
// overlap [min - skew, max + skew] (skew only across clocks, the rule's plus
// `clock_skew_s`); within one clock without wall time, monotonic order;
// clocks that cannot be compared are `unknown` (linked at a lower score).
WindowFit window_fit(const EventSpan& cause, const EventSpan& effect, bool same_clock,
                     const Rule& r, double clock_skew_s);

// A healed cause explains only what happened up to the heal: true when the
// effect comes after `heal` (the clearing event's wall time).
bool after_heal(int64_t heal, const EventSpan& effect, bool same_clock, const Rule& r,
                double clock_skew_s);
// Last wall time at which a `cleared_by` event on the same device heals an
// event of signature `s`; clearing events count from ev.hi on.
int64_t heal_window_end(const Signature& s, const EventSpan& ev);
bool heals(const Signature& s, const EventSpan& ev, const EventSpan& clearing);

// The device a reference names: its side's own device, or the one bound with
// `locate ... as NAME` (nullptr when the event has no such binding).
const std::string* device_of(const DeviceRef& ref, const Event& cause, const Event& effect);
// Every relation of the rule's `where` holds. `dev_of(ref)` gives the device a
// reference names (device_of() for two Events; callers with their own event
// storage pass theirs), `id_of(ref, device)` its topology id (callers with
// cached ids pass their own); devices not in the topology (placeholders)
// relate by name.
template <class DevOf, class IdOf>
bool where_holds_by(const Rule& r, const Topology& topo, DevOf&& dev_of, IdOf&& id_of) {
  for (const RelationConstraint& c : r.where) {
    const std::string* a = dev_of(c.lhs);
    const std::string* b = dev_of(c.rhs);
    if (!a || !b) return false;
    Topology::DeviceId ia = id_of(c.lhs, *a), ib = id_of(c.rhs, *b);
    bool ok = ia != Topology::kNoDevice && ib != Topology::kNoDevice ? topo.related(c.rel, ia, ib)
                                                                     : topo.related(c.rel, *a, *b);
    if (!ok) return false;
  }
  return true;
}
template <class IdOf>
bool where_holds(const Rule& r, const Topology& topo, const Event& cause, const Event& effect,
                 IdOf&& id_of) {
  return where_holds_by(
      r, topo, [&](const DeviceRef& ref) { return device_of(ref, cause, effect); }, id_of);
}
bool where_holds(const Rule& r, const Topology& topo, const Event& cause, const Event& effect);

}  // namespace reflex::rules
