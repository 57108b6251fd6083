// Latent hypotheses: where a latent cause may stand (rule relations, the odd
// one out, quorums of effect devices), whether a silent host was silent
// against its peers, causal reach over later waves, and the note that says
// why each hypothesis stands.
#include "reasoner_hypotheses.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <set>
#include <unordered_set>

namespace reflex::engine::reasoning {
namespace {

constexpr size_t kMaxLatentDevices = 16;

// The device a reference names with the cause's own device `cause_dev`.
const std::string* resolve(const DeviceRef& ref, const Event* cause, const std::string* cause_dev,
                           const Event& effect) {
  if (ref.side == DeviceRef::Side::effect)
    return ref.binding.empty() ? &effect.device : effect.binding(ref.binding);
  if (ref.binding.empty()) return cause_dev;
  return cause ? cause->binding(ref.binding) : nullptr;
}

}  // namespace

// The devices a latent cause of node n's event may sit on under rule r
// (nullopt when the rule cannot place it).
std::optional<std::vector<std::string>> Hypotheses::latent_devices(uint32_t n, const Rule& r,
                                                                   const Latent& lat) {
  const Event& e = ix_.ev(g_.nodes[n].ev);
  if (!lat.odd_one_out.empty()) {  // only where its evidence differs from the peers'
    compute_odd();
    auto devs = odd_.placements(lat, r, e, topo_);
    return devs.empty() ? std::nullopt : std::optional(std::move(devs));
  }
  std::optional<std::vector<std::string>> cands;
  // Constraints whose device set is larger than a hypothesis may be placed on
  // (a whole job under `same_job`): enumerated only up to that size, then used
  // as filters on the other constraints' candidates. Enumerating a 12,500-host
  // job for each of 300,000 rank symptoms made the 100k-GPU scale run crawl.
  struct Wide {
    Relation rel;
    bool cause_is_lhs;
    const std::string* other;
  };
  std::vector<Wide> wide;
  for (auto& c : r.where) {
    bool lc = c.lhs.side == DeviceRef::Side::cause;
    bool rc = c.rhs.side == DeviceRef::Side::cause;
    if (lc && rc) continue;
    if (!lc && !rc) {
      const std::string* a = resolve(c.lhs, nullptr, nullptr, e);
      const std::string* b = resolve(c.rhs, nullptr, nullptr, e);
      if (!a || !b || !topo_.related(c.rel, *a, *b)) return std::nullopt;
      continue;
    }
    const DeviceRef& cref = lc ? c.lhs : c.rhs;
    const DeviceRef& oref = lc ? c.rhs : c.lhs;
    if (!cref.binding.empty()) return std::nullopt;  // a latent has no bound devices
    const std::string* other = resolve(oref, nullptr, nullptr, e);
    if (!other) return std::nullopt;
    if (c.rel == Relation::any) continue;
    auto devs = topo_.related_devices(c.rel, *other, lc, lat.kind, kMaxLatentDevices);
    if (devs.size() > kMaxLatentDevices) {
      wide.push_back({c.rel, lc, other});
      continue;
    }
    std::sort(devs.begin(), devs.end());
    devs.erase(std::unique(devs.begin(), devs.end()), devs.end());
    if (!cands) {
      cands = std::move(devs);
    } else {
      std::vector<std::string> both;
      std::set_intersection(cands->begin(), cands->end(), devs.begin(), devs.end(),
                            std::back_inserter(both));
      cands = std::move(both);
    }
  }
  size_t first_filter = 0;
  if (!cands && wide.size() >= 2) {
    // Only wide constraints: their intersection may still be small.
    auto devs = topo_.related_devices(wide[0].rel, *wide[0].other, wide[0].cause_is_lhs, lat.kind);
    std::sort(devs.begin(), devs.end());
    devs.erase(std::unique(devs.begin(), devs.end()), devs.end());
    cands = std::move(devs);
    first_filter = 1;
  }
  if (cands) {
    for (size_t i = first_filter; i < wide.size(); ++i) {
      const Wide& w = wide[i];
      std::erase_if(*cands, [&](const std::string& d) {
        return !(w.cause_is_lhs ? topo_.related(w.rel, d, *w.other)
                                : topo_.related(w.rel, *w.other, d));
      });
    }
  }
  if (!cands && !wide.empty()) {
    g_.note("latent '" + lat.name + "' was not hypothesised for " + e.device + ": rule " +
            r.loc.str() + " places it on more than " + std::to_string(kMaxLatentDevices) +
            " devices, too many to tell apart");
    return std::nullopt;
  }
  if (!cands || cands->empty()) return std::nullopt;
  if (cands->size() > kMaxLatentDevices) {
    g_.note("latent '" + lat.name + "' was not hypothesised for " + e.device + ": rule " +
            r.loc.str() + " places it on " + std::to_string(cands->size()) +
            " devices, too many to tell apart");
    return std::nullopt;
  }
  return cands;
}

// An `odd_one_out` latent found on some device has evidence of its own: like
// a rival of an observed root, it competes with what already explains an effect.
bool Hypotheses::odd_evidence(const std::string& latent) {
  auto lit = ki_.latent.find(in_.find(latent));
  if (lit == ki_.latent.end() || lit->second->odd_one_out.empty()) return false;
  compute_odd();
  return odd_.found(latent);
}

void Hypotheses::compute_odd() {
  if (odd_.computed()) return;
  odd_.compute(kb_, topo_, ix_);
  if (odd_.truncated()) g_.truncated = true;
  for (const std::string& s : odd_.splits()) g_.note(s);
}

// The hypothesis node of latent `lat` on `dev`, created on first use (kNone when full).
uint32_t Hypotheses::hyp_node(const Latent* lat, const std::string& dev) {
  auto key = std::make_pair(lat->name, dev);
  auto it = hyp_node_.find(key);
  if (it != hyp_node_.end()) return it->second;
  if (g_.nodes.size() >= o_.max_nodes) {
    g_.truncated = true;
    return kNone;
  }
  Hyp h;
  h.latent = lat;
  h.device = dev;
  if (auto info = topo_.device(dev)) h.host = info->host;
  if (h.host.empty() && lat->kind == DeviceKind::host) h.host = dev;
  g_.hyps.push_back(std::move(h));
  GNode g;
  g.hyp = static_cast<int>(g_.hyps.size() - 1);
  g_.nodes.push_back(std::move(g));
  uint32_t hn = static_cast<uint32_t>(g_.nodes.size() - 1);
  hyp_node_.emplace(key, hn);
  return hn;
}

void Hypotheses::hypothesise(const std::vector<std::pair<uint32_t, const Rule*>>& requests) {
  size_t before = g_.hyps.size();
  // Observed root candidates a latent could also explain, per (latent, device):
  // the latent competes with them only when it explains two or more at once.
  // A latent with a quorum (common mode) is grouped the same way for every
  // effect, explained or not, and needs its quorum of devices.
  std::unordered_set<uint32_t> root_set(g_.roots.begin(), g_.roots.end());
  std::map<std::pair<std::string, std::string>, std::vector<LatentRequest>> grouped;
  std::map<std::string, const Latent*> latent_of;
  for (auto& [n, r] : requests) {
    bool rival = g_.grounded[n] != 0;
    // Explained effects need no latent; root candidates may be rivalled.
    if (rival && !root_set.count(n) && !odd_evidence(r->cause)) continue;
    uint32_t lname = in_.find(r->cause);
    auto lit = ki_.latent.find(lname);
    if (lit == ki_.latent.end()) continue;
    const Latent* lat = lit->second;
    auto cands = latent_devices(n, *r, *lat);
    if (!cands) continue;
    for (auto& d : *cands) {
      if (rival || lat->has_quorum()) {
        grouped[{lat->name, d}].push_back({n, r, rival});
        latent_of[lat->name] = lat;
        continue;
      }
      uint32_t hn = hyp_node(lat, d);
      if (hn != kNone) link_hypothesis(hn, n, r, false);
    }
  }
  for (auto& [key, reqs] : grouped) hypothesise_group(*latent_of[key.first], key.second, reqs);
  judge_silent(before);
}

void Hypotheses::link_hypothesis(uint32_t hn, uint32_t n, const Rule* r, bool rival) {
  g_.add_edge(hn, n, r, false, rival);
  Hyp& h = g_.hyps[static_cast<size_t>(g_.nodes[hn].hyp)];
  const Rec& er = ix_.rec(g_.nodes[n].ev);
  if (er.has_wall()) {
    int64_t t = er.lo - static_cast<int64_t>(r->min_s * 1e6);
    h.t_est = h.t_est == kNoWall ? t : std::min(h.t_est, t);
  }
}

// The devices a quorum's share is taken of: for each rule of the requests,
// the devices of the effects' kind that its cause-effect relation places
// with `dev` as the cause (`effect in cause`: the GPUs of the host).
size_t Hypotheses::quorum_population(const std::string& dev,
                                     const std::vector<LatentRequest>& reqs) {
  std::set<std::pair<const Rule*, DeviceKind>> seen;
  std::set<std::string> pop;
  for (const LatentRequest& q : reqs) {
    auto info = topo_.device(ix_.ev(g_.nodes[q.n].ev).device);
    if (!info || !seen.insert({q.r, info->kind}).second) continue;
    for (const RelationConstraint& c : q.r->where) {
      const bool lc = c.lhs.side == DeviceRef::Side::cause && c.lhs.binding.empty();
      const bool rc = c.rhs.side == DeviceRef::Side::cause && c.rhs.binding.empty();
      const bool le = c.lhs.side == DeviceRef::Side::effect && c.lhs.binding.empty();
      const bool re = c.rhs.side == DeviceRef::Side::effect && c.rhs.binding.empty();
      if (!((lc && re) || (le && rc)) || c.rel == Relation::any) continue;
      for (auto& d : topo_.related_devices(c.rel, dev, le, info->kind, kMaxDevices)) pop.insert(d);
      break;
    }
  }
  return pop.size();
}

// One latent time must fit every request's rule window: take the time point
// that the most distinct effect devices agree on; hypothesise when they are
// at least the latent's quorum (two for a rival of observed roots).
void Hypotheses::hypothesise_group(const Latent& lat, const std::string& dev,
                                   const std::vector<LatentRequest>& reqs) {
  if (reqs.size() < 2) return;
  struct Span {
    int64_t lo, hi;
    uint32_t dev;
  };
  std::vector<Span> spans;
  for (const LatentRequest& q : reqs) {
    const Rec& er = ix_.rec(g_.nodes[q.n].ev);
    Span sp{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), er.device};
    if (er.has_wall()) {
      double sk = q.r->skew_s + o_.clock_skew_s;
      sp.lo = er.lo - static_cast<int64_t>((q.r->max_s + sk) * 1e6);
      sp.hi = er.hi - static_cast<int64_t>((q.r->min_s - sk) * 1e6);
    }
    spans.push_back(sp);
  }
  constexpr size_t kMaxRivals = 2000;  // quadratic below; beyond this the rest are ignored
  if (spans.size() > kMaxRivals) {
    spans.resize(kMaxRivals);
    g_.truncated = true;
  }
  int best = 0;
  int64_t best_t = 0;
  for (auto& p : spans) {
    std::set<uint32_t> devs;
    for (auto& q : spans)
      if (q.lo <= p.lo && p.lo <= q.hi) devs.insert(q.dev);
    int k = static_cast<int>(devs.size());
    // Ties go to the earliest point: the onset, whatever the request order.
    if (k > best || (k == best && p.lo < best_t)) {
      best = k;
      best_t = p.lo;
    }
  }
  int need = std::max(2, lat.quorum_devices);
  size_t pop = 0;
  if (lat.quorum_share > 0) {
    pop = quorum_population(dev, reqs);
    need = std::max(
        need, static_cast<int>(std::ceil(lat.quorum_share * static_cast<double>(pop) - 1e-9)));
  }
  if (best < need) {
    if (lat.has_quorum() && best >= 2)
      g_.note("latent " + lat.name + " on " + dev + " was not hypothesised: " +
              std::to_string(best) + (pop ? " of " + std::to_string(pop) : std::string()) +
              " devices show its effects at once, its quorum needs " + std::to_string(need));
    return;
  }
  uint32_t hn = hyp_node(&lat, dev);
  if (hn == kNone) return;
  for (size_t i = 0; i < spans.size(); ++i)
    if (spans[i].lo <= best_t && best_t <= spans[i].hi)
      link_hypothesis(hn, reqs[i].n, reqs[i].r, reqs[i].rival);
  Hyp& h = g_.hyps[static_cast<size_t>(g_.nodes[hn].hyp)];
  h.rival_roots = std::max(h.rival_roots, best);
  if (pop) h.quorum_of = pop;
}

// Silent latents: the host logged nothing after the hypothesised time while
// its peers kept logging (judged against the peers, never "who logged least").
// A hypothesis on a host the input holds no line of is named by its peers
// only (never silent: absence of input is not silence). Hypotheses from index
// `first` on are judged.
void Hypotheses::judge_silent(size_t first) {
  int64_t skew = static_cast<int64_t>(o_.clock_skew_s * 1e6);
  std::vector<uint32_t> node_of_hyp(g_.hyps.size(), kNone);
  for (const auto& [key, hn] : hyp_node_) node_of_hyp[static_cast<size_t>(g_.nodes[hn].hyp)] = hn;
  for (size_t i = first; i < g_.hyps.size(); ++i) {
    Hyp& h = g_.hyps[i];
    const uint32_t host_id = h.host.empty() ? kNone : in_.find(h.host);
    if (!h.latent->silent) {
      // Any hypothesis on a host the input holds no line of rests on its
      // peers' word alone.
      if (!h.host.empty() && !ix_.host_has_input(host_id)) h.named_by_peer = true;
      continue;
    }
    // A host that logged the effect itself was alive after the cause: its
    // silence cannot explain it. Without an effect seen by another host the
    // hypothesis has no ground, whatever the clocks say.
    bool seen_elsewhere = false;
    if (uint32_t hn = node_of_hyp[i]; hn != kNone)
      for (uint32_t e : g_.nodes[hn].out) {
        uint32_t en = g_.edges[e].effect;
        if (g_.nodes[en].ev != kNone && ix_.host(g_.nodes[en].ev) != h.host) seen_elsewhere = true;
      }
    if (!seen_elsewhere) {
      h.valid = false;
      continue;
    }
    const uint32_t hid = host_id;
    // Absence of input is not silence: a host the input holds no line of is
    // known only because its peers name it. It stays a candidate, named by
    // them, never called silent (nor evicted: choose_evictions).
    if (!ix_.host_has_input(hid)) {
      h.named_by_peer = true;
      continue;
    }
    if (h.t_est == kNoWall) {
      h.silent_unknown = true;
      continue;
    }
    int64_t last = hid == kNone ? kNoWall : ix_.host_last_wall(hid);
    if (last != kNoWall && last > h.t_est + skew) {
      h.valid = false;
      continue;
    }
    if (!ix_.others_logged_after(hid, h.t_est)) {
      h.valid = false;
      continue;
    }
    if (hid != kNone && ix_.host_has_nowall(hid)) h.silent_unknown = true;
  }
}

// True when latent hypothesis `h` may be the cause of event `effect_ev` under
// rule `r`: every `where` holds with the latent on its device, and its
// estimated time falls in the rule's window before the effect. The time is
// the one its own evidence fixed: a later wave is judged against it, it is not
// moved to fit.
bool Hypotheses::latent_fits(const Hyp& h, const Rule& r, uint32_t effect_ev) const {
  const Rec& er = ix_.rec(effect_ev);
  if (!er.has_wall() || h.t_est == kNoWall) return false;
  const int64_t sk = static_cast<int64_t>((r.skew_s + o_.clock_skew_s) * 1e6);
  const int64_t dt = er.lo - h.t_est;
  if (dt < static_cast<int64_t>(r.min_s * 1e6) - sk ||
      dt > static_cast<int64_t>(r.max_s * 1e6) + sk)
    return false;
  auto side = [&](const DeviceRef& ref) -> const std::string* {
    if (ref.side == DeviceRef::Side::cause) return ref.binding.empty() ? &h.device : nullptr;
    return ref.binding.empty() ? &ix_.device(effect_ev) : ix_.binding(effect_ev, ref.binding);
  };
  for (auto& c : r.where) {
    if (c.rel == Relation::any) continue;
    const std::string* a = side(c.lhs);
    const std::string* b = side(c.rhs);
    if (!a || !b || !topo_.related(c.rel, *a, *b)) return false;
  }
  return true;
}

// Causal reach across waves. A latent is placed only where its effect's rule
// names few enough devices (peers that report IB errors toward one host's
// address); the rule from the same latent to the job's other symptoms (every
// rank's watchdog, ten minutes later) names the whole job and could not place
// it. Once placed, each valid root hypothesis is tried against the symptoms it
// does not explain yet, through the KB's rules from it to them, so the second
// wave joins the first wave's incident instead of becoming one of its own.
bool Hypotheses::extend_reach(const std::vector<uint32_t>& starts) {
  constexpr size_t kMaxReachHyps = 64;  // root hypotheses tried (each costs a pass over starts)
  std::unordered_set<uint32_t> root_set(g_.roots.begin(), g_.roots.end());
  std::vector<uint32_t> hyps;
  for (const auto& [key, hn] : hyp_node_)  // std::map: a deterministic order
    if (root_set.count(hn) && g_.hyps[static_cast<size_t>(g_.nodes[hn].hyp)].valid)
      hyps.push_back(hn);
  if (hyps.size() > kMaxReachHyps) {
    g_.sort_nodes(hyps);
    hyps.resize(kMaxReachHyps);
    g_.truncated = true;
  }
  // A hypothesis whose effects also place the same latent on another device
  // (one rank's abort under `same_job`: every silent host of the job) was
  // not told apart by its evidence; extending one of them would pick a device
  // at random. Only a hypothesis its evidence singles out reaches further.
  auto effects_of = [&](uint32_t hn) {
    std::vector<uint32_t> v;
    for (uint32_t e : g_.nodes[hn].out) v.push_back(g_.edges[e].effect);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  std::map<std::pair<const Latent*, std::vector<uint32_t>>, int> placements;
  for (uint32_t hn : hyps)
    ++placements[{g_.hyps[static_cast<size_t>(g_.nodes[hn].hyp)].latent, effects_of(hn)}];
  bool added = false;
  std::unordered_set<uint32_t> has;
  for (uint32_t hn : hyps) {
    const Hyp& h = g_.hyps[static_cast<size_t>(g_.nodes[hn].hyp)];
    if (placements[{h.latent, effects_of(hn)}] > 1) continue;
    const uint32_t lname = in_.find(h.latent->name);
    if (lname == kNone || h.t_est == kNoWall) continue;
    has.clear();
    for (uint32_t e : g_.nodes[hn].out) has.insert(g_.edges[e].effect);
    int joined = 0;
    for (uint32_t s : starts) {
      const uint32_t ev = g_.nodes[s].ev;
      // Root candidates compete with a latent through rival edges (hypothesise).
      if (ev == kNone || has.count(s) || g_.root_capable(s)) continue;
      // A silent host that logged the effect itself was alive after the cause.
      if (h.latent->silent && ix_.host(ev) == h.host) continue;
      const auto* rules = ki_.rules_for(ix_.rec(ev).name);
      if (!rules) continue;
      for (const KbIndex::CauseRule& cr : *rules) {
        if (cr.cause != lname || !latent_fits(h, *cr.rule, ev)) continue;
        g_.add_edge(hn, s, cr.rule, false);
        ++joined;
        break;
      }
    }
    if (joined > 0) {
      added = true;
      g_.note(h.latent->name + " on " + h.device + " also explains " + std::to_string(joined) +
              " later symptom(s) that alone could not place it (a second wave): one incident");
    }
  }
  return added;
}

// The note that says why a hypothesis stands; an odd_one_out latent's first
// differing line goes to *odd_ev (its fields fill the latent's text).
void Hypotheses::note_hypothesis(const Hyp& h, std::optional<Event>* odd_ev) {
  std::string t = h.t_est == kNoWall ? std::string("the failure") : format_time_us(h.t_est);
  if (h.named_by_peer) {
    g_.note("no logs from " + h.host +
            " in this input: it is named only by its peers' errors, so " + h.latent->name + " on " +
            h.device + " is a lead, not a finding; the kernel log and " + "the ranks' output of " +
            h.host + " decide (not evicted)");
  } else if (h.latent->silent)
    g_.note("hypothesised " + h.latent->name + " on " + h.device + ": " +
            (h.host.empty() ? h.device : h.host) + " logged nothing after " + t +
            " while its peers kept logging" +
            (h.silent_unknown ? " (its lines without wall time could not be compared)" : ""));
  else if (const OddFinding* f = odd_.finding(*h.latent, h.device)) {
    g_.note(odd_.describe(*h.latent, *f, ix_));
    *odd_ev = ix_.ev(f->evidence.front());  // its fields fill the latent's text
  } else if (h.latent->has_quorum())
    g_.note("hypothesised " + h.latent->name + " on " + h.device +
            ": it has no log line of its own; one mechanism for the same fault on " +
            std::to_string(h.rival_roots) +
            (h.quorum_of ? " of the " + std::to_string(h.quorum_of) + " devices" : " devices") +
            " it reaches, within one rule window (common mode: its quorum is met)");
  else if (h.rival_roots >= 2)
    g_.note("hypothesised " + h.latent->name + " on " + h.device +
            ": it has no log line of its own; it explains " + std::to_string(h.rival_roots) +
            " faults on different devices within one rule window, which would otherwise be " +
            "independent root causes");
  else
    g_.note("hypothesised " + h.latent->name + " on " + h.device +
            ": it has no log line of its own; nothing observed explains its effects");
}

}  // namespace reflex::engine::reasoning
