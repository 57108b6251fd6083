// Per-incident reasoning: the backward walk over the KB's causal rules, latent
// hypotheses, grounding of explanations, ranking of root candidates and the
// Diagnosis of each incident.
//
// The incident graph holds only the events the walk reaches (bounded by
// EngineOptions::max_nodes); candidates come from the event index by name (and
// by name+device when a `where` relation pins the cause's device).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "index.h"
#include "odd_one_out.h"
#include "reflex/device_id.h"

namespace reflex::engine {
namespace {

constexpr size_t kScanLimit = 20000;      // candidate events looked at per (effect, rule)
constexpr size_t kDeviceStrategy = 256;   // above this many in the window, probe by device
constexpr size_t kMaxDevices = 4096;      // related_devices() results worth probing
constexpr size_t kSmallProbe = 16;        // a window this large is probed if few devices relate
constexpr size_t kProbeCost = 8;          // window events one related-device lookup is worth
constexpr uint8_t kSmallProbeMisses = 4;  // a rule's failed small probes before it stops trying
constexpr size_t kMaxLatentDevices = 16;
constexpr size_t kMaxStarts = 20000;
constexpr size_t kMaxScoredRoots = 128;

struct GEdge {
  uint32_t cause, effect;
  const Rule* rule;
  bool unknown;  // clocks could not be compared
  // A latent competing with an observed root candidate: usable for scoring and
  // chains, but it does not ground the effect (both stay root candidates).
  bool rival = false;
};

struct Hyp {
  const Latent* latent = nullptr;
  std::string device, host;
  int64_t t_est = kNoWall;  // latest time consistent with every effect
  bool valid = true;
  bool silent_unknown = false;
  // A silent latent on a host the input holds no line of: named by its peers.
  bool named_by_peer = false;
  int rival_roots = 0;   // distinct devices of the observed root candidates it explains
  size_t quorum_of = 0;  // with a quorum share: the devices the share was taken of
};

struct GNode {
  uint32_t ev = kNone;  // event index, or kNone for a hypothesis
  int hyp = -1;
  std::vector<uint32_t> in, out;  // edge ids
};

double sev_factor(Severity s) {
  switch (s) {
    case Severity::critical:
      return 1.0;
    case Severity::major:
      return 0.95;
    case Severity::minor:
      return 0.9;
    case Severity::warning:
      return 0.85;
    case Severity::info:
      return 0.8;
  }
  return 0.8;
}

std::string ref_str(const DeviceRef& r) {
  std::string s = r.side == DeviceRef::Side::cause ? "cause" : "effect";
  if (!r.binding.empty()) s += "." + r.binding;
  return s;
}

// A placeholder that can name a field: lower-case identifier, not {event}/{count}.
bool is_field_name(const std::string& k) {
  if (k.empty() || k == "event" || k == "count") return false;
  for (char c : k)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

std::string relation_text(const Rule& r) {
  if (r.where.empty()) return "any";
  std::string s;
  for (auto& c : r.where) {
    if (!s.empty()) s += " and ";
    s += ref_str(c.lhs) + " " + to_string(c.rel) + " " + ref_str(c.rhs);
  }
  return s;
}

// Expands {field}, {device}, {host}. The compiler checks that every other
// placeholder names a field, so with an event a field the line did not carry
// (an optional capture, a BDF the poster elided) reads "unknown" instead of the
// raw "{bdf}". Directly adjacent placeholders are alternatives (`{sensor}{fi_sensor}`:
// two captures of one value in different formats): the present ones are
// written, "unknown" only when none is. Without an event they stay as written.
std::string expand(const std::string& tpl, const Event* ev, const std::string& device,
                   const std::string& host) {
  auto lookup = [&](const std::string& key) -> const std::string* {
    if (key == "device") return &device;
    if (key == "host") return &host;
    if (!ev) return nullptr;
    const std::string* v = ev->field(key);
    return v ? v : ev->binding(key);
  };
  std::string out;
  for (size_t i = 0; i < tpl.size();) {
    if (tpl[i] != '{' || tpl.find('}', i) == std::string::npos) {
      out += tpl[i++];
      continue;
    }
    // The run of adjacent placeholders starting here.
    std::string run;
    bool any = false, absent_field = false;
    while (i < tpl.size() && tpl[i] == '{') {
      size_t close = tpl.find('}', i);
      if (close == std::string::npos) break;
      std::string key = tpl.substr(i + 1, close - i - 1);
      if (const std::string* v = lookup(key)) {
        run += *v;
        any = true;
      } else if (ev && is_field_name(key)) {
        absent_field = true;
      } else {
        run += tpl.substr(i, close - i + 1);
      }
      i = close + 1;
    }
    out += run;
    if (!any && absent_field) out += "unknown";
  }
  return out;
}

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

// Union-find over node indices (path halving).
class DisjointSets {
 public:
  explicit DisjointSets(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0u); }
  uint32_t find(uint32_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void join(uint32_t a, uint32_t b) { parent_[find(a)] = find(b); }

 private:
  std::vector<uint32_t> parent_;
};

class Reasoner {
 public:
  Reasoner(const KnowledgeBase& kb, const KbIndex& ki, const Topology& topo, EventIndex& ix,
           const EngineOptions& o)
      : kb_(kb), ki_(ki), topo_(topo), ix_(ix), o_(o), in_(ix.interner()) {}

  std::vector<Diagnosis> run(const std::vector<uint32_t>& symptoms);
  // The parts of run(): the graph nodes the walk starts from; the incidents of
  // the explanation graph's components; the fallback when no symptom connects.
  std::vector<uint32_t> start_nodes(const std::vector<uint32_t>& symptoms);
  DisjointSets explanation_components() const;
  void note_hypothesis(const Hyp& h, std::optional<Event>* odd_ev);
  std::vector<Diagnosis> incidents(const std::vector<uint32_t>& starts);
  Diagnosis fallback_diagnosis(const std::vector<uint32_t>& starts);
  // Without a job symptom: the fault evidence split by causal reach and time gaps.
  std::vector<Diagnosis> incidents_without_symptom(const std::vector<uint32_t>& starts);

 private:
  // ---- graph ----
  uint32_t node_of(uint32_t ev, bool* added);
  void add_edge(uint32_t cause, uint32_t effect, const Rule* r, bool unknown, bool rival = false);
  uint32_t hyp_node(const Latent* lat, const std::string& dev);
  std::string most_specific_device(const Event& ev, const std::string& dev) const;
  double base_rate(uint32_t ev, std::string* why);
  void assess_confidence(Diagnosis* d, bool fallback) const;
  std::optional<std::vector<std::string>> latent_devices(uint32_t n, const Rule& r,
                                                         const Latent& lat);
  bool odd_evidence(const std::string& latent);
  void compute_odd();  // the odd-one-out pass, once
  void walk(const std::vector<uint32_t>& start_nodes);
  void expand_node(uint32_t n);
  // The events of `name` on these devices with lo in [lower, upper], nearest first.
  void events_on_devices(uint32_t name, const std::vector<uint32_t>& devs, int64_t lower,
                         int64_t upper, std::vector<uint32_t>* found) const;
  // Whether a window of n events was probed by device (probe(max devices)).
  template <class Probe>
  bool probe_window(size_t n, const Rule& r, Probe&& probe);
  template <class F>
  void candidates(uint32_t effect_ev, const Rule& r, uint32_t cause_name, F&& accept);
  rules::WindowFit window(const Rec& c, const Rec& e, const Rule& r) const {
    return rules::window_fit(c, e, c.clock == e.clock, r, o_.clock_skew_s);
  }
  // When a `cleared_by` event healed event `ev`: its wall time, else kNoWall.
  int64_t healed_at(uint32_t ev);
  bool skip_healed(uint32_t ev);  // true (with a note) for a healed event
  const std::string* resolve(const DeviceRef& ref, const Event* cause, const std::string* cause_dev,
                             const Event& effect) const;
  // True when the rule's `where` holds between two events: devices by
  // topology id (names only for bindings and devices not in the topology).
  bool where_ok(const Rule& r, uint32_t cause_ev, uint32_t effect_ev) const;
  // The device a reference names, and its topology id when known.
  const std::string* resolve_id(const DeviceRef& ref, uint32_t cause_ev, uint32_t effect_ev,
                                Topology::DeviceId* id) const;
  void ground();
  struct LatentRequest {
    uint32_t n;
    const Rule* r;
    bool rival;  // n is an observed root candidate the latent would rival
  };
  void hypothesise();
  void link_hypothesis(uint32_t hn, uint32_t n, const Rule* r, bool rival);
  size_t quorum_population(const std::string& dev, const std::vector<LatentRequest>& reqs);
  void hypothesise_group(const Latent& lat, const std::string& dev,
                         const std::vector<LatentRequest>& reqs);
  void judge_silent(size_t first);
  // Causal reach (incidents over time): a hypothesis placed by narrow evidence
  // is tried against the other symptoms; true when it explains new ones.
  bool extend_reach(const std::vector<uint32_t>& starts);
  bool latent_fits(const Hyp& h, const Rule& r, uint32_t effect_ev) const;
  int nature_rank(const std::string& nature) const;
  const std::string& node_nature(uint32_t n) const;
  bool top_background_ = false;  // diagnose(): its first root was discounted as background
  bool root_capable(uint32_t n) const;
  bool edge_valid(const GEdge& e) const {
    return nodes_[e.cause].hyp < 0 || hyps_[static_cast<size_t>(nodes_[e.cause].hyp)].valid;
  }
  uint32_t add_node_for(uint32_t ev);

  // ---- output ----
  Diagnosis diagnose(const std::vector<uint32_t>& syms, const std::vector<uint32_t>& roots,
                     const std::vector<uint32_t>& extra_unexplained, bool null_trigger,
                     bool fallback);
  // ---- ranking: one score per root candidate ----
  struct Scored {
    uint32_t node;
    double score;
    std::vector<uint32_t> path;  // edge ids, root first
    int covered;
    std::string discount;  // base-rate note, when the score was discounted
    // What score_why() says, written only for the roots a diagnosis lists
    // (of up to kMaxScoredRoots scored): its formatting was a twentieth of
    // a diagnosis.
    double pbest;
    Severity sev;
    int extra, rival_of;
    uint32_t rival_node;
  };
  // Per node: best path product from the root (< 0: not reached) and the edge
  // it came by; reset through `touched` between roots.
  struct PathSearch {
    std::vector<double> best;
    std::vector<uint32_t> pred;
    std::vector<uint32_t> touched;
  };
  std::vector<uint32_t> scoring_order(const std::vector<uint32_t>& roots) const;
  bool ranks_before(const Scored& a, const Scored& b, bool null_trigger) const;
  void best_paths(uint32_t r, PathSearch* ps) const;
  Scored score_root(uint32_t r, const std::vector<uint32_t>& syms, const PathSearch& ps,
                    bool fallback, std::vector<uint8_t>* covered_all);
  std::string score_why(const Scored& sc, size_t symptoms, bool fallback) const;
  // ---- assembly: root causes, evictions, notes ----
  std::vector<ChainLink> chain_of(const Scored& sc, const EventRef& root,
                                  bool* order_unknown) const;
  void choose_evictions(Diagnosis* d, const std::vector<Scored>& scored);
  void unexplained_notes(Diagnosis* d, const std::vector<uint32_t>& syms,
                         const std::vector<uint8_t>& covered_all,
                         const std::vector<uint32_t>& extra_unexplained, bool null_trigger,
                         bool fallback, bool chain_without_order);
  EventRef ref_of(uint32_t n) const;
  int64_t node_time(uint32_t n) const;
  // Arrival-order independent order of nodes (time, then evidence, ...).
  bool node_less(uint32_t a, uint32_t b) const {
    const GNode& ga = nodes_[a];
    const GNode& gb = nodes_[b];
    if ((ga.hyp >= 0) != (gb.hyp >= 0)) return ga.hyp < 0;
    if (ga.hyp >= 0) {
      const Hyp& ha = hyps_[static_cast<size_t>(ga.hyp)];
      const Hyp& hb = hyps_[static_cast<size_t>(gb.hyp)];
      if (ha.t_est != hb.t_est) return ha.t_est < hb.t_est;
      if (ha.latent->name != hb.latent->name) return ha.latent->name < hb.latent->name;
      return ha.device < hb.device;
    }
    return ix_.before(ga.ev, gb.ev);
  }
  // Sorts nodes by node_less (by their events' keys when none is a hypothesis).
  void sort_nodes(std::vector<uint32_t>& v) const;
  Severity node_severity(uint32_t n) const;
  int independent_evidence(uint32_t n) const;
  uint64_t occurrences(uint32_t n) const;
  void note(std::string s) {
    if (seen_notes_.insert(s).second) notes_.push_back(std::move(s));
  }

  const KnowledgeBase& kb_;
  const KbIndex& ki_;
  const Topology& topo_;
  EventIndex& ix_;
  const EngineOptions& o_;
  Interner& in_;

  std::vector<GNode> nodes_;
  std::vector<GEdge> edges_;
  std::vector<Hyp> hyps_;
  U32Map node_of_ev_;
  std::map<std::pair<std::string, std::string>, uint32_t> hyp_node_;
  std::vector<std::pair<uint32_t, const Rule*>> latent_requests_;
  std::vector<uint8_t> grounded_;
  std::vector<int64_t> root_of_scc_;  // per node: winner node of its root SCC, -1 none
  std::vector<uint32_t> roots_;       // root candidates (winners first, then sympathetic)
  std::unordered_map<uint32_t, uint32_t> sympathetic_to_;  // loser -> winner
  bool truncated_ = false;
  std::vector<uint32_t> pending_;
  std::vector<uint8_t> expanded_;  // per node
  std::vector<uint32_t> class_names_;
  // Of those, the ones that corroborate a device fault (independent_evidence):
  // a declared nature that evicts, not background. Filtered once per run.
  std::vector<uint32_t> device_fault_names_;
  std::vector<std::string> notes_;
  std::set<std::string> seen_notes_;
  std::unordered_map<uint32_t, int64_t> healed_;
  OddOneOutPass odd_;  // `odd_one_out` latents: where each may stand
  // Scratch of the device probe (accept() never re-enters candidates()).
  std::vector<Topology::DeviceId> topo_ids_;
  std::vector<uint32_t> probe_devs_, probe_found_;
  // The query topo_ids_ answers: an effect's rules probe its one device
  // under the same relation several times (a rank's GPU for each fault
  // name that runs_on ties to it), and the answer does not change.
  struct RelatedQuery {
    Relation rel;
    Topology::DeviceId id;
    bool lhs;
    DeviceKind kind;
    size_t limit;
  };
  std::optional<RelatedQuery> related_q_;
  // topo_.related_device_ids() into topo_ids_, unless it holds the answer:
  // all of it (at most the limit it was asked with), or more than `limit`.
  void related_ids(Relation rel, Topology::DeviceId id, bool lhs, DeviceKind kind, size_t limit);
  // Small-window probes that found too many related devices, by rule index:
  // the scan finds the same candidates, so a rule whose probes keep missing
  // (e.g. same_job from a rank: the whole job relates) stops trying them.
  std::vector<uint8_t> small_probe_misses_;
  bool small_probe_worth(const Rule& r) const {
    size_t i = static_cast<size_t>(&r - kb_.rules.data());
    return i >= small_probe_misses_.size() || small_probe_misses_[i] < kSmallProbeMisses;
  }
  void small_probe_missed(const Rule& r) {
    if (&r < kb_.rules.data() || &r >= kb_.rules.data() + kb_.rules.size()) return;
    size_t i = static_cast<size_t>(&r - kb_.rules.data());
    if (small_probe_misses_.size() <= i) small_probe_misses_.resize(kb_.rules.size(), 0);
    ++small_probe_misses_[i];
  }
  U32Map scan_hint_of_;  // cause name -> scan_hints_ slot
  std::vector<std::pair<size_t, size_t>> scan_hints_;

  // The scanned window of a rule's cause events, as the scan reads them:
  // the ~512 effects of an incident scan the same window, and reading each
  // candidate's record, device id and heal time from one contiguous array
  // misses the cache once per window instead of once per (effect, cause).
  // Filled in scan order (latest first) as far as a scan got.
  struct WinEv {
    rules::EventSpan span;
    int64_t heal;  // healed_at(ev), or kHealUnknown until first needed
    uint32_t clock;
    Topology::DeviceId topo;  // of the event's own device
    int32_t job;              // topo_.same_job_key(topo)
    uint32_t ev;
  };
  static constexpr int64_t kHealUnknown = kNoWall + 1;
  struct Window {
    size_t bi = 0, ei = 0;  // nl->wall[bi, ei) of the cause name
    std::vector<WinEv> evs;
  };
  std::vector<Window> windows_;  // by rule index
  // Per rule index: 1 when every `where` reference is an event's own device
  // (no binding), so the check needs only the two cached topology ids.
  std::vector<uint8_t> plain_where_;
  Window* window_of(const Rule& r, size_t bi, size_t ei);
  // An event's own device: its topology id and same_job key.
  struct DevKey {
    Topology::DeviceId id;
    int32_t job;
  };
  bool where_ok_ids(const Rule& r, uint32_t cause_ev, DevKey cause, uint32_t effect_ev,
                    DevKey effect) const;
  // consider() of candidates() over nl.wall[bi, ei), latest first, through the
  // rule's window (it counts into *scanned and *taken as consider() does).
  template <class F>
  void scan_window(const Rule& r, const NameList& nl, size_t bi, size_t ei, uint32_t effect_ev,
                   size_t* scanned, size_t* taken, F& accept);
};

uint32_t Reasoner::node_of(uint32_t ev, bool* added) {
  *added = false;
  if (uint32_t known = node_of_ev_.find(ev); known != kNone) return known;
  if (nodes_.size() >= o_.max_nodes) {
    truncated_ = true;
    return kNone;
  }
  GNode g;
  g.ev = ev;
  nodes_.push_back(std::move(g));
  uint32_t n = static_cast<uint32_t>(nodes_.size() - 1);
  node_of_ev_.insert(ev, n);
  *added = true;
  return n;
}

void Reasoner::add_edge(uint32_t cause, uint32_t effect, const Rule* r, bool unknown, bool rival) {
  if (cause == effect) return;
  edges_.push_back({cause, effect, r, unknown, rival});
  uint32_t e = static_cast<uint32_t>(edges_.size() - 1);
  nodes_[cause].out.push_back(e);
  nodes_[effect].in.push_back(e);
}

const std::string* Reasoner::resolve(const DeviceRef& ref, const Event* cause,
                                     const std::string* cause_dev, const Event& effect) const {
  if (ref.side == DeviceRef::Side::effect)
    return ref.binding.empty() ? &effect.device : effect.binding(ref.binding);
  if (ref.binding.empty()) return cause_dev;
  return cause ? cause->binding(ref.binding) : nullptr;
}

bool Reasoner::where_ok(const Rule& r, uint32_t cause_ev, uint32_t effect_ev) const {
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

const std::string* Reasoner::resolve_id(const DeviceRef& ref, uint32_t cause_ev, uint32_t effect_ev,
                                        Topology::DeviceId* id) const {
  uint32_t ev = ref.side == DeviceRef::Side::effect ? effect_ev : cause_ev;
  if (ref.binding.empty()) {
    *id = ix_.topo_id(ix_.rec(ev).device);
    return &ix_.device(ev);
  }
  const std::string* d = ix_.binding(ev, ref.binding);
  *id = d ? topo_.id(*d) : Topology::kNoDevice;
  return d;
}

int64_t Reasoner::healed_at(uint32_t ev) {
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

bool Reasoner::skip_healed(uint32_t ev) {
  int64_t h = healed_at(ev);
  if (h == kNoWall) return false;
  const Event& e = ix_.ev(ev);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", static_cast<double>(h - ix_.rec(ev).hi) / 1e6);
  note(e.name + " on " + e.device + " healed " + buf +
       " s later (cleared_by): transient, not blamed");
  return true;
}

void Reasoner::events_on_devices(uint32_t name, const std::vector<uint32_t>& devs, int64_t lower,
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

void Reasoner::related_ids(Relation rel, Topology::DeviceId id, bool lhs, DeviceKind kind,
                           size_t limit) {
  if (const RelatedQuery* q = related_q_ ? &*related_q_ : nullptr;
      q && q->rel == rel && q->id == id && q->lhs == lhs && q->kind == kind &&
      (topo_ids_.size() <= q->limit || limit <= q->limit))
    return;  // complete, or known to exceed `limit`: what a new call would tell
  topo_.related_device_ids(rel, id, lhs, kind, &topo_ids_, limit);
  related_q_ = RelatedQuery{rel, id, lhs, kind, limit};
}

Reasoner::Window* Reasoner::window_of(const Rule& r, size_t bi, size_t ei) {
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

bool Reasoner::where_ok_ids(const Rule& r, uint32_t cause_ev, DevKey cause, uint32_t effect_ev,
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

template <class F>
void Reasoner::scan_window(const Rule& r, const NameList& nl, size_t bi, size_t ei,
                           uint32_t effect_ev, size_t* scanned, size_t* taken, F& accept) {
  Window* w = window_of(r, bi, ei);
  const bool plain = plain_where_[static_cast<size_t>(&r - kb_.rules.data())];
  const Rec& er = ix_.rec(effect_ev);
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
      truncated_ = true;
      return;
    }
    // The three tests have no side effects, so their order changes nothing
    // but the cost: a plain `where` is two cached ids and one relation, and
    // in a window scanned by many effects (a job's ranks against the last
    // hour's causes under `same_job`) it is the one that rejects nearly all.
    if (plain && !where_ok_ids(r, we.ev, {we.topo, we.job}, effect_ev, ekey)) continue;
    const bool same_clock = we.clock == er.clock;
    rules::WindowFit fit = rules::window_fit(we.span, er, same_clock, r, o_.clock_skew_s);
    if (fit == rules::WindowFit::outside) continue;
    if (we.heal == kHealUnknown) we.heal = healed_at(we.ev);
    if (rules::after_heal(we.heal, er, same_clock, r, o_.clock_skew_s)) continue;
    if (!plain && !where_ok(r, we.ev, effect_ev)) continue;
    accept(we.ev, fit == rules::WindowFit::unknown);
    if (++*taken >= o_.max_candidates_per_rule) return;
  }
}

template <class Probe>
bool Reasoner::probe_window(size_t n, const Rule& r, Probe&& probe) {
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
void Reasoner::candidates(uint32_t effect_ev, const Rule& r, uint32_t cause_name, F&& accept) {
  const NameList* nl = ix_.by_name(cause_name);
  if (!nl) return;
  const Rec& er = ix_.rec(effect_ev);
  size_t taken = 0, scanned = 0;
  auto consider = [&](uint32_t c) -> bool {  // false: stop
    if (c == effect_ev) return true;
    if (++scanned > kScanLimit) {
      truncated_ = true;
      return false;
    }
    rules::WindowFit w = window(ix_.rec(c), er, r);
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
        scan_window(r, *nl, bi, ei, effect_ev, &scanned, &taken, accept);
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

void Reasoner::expand_node(uint32_t n) {
  uint32_t ev = nodes_[n].ev;
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
      uint32_t cn = node_of(c, &added);
      if (cn == kNone) return;
      add_edge(cn, n, r, unknown);
      if (added) pending_.push_back(cn);
    });
  }
}

uint32_t Reasoner::add_node_for(uint32_t ev) {
  bool added;
  uint32_t n = node_of(ev, &added);
  if (added) pending_.push_back(n);
  return n;
}

void Reasoner::walk(const std::vector<uint32_t>& start_nodes) {
  for (uint32_t n : start_nodes) pending_.push_back(n);
  // Every node is expanded once: pending_ only receives newly added nodes.
  for (size_t i = 0; i < pending_.size(); ++i) {
    uint32_t n = pending_[i];
    if (n >= expanded_.size()) expanded_.resize(nodes_.size(), 0);
    if (expanded_[n]) continue;
    expanded_[n] = 1;
    expand_node(pending_[i]);
  }
  pending_.clear();
}

bool Reasoner::root_capable(uint32_t n) const {
  const GNode& g = nodes_[n];
  if (g.hyp >= 0) return hyps_[static_cast<size_t>(g.hyp)].valid;
  return ki_.has_class(ix_.rec(g.ev).name);
}

int64_t Reasoner::node_time(uint32_t n) const {
  const GNode& g = nodes_[n];
  int64_t t = g.hyp >= 0 ? hyps_[static_cast<size_t>(g.hyp)].t_est : ix_.rec(g.ev).lo;
  return t == kNoWall ? std::numeric_limits<int64_t>::max() : t;
}

void Reasoner::sort_nodes(std::vector<uint32_t>& v) const {
  for (uint32_t n : v)
    if (nodes_[n].hyp >= 0) {
      std::sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) { return node_less(a, b); });
      return;
    }
  // node_less of two event nodes is before() of their events, a total order.
  std::vector<uint32_t> evs;
  evs.reserve(v.size());
  for (uint32_t n : v) evs.push_back(nodes_[n].ev);
  ix_.sort_events(evs);
  for (size_t i = 0; i < v.size(); ++i) v[i] = node_of_ev_.find(evs[i]);
}

Severity Reasoner::node_severity(uint32_t n) const {
  const GNode& g = nodes_[n];
  if (g.hyp >= 0) return hyps_[static_cast<size_t>(g.hyp)].latent->severity;
  auto* s = ki_.signature(ix_.rec(g.ev).name);
  return s ? s->severity : Severity::info;
}

// Other kinds of fault evidence on the same device around the event's time
// (a link fault seen on both ends: the end with extra evidence is the root).
int Reasoner::independent_evidence(uint32_t n) const {
  const GNode& g = nodes_[n];
  if (g.hyp >= 0) return 0;
  const Rec& r = ix_.rec(g.ev);
  int64_t span = static_cast<int64_t>(std::max(3600.0, ki_.max_window_s) * 1e6);
  int count = 0;
  // Only evidence of a device fault corroborates one: an application's Xid or
  // a known-background line on the same GPU hours earlier does not.
  for (uint32_t cn : device_fault_names_) {
    if (cn == r.name) continue;
    auto* v = ix_.by_name_device(cn, r.device);
    if (!v) continue;
    for (uint32_t i : *v) {
      const Rec& o = ix_.rec(i);
      if (!o.has_wall() || !r.has_wall() || std::llabs(o.lo - r.lo) <= span) {
        ++count;
        break;
      }
    }
  }
  return count;
}

uint64_t Reasoner::occurrences(uint32_t n) const {
  const GNode& g = nodes_[n];
  if (g.hyp >= 0) return static_cast<uint64_t>(nodes_[n].out.size());
  const Rec& r = ix_.rec(g.ev);
  auto* v = ix_.by_name_device(r.name, r.device);
  if (!v) return 1;
  uint64_t total = 0;
  size_t k = 0;
  for (uint32_t i : *v) {
    if (++k > 10000) break;
    total += std::max<uint64_t>(1, ix_.count(i));
  }
  return std::max<uint64_t>(1, total);
}

void Reasoner::ground() {
  size_t N = nodes_.size();
  std::vector<int> index(N, -1), low(N, 0), comp(N, -1);
  std::vector<uint8_t> on(N, 0);
  std::vector<uint32_t> stack;
  std::vector<std::vector<uint32_t>> comps;
  int next = 0;
  struct Frame {
    uint32_t v;
    size_t ei;
  };
  for (uint32_t s = 0; s < N; ++s) {
    if (index[s] != -1) continue;
    std::vector<Frame> cs;
    cs.push_back({s, 0});
    index[s] = low[s] = next++;
    stack.push_back(s);
    on[s] = 1;
    while (!cs.empty()) {
      uint32_t v = cs.back().v;
      if (cs.back().ei < nodes_[v].out.size()) {
        const GEdge& e = edges_[nodes_[v].out[cs.back().ei++]];
        if (!edge_valid(e)) continue;
        uint32_t w = e.effect;
        if (index[w] == -1) {
          index[w] = low[w] = next++;
          stack.push_back(w);
          on[w] = 1;
          cs.push_back({w, 0});
        } else if (on[w]) {
          low[v] = std::min(low[v], index[w]);
        }
      } else {
        if (low[v] == index[v]) {
          std::vector<uint32_t> members;
          uint32_t w;
          do {
            w = stack.back();
            stack.pop_back();
            on[w] = 0;
            comp[w] = static_cast<int>(comps.size());
            members.push_back(w);
          } while (w != v);
          comps.push_back(std::move(members));
        }
        cs.pop_back();
        if (!cs.empty()) low[cs.back().v] = std::min(low[cs.back().v], low[v]);
      }
    }
  }
  // Tarjan completes effects before their causes: walk the list backwards.
  grounded_.assign(N, 0);
  roots_.clear();
  sympathetic_to_.clear();
  std::vector<uint32_t> losers;
  for (size_t ci = comps.size(); ci-- > 0;) {
    auto& members = comps[ci];
    bool external = false;
    for (uint32_t m : members) {
      for (uint32_t ein : nodes_[m].in) {
        const GEdge& e = edges_[ein];
        if (!edge_valid(e) || e.rival) continue;
        if (comp[e.cause] != static_cast<int>(ci) && grounded_[e.cause]) external = true;
      }
    }
    if (external) {
      for (uint32_t m : members) grounded_[m] = 1;
      continue;
    }
    std::vector<uint32_t> capable;
    for (uint32_t m : members)
      if (root_capable(m)) capable.push_back(m);
    if (capable.empty()) continue;
    if (capable.size() > 1) {
      std::vector<std::pair<int, uint32_t>> ev;
      for (uint32_t c : capable) ev.push_back({independent_evidence(c), c});
      std::sort(ev.begin(), ev.end(), [&](auto& a, auto& b) {
        if (a.first != b.first) return a.first > b.first;
        int64_t ta = node_time(a.second), tb = node_time(b.second);
        if (ta != tb) return ta < tb;
        Severity sa = node_severity(a.second), sb = node_severity(b.second);
        if (sa != sb) return sa > sb;
        return node_less(a.second, b.second);
      });
      for (size_t i = 0; i < ev.size(); ++i) capable[i] = ev[i].second;
    }
    roots_.push_back(capable[0]);
    for (size_t i = 1; i < capable.size(); ++i) {
      sympathetic_to_[capable[i]] = capable[0];
      losers.push_back(capable[i]);
    }
    for (uint32_t m : members) grounded_[m] = 1;
  }
  roots_.insert(roots_.end(), losers.begin(), losers.end());
}

// The devices a latent cause of node n's event may sit on under rule r
// (nullopt when the rule cannot place it).
std::optional<std::vector<std::string>> Reasoner::latent_devices(uint32_t n, const Rule& r,
                                                                 const Latent& lat) {
  const Event& e = ix_.ev(nodes_[n].ev);
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
    note("latent '" + lat.name + "' was not hypothesised for " + e.device + ": rule " +
         r.loc.str() + " places it on more than " + std::to_string(kMaxLatentDevices) +
         " devices, too many to tell apart");
    return std::nullopt;
  }
  if (!cands || cands->empty()) return std::nullopt;
  if (cands->size() > kMaxLatentDevices) {
    note("latent '" + lat.name + "' was not hypothesised for " + e.device + ": rule " +
         r.loc.str() + " places it on " + std::to_string(cands->size()) +
         " devices, too many to tell apart");
    return std::nullopt;
  }
  return cands;
}

// An `odd_one_out` latent found on some device has evidence of its own: like
// a rival of an observed root, it competes with what already explains an effect.
bool Reasoner::odd_evidence(const std::string& latent) {
  auto lit = ki_.latent.find(in_.find(latent));
  if (lit == ki_.latent.end() || lit->second->odd_one_out.empty()) return false;
  compute_odd();
  return odd_.found(latent);
}

void Reasoner::compute_odd() {
  if (odd_.computed()) return;
  odd_.compute(kb_, topo_, ix_);
  if (odd_.truncated()) truncated_ = true;
  for (const std::string& s : odd_.splits()) note(s);
}

// The hypothesis node of latent `lat` on `dev`, created on first use (kNone when full).
uint32_t Reasoner::hyp_node(const Latent* lat, const std::string& dev) {
  auto key = std::make_pair(lat->name, dev);
  auto it = hyp_node_.find(key);
  if (it != hyp_node_.end()) return it->second;
  if (nodes_.size() >= o_.max_nodes) {
    truncated_ = true;
    return kNone;
  }
  Hyp h;
  h.latent = lat;
  h.device = dev;
  if (auto info = topo_.device(dev)) h.host = info->host;
  if (h.host.empty() && lat->kind == DeviceKind::host) h.host = dev;
  hyps_.push_back(std::move(h));
  GNode g;
  g.hyp = static_cast<int>(hyps_.size() - 1);
  nodes_.push_back(std::move(g));
  uint32_t hn = static_cast<uint32_t>(nodes_.size() - 1);
  hyp_node_.emplace(key, hn);
  return hn;
}

void Reasoner::hypothesise() {
  size_t before = hyps_.size();
  // Observed root candidates a latent could also explain, per (latent, device):
  // the latent competes with them only when it explains two or more at once.
  // A latent with a quorum (common mode) is grouped the same way for every
  // effect, explained or not, and needs its quorum of devices.
  std::unordered_set<uint32_t> root_set(roots_.begin(), roots_.end());
  std::map<std::pair<std::string, std::string>, std::vector<LatentRequest>> grouped;
  std::map<std::string, const Latent*> latent_of;
  for (auto& [n, r] : latent_requests_) {
    bool rival = grounded_[n] != 0;
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

void Reasoner::link_hypothesis(uint32_t hn, uint32_t n, const Rule* r, bool rival) {
  add_edge(hn, n, r, false, rival);
  Hyp& h = hyps_[static_cast<size_t>(nodes_[hn].hyp)];
  const Rec& er = ix_.rec(nodes_[n].ev);
  if (er.has_wall()) {
    int64_t t = er.lo - static_cast<int64_t>(r->min_s * 1e6);
    h.t_est = h.t_est == kNoWall ? t : std::min(h.t_est, t);
  }
}

// The devices a quorum's share is taken of: for each rule of the requests,
// the devices of the effects' kind that its cause-effect relation places
// with `dev` as the cause (`effect in cause`: the GPUs of the host).
size_t Reasoner::quorum_population(const std::string& dev, const std::vector<LatentRequest>& reqs) {
  std::set<std::pair<const Rule*, DeviceKind>> seen;
  std::set<std::string> pop;
  for (const LatentRequest& q : reqs) {
    auto info = topo_.device(ix_.ev(nodes_[q.n].ev).device);
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
void Reasoner::hypothesise_group(const Latent& lat, const std::string& dev,
                                 const std::vector<LatentRequest>& reqs) {
  if (reqs.size() < 2) return;
  struct Span {
    int64_t lo, hi;
    uint32_t dev;
  };
  std::vector<Span> spans;
  for (const LatentRequest& q : reqs) {
    const Rec& er = ix_.rec(nodes_[q.n].ev);
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
    truncated_ = true;
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
      note("latent " + lat.name + " on " + dev + " was not hypothesised: " + std::to_string(best) +
           (pop ? " of " + std::to_string(pop) : std::string()) +
           " devices show its effects at once, its quorum needs " + std::to_string(need));
    return;
  }
  uint32_t hn = hyp_node(&lat, dev);
  if (hn == kNone) return;
  for (size_t i = 0; i < spans.size(); ++i)
    if (spans[i].lo <= best_t && best_t <= spans[i].hi)
      link_hypothesis(hn, reqs[i].n, reqs[i].r, reqs[i].rival);
  Hyp& h = hyps_[static_cast<size_t>(nodes_[hn].hyp)];
  h.rival_roots = std::max(h.rival_roots, best);
  if (pop) h.quorum_of = pop;
}

// Silent latents: the host logged nothing after the hypothesised time while
// its peers kept logging (judged against the peers, never "who logged least").
// A hypothesis on a host the input holds no line of is named by its peers
// only (never silent: absence of input is not silence). Hypotheses from index
// `first` on are judged.
void Reasoner::judge_silent(size_t first) {
  int64_t skew = static_cast<int64_t>(o_.clock_skew_s * 1e6);
  std::vector<uint32_t> node_of_hyp(hyps_.size(), kNone);
  for (const auto& [key, hn] : hyp_node_) node_of_hyp[static_cast<size_t>(nodes_[hn].hyp)] = hn;
  for (size_t i = first; i < hyps_.size(); ++i) {
    Hyp& h = hyps_[i];
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
      for (uint32_t e : nodes_[hn].out) {
        uint32_t en = edges_[e].effect;
        if (nodes_[en].ev != kNone && ix_.host(nodes_[en].ev) != h.host) seen_elsewhere = true;
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

// Spec §5: the most specific device the evidence supports. A host- or
// job-level root that one line of one known rank reported (the signature binds
// the rank that printed it) is that rank's; folded repeats (count > 1) may come
// from several ranks and keep the coarser device.
std::string Reasoner::most_specific_device(const Event& ev, const std::string& dev) const {
  // The line did not name its device (`Xid (PCI:...)`, NCCL's `port error`
  // without a NIC): "<host>/gpu@unknown" is no device one can drain; the host
  // that logged it is what the evidence names.
  if (!ev.host.empty()) {
    const DeviceIdView id = DeviceIdView::parse(dev);
    if (id.valid && id.placeholder && id.key == "unknown" && id.host == ev.host) return ev.host;
  }
  if ((ev.kind != DeviceKind::host && ev.kind != DeviceKind::job) || ev.count != 1) return dev;
  for (const auto& [name, bound] : ev.bindings) {
    auto info = topo_.device(bound);
    if (!info || info->placeholder || info->kind != DeviceKind::rank) continue;
    if (ev.kind == DeviceKind::host ? info->host == ev.host : bound.rfind(dev + "/", 0) == 0)
      return bound;
  }
  return dev;
}

// Evidence judged against its base rate (issue 12): an event the KB declares
// `background`, or one that most other hosts of the input show as well, is
// what healthy machines print, not what broke this one. Returns the score
// factor; *why says what was discounted.
double Reasoner::base_rate(uint32_t ev, std::string* why) {
  const Rec& r = ix_.rec(ev);
  double f = 1.0;
  const Signature* sig = ki_.signature(r.name);
  if (sig && sig->background) {
    f *= 0.3;
    *why = "known background (the KB: healthy hosts print it too)";
  }
  const DeviceKind k = ix_.kind(ev);
  const bool host_local = k == DeviceKind::host || k == DeviceKind::gpu || k == DeviceKind::nic ||
                          k == DeviceKind::pcie_port || k == DeviceKind::nvswitch;
  const size_t hosts = ix_.host_count();
  if (!host_local || hosts < 4) return f;
  // A storm's count, not its every line; counted once per index state.
  const size_t shown = ix_.hosts_logging(r.name, 200000);
  const size_t others = hosts - 1, with = shown > 0 ? shown - 1 : 0;
  if (with >= 2 && 2 * with >= others) {
    f *= 1.0 - 0.6 * static_cast<double>(with) / static_cast<double>(others);
    std::string s = "also seen on " + std::to_string(with) + " of " + std::to_string(others) +
                    " other hosts of the input (discounted as background)";
    *why = why->empty() ? s : *why + "; " + s;
  }
  return f;
}

// Confidence from the margin over the next candidate (issue 12): a clear
// winner is high, a close call low; a hypothesis (no line of its own) or
// evidence no rule ties to the symptom is at most medium / low. When the first
// two are close, the check that tells them apart comes from their signatures.
void Reasoner::assess_confidence(Diagnosis* d, bool fallback) const {
  auto& rcs = d->root_causes;
  for (size_t i = 0; i < rcs.size(); ++i) {
    double next = 0;
    for (size_t j = i + 1; j < rcs.size(); ++j)
      if (rcs[j].device != rcs[i].device) {
        next = rcs[j].score;
        break;
      }
    const double ratio = rcs[i].score > 0 ? next / rcs[i].score : 1.0;
    int level = ratio < 0.5 ? 2 : ratio < 0.8 ? 1 : 0;
    if (rcs[i].latent) level = std::min(level, 1);
    if (!rcs[i].basis.empty()) level = 0;  // named by a peer, or unclassified
    if (rcs[i].device_unnamed) level = std::min(level, 1);
    if (fallback) level = 0;
    rcs[i].confidence = level == 2 ? "high" : level == 1 ? "medium" : "low";
  }
  if (rcs.size() < 2 || rcs[0].confidence == "high") return;
  const RootCause* other = nullptr;
  for (size_t j = 1; j < rcs.size() && !other; ++j)
    if (rcs[j].device != rcs[0].device) other = &rcs[j];
  if (!other) return;
  std::string checks;
  for (const RootCause* r : {static_cast<const RootCause*>(&rcs[0]), other})
    if (!r->check.empty()) checks += (checks.empty() ? "" : "; ") + r->check;
  if (checks.empty()) return;
  d->next_check = "to tell " + rcs[0].event + " on " + rcs[0].device + " from " + other->event +
                  " on " + other->device + ": " + checks;
}

EventRef Reasoner::ref_of(uint32_t n) const {
  EventRef r;
  const GNode& g = nodes_[n];
  if (g.hyp >= 0) {
    const Hyp& h = hyps_[static_cast<size_t>(g.hyp)];
    r.event = h.latent->name;
    r.device = h.device;
    if (h.t_est != kNoWall) r.time.wall = h.t_est;
    r.latent = true;
    return r;
  }
  r.event = ix_.name(g.ev);
  r.device = ix_.device(g.ev);
  r.time = ix_.time(g.ev);
  r.evidence = ix_.evidence(g.ev);
  r.line = ix_.line(g.ev);
  r.count = ix_.count(g.ev);
  return r;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string incident_id(const EventRef& r) {
  std::string key = r.event + "|" + r.device + "|" +
                    (r.time.wall ? std::to_string(*r.time.wall) : "") + "|" +
                    (r.time.mono ? std::to_string(*r.time.mono) : "") + "|" + r.evidence;
  char buf[32];
  std::snprintf(buf, sizeof buf, "inc-%012llx",
                static_cast<unsigned long long>(fnv1a(key) & 0xffffffffffffull));
  return buf;
}

// The note that says why a hypothesis stands; an odd_one_out latent's first
// differing line goes to *odd_ev (its fields fill the latent's text).
void Reasoner::note_hypothesis(const Hyp& h, std::optional<Event>* odd_ev) {
  std::string t = h.t_est == kNoWall ? std::string("the failure") : format_time_us(h.t_est);
  if (h.named_by_peer) {
    note("no logs from " + h.host + " in this input: it is named only by its peers' errors, so " +
         h.latent->name + " on " + h.device + " is a lead, not a finding; the kernel log and " +
         "the ranks' output of " + h.host + " decide (not evicted)");
  } else if (h.latent->silent)
    note("hypothesised " + h.latent->name + " on " + h.device + ": " +
         (h.host.empty() ? h.device : h.host) + " logged nothing after " + t +
         " while its peers kept logging" +
         (h.silent_unknown ? " (its lines without wall time could not be compared)" : ""));
  else if (const OddFinding* f = odd_.finding(*h.latent, h.device)) {
    note(odd_.describe(*h.latent, *f, ix_));
    *odd_ev = ix_.ev(f->evidence.front());  // its fields fill the latent's text
  } else if (h.latent->has_quorum())
    note("hypothesised " + h.latent->name + " on " + h.device +
         ": it has no log line of its own; one mechanism for the same fault on " +
         std::to_string(h.rival_roots) +
         (h.quorum_of ? " of the " + std::to_string(h.quorum_of) + " devices" : " devices") +
         " it reaches, within one rule window (common mode: its quorum is met)");
  else if (h.rival_roots >= 2)
    note("hypothesised " + h.latent->name + " on " + h.device +
         ": it has no log line of its own; it explains " + std::to_string(h.rival_roots) +
         " faults on different devices within one rule window, which would otherwise be " +
         "independent root causes");
  else
    note("hypothesised " + h.latent->name + " on " + h.device +
         ": it has no log line of its own; nothing observed explains its effects");
}

Diagnosis Reasoner::diagnose(const std::vector<uint32_t>& syms_in,
                             const std::vector<uint32_t>& roots,
                             const std::vector<uint32_t>& extra_unexplained, bool null_trigger,
                             bool fallback) {
  Diagnosis d;
  std::vector<uint32_t> syms = syms_in;
  sort_nodes(syms);
  if (!null_trigger && !syms.empty()) {
    d.trigger = ref_of(syms[0]);
    d.symptoms = static_cast<int>(syms.size());
    std::string jk = job_key(ix_, nodes_[syms[0]].ev, topo_);
    if (jk.rfind("job/", 0) == 0) d.job = jk;
  }

  std::vector<Scored> scored;
  std::vector<uint8_t> covered_all(nodes_.size(), 0);  // by node: a symptom some root explains
  std::vector<uint32_t> order = scoring_order(roots);
  size_t considered = 0;
  PathSearch ps{
      std::vector<double>(nodes_.size(), -1.0), std::vector<uint32_t>(nodes_.size(), kNone), {}};
  for (uint32_t r : order) {
    // Each candidate costs a path search; past this many, the rest are noise.
    if (++considered > kMaxScoredRoots) break;
    best_paths(r, &ps);
    scored.push_back(score_root(r, syms, ps, fallback, &covered_all));
  }
  std::sort(scored.begin(), scored.end(),
            [&](const Scored& a, const Scored& b) { return ranks_before(a, b, null_trigger); });
  top_background_ = !scored.empty() && !scored[0].discount.empty();

  bool order_unknown = false, nowall_in_chain = false;
  std::set<std::pair<std::string, std::string>> listed_roots;
  for (size_t i = 0; i < scored.size() && d.root_causes.size() < o_.max_root_causes; ++i) {
    const Scored& sc = scored[i];
    RootCause rc;
    const GNode& g = nodes_[sc.node];
    EventRef root = ref_of(sc.node);
    // Repeats of one event on one device are one candidate (the best of them).
    if (!listed_roots.insert({root.device, root.event}).second) continue;
    std::optional<Event> root_ev;  // rebuilt from the index
    if (g.hyp < 0) root_ev = ix_.ev(g.ev);
    const Event* ev = root_ev ? &*root_ev : nullptr;
    std::optional<Event> odd_ev;  // an odd_one_out latent's first differing line
    std::string cls, action, remediation, description, host;
    if (g.hyp >= 0) {
      const Hyp& h = hyps_[static_cast<size_t>(g.hyp)];
      cls = h.latent->fault_class;
      action = h.latent->action;
      remediation = h.latent->remediation;
      description = h.latent->description;
      rc.severity = h.latent->severity;
      rc.nature = h.latent->nature;
      rc.check = h.latent->check;
      host = h.host;
      rc.latent = true;
      if (h.named_by_peer) rc.basis = "named_by_peer";
      note_hypothesis(h, &odd_ev);
    } else {
      const Signature* s = ki_.signature(ix_.rec(g.ev).name);
      cls = s ? s->fault_class : "";
      action = s ? s->action : "";
      remediation = s ? s->remediation : "";
      description = s ? s->description : "";
      rc.severity = s ? s->severity : Severity::info;
      rc.nature = s ? s->nature : "";
      rc.check = s ? s->check : "";
      host = ev->host;
      if (host.empty())
        if (auto info = topo_.device(ev->device)) host = info->host;
      if (const std::string* comp = ev->field("component")) rc.component = *comp;
    }
    rc.device = root.device;
    if (ev) rc.device = most_specific_device(*ev, root.device);
    // A device fault (a GPU's, a NIC's) reported on the host because the
    // line did not say which device: the host is right, the device a guess.
    if (ev && ev->kind != DeviceKind::host && ev->kind != DeviceKind::job) {
      const DeviceIdView id = DeviceIdView::parse(rc.device);
      rc.device_unnamed = id.valid && id.kind == DeviceKind::host;
    }
    rc.event = root.event;
    if (!sc.discount.empty()) note(rc.event + " on " + root.device + ": " + sc.discount);
    std::string std_cls = kb_.standard_class(cls);
    if (std_cls.empty()) std_cls = cls;
    rc.fault_class = std_cls;
    if (std_cls != cls) rc.subclass = cls;
    rc.score = sc.score;
    const Event* tev = odd_ev ? &*odd_ev : ev;
    rc.action = expand(action, tev, rc.device, host);
    rc.check = expand(rc.check, tev, rc.device, host);
    rc.description = expand(description, tev, rc.device, host);
    rc.remediation = remediation;
    if (rc.basis == "named_by_peer") {
      rc.description = "named by its peers' errors; the input holds no logs from " +
                       (host.empty() ? rc.device : host) + ". If it failed: " + rc.description;
      rc.remediation.clear();  // no drain on a guess
      rc.action = "first fetch the kernel log and the ranks' output of " +
                  (host.empty() ? rc.device : host) + "; if they confirm it: " + rc.action;
    }
    rc.explains = sc.covered;
    rc.why = score_why(sc, syms.size(), fallback);
    rc.chain = chain_of(sc, root, &order_unknown);
    for (auto& l : rc.chain)
      if (!l.ev.time.wall && !l.ev.latent) nowall_in_chain = true;
    d.root_causes.push_back(std::move(rc));
  }
  assess_confidence(&d, fallback);

  choose_evictions(&d, scored);

  unexplained_notes(&d, syms, covered_all, extra_unexplained, null_trigger, fallback,
                    order_unknown || nowall_in_chain);

  if (d.trigger)
    d.incident = incident_id(*d.trigger);
  else if (!d.root_causes.empty())
    d.incident = incident_id(d.root_causes[0].chain[0].ev);
  else
    d.incident = "inc-none";
  d.notes = notes_;
  return d;
}

// The order of root candidates in a diagnosis: by score, the earliest
// evidence on ties. With no job symptom to explain (issue 12) the worst fault
// comes first, not the earliest line: known or fleet-wide background after
// the rest, then severity, then nature in the KB's declaration order
// (hardware before driver before application), then the score.
bool Reasoner::ranks_before(const Scored& a, const Scored& b, bool null_trigger) const {
  if (null_trigger) {
    if (a.discount.empty() != b.discount.empty()) return a.discount.empty();
    Severity sa = node_severity(a.node), sb = node_severity(b.node);
    if (sa != sb) return sa > sb;
    int na = nature_rank(node_nature(a.node)), nb = nature_rank(node_nature(b.node));
    if (na != nb) return na < nb;
  }
  if (std::fabs(a.score - b.score) > 1e-9) return a.score > b.score;
  return node_less(a.node, b.node);  // the earliest evidence wins ties
}

// Score the most promising candidates first (the cap in diagnose must not
// drop them); keys computed once per root, not per comparison.
std::vector<uint32_t> Reasoner::scoring_order(const std::vector<uint32_t>& roots) const {
  struct OrderKey {
    bool loser;
    Severity sev;
    double best_out;
    size_t outs;
    uint32_t node;
  };
  std::vector<OrderKey> okeys;
  okeys.reserve(roots.size());
  for (uint32_t n : roots) {
    double m = 0;
    for (uint32_t eid : nodes_[n].out) m = std::max(m, edges_[eid].rule->strength);
    okeys.push_back({sympathetic_to_.count(n) > 0, node_severity(n), m, nodes_[n].out.size(), n});
  }
  std::stable_sort(okeys.begin(), okeys.end(), [](const OrderKey& a, const OrderKey& b) {
    if (a.loser != b.loser) return b.loser;
    if (a.sev != b.sev) return a.sev > b.sev;
    if (a.best_out != b.best_out) return a.best_out > b.best_out;
    return a.outs > b.outs;
  });
  std::vector<uint32_t> order;
  order.reserve(okeys.size());
  for (auto& k : okeys) order.push_back(k.node);
  return order;
}

// Max-product paths from r (Dijkstra on -log strength).
void Reasoner::best_paths(uint32_t r, PathSearch* ps) const {
  for (uint32_t t : ps->touched) {
    ps->best[t] = -1.0;
    ps->pred[t] = kNone;
  }
  ps->touched.clear();
  using QE = std::pair<double, uint32_t>;
  std::priority_queue<QE> pq;
  ps->best[r] = 1.0;
  ps->touched.push_back(r);
  pq.push({1.0, r});
  while (!pq.empty()) {
    auto [p, v] = pq.top();
    pq.pop();
    if (p < ps->best[v]) continue;
    for (uint32_t eid : nodes_[v].out) {
      const GEdge& e = edges_[eid];
      if (!edge_valid(e)) continue;
      double q =
          p * std::clamp(e.rule->strength, 0.0, 1.0) * (e.unknown ? o_.order_unknown_penalty : 1.0);
      if (ps->best[e.effect] < 0 || q > ps->best[e.effect] + 1e-15) {
        if (ps->best[e.effect] < 0) ps->touched.push_back(e.effect);
        ps->best[e.effect] = q;
        ps->pred[e.effect] = eid;
        pq.push({q, e.effect});
      }
    }
  }
}

Reasoner::Scored Reasoner::score_root(uint32_t r, const std::vector<uint32_t>& syms,
                                      const PathSearch& ps, bool fallback,
                                      std::vector<uint8_t>* covered_all) {
  size_t total = std::max<size_t>(1, syms.size());
  int64_t trig_t = syms.empty() ? kNoWall : node_time(syms[0]);
  int covered = 0;
  double pbest = 0;
  uint32_t target = kNone;
  for (uint32_t s : syms) {
    if (ps.best[s] < 0) continue;
    ++covered;
    (*covered_all)[s] = 1;
    if (ps.best[s] > pbest + 1e-12) {
      pbest = ps.best[s];
      target = s;
    }
  }
  // The chain runs to the trigger whenever the root explains it (interfaces.md §5).
  if (!syms.empty() && ps.best[syms[0]] >= 0) target = syms[0];
  Scored sc;
  sc.node = r;
  sc.covered = covered;
  double P = pbest;
  if (fallback || target == kNone) {
    // Not connected by any rule: rank by closeness in time only.
    double dt = trig_t == kNoWall || node_time(r) == std::numeric_limits<int64_t>::max()
                    ? 3600.0
                    : std::fabs(static_cast<double>(trig_t - node_time(r))) / 1e6;
    P = 0.25 / (1.0 + dt / 600.0);
  }
  double cov = static_cast<double>(covered) / static_cast<double>(total);
  Severity sev = node_severity(r);
  int extra = independent_evidence(r);
  uint64_t occ = occurrences(r);
  double evid =
      (1.0 - 0.08 / (1.0 + extra)) * (1.0 - 0.05 / (1.0 + std::log2(static_cast<double>(occ))));
  double s = P * (0.4 + 0.6 * cov) * sev_factor(sev) * evid;
  const GNode& g = nodes_[r];
  if (g.hyp >= 0) {
    s *= o_.latent_penalty;
    if (hyps_[static_cast<size_t>(g.hyp)].silent_unknown) s *= 0.8;
    if (hyps_[static_cast<size_t>(g.hyp)].named_by_peer) s *= 0.5;
  }
  auto sy = sympathetic_to_.find(r);
  if (sy != sympathetic_to_.end()) s *= 0.5;
  // Fewest roots that explain the most: when one latent explains this root
  // candidate and others like it at once, this one alone accounts for only
  // its share of them.
  int rival_of = 0;
  uint32_t rival_node = kNone;
  for (uint32_t eid : g.in) {
    const GEdge& e = edges_[eid];
    if (!e.rival || !edge_valid(e)) continue;
    int k = hyps_[static_cast<size_t>(nodes_[e.cause].hyp)].rival_roots;
    if (k > rival_of) {
      rival_of = k;
      rival_node = e.cause;
    }
  }
  if (rival_of >= 2) s /= rival_of;
  if (g.hyp < 0) s *= base_rate(g.ev, &sc.discount);
  sc.score = s;
  sc.pbest = pbest, sc.sev = sev, sc.extra = extra, sc.rival_of = rival_of;
  sc.rival_node = rival_node;
  if (target != kNone) {
    for (uint32_t v = target; v != r;) {
      uint32_t eid = ps.pred[v];
      sc.path.push_back(eid);
      v = edges_[eid].cause;
    }
    std::reverse(sc.path.begin(), sc.path.end());
  }
  return sc;
}

std::string Reasoner::score_why(const Scored& sc, size_t symptoms, bool fallback) const {
  const double pbest = sc.pbest;
  const Severity sev = sc.sev;
  const int extra = sc.extra, rival_of = sc.rival_of;
  const uint32_t rival_node = sc.rival_node;
  const GNode& g = nodes_[sc.node];
  auto sy = sympathetic_to_.find(sc.node);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "explains %d of %zu symptom%s; chain strength %.2f; severity %s; %d other "
                "kind%s of fault evidence on the device",
                sc.covered, symptoms, symptoms == 1 ? "" : "s", pbest, to_string(sev), extra,
                extra == 1 ? "" : "s");
  std::string why = buf;
  if (fallback) why += "; not connected to the symptom by any rule";
  if (g.hyp >= 0) why += "; hypothesised (no log line of its own)";
  if (g.hyp >= 0 && hyps_[static_cast<size_t>(g.hyp)].rival_roots >= 2)
    why += "; explains " + std::to_string(hyps_[static_cast<size_t>(g.hyp)].rival_roots) +
           " simultaneous faults on different devices at once";
  if (rival_node != kNone)
    why += "; one of " + std::to_string(rival_of) + " simultaneous faults that " +
           ref_of(rival_node).event + " on " + ref_of(rival_node).device + " explains at once";
  if (!sc.discount.empty()) why += "; " + sc.discount;
  if (sy != sympathetic_to_.end())
    why += "; mutually explained with " + ref_of(sy->second).device +
           ", which has more independent evidence or came first";
  return why;
}

std::vector<ChainLink> Reasoner::chain_of(const Scored& sc, const EventRef& root,
                                          bool* order_unknown) const {
  std::vector<ChainLink> chain;
  ChainLink first;
  first.ev = root;
  chain.push_back(first);
  for (uint32_t eid : sc.path) {
    const GEdge& e = edges_[eid];
    ChainLink l;
    l.ev = ref_of(e.effect);
    l.rule = e.rule->loc.str();
    l.rule_name = e.rule->name;
    l.relation = relation_text(*e.rule);
    l.strength = e.rule->strength;
    l.order_unknown = e.unknown;
    *order_unknown |= e.unknown;
    chain.push_back(std::move(l));
  }
  return chain;
}

void Reasoner::choose_evictions(Diagnosis* d, const std::vector<Scored>& scored) {
  // Only devices at fault are evicted (docs/language.md, natures): a root
  // whose nature does not declare `evicts` (user code, configuration,
  // storage) gets an action, not a drain; a minor finding (a remap pending)
  // is acted on without one.
  const RootCause* root = d->root_causes.empty() ? nullptr : &d->root_causes[0];
  const bool at_fault = root && kb_.nature_evicts(root->nature);
  const bool evict = at_fault && root->severity >= Severity::major && root->basis.empty();
  if (root && !root->basis.empty())
    note("no eviction: " + root->device + " has no line of its own in this input (" + root->basis +
         ")");
  else if (root && !evict)
    note("no eviction: the root cause is " +
         (!at_fault ? root->nature
                    : root->nature + " of " + to_string(root->severity) + " severity") +
         " (" + root->fault_class + "); follow its action instead of draining devices");
  if (evict) {
    d->eviction_set.push_back(d->root_causes[0].device);
    uint32_t top = scored[0].node;
    for (auto& [loser, winner] : sympathetic_to_)
      if (winner == top) {
        std::string dev = ref_of(loser).device;
        if (std::find(d->eviction_set.begin(), d->eviction_set.end(), dev) == d->eviction_set.end())
          d->eviction_set.push_back(dev);
      }
  }
}

void Reasoner::unexplained_notes(Diagnosis* d, const std::vector<uint32_t>& syms,
                                 const std::vector<uint8_t>& covered_all,
                                 const std::vector<uint32_t>& extra_unexplained, bool null_trigger,
                                 bool fallback, bool chain_without_order) {
  // Unexplained symptoms.
  size_t listed = 0, unexplained = 0;
  auto add_unexplained = [&](uint32_t s) {
    ++unexplained;
    if (listed < o_.max_unexplained) {
      d->unexplained.push_back(ref_of(s));
      ++listed;
    }
  };
  if (!null_trigger) {
    for (uint32_t s : syms)
      if (!covered_all[s]) add_unexplained(s);
  }
  for (uint32_t s : extra_unexplained) add_unexplained(s);
  if (unexplained > listed)
    note(std::to_string(unexplained - listed) + " more unexplained symptom(s) not listed");

  if (null_trigger) {
    if (d->root_causes.empty())
      note("no job-level symptom and no fault evidence in the input");
    else
      note(
          "no job-level symptom in the input: the fault evidence alone was diagnosed (trigger "
          "null)");
  } else if (d->root_causes.empty()) {
    note("no fault evidence explains the symptom");
  }
  if (fallback && !d->root_causes.empty())
    note(
        "no causal rule connects the fault evidence to the symptom; listing fault evidence "
        "near the incident instead");
  if (chain_without_order)
    note(
        "some events have no wall-clock time (raw dmesg without boot_time): they are ordered "
        "only within their own clock; links across clocks were allowed with a lower score");
  if (truncated_)
    note(
        "the search was bounded (max_nodes / candidates per rule): some candidate causes "
        "were not considered");
}

std::vector<Diagnosis> Reasoner::run(const std::vector<uint32_t>& symptoms) {
  for (auto& [name, s] : ki_.sig)
    if (!s->fault_class.empty()) class_names_.push_back(name);
  std::sort(class_names_.begin(), class_names_.end());
  for (uint32_t cn : class_names_) {
    const Signature* s = ki_.signature(cn);
    if (s && !s->background && kb_.nature_evicts(s->nature)) device_fault_names_.push_back(cn);
  }

  const bool null_trigger = symptoms.empty();
  std::vector<uint32_t> starts = start_nodes(symptoms);
  pending_.clear();
  walk(starts);
  ground();
  if (!latent_requests_.empty()) {
    hypothesise();
    ground();
  }
  if (null_trigger) return incidents_without_symptom(starts);

  return incidents(starts);
}

// The nodes the backward walk starts from: the symptoms (the earliest, within
// the node budget) or, without a job symptom, every fault event.
std::vector<uint32_t> Reasoner::start_nodes(const std::vector<uint32_t>& symptoms) {
  std::vector<uint32_t> starts;
  if (symptoms.empty()) {
    std::vector<uint32_t> evs;
    for (uint32_t cn : class_names_) {
      const NameList* nl = ix_.by_name(cn);
      if (!nl) continue;
      evs.insert(evs.end(), nl->wall.begin(), nl->wall.end());
      evs.insert(evs.end(), nl->nowall.begin(), nl->nowall.end());
    }
    ix_.sort_events(evs);
    if (evs.size() > kMaxStarts) {
      evs.erase(evs.begin(), evs.end() - static_cast<std::ptrdiff_t>(kMaxStarts));
      truncated_ = true;
    }
    for (uint32_t e : evs)
      if (!skip_healed(e)) starts.push_back(add_node_for(e));
  } else {
    std::vector<uint32_t> sorted = symptoms;
    ix_.sort_events(sorted);
    // Symptoms must not fill the whole node budget (300,000 rank lines at
    // 100k GPUs against max_nodes 50,000 left no room for a single cause).
    // The earliest are traced: the cause precedes its effects, and the local
    // crash of the failed rank comes before every peer's timeout.
    const size_t max_syms = std::max<size_t>(1, o_.max_nodes / 4);
    if (sorted.size() > max_syms) {
      note(std::to_string(sorted.size()) + " symptom events: the earliest " +
           std::to_string(max_syms) + " were traced back (EngineOptions::max_nodes / 4)");
      sorted.resize(max_syms);
    }
    for (uint32_t e : sorted) {
      uint32_t n = add_node_for(e);
      if (n != kNone) starts.push_back(n);
    }
  }
  return starts;
}

// Nothing connects: fall back to the fault evidence near the incident.
Diagnosis Reasoner::fallback_diagnosis(const std::vector<uint32_t>& starts) {
  int64_t t0 = std::numeric_limits<int64_t>::max(), t1 = std::numeric_limits<int64_t>::min();
  for (uint32_t s : starts) {
    const Rec& r = ix_.rec(nodes_[s].ev);
    if (!r.has_wall()) continue;
    t0 = std::min(t0, r.lo);
    t1 = std::max(t1, r.hi);
  }
  std::string jk = job_key(ix_, nodes_[starts[0]].ev, topo_);
  std::vector<uint32_t> fstarts;
  int64_t before = static_cast<int64_t>(std::max(600.0, ki_.max_window_s) * 1e6);
  int64_t after = static_cast<int64_t>(std::max(60.0, o_.settle_s) * 1e6);
  for (uint32_t cn : class_names_) {
    const NameList* nl = ix_.by_name(cn);
    if (!nl) continue;
    auto take = [&](uint32_t e) {
      if (fstarts.size() >= kMaxStarts) return;
      if (job_key(ix_, e, topo_) != jk && jk.rfind("job/", 0) == 0) return;
      if (skip_healed(e)) return;
      fstarts.push_back(e);
    };
    if (t0 != std::numeric_limits<int64_t>::max()) {
      auto cmp = [&](uint32_t i, int64_t t) { return ix_.rec(i).lo < t; };
      auto b = std::lower_bound(nl->wall.begin(), nl->wall.end(), t0 - before, cmp);
      auto en = std::lower_bound(b, nl->wall.end(), t1 + after, cmp);
      for (auto it = b; it != en; ++it) take(*it);
    } else {
      for (uint32_t e : nl->wall) take(e);
    }
    for (uint32_t e : nl->nowall) take(e);
  }
  std::vector<uint32_t> fnodes;
  for (uint32_t e : fstarts) {
    uint32_t n = add_node_for(e);
    if (n != kNone) fnodes.push_back(n);
  }
  pending_.clear();
  walk(fnodes);
  ground();
  return diagnose(starts, roots_, {}, false, true);
}

// Every valid edge joins its cause and effect: the explanation graph's components.
DisjointSets Reasoner::explanation_components() const {
  DisjointSets comps(nodes_.size());
  for (auto& e : edges_)
    if (edge_valid(e)) comps.join(e.cause, e.effect);
  return comps;
}

// Incidents: connected components of the explanation graph. Symptoms whose
// explanations do not overlap stay apart.
std::vector<Diagnosis> Reasoner::incidents(const std::vector<uint32_t>& starts) {
  // A symptom wave that a root explains joins that root's incident.
  if (extend_reach(starts)) ground();
  DisjointSets joined = explanation_components();
  auto find = [&](uint32_t x) { return joined.find(x); };
  std::map<uint32_t, std::vector<uint32_t>> comp_roots, comp_syms;
  for (uint32_t r : roots_) comp_roots[find(r)].push_back(r);
  for (uint32_t s : starts) comp_syms[find(s)].push_back(s);
  std::vector<uint32_t> orphans;
  std::vector<uint32_t> rooted;
  for (auto& [c, syms] : comp_syms) {
    if (comp_roots.count(c))
      rooted.push_back(c);
    else
      orphans.insert(orphans.end(), syms.begin(), syms.end());
  }
  if (rooted.empty()) return {fallback_diagnosis(starts)};
  // Orphan symptoms join the rooted incident closest in time.
  std::map<uint32_t, std::vector<uint32_t>> extra;
  for (uint32_t s : orphans) {
    uint32_t bestc = rooted[0];
    double bestd = 1e300;
    for (uint32_t c : rooted) {
      int64_t tc = std::numeric_limits<int64_t>::max();
      for (uint32_t x : comp_syms[c]) tc = std::min(tc, node_time(x));
      double dd = std::fabs(static_cast<double>(tc) - static_cast<double>(node_time(s)));
      if (dd < bestd) {
        bestd = dd;
        bestc = c;
      }
    }
    extra[bestc].push_back(s);
  }
  std::vector<Diagnosis> out;
  for (uint32_t c : rooted) {
    auto saved = notes_;
    out.push_back(diagnose(comp_syms[c], comp_roots[c], extra[c], false, false));
    notes_ = saved;
    seen_notes_ = std::set<std::string>(notes_.begin(), notes_.end());
  }
  return out;
}

// True when latent hypothesis `h` may be the cause of event `effect_ev` under
// rule `r`: every `where` holds with the latent on its device, and its
// estimated time falls in the rule's window before the effect. The time is
// the one its own evidence fixed: a later wave is judged against it, it is not
// moved to fit.
bool Reasoner::latent_fits(const Hyp& h, const Rule& r, uint32_t effect_ev) const {
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
bool Reasoner::extend_reach(const std::vector<uint32_t>& starts) {
  constexpr size_t kMaxReachHyps = 64;  // root hypotheses tried (each costs a pass over starts)
  std::unordered_set<uint32_t> root_set(roots_.begin(), roots_.end());
  std::vector<uint32_t> hyps;
  for (const auto& [key, hn] : hyp_node_)  // std::map: a deterministic order
    if (root_set.count(hn) && hyps_[static_cast<size_t>(nodes_[hn].hyp)].valid) hyps.push_back(hn);
  if (hyps.size() > kMaxReachHyps) {
    sort_nodes(hyps);
    hyps.resize(kMaxReachHyps);
    truncated_ = true;
  }
  // A hypothesis whose effects also place the same latent on another device
  // (one rank's abort under `same_job`: every silent host of the job) was
  // not told apart by its evidence; extending one of them would pick a device
  // at random. Only a hypothesis its evidence singles out reaches further.
  auto effects_of = [&](uint32_t hn) {
    std::vector<uint32_t> v;
    for (uint32_t e : nodes_[hn].out) v.push_back(edges_[e].effect);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  std::map<std::pair<const Latent*, std::vector<uint32_t>>, int> placements;
  for (uint32_t hn : hyps)
    ++placements[{hyps_[static_cast<size_t>(nodes_[hn].hyp)].latent, effects_of(hn)}];
  bool added = false;
  std::unordered_set<uint32_t> has;
  for (uint32_t hn : hyps) {
    const Hyp& h = hyps_[static_cast<size_t>(nodes_[hn].hyp)];
    if (placements[{h.latent, effects_of(hn)}] > 1) continue;
    const uint32_t lname = in_.find(h.latent->name);
    if (lname == kNone || h.t_est == kNoWall) continue;
    has.clear();
    for (uint32_t e : nodes_[hn].out) has.insert(edges_[e].effect);
    int joined = 0;
    for (uint32_t s : starts) {
      const uint32_t ev = nodes_[s].ev;
      // Root candidates compete with a latent through rival edges (hypothesise).
      if (ev == kNone || has.count(s) || root_capable(s)) continue;
      // A silent host that logged the effect itself was alive after the cause.
      if (h.latent->silent && ix_.host(ev) == h.host) continue;
      const auto* rules = ki_.rules_for(ix_.rec(ev).name);
      if (!rules) continue;
      for (const KbIndex::CauseRule& cr : *rules) {
        if (cr.cause != lname || !latent_fits(h, *cr.rule, ev)) continue;
        add_edge(hn, s, cr.rule, false);
        ++joined;
        break;
      }
    }
    if (joined > 0) {
      added = true;
      note(h.latent->name + " on " + h.device + " also explains " + std::to_string(joined) +
           " later symptom(s) that alone could not place it (a second wave): one incident");
    }
  }
  return added;
}

// Rank of a nature in the KB's declaration order (kb/classes.rfx: hardware,
// firmware, driver, software, application, environment); unknown last.
int Reasoner::nature_rank(const std::string& nature) const {
  for (size_t i = 0; i < kb_.natures.size(); ++i)
    if (kb_.natures[i].name == nature) return static_cast<int>(i);
  return static_cast<int>(kb_.natures.size());
}

const std::string& Reasoner::node_nature(uint32_t n) const {
  static const std::string kNoNature;
  const GNode& g = nodes_[n];
  if (g.hyp >= 0) return hyps_[static_cast<size_t>(g.hyp)].latent->nature;
  const Signature* s = ki_.signature(ix_.rec(g.ev).name);
  return s ? s->nature : kNoNature;
}

// Without a job symptom (a host's dmesg over days): incidents are the
// explanation graph's components, joined while they overlap or lie within
// incident_gap_s of each other. Events days apart are separate incidents.
// The principal is the worst (severity, then nature, then score); the others
// follow newest first. Stretches of background evidence alone are not listed.
std::vector<Diagnosis> Reasoner::incidents_without_symptom(const std::vector<uint32_t>& starts) {
  DisjointSets joined = explanation_components();
  auto find = [&](uint32_t x) { return joined.find(x); };
  struct Comp {
    int64_t lo = kNoWall, hi = kNoWall;
    int group = -1;
  };
  std::map<uint32_t, Comp> comps;
  for (uint32_t n = 0; n < nodes_.size(); ++n) {
    Comp& c = comps[find(n)];
    if (nodes_[n].ev == kNone) continue;
    const Rec& r = ix_.rec(nodes_[n].ev);
    if (!r.has_wall()) continue;
    c.lo = c.lo == kNoWall ? r.lo : std::min(c.lo, r.lo);
    c.hi = c.hi == kNoWall ? r.hi : std::max(c.hi, r.hi);
  }
  std::vector<std::pair<int64_t, uint32_t>> dated;
  for (auto& [id, c] : comps)
    if (c.lo != kNoWall) dated.push_back({c.lo, id});
  std::sort(dated.begin(), dated.end());
  const int64_t gap = static_cast<int64_t>(o_.incident_gap_s * 1e6);
  std::vector<int64_t> group_hi;
  for (auto& [lo, id] : dated) {
    Comp& c = comps[id];
    if (group_hi.empty() || lo > group_hi.back() + gap) group_hi.push_back(c.hi);
    group_hi.back() = std::max(group_hi.back(), c.hi);
    c.group = static_cast<int>(group_hi.size() - 1);
  }
  // Undated evidence cannot be placed in time: it is one incident of its own.
  // (A hypothesis left without valid edges is a component of nothing.)
  const int undated = static_cast<int>(group_hi.size());
  size_t groups = group_hi.size();
  std::unordered_set<uint32_t> held;
  for (uint32_t n : starts) held.insert(find(n));
  for (uint32_t n : roots_) held.insert(find(n));
  for (auto& [id, c] : comps)
    if (c.group < 0) {
      c.group = undated;
      if (held.count(id)) groups = group_hi.size() + 1;
    }
  if (groups <= 1) return {diagnose(starts, roots_, {}, true, false)};
  std::vector<std::vector<uint32_t>> gstarts(groups), groots(groups);
  for (uint32_t s : starts) gstarts[static_cast<size_t>(comps[find(s)].group)].push_back(s);
  for (uint32_t r : roots_) groots[static_cast<size_t>(comps[find(r)].group)].push_back(r);
  struct Out {
    Diagnosis d;
    bool background;
    int64_t newest;
  };
  std::vector<Out> out;
  for (size_t g = 0; g < groups; ++g) {
    if (gstarts[g].empty() && groots[g].empty()) continue;
    auto saved = notes_;
    Diagnosis d = diagnose(gstarts[g], groots[g], {}, true, false);
    notes_ = saved;
    seen_notes_ = std::set<std::string>(notes_.begin(), notes_.end());
    out.push_back({std::move(d), top_background_,
                   g < group_hi.size() ? group_hi[g] : std::numeric_limits<int64_t>::min()});
  }
  auto worse = [&](const Out& a, const Out& b) {  // a is the better principal
    const bool ra = !a.d.root_causes.empty(), rb = !b.d.root_causes.empty();
    if (ra != rb) return ra;
    if (!ra) return a.newest > b.newest;
    if (a.background != b.background) return !a.background;
    const RootCause& x = a.d.root_causes[0];
    const RootCause& y = b.d.root_causes[0];
    if (x.severity != y.severity) return x.severity > y.severity;
    int nx = nature_rank(x.nature), ny = nature_rank(y.nature);
    if (nx != ny) return nx < ny;
    if (std::fabs(x.score - y.score) > 1e-9) return x.score > y.score;
    return a.newest > b.newest;
  };
  // Background alone (what healthy hosts print all the time, every few hours
  // over weeks of dmesg) is not an incident: such stretches are counted, not
  // listed. When nothing else is there, the whole input is one incident.
  const size_t all = out.size();
  std::erase_if(out, [](const Out& o) { return o.background || o.d.root_causes.empty(); });
  if (out.empty()) return {diagnose(starts, roots_, {}, true, false)};
  const size_t background_only = all - out.size();
  std::stable_sort(out.begin(), out.end(),
                   [](const Out& a, const Out& b) { return a.newest > b.newest; });
  auto principal = std::min_element(out.begin(), out.end(), worse);
  std::rotate(out.begin(), principal, principal + 1);
  // Weeks of a host's dmesg hold many small incidents (an application Xid now
  // and then): the worst and the newest are listed, the older ones counted.
  constexpr size_t kMaxListedIncidents = 20;
  if (out.size() > kMaxListedIncidents) {
    out[0].d.notes.push_back(std::to_string(out.size() - kMaxListedIncidents) + " older of " +
                             std::to_string(out.size()) +
                             " incidents without a job-level symptom are not listed");
    out.resize(kMaxListedIncidents);
  }
  if (background_only > 0)
    out[0].d.notes.push_back(std::to_string(background_only) +
                             " other stretch(es) of the input hold only background evidence (the "
                             "KB's or the fleet's) and are not listed as incidents");
  std::vector<Diagnosis> ds;
  for (auto& o : out) ds.push_back(std::move(o.d));
  return ds;
}

}  // namespace

std::vector<Diagnosis> diagnose_symptoms(const KnowledgeBase& kb, const KbIndex& ki,
                                         const Topology& topo, EventIndex& ix,
                                         const std::vector<uint32_t>& symptoms,
                                         const EngineOptions& o) {
  ix.bind_topology(topo);
  Reasoner r(kb, ki, topo, ix, o);
  return r.run(symptoms);
}

}  // namespace reflex::engine
