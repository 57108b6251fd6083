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
// With `while cause lasts + DUR` (Rule::lasting_s >= 0) the effect must also
// begin (its first time) within DUR of the cause's first..last; without wall
// times that bound is not checked.
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
// Every relation of the rule's `where` holds. `id_of(ref, device)` gives the
// topology id of a resolved device (callers with cached ids pass their own);
// devices not in the topology (placeholders) relate by name.
template <class IdOf>
bool where_holds(const Rule& r, const Topology& topo, const Event& cause, const Event& effect,
                 IdOf&& id_of) {
  for (const RelationConstraint& c : r.where) {
    const std::string* a = device_of(c.lhs, cause, effect);
    const std::string* b = device_of(c.rhs, cause, effect);
    if (!a || !b) return false;
    Topology::DeviceId ia = id_of(c.lhs, *a), ib = id_of(c.rhs, *b);
    bool ok = ia != Topology::kNoDevice && ib != Topology::kNoDevice ? topo.related(c.rel, ia, ib)
                                                                     : topo.related(c.rel, *a, *b);
    if (!ok) return false;
  }
  return true;
}
// The same decision for callers that keep events their own way.
// `known_id(ref)`: the topology id of a reference the caller has cached, for
// one that always names a device (else kNoDevice: it is then looked up by
// name); `dev_of(ref)`: the device's name (nullptr: no such binding), asked
// only when a side has no known id, so the common case reads no strings.
template <class KnownId, class DevOf>
bool where_holds_by(const Rule& r, const Topology& topo, KnownId&& known_id, DevOf&& dev_of) {
  for (const RelationConstraint& c : r.where) {
    Topology::DeviceId ia = known_id(c.lhs), ib = known_id(c.rhs);
    if (ia != Topology::kNoDevice && ib != Topology::kNoDevice) {
      if (!topo.related(c.rel, ia, ib)) return false;
      continue;
    }
    const std::string* a = dev_of(c.lhs);
    const std::string* b = dev_of(c.rhs);
    if (!a || !b) return false;
    if (ia == Topology::kNoDevice) ia = topo.id(*a);
    if (ib == Topology::kNoDevice) ib = topo.id(*b);
    bool ok = ia != Topology::kNoDevice && ib != Topology::kNoDevice ? topo.related(c.rel, ia, ib)
                                                                     : topo.related(c.rel, *a, *b);
    if (!ok) return false;
  }
  return true;
}
bool where_holds(const Rule& r, const Topology& topo, const Event& cause, const Event& effect);

}  // namespace reflex::rules
