// Per-incident reasoning, the stages in order: the backward walk over the KB's
// causal rules from the symptoms (or, without one, from every fault event),
// grounding, latent hypotheses, then one Diagnosis per incident (the
// explanation graph's components; without a job symptom, split by time gaps).
//
// The incident graph holds only the events the walk reaches (bounded by
// EngineOptions::max_nodes). The stages share it (reasoner_graph.h): the walk
// (reasoner_walk.h), hypotheses (reasoner_hypotheses.h), ranking
// (reasoner_rank.h) and assembly (reasoner_assembly.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <unordered_set>

#include "index.h"
#include "reasoner_assembly.h"
#include "reasoner_graph.h"
#include "reasoner_hypotheses.h"
#include "reasoner_rank.h"
#include "reasoner_walk.h"

namespace reflex::engine {
namespace {

using reasoning::CauseWalk;
using reasoning::DiagnosisAssembly;
using reasoning::Hypotheses;
using reasoning::IncidentGraph;
using reasoning::Ranker;

constexpr size_t kMaxStarts = 20000;

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

// Runs the stages over one incident graph and splits the result into incidents.
class Reasoner {
 public:
  Reasoner(const KnowledgeBase& kb, const KbIndex& ki, const Topology& topo, EventIndex& ix,
           const EngineOptions& o)
      : g_(kb, ki, topo, ix, o),
        walk_(g_),
        hyp_(g_),
        rank_(g_),
        out_(g_, rank_, hyp_),
        kb_(kb),
        ki_(ki),
        topo_(topo),
        ix_(ix),
        o_(o) {}

  std::vector<Diagnosis> run(const std::vector<uint32_t>& symptoms);

 private:
  // The graph nodes the walk starts from; the incidents of the explanation
  // graph's components; the fallback when no symptom connects.
  std::vector<uint32_t> start_nodes(const std::vector<uint32_t>& symptoms);
  uint32_t add_node_for(uint32_t ev);
  DisjointSets explanation_components() const;
  std::vector<Diagnosis> incidents(const std::vector<uint32_t>& starts);
  Diagnosis fallback_diagnosis(const std::vector<uint32_t>& starts);
  // Without a job symptom: the fault evidence split by causal reach and time gaps.
  std::vector<Diagnosis> incidents_without_symptom(const std::vector<uint32_t>& starts);

  IncidentGraph g_;
  CauseWalk walk_;
  Hypotheses hyp_;
  Ranker rank_;
  DiagnosisAssembly out_;
  const KnowledgeBase& kb_;
  const KbIndex& ki_;
  const Topology& topo_;
  EventIndex& ix_;
  const EngineOptions& o_;
  std::vector<uint32_t> class_names_;  // the KB's fault names (those with a class), sorted
};

std::vector<Diagnosis> Reasoner::run(const std::vector<uint32_t>& symptoms) {
  for (auto& [name, s] : ki_.sig)
    if (!s->fault_class.empty()) class_names_.push_back(name);
  std::sort(class_names_.begin(), class_names_.end());
  for (uint32_t cn : class_names_) {
    const Signature* s = ki_.signature(cn);
    if (s && !s->background && kb_.nature_evicts(s->nature)) g_.device_fault_names.push_back(cn);
  }

  const bool null_trigger = symptoms.empty();
  std::vector<uint32_t> starts = start_nodes(symptoms);
  walk_.walk(starts);
  g_.ground();
  if (!walk_.latent_requests().empty()) {
    hyp_.hypothesise(walk_.latent_requests());
    g_.ground();
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
    // Every fault event, and every major or critical consequence the KB
    // gives no class of its own (an Xid 94 is the echo of an ECC fault):
    // walked back, it reaches its cause, or the latent cause a rule names,
    // as a job symptom would.
    std::vector<uint32_t> names = class_names_;
    for (auto& [name, sg] : ki_.sig)
      if (sg->fault_class.empty() && sg->symptom == SymptomKind::none && !sg->suspect &&
          sg->severity >= Severity::major && ki_.rules_for(name))
        names.push_back(name);
    for (uint32_t cn : names) {
      const NameList* nl = ix_.by_name(cn);
      if (!nl) continue;
      evs.insert(evs.end(), nl->wall.begin(), nl->wall.end());
      evs.insert(evs.end(), nl->nowall.begin(), nl->nowall.end());
    }
    ix_.sort_events(evs);
    if (evs.size() > kMaxStarts) {
      evs.erase(evs.begin(), evs.end() - static_cast<std::ptrdiff_t>(kMaxStarts));
      g_.truncated = true;
    }
    for (uint32_t e : evs)
      if (!walk_.skip_healed(e)) starts.push_back(add_node_for(e));
  } else {
    std::vector<uint32_t> sorted = symptoms;
    ix_.sort_events(sorted);
    // Symptoms must not fill the whole node budget (300,000 rank lines at
    // 100k GPUs against max_nodes 50,000 left no room for a single cause).
    // The earliest are traced: the cause precedes its effects, and the local
    // crash of the failed rank comes before every peer's timeout.
    const size_t max_syms = std::max<size_t>(1, o_.max_nodes / 4);
    if (sorted.size() > max_syms) {
      g_.note(std::to_string(sorted.size()) + " symptom events: the earliest " +
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

uint32_t Reasoner::add_node_for(uint32_t ev) {
  bool added;
  return g_.node_of(ev, &added);
}

// Nothing connects: fall back to the fault evidence near the incident.
Diagnosis Reasoner::fallback_diagnosis(const std::vector<uint32_t>& starts) {
  int64_t t0 = std::numeric_limits<int64_t>::max(), t1 = std::numeric_limits<int64_t>::min();
  for (uint32_t s : starts) {
    const Rec& r = ix_.rec(g_.nodes[s].ev);
    if (!r.has_wall()) continue;
    t0 = std::min(t0, r.lo);
    t1 = std::max(t1, r.hi);
  }
  std::string jk = job_key(ix_, g_.nodes[starts[0]].ev, topo_);
  std::vector<uint32_t> fstarts;
  int64_t before = static_cast<int64_t>(std::max(600.0, ki_.max_window_s) * 1e6);
  int64_t after = static_cast<int64_t>(std::max(60.0, o_.settle_s) * 1e6);
  for (uint32_t cn : class_names_) {
    const NameList* nl = ix_.by_name(cn);
    if (!nl) continue;
    auto take = [&](uint32_t e) {
      if (fstarts.size() >= kMaxStarts) return;
      if (job_key(ix_, e, topo_) != jk && jk.rfind("job/", 0) == 0) return;
      if (walk_.skip_healed(e)) return;
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
  walk_.walk(fnodes);
  g_.ground();
  return out_.diagnose(starts, g_.roots, {}, false, true);
}

// Every valid edge joins its cause and effect: the explanation graph's components.
DisjointSets Reasoner::explanation_components() const {
  DisjointSets comps(g_.nodes.size());
  for (auto& e : g_.edges)
    if (g_.edge_valid(e)) comps.join(e.cause, e.effect);
  return comps;
}

// Incidents: connected components of the explanation graph. Symptoms whose
// explanations do not overlap stay apart.
std::vector<Diagnosis> Reasoner::incidents(const std::vector<uint32_t>& starts) {
  // A symptom wave that a root explains joins that root's incident.
  if (hyp_.extend_reach(starts)) g_.ground();
  DisjointSets joined = explanation_components();
  auto find = [&](uint32_t x) { return joined.find(x); };
  std::map<uint32_t, std::vector<uint32_t>> comp_roots, comp_syms;
  for (uint32_t r : g_.roots) comp_roots[find(r)].push_back(r);
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
      for (uint32_t x : comp_syms[c]) tc = std::min(tc, g_.node_time(x));
      double dd = std::fabs(static_cast<double>(tc) - static_cast<double>(g_.node_time(s)));
      if (dd < bestd) {
        bestd = dd;
        bestc = c;
      }
    }
    extra[bestc].push_back(s);
  }
  std::vector<Diagnosis> out;
  for (uint32_t c : rooted) {
    auto saved = g_.notes;
    out.push_back(out_.diagnose(comp_syms[c], comp_roots[c], extra[c], false, false));
    g_.notes = saved;
    g_.seen_notes = std::set<std::string>(g_.notes.begin(), g_.notes.end());
  }
  return out;
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
  for (uint32_t n = 0; n < g_.nodes.size(); ++n) {
    Comp& c = comps[find(n)];
    if (g_.nodes[n].ev == kNone) continue;
    const Rec& r = ix_.rec(g_.nodes[n].ev);
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
  for (uint32_t n : g_.roots) held.insert(find(n));
  for (auto& [id, c] : comps)
    if (c.group < 0) {
      c.group = undated;
      if (held.count(id)) groups = group_hi.size() + 1;
    }
  if (groups <= 1) return {out_.diagnose(starts, g_.roots, {}, true, false)};
  std::vector<std::vector<uint32_t>> gstarts(groups), groots(groups);
  for (uint32_t s : starts) gstarts[static_cast<size_t>(comps[find(s)].group)].push_back(s);
  for (uint32_t r : g_.roots) groots[static_cast<size_t>(comps[find(r)].group)].push_back(r);
  struct Out {
    Diagnosis d;
    bool background;
    int64_t newest;
  };
  std::vector<Out> out;
  for (size_t g = 0; g < groups; ++g) {
    if (gstarts[g].empty() && groots[g].empty()) continue;
    auto saved = g_.notes;
    Diagnosis d = out_.diagnose(gstarts[g], groots[g], {}, true, false);
    g_.notes = saved;
    g_.seen_notes = std::set<std::string>(g_.notes.begin(), g_.notes.end());
    out.push_back({std::move(d), out_.top_background(),
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
    int nx = g_.nature_rank(x.nature), ny = g_.nature_rank(y.nature);
    if (nx != ny) return nx < ny;
    if (std::fabs(x.score - y.score) > 1e-9) return x.score > y.score;
    return a.newest > b.newest;
  };
  // Background alone (what healthy hosts print all the time, every few hours
  // over weeks of dmesg) is not an incident: such stretches are counted, not
  // listed. When nothing else is there, the whole input is one incident.
  const size_t all = out.size();
  std::erase_if(out, [](const Out& o) { return o.background || o.d.root_causes.empty(); });
  if (out.empty()) return {out_.diagnose(starts, g_.roots, {}, true, false)};
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
  ix.settle_inherited_times();
  ix.bind_topology(topo);
  Reasoner r(kb, ki, topo, ix, o);
  return r.run(symptoms);
}

}  // namespace reflex::engine
