// One causal rule between two events (reflex/rules.h).
#include "reflex/rules.h"

#include <algorithm>

namespace reflex::rules {

EventSpan span_of(const Event& ev) {
  EventSpan s;
  if (ev.time.wall) {
    s.lo = ev.first ? std::min(*ev.first, *ev.time.wall) : *ev.time.wall;
    s.hi = ev.last ? std::max(*ev.last, *ev.time.wall) : *ev.time.wall;
    if (s.hi < s.lo) s.hi = s.lo;
  }
  if (ev.time.mono) s.mono = *ev.time.mono;
  return s;
}

namespace {
double skew_s(bool same_clock, const Rule& r, double clock_skew_s) {
  return same_clock ? 0.0 : r.skew_s + clock_skew_s;
}
}  // namespace

WindowFit window_fit(const EventSpan& c, const EventSpan& e, bool same_clock, const Rule& r,
                     double clock_skew_s) {
  double skew = skew_s(same_clock, r, clock_skew_s);
  if (c.has_wall() && e.has_wall()) {
    double dmin = static_cast<double>(e.lo - c.hi) / 1e6;
    double dmax = static_cast<double>(e.hi - c.lo) / 1e6;
    double lo = r.min_s - skew, hi = r.max_s + skew;
    if (!(dmax >= lo - 1e-7 && dmin <= hi + 1e-7)) return WindowFit::outside;
    if (r.lasting_s >= 0) {
      // `while cause lasts + DUR`: the effect's onset within DUR of the cause's
      // span; between clocks only the engine's tolerance is added (a rule's
      // skew is sized for its window, which may open before the cause).
      auto tol = static_cast<int64_t>((r.lasting_s + (same_clock ? 0.0 : clock_skew_s)) * 1e6);
      if (e.lo < c.lo - tol || e.lo > c.hi + tol) return WindowFit::outside;
    }
    return WindowFit::inside;
  }
  if (same_clock && c.mono >= 0 && e.mono >= 0) {
    double d = e.mono - c.mono;
    return (d >= r.min_s - 1e-7 && d <= r.max_s + 1e-7) ? WindowFit::inside : WindowFit::outside;
  }
  return WindowFit::unknown;
}

bool after_heal(int64_t heal, const EventSpan& effect, bool same_clock, const Rule& r,
                double clock_skew_s) {
  if (heal == kNoWall || !effect.has_wall()) return false;
  return effect.lo > heal + static_cast<int64_t>(skew_s(same_clock, r, clock_skew_s) * 1e6);
}

int64_t heal_window_end(const Signature& s, const EventSpan& ev) {
  return ev.hi + static_cast<int64_t>(s.clear_within_s * 1e6);
}

bool heals(const Signature& s, const EventSpan& ev, const EventSpan& clearing) {
  return ev.has_wall() && clearing.has_wall() && clearing.lo >= ev.hi &&
         clearing.lo <= heal_window_end(s, ev);
}

const std::string* device_of(const DeviceRef& ref, const Event& cause, const Event& effect) {
  const Event& ev = ref.side == DeviceRef::Side::effect ? effect : cause;
  return ref.binding.empty() ? &ev.device : ev.binding(ref.binding);
}

bool where_holds(const Rule& r, const Topology& topo, const Event& cause, const Event& effect) {
  return where_holds(r, topo, cause, effect,
                     [&](const DeviceRef&, const std::string& d) { return topo.id(d); });
}

}  // namespace reflex::rules
