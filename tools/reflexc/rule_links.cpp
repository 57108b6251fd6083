// See rule_links.h. Whether a pair of events satisfies a rule (window, heal,
// `where`) is decided by the engine's own predicates (reflex/rules.h); only the
// pairing is done here, because the engine's backward walk tests just the pairs
// it reaches from a symptom.
#include "rule_links.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "reflex/rules.h"

namespace reflex::cli {

namespace {

using rules::EventSpan;
using rules::kNoWall;

// The wall time of the first `cleared_by` event on the same device that heals
// `ev` (the engine's Reasoner::healed_at over an index), else kNoWall.
int64_t healed_at(const KnowledgeBase& kb, const std::vector<Event>& events,
                  const std::vector<EventSpan>& spans, size_t i) {
  const Event& ev = events[i];
  const Signature* s = kb.find_signature(ev.name);
  if (!s || s->cleared_by.empty()) return kNoWall;
  int64_t h = kNoWall;
  for (size_t j = 0; j < events.size(); ++j) {
    const Event& c = events[j];
    if (j == i || c.device != ev.device) continue;
    if (std::find(s->cleared_by.begin(), s->cleared_by.end(), c.name) == s->cleared_by.end())
      continue;
    if (!rules::heals(*s, spans[i], spans[j])) continue;
    if (h == kNoWall || spans[j].lo < h) h = spans[j].lo;
  }
  return h;
}

}  // namespace

std::set<std::string> linked_rules(const KnowledgeBase& kb, const Topology& topo,
                                   const std::vector<Event>& events, double clock_skew_s) {
  std::map<std::string, std::vector<size_t>> by_name;
  for (size_t i = 0; i < events.size(); ++i) by_name[events[i].name].push_back(i);
  std::vector<EventSpan> spans;
  spans.reserve(events.size());
  for (const Event& ev : events) spans.push_back(rules::span_of(ev));
  std::vector<int64_t> heal;
  heal.reserve(events.size());
  for (size_t i = 0; i < events.size(); ++i) heal.push_back(healed_at(kb, events, spans, i));
  std::set<std::string> out;
  for (const Rule& r : kb.rules) {
    auto c = by_name.find(r.cause);
    auto e = by_name.find(r.effect);
    if (c == by_name.end() || e == by_name.end()) continue;  // latents never have events
    bool linked = false;
    for (size_t ci : c->second) {
      for (size_t ei : e->second) {
        if (ci == ei) continue;
        bool same_clock = events[ci].time.clock == events[ei].time.clock;
        // Clocks that cannot be compared link too (the engine links them at a lower score).
        if (rules::window_fit(spans[ci], spans[ei], same_clock, r, clock_skew_s) ==
            rules::WindowFit::outside)
          continue;
        if (rules::after_heal(heal[ci], spans[ei], same_clock, r, clock_skew_s)) continue;
        if (!rules::where_holds(r, topo, events[ci], events[ei])) continue;
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
