// See rule_links.h. The window, heal and relation checks mirror the engine's
// runtime/engine/reasoner.cpp (Reasoner::window, Reasoner::healed_at and its
// use in Reasoner::candidates, Reasoner::resolve, Reasoner::where_ok) and the
// time range of runtime/engine/index.cpp (EventIndex::add); keep them in step. The engine is not called because it
// only tests the pairs its backward walk from a symptom reaches.
#include "rule_links.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>

namespace reflex::cli {

namespace {

// The parts of an event the window check reads (reasoner.cpp's Rec).
struct Span {
  bool has_wall = false;
  int64_t lo = 0, hi = 0;  // wall range: a folded storm spans first..last
  double mono = -1;        // < 0: none
};

Span span_of(const Event& ev) {
  Span s;
  if (ev.time.wall) {
    s.has_wall = true;
    s.lo = ev.first ? std::min(*ev.first, *ev.time.wall) : *ev.time.wall;
    s.hi = ev.last ? std::max(*ev.last, *ev.time.wall) : *ev.time.wall;
    if (s.hi < s.lo) s.hi = s.lo;
  }
  if (ev.time.mono) s.mono = *ev.time.mono;
  return s;
}

// Reasoner::window: wall ranges overlap [min - skew, max + skew] (skew only
// across clocks); within one clock without wall time, monotonic order; clocks
// that cannot be compared allow the link (the engine links them at a lower score).
bool in_window(const Event& c, const Event& e, const Rule& r, double clock_skew_s) {
  bool same_clock = c.time.clock == e.time.clock;
  double skew = same_clock ? 0.0 : r.skew_s + clock_skew_s;
  Span cs = span_of(c), es = span_of(e);
  if (cs.has_wall && es.has_wall) {
    double dmin = static_cast<double>(es.lo - cs.hi) / 1e6;
    double dmax = static_cast<double>(es.hi - cs.lo) / 1e6;
    double lo = r.min_s - skew, hi = r.max_s + skew;
    return dmax >= lo - 1e-7 && dmin <= hi + 1e-7;
  }
  if (same_clock && cs.mono >= 0 && es.mono >= 0) {
    double d = es.mono - cs.mono;
    return d >= r.min_s - 1e-7 && d <= r.max_s + 1e-7;
  }
  return true;
}

// Reasoner::healed_at: the wall time of the first `cleared_by` event on the
// same device within the signature's heal window after `ev`, if any.
std::optional<int64_t> healed_at(const KnowledgeBase& kb, const std::vector<Event>& events,
                                 const Event& ev) {
  const Signature* s = kb.find_signature(ev.name);
  Span es = span_of(ev);
  if (!s || s->cleared_by.empty() || !es.has_wall) return std::nullopt;
  int64_t limit = es.hi + static_cast<int64_t>(s->clear_within_s * 1e6);
  std::optional<int64_t> h;
  for (const Event& c : events) {
    if (&c == &ev || c.device != ev.device) continue;
    if (std::find(s->cleared_by.begin(), s->cleared_by.end(), c.name) == s->cleared_by.end())
      continue;
    Span cs = span_of(c);
    if (!cs.has_wall || cs.lo < es.hi || cs.lo > limit) continue;
    if (!h || cs.lo < *h) h = cs.lo;
  }
  return h;
}

// Reasoner::resolve: a device reference names the event's device or a device
// bound with `locate ... as NAME`.
const std::string* resolve(const DeviceRef& ref, const Event& cause, const Event& effect) {
  const Event& ev = ref.side == DeviceRef::Side::effect ? effect : cause;
  return ref.binding.empty() ? &ev.device : ev.binding(ref.binding);
}

// Reasoner::where_ok: every relation of the conjunction holds in the topology.
bool where_ok(const Rule& r, const Topology& topo, const Event& cause, const Event& effect) {
  for (const RelationConstraint& c : r.where) {
    const std::string* a = resolve(c.lhs, cause, effect);
    const std::string* b = resolve(c.rhs, cause, effect);
    if (!a || !b || !topo.related(c.rel, *a, *b)) return false;
  }
  return true;
}

}  // namespace

std::set<std::string> linked_rules(const KnowledgeBase& kb, const Topology& topo,
                                   const std::vector<Event>& events, double clock_skew_s) {
  std::map<std::string, std::vector<size_t>> by_name;
  for (size_t i = 0; i < events.size(); ++i) by_name[events[i].name].push_back(i);
  std::vector<std::optional<int64_t>> heal;
  heal.reserve(events.size());
  for (const Event& ev : events) heal.push_back(healed_at(kb, events, ev));
  std::set<std::string> out;
  for (const Rule& r : kb.rules) {
    auto c = by_name.find(r.cause);
    auto e = by_name.find(r.effect);
    if (c == by_name.end() || e == by_name.end()) continue;  // latents never have events
    bool linked = false;
    for (size_t ci : c->second) {
      for (size_t ei : e->second) {
        if (ci == ei) continue;
        if (!in_window(events[ci], events[ei], r, clock_skew_s)) continue;
        // Reasoner::candidates: a healed cause explains only what happened up to the heal.
        if (heal[ci] && events[ei].time.wall) {
          bool same_clock = events[ci].time.clock == events[ei].time.clock;
          double sk = same_clock ? 0.0 : r.skew_s + clock_skew_s;
          if (span_of(events[ei]).lo > *heal[ci] + static_cast<int64_t>(sk * 1e6)) continue;
        }
        if (!where_ok(r, topo, events[ci], events[ei])) continue;
        linked = true;
        break;
      }
      if (linked) break;
    }
    if (linked) out.insert(r.name);
  }
  return out;
}

}  // namespace reflex::cli
