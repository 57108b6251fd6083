// The incident graph's nodes and edges, what the stages ask of a node (time,
// severity, corroborating evidence, its reference in a diagnosis), and the
// grounding that picks the root candidates among them.
#include "reasoner_graph.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace reflex::engine::reasoning {

uint32_t IncidentGraph::node_of(uint32_t ev, bool* added) {
  *added = false;
  if (uint32_t known = node_of_ev.find(ev); known != kNone) return known;
  if (nodes.size() >= opts.max_nodes) {
    truncated = true;
    return kNone;
  }
  GNode g;
  g.ev = ev;
  nodes.push_back(std::move(g));
  uint32_t n = static_cast<uint32_t>(nodes.size() - 1);
  node_of_ev.insert(ev, n);
  *added = true;
  return n;
}

void IncidentGraph::add_edge(uint32_t cause, uint32_t effect, const Rule* r, bool unknown,
                             bool rival) {
  if (cause == effect) return;
  edges.push_back({cause, effect, r, unknown, rival});
  uint32_t e = static_cast<uint32_t>(edges.size() - 1);
  nodes[cause].out.push_back(e);
  nodes[effect].in.push_back(e);
}

bool IncidentGraph::root_capable(uint32_t n) const {
  const GNode& g = nodes[n];
  if (g.hyp >= 0) return hyps[static_cast<size_t>(g.hyp)].valid;
  return ki.has_class(ix.rec(g.ev).name);
}

int64_t IncidentGraph::node_time(uint32_t n) const {
  const GNode& g = nodes[n];
  int64_t t = g.hyp >= 0 ? hyps[static_cast<size_t>(g.hyp)].t_est : ix.rec(g.ev).lo;
  return t == kNoWall ? std::numeric_limits<int64_t>::max() : t;
}

void IncidentGraph::sort_nodes(std::vector<uint32_t>& v) const {
  for (uint32_t n : v)
    if (nodes[n].hyp >= 0) {
      std::sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) { return node_less(a, b); });
      return;
    }
  // node_less of two event nodes is before() of their events, a total order.
  std::vector<uint32_t> evs;
  evs.reserve(v.size());
  for (uint32_t n : v) evs.push_back(nodes[n].ev);
  ix.sort_events(evs);
  for (size_t i = 0; i < v.size(); ++i) v[i] = node_of_ev.find(evs[i]);
}

Severity IncidentGraph::node_severity(uint32_t n) const {
  const GNode& g = nodes[n];
  if (g.hyp >= 0) return hyps[static_cast<size_t>(g.hyp)].latent->severity;
  auto* s = ki.signature(ix.rec(g.ev).name);
  return s ? s->severity : Severity::info;
}

// Other kinds of fault evidence on the same device around the event's time
// (a link fault seen on both ends: the end with extra evidence is the root).
int IncidentGraph::independent_evidence(uint32_t n) const {
  const GNode& g = nodes[n];
  if (g.hyp >= 0) return 0;
  const Rec& r = ix.rec(g.ev);
  int64_t span = static_cast<int64_t>(std::max(3600.0, ki.max_window_s) * 1e6);
  int count = 0;
  // Only evidence of a device fault corroborates one: an application's Xid or
  // a known-background line on the same GPU hours earlier does not.
  for (uint32_t cn : device_fault_names) {
    if (cn == r.name) continue;
    auto* v = ix.by_name_device(cn, r.device);
    if (!v) continue;
    for (uint32_t i : *v) {
      const Rec& o = ix.rec(i);
      if (!o.has_wall() || !r.has_wall() || std::llabs(o.lo - r.lo) <= span) {
        ++count;
        break;
      }
    }
  }
  return count;
}

std::vector<EventRef> IncidentGraph::device_evidence(uint32_t n) const {
  std::vector<EventRef> out;
  const GNode& g = nodes[n];
  if (g.hyp >= 0) return out;
  const Rec& r = ix.rec(g.ev);
  int64_t span = static_cast<int64_t>(std::max(3600.0, ki.max_window_s) * 1e6);
  std::vector<uint32_t> firsts;
  std::vector<uint64_t> counts;
  for (uint32_t cn : device_fault_names) {
    if (cn == r.name) continue;
    auto* v = ix.by_name_device(cn, r.device);
    if (!v) continue;
    uint32_t first = kNone;
    uint64_t count = 0;
    for (uint32_t i : *v) {
      const Rec& o = ix.rec(i);
      if (o.has_wall() && r.has_wall() && std::llabs(o.lo - r.lo) > span) continue;
      if (first == kNone || ix.before(i, first)) first = i;
      count += std::max<uint64_t>(1, ix.count(i));
    }
    if (first == kNone) continue;
    firsts.push_back(first);
    counts.push_back(count);
  }
  std::vector<size_t> order(firsts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return ix.before(firsts[a], firsts[b]); });
  for (size_t k : order) {
    EventRef e;
    e.event = ix.name(firsts[k]);
    e.device = ix.device(firsts[k]);
    e.time = ix.time(firsts[k]);
    e.evidence = ix.evidence(firsts[k]);
    e.line = ix.line(firsts[k]);
    e.count = counts[k];
    out.push_back(std::move(e));
  }
  return out;
}

uint64_t IncidentGraph::occurrences(uint32_t n) const {
  const GNode& g = nodes[n];
  if (g.hyp >= 0) return static_cast<uint64_t>(nodes[n].out.size());
  const Rec& r = ix.rec(g.ev);
  auto* v = ix.by_name_device(r.name, r.device);
  if (!v) return 1;
  uint64_t total = 0;
  size_t k = 0;
  for (uint32_t i : *v) {
    if (++k > 10000) break;
    total += std::max<uint64_t>(1, ix.count(i));
  }
  return std::max<uint64_t>(1, total);
}

EventRef IncidentGraph::ref_of(uint32_t n) const {
  EventRef r;
  const GNode& g = nodes[n];
  if (g.hyp >= 0) {
    const Hyp& h = hyps[static_cast<size_t>(g.hyp)];
    r.event = h.latent->name;
    r.device = h.device;
    if (h.t_est != kNoWall) r.time.wall = h.t_est;
    r.latent = true;
    return r;
  }
  r.event = ix.name(g.ev);
  r.device = ix.device(g.ev);
  r.time = ix.time(g.ev);
  r.evidence = ix.evidence(g.ev);
  r.line = ix.line(g.ev);
  r.count = ix.count(g.ev);
  return r;
}

// Rank of a nature in the KB's declaration order (kb/classes.rfx: hardware,
// firmware, driver, software, application, environment); unknown last.
int IncidentGraph::nature_rank(const std::string& nature) const {
  for (size_t i = 0; i < kb.natures.size(); ++i)
    if (kb.natures[i].name == nature) return static_cast<int>(i);
  return static_cast<int>(kb.natures.size());
}

const std::string& IncidentGraph::node_nature(uint32_t n) const {
  static const std::string kNoNature;
  const GNode& g = nodes[n];
  if (g.hyp >= 0) return hyps[static_cast<size_t>(g.hyp)].latent->nature;
  const Signature* s = ki.signature(ix.rec(g.ev).name);
  return s ? s->nature : kNoNature;
}

void IncidentGraph::ground() {
  size_t N = nodes.size();
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
      if (cs.back().ei < nodes[v].out.size()) {
        const GEdge& e = edges[nodes[v].out[cs.back().ei++]];
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
  grounded.assign(N, 0);
  roots.clear();
  sympathetic_to.clear();
  std::vector<uint32_t> losers;
  for (size_t ci = comps.size(); ci-- > 0;) {
    auto& members = comps[ci];
    bool external = false;
    for (uint32_t m : members) {
      for (uint32_t ein : nodes[m].in) {
        const GEdge& e = edges[ein];
        if (!edge_valid(e) || e.rival) continue;
        if (comp[e.cause] != static_cast<int>(ci) && grounded[e.cause]) external = true;
      }
    }
    if (external) {
      for (uint32_t m : members) grounded[m] = 1;
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
    roots.push_back(capable[0]);
    for (size_t i = 1; i < capable.size(); ++i) {
      sympathetic_to[capable[i]] = capable[0];
      losers.push_back(capable[i]);
    }
    for (uint32_t m : members) grounded[m] = 1;
  }
  roots.insert(roots.end(), losers.begin(), losers.end());
}

}  // namespace reflex::engine::reasoning
