// The backward walk over the KB's causal rules: candidate causes of each
// effect from the event index (scanned by time window, or probed by device
// when a `where` relation pins the cause's device), filtered by window, heal
// and `where`, added to the incident graph.
#include "reasoner_walk.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace reflex::engine::reasoning {
namespace {

constexpr size_t kScanLimit = 20000;      // candidate events looked at per (effect, rule)
constexpr size_t kDeviceStrategy = 256;   // above this many in the window, probe by device
constexpr size_t kSmallProbe = 16;        // a window this large is probed if few devices relate
constexpr size_t kProbeCost = 8;          // window events one related-device lookup is worth
constexpr uint8_t kSmallProbeMisses = 4;  // a rule's failed small probes before it stops trying

// std::lower_bound over [first, last) of `v` (the first i with !less(v[i], t)),
// searched outward from `hint`: the symptoms of one incident are walked in time
// order, so their candidate windows start at nearly the same place.
template <class Less>
size_t gallop_lower_bound(const std::vector<uint32_t>& v, size_t first, size_t last, size_t hint,
                          int64_t t, Less less) {
  hint = std::clamp(hint, first, last);
  size_t lo, hi;
  if (hint < last && less(v[hint], t)) {  // the answer is past hint
    lo = hint + 1;
    size_t step = 1;
    while (lo + step - 1 < last && less(v[lo + step - 1], t)) {
      lo += step;
      step *= 2;
    }
    hi = std::min(last, lo + step);
  } else {  // the answer is at or before hint
    hi = hint;
    size_t step = 1;
    while (hi >= first + step && !less(v[hi - step], t)) {
      hi -= step;
      step *= 2;
    }
    lo = hi >= first + step ? hi - step + 1 : first;
  }
  auto it = std::lower_bound(v.begin() + static_cast<std::ptrdiff_t>(lo),
                             v.begin() + static_cast<std::ptrdiff_t>(hi), t, less);
  return static_cast<size_t>(it - v.begin());
}

}  // namespace

bool CauseWalk::small_probe_worth(const Rule& r) const {
  size_t i = static_cast<size_t>(&r - kb_.rules.data());
  return i >= small_probe_misses_.size() || small_probe_misses_[i] < kSmallProbeMisses;
}

void CauseWalk::small_probe_missed(const Rule& r) {
  if (&r < kb_.rules.data() || &r >= kb_.rules.data() + kb_.rules.size()) return;
  size_t i = static_cast<size_t>(&r - kb_.rules.data());
  if (small_probe_misses_.size() <= i) small_probe_misses_.resize(kb_.rules.size(), 0);
  ++small_probe_misses_[i];
}

const std::string* CauseWalk::resolve_id(const DeviceRef& ref, uint32_t cause_ev,
                                         uint32_t effect_ev, Topology::DeviceId* id) const {
  uint32_t ev = ref.side == DeviceRef::Side::effect ? effect_ev : cause_ev;
  if (ref.binding.empty()) {
    *id = ix_.topo_id(ix_.rec(ev).device);
    return &ix_.device(ev);
  }
  const std::string* d = ix_.binding(ev, ref.binding);
  *id = d ? topo_.id(*d) : Topology::kNoDevice;
  return d;
}

bool CauseWalk::where_ok(const Rule& r, uint32_t cause_ev, uint32_t effect_ev) const {
  // An event's own device has its topology id cached in the index.
  auto side = [&](const DeviceRef& ref) {
    return ref.side == DeviceRef::Side::effect ? effect_ev : cause_ev;
  };
  // bind_topology() cached every event device's id (kNoDevice: a
  // placeholder, which where_holds_by then relates by name).
  return rules::where_holds_by(
      r, topo_,
      [&](const DeviceRef& ref) {
        return ref.binding.empty() ? ix_.topo_id(ix_.rec(side(ref)).device) : Topology::kNoDevice;
      },
      [&](const DeviceRef& ref) {
        return ref.binding.empty() ? &ix_.device(side(ref)) : ix_.binding(side(ref), ref.binding);
      });
}

int64_t CauseWalk::healed_at(uint32_t ev) {
  const Rec& rec = ix_.rec(ev);
  if (const Signature* s = ki_.signature(rec.name); !s || s->cleared_by.empty() || !rec.has_wall())
    return kNoWall;  // cannot heal: not worth a cache entry
  auto it = healed_.find(ev);
  if (it != healed_.end()) return it->second;
  int64_t h = kNoWall;
  const Rec& r = ix_.rec(ev);
  const Signature* s = ki_.signature(r.name);
  if (s && !s->cleared_by.empty() && r.has_wall()) {
    int64_t limit = rules::heal_window_end(*s, r);
    for (auto& name : s->cleared_by) {
      uint32_t cn = in_.find(name);
      if (cn == kNone) continue;
      auto* v = ix_.by_name_device(cn, r.device);
      if (!v) continue;
      auto lo_it = std::lower_bound(v->begin(), v->end(), r.hi, [&](uint32_t i, int64_t t) {
        const Rec& rr = ix_.rec(i);
        return rr.has_wall() && rr.lo < t;
      });
      for (auto i = lo_it; i != v->end(); ++i) {
        const Rec& rr = ix_.rec(*i);
        if (!rr.has_wall() || rr.lo > limit) break;
        if (*i == ev) continue;
        h = h == kNoWall ? rr.lo : std::min(h, rr.lo);
        break;
      }
    }
  }
  healed_.emplace(ev, h);
  return h;
}

bool CauseWalk::skip_healed(uint32_t ev) {
  int64_t h = healed_at(ev);
  if (h == kNoWall) return false;
  const Event& e = ix_.ev(ev);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", static_cast<double>(h - ix_.rec(ev).hi) / 1e6);
  g_.note(e.name + " on " + e.device + " healed " + buf +
          " s later (cleared_by): transient, not blamed");
  return true;
}

void CauseWalk::events_on_devices(uint32_t name, const std::vector<uint32_t>& devs, int64_t lower,
                                  int64_t upper, std::vector<uint32_t>* found) const {
  found->clear();
  for (uint32_t did : devs) {
    if (did == kNone) continue;
    auto* v = ix_.by_name_device(name, did);
    if (!v) continue;
    auto lo_it = std::lower_bound(v->begin(), v->end(), lower, [&](uint32_t i, int64_t t) {
      const Rec& rr = ix_.rec(i);
      return rr.has_wall() && rr.lo < t;
    });
    for (auto it = lo_it; it != v->end(); ++it) {
      const Rec& rr = ix_.rec(*it);
      // Events without wall time are the callers' to consider (each runs
      // over the name's nowall list): taking them here too would give them
      // a second edge.
      if (!rr.has_wall()) break;  // they sort last
      if (rr.lo > upper) continue;
      found->push_back(*it);
    }
  }
  // Nearest in time first, like the scan.
  ix_.sort_events(*found, /*descending=*/true);
}

void CauseWalk::related_ids(Relation rel, Topology::DeviceId id, bool lhs, DeviceKind kind,
                            size_t limit) {
  if (const RelatedQuery* q = related_q_ ? &*related_q_ : nullptr;
      q && q->rel == rel && q->id == id && q->lhs == lhs && q->kind == kind &&
      (topo_ids_.size() <= q->limit || limit <= q->limit))
    return;  // complete, or known to exceed `limit`: what a new call would tell
  topo_.related_device_ids(rel, id, lhs, kind, &topo_ids_, limit);
  related_q_ = RelatedQuery{rel, id, lhs, kind, limit};
}

CauseWalk::Window* CauseWalk::window_of(const Rule& r, size_t bi, size_t ei) {
  if (&r < kb_.rules.data() || &r >= kb_.rules.data() + kb_.rules.size()) return nullptr;
  size_t i = static_cast<size_t>(&r - kb_.rules.data());
  if (windows_.empty()) {
    windows_.resize(kb_.rules.size());
    plain_where_.resize(kb_.rules.size());
    for (size_t k = 0; k < kb_.rules.size(); ++k) {
      bool plain = true;
      for (auto& c : kb_.rules[k].where)
        plain = plain && c.lhs.binding.empty() && c.rhs.binding.empty();
      plain_where_[k] = plain;
    }
  }
  Window& w = windows_[i];
  if (w.bi != bi || w.ei != ei) {
    w.bi = bi, w.ei = ei;
    w.evs.clear();
  }
  return &w;
}

bool CauseWalk::where_ok_ids(const Rule& r, uint32_t cause_ev, DevKey cause, uint32_t effect_ev,
                             DevKey effect) const {
  // where_holds_by with both ids known, relation by relation; at the first
  // side without a topology id the general check decides (the relations
  // before it held, so it decides as it would have from the start).
  for (const RelationConstraint& c : r.where) {
    const DevKey& a = c.lhs.side == DeviceRef::Side::effect ? effect : cause;
    const DevKey& b = c.rhs.side == DeviceRef::Side::effect ? effect : cause;
    if (a.id == Topology::kNoDevice || b.id == Topology::kNoDevice)
      return where_ok(r, cause_ev, effect_ev);
    if (c.rel == Relation::same_job) {  // the keys decide, unless one has several jobs
      if (a.job == Topology::kNoJob || b.job == Topology::kNoJob) return false;
      if (a.job >= 0 && b.job >= 0) {
        if (a.job != b.job) return false;
        continue;
      }
    }
    if (!topo_.related(c.rel, a.id, b.id)) return false;
  }
  return true;
}

namespace {
// A fit that only the effect's inherited-time bound allows (its line had no
// time of its own): the order is not known, as across clocks, and the link
// is made at the lower score of an unknown fit.
rules::WindowFit bound_only_fit(rules::WindowFit fit, const rules::EventSpan& cause,
                                const Rec& effect_own, bool widened, bool same_clock, const Rule& r,
                                double clock_skew_s) {
  if (fit != rules::WindowFit::inside || !widened) return fit;
  if (rules::window_fit(cause, effect_own, same_clock, r, clock_skew_s) ==
      rules::WindowFit::outside)
    return rules::WindowFit::unknown;
  return fit;
}
}  // namespace

template <class F>
void CauseWalk::scan_window(const Rule& r, const NameList& nl, size_t bi, size_t ei,
                            uint32_t effect_ev, const Rec& er, size_t* scanned, size_t* taken,
                            F& accept) {
  Window* w = window_of(r, bi, ei);
  const bool plain = plain_where_[static_cast<size_t>(&r - kb_.rules.data())];
  const Rec& own = ix_.rec(effect_ev);  // er with its own `hi`
  const bool widened = er.hi != own.hi;
  const Topology::DeviceId eid = ix_.topo_id(er.device);
  const DevKey ekey{eid, topo_.same_job_key(eid)};
  for (size_t k = 0; k < ei - bi; ++k) {
    if (k == w->evs.size()) {
      uint32_t c = nl.wall[ei - 1 - k];
      const Rec& rc = ix_.rec(c);
      const Topology::DeviceId cid = ix_.topo_id(rc.device);
      w->evs.push_back({rc, kHealUnknown, rc.clock, cid, topo_.same_job_key(cid), c});
    }
    WinEv& we = w->evs[k];
    if (we.ev == effect_ev) continue;
    if (++*scanned > kScanLimit) {
      g_.truncated = true;
      return;
    }
    // The three tests have no side effects, so their order changes nothing
    // but the cost: a plain `where` is two cached ids and one relation, and
    // in a window scanned by many effects (a job's ranks against the last
    // hour's causes under `same_job`) it is the one that rejects nearly all.
    if (plain && !where_ok_ids(r, we.ev, {we.topo, we.job}, effect_ev, ekey)) continue;
    const bool same_clock = we.clock == er.clock;
    rules::WindowFit fit =
        bound_only_fit(rules::window_fit(we.span, er, same_clock, r, o_.clock_skew_s), we.span, own,
                       widened, same_clock, r, o_.clock_skew_s);
    if (fit == rules::WindowFit::outside) continue;
    if (we.heal == kHealUnknown) we.heal = healed_at(we.ev);
    if (rules::after_heal(we.heal, er, same_clock, r, o_.clock_skew_s)) continue;
    if (!plain && !where_ok(r, we.ev, effect_ev)) continue;
    accept(we.ev, fit == rules::WindowFit::unknown);
    if (++*taken >= o_.max_candidates_per_rule) return;
  }
}

template <class Probe>
bool CauseWalk::probe_window(size_t n, const Rule& r, Probe&& probe) {
  // A large window is probed by device when the related devices are not too
  // many; a small one when they are few against it (a related-device lookup
  // costs about as much as checking eight events of the window).
  if (n > kDeviceStrategy) return probe(kMaxDevices);
  if (n < kSmallProbe || !small_probe_worth(r)) return false;
  if (probe(n / kProbeCost)) return true;
  small_probe_missed(r);
  return false;
}

template <class F>
void CauseWalk::candidates(uint32_t effect_ev, const Rule& r, uint32_t cause_name, F&& accept) {
  const NameList* nl = ix_.by_name(cause_name);
  if (!nl) return;
  // The effect as far as its time is known: an untimed line's event may
  // have happened up to latest() (EventIndex::settle_inherited_times).
  const Rec& own = ix_.rec(effect_ev);
  Rec er = own;
  er.hi = ix_.latest(effect_ev);
  const bool widened = er.hi != own.hi;
  size_t taken = 0, scanned = 0;
  auto consider = [&](uint32_t c) -> bool {  // false: stop
    if (c == effect_ev) return true;
    if (++scanned > kScanLimit) {
      g_.truncated = true;
      return false;
    }
    const Rec& rc = ix_.rec(c);
    rules::WindowFit w = bound_only_fit(window(rc, er, r), rc, own, widened, rc.clock == er.clock,
                                        r, o_.clock_skew_s);
    if (w == rules::WindowFit::outside) return true;
    if (rules::after_heal(healed_at(c), er, ix_.rec(c).clock == er.clock, r, o_.clock_skew_s))
      return true;
    if (!where_ok(r, c, effect_ev)) return true;
    accept(c, w == rules::WindowFit::unknown);
    return ++taken < o_.max_candidates_per_rule;
  };

  // A `where` constraint tying the cause's own device to the effect side lets
  // us probe by device instead of scanning every event of that name.
  // `max_devices`: probe only when the related devices are at most this many.
  auto device_probe = [&](int64_t lower, int64_t upper, size_t max_devices) -> bool {
    const Signature* cs = ki_.signature(cause_name);
    if (!cs) return false;
    for (auto& c : r.where) {
      bool lhs_cause = c.lhs.side == DeviceRef::Side::cause && c.lhs.binding.empty() &&
                       c.rhs.side == DeviceRef::Side::effect;
      bool rhs_cause = c.rhs.side == DeviceRef::Side::cause && c.rhs.binding.empty() &&
                       c.lhs.side == DeviceRef::Side::effect;
      if (!lhs_cause && !rhs_cause) continue;
      if (c.rel == Relation::any) continue;
      Topology::DeviceId other_id;
      const std::string* other = resolve_id(lhs_cause ? c.rhs : c.lhs, kNone, effect_ev, &other_id);
      if (!other) return true;  // the constraint cannot hold: no candidates at all
      // The cause-side devices as interned strings (kNone: no event names it).
      std::vector<uint32_t>& dev_ids = probe_devs_;
      dev_ids.clear();
      if (other_id != Topology::kNoDevice) {
        related_ids(c.rel, other_id, lhs_cause, cs->kind, max_devices);
        if (topo_ids_.size() > max_devices) continue;
        for (Topology::DeviceId d : topo_ids_) dev_ids.push_back(ix_.interned_of(d));
      } else {
        // From a device the topology does not hold, only the host-local
        // relations can be enumerated; for the others (a rank that runs_on a
        // placeholder host) the scan below checks each candidate instead.
        if (c.rel != Relation::same && c.rel != Relation::same_host && c.rel != Relation::on)
          continue;
        auto devs = topo_.related_devices(c.rel, *other, lhs_cause, cs->kind);
        if (devs.size() > max_devices) continue;
        for (auto& d : devs) dev_ids.push_back(in_.find(d));
      }
      std::vector<uint32_t>& found = probe_found_;
      events_on_devices(cause_name, dev_ids, lower, upper, &found);
      for (uint32_t c2 : found)
        if (!consider(c2)) break;
      return true;
    }
    return false;
  };

  if (er.has_wall()) {
    double maxsk = r.skew_s + o_.clock_skew_s;
    int64_t upper = er.hi - static_cast<int64_t>((r.min_s - maxsk) * 1e6);
    int64_t lower = er.lo - static_cast<int64_t>((r.max_s + maxsk) * 1e6) - nl->max_span;
    auto cmp_lo = [&](uint32_t i, int64_t t) { return ix_.rec(i).lo < t; };
    // Where the last window of this cause name began and ended.
    uint32_t slot = scan_hint_of_.find(cause_name);
    if (slot == kNone) {
      slot = static_cast<uint32_t>(scan_hints_.size());
      scan_hint_of_.insert(cause_name, slot);
      scan_hints_.push_back({nl->wall.size() / 2, nl->wall.size() / 2});
    }
    auto& hint = scan_hints_[slot];
    size_t bi = gallop_lower_bound(nl->wall, 0, nl->wall.size(), hint.first, lower, cmp_lo);
    size_t ei = gallop_lower_bound(nl->wall, bi, nl->wall.size(), hint.second, upper + 1, cmp_lo);
    hint = {bi, ei};
    auto b = nl->wall.begin() + static_cast<std::ptrdiff_t>(bi);
    auto en = nl->wall.begin() + static_cast<std::ptrdiff_t>(ei);
    size_t n = static_cast<size_t>(en - b);
    if (!probe_window(n, r, [&](size_t most) { return device_probe(lower, upper, most); })) {
      if (!window_of(r, bi, ei)) {  // a rule not of the KB (no cache slot)
        for (auto it = en; it != b;) {
          --it;
          if (!consider(*it)) break;
        }
      } else {
        scan_window(r, *nl, bi, ei, effect_ev, er, &scanned, &taken, accept);
      }
    }
    // Events without wall time are compared by monotonic time within their clock.
    for (uint32_t c : nl->nowall)
      if (!consider(c)) break;
  } else {
    for (uint32_t c : nl->nowall)
      if (!consider(c)) break;
    if (nl->wall.size() > kDeviceStrategy &&
        device_probe(std::numeric_limits<int64_t>::min() + 1, std::numeric_limits<int64_t>::max(),
                     kMaxDevices))
      return;
    for (auto it = nl->wall.end(); it != nl->wall.begin();) {
      --it;
      if (!consider(*it)) break;
    }
  }
}

void CauseWalk::expand_node(uint32_t n) {
  uint32_t ev = g_.nodes[n].ev;
  if (ev == kNone) return;
  uint32_t name = ix_.rec(ev).name;
  auto* rules = ki_.rules_for(name);
  if (!rules) return;
  // Plain variables, not a structured binding: the lambda below captures the
  // rule, and clang 14 (C++20 before P1091/P1381) cannot capture bindings.
  for (const KbIndex::CauseRule& cr : *rules) {
    const Rule* r = cr.rule;
    uint32_t cname = cr.cause;
    if (ki_.latent.count(cname)) {
      latent_requests_.push_back({n, r});
      continue;
    }
    candidates(ev, *r, cname, [&](uint32_t c, bool unknown) {
      bool added;
      uint32_t cn = g_.node_of(c, &added);
      if (cn == kNone) return;
      g_.add_edge(cn, n, r, unknown);
      if (added) pending_.push_back(cn);
    });
  }
}

void CauseWalk::walk(const std::vector<uint32_t>& start_nodes) {
  for (uint32_t n : start_nodes) pending_.push_back(n);
  // Every node is expanded once: pending_ only receives newly added nodes.
  for (size_t i = 0; i < pending_.size(); ++i) {
    uint32_t n = pending_[i];
    if (n >= expanded_.size()) expanded_.resize(g_.nodes.size(), 0);
    if (expanded_[n]) continue;
    expanded_[n] = 1;
    expand_node(pending_[i]);
  }
  pending_.clear();
}

}  // namespace reflex::engine::reasoning
