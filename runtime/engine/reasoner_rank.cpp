// Scoring and ordering of root candidates: max-product chains from each root
// to the symptoms, the factors of a score (coverage, severity, corroborating
// evidence, occurrences, hypotheses, rivals, base rate) and their wording.
#include "reasoner_rank.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <queue>

namespace reflex::engine::reasoning {
namespace {

constexpr size_t kMaxScoredRoots = 128;

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

}  // namespace

std::vector<Scored> Ranker::rank(const std::vector<uint32_t>& roots,
                                 const std::vector<uint32_t>& syms, bool fallback,
                                 bool null_trigger, std::vector<uint8_t>* covered_all) {
  std::vector<Scored> scored;
  std::vector<uint32_t> order = scoring_order(roots);
  size_t considered = 0;
  PathSearch ps{std::vector<double>(g_.nodes.size(), -1.0),
                std::vector<uint32_t>(g_.nodes.size(), kNone),
                {}};
  for (uint32_t r : order) {
    // Each candidate costs a path search; past this many, the rest are noise.
    if (++considered > kMaxScoredRoots) break;
    best_paths(r, &ps);
    scored.push_back(score_root(r, syms, ps, fallback, covered_all));
  }
  std::sort(scored.begin(), scored.end(),
            [&](const Scored& a, const Scored& b) { return ranks_before(a, b, null_trigger); });
  return scored;
}

// Evidence judged against its base rate: an event the KB declares
// `background`, or one that most other hosts of the input show as well, is
// what healthy machines print, not what broke this one. Returns the score
// factor; *why says what was discounted.
double Ranker::base_rate(uint32_t ev, std::string* why) {
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

// The order of root candidates in a diagnosis: by score, the earliest
// evidence on ties. With no job symptom to explain the worst fault
// comes first, not the earliest line: known or fleet-wide background after
// the rest, then severity, then nature in the KB's declaration order
// (hardware before driver before application), then the score.
bool Ranker::ranks_before(const Scored& a, const Scored& b, bool null_trigger) const {
  if (null_trigger) {
    if (a.discount.empty() != b.discount.empty()) return a.discount.empty();
    Severity sa = g_.node_severity(a.node), sb = g_.node_severity(b.node);
    if (sa != sb) return sa > sb;
    int na = g_.nature_rank(g_.node_nature(a.node)), nb = g_.nature_rank(g_.node_nature(b.node));
    if (na != nb) return na < nb;
  }
  if (std::fabs(a.score - b.score) > 1e-9) return a.score > b.score;
  return g_.node_less(a.node, b.node);  // the earliest evidence wins ties
}

// Score the most promising candidates first (the cap in rank() must not
// drop them); keys computed once per root, not per comparison.
std::vector<uint32_t> Ranker::scoring_order(const std::vector<uint32_t>& roots) const {
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
    for (uint32_t eid : g_.nodes[n].out) m = std::max(m, g_.edges[eid].rule->strength);
    okeys.push_back(
        {g_.sympathetic_to.count(n) > 0, g_.node_severity(n), m, g_.nodes[n].out.size(), n});
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
void Ranker::best_paths(uint32_t r, PathSearch* ps) const {
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
    for (uint32_t eid : g_.nodes[v].out) {
      const GEdge& e = g_.edges[eid];
      if (!g_.edge_valid(e)) continue;
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

Scored Ranker::score_root(uint32_t r, const std::vector<uint32_t>& syms, const PathSearch& ps,
                          bool fallback, std::vector<uint8_t>* covered_all) {
  size_t total = std::max<size_t>(1, syms.size());
  int64_t trig_t = syms.empty() ? kNoWall : g_.node_time(syms[0]);
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
    double dt = trig_t == kNoWall || g_.node_time(r) == std::numeric_limits<int64_t>::max()
                    ? 3600.0
                    : std::fabs(static_cast<double>(trig_t - g_.node_time(r))) / 1e6;
    P = 0.25 / (1.0 + dt / 600.0);
  }
  double cov = static_cast<double>(covered) / static_cast<double>(total);
  Severity sev = g_.node_severity(r);
  int extra = g_.independent_evidence(r);
  uint64_t occ = g_.occurrences(r);
  double evid =
      (1.0 - 0.08 / (1.0 + extra)) * (1.0 - 0.05 / (1.0 + std::log2(static_cast<double>(occ))));
  double s = P * (0.4 + 0.6 * cov) * sev_factor(sev) * evid;
  const GNode& g = g_.nodes[r];
  if (g.hyp >= 0) {
    s *= o_.latent_penalty;
    if (g_.hyps[static_cast<size_t>(g.hyp)].silent_unknown) s *= 0.8;
    if (g_.hyps[static_cast<size_t>(g.hyp)].named_by_peer) s *= 0.5;
  }
  auto sy = g_.sympathetic_to.find(r);
  if (sy != g_.sympathetic_to.end()) s *= 0.5;
  // Fewest roots that explain the most: when one latent explains this root
  // candidate and others like it at once, this one alone accounts for only
  // its share of them.
  int rival_of = 0;
  uint32_t rival_node = kNone;
  for (uint32_t eid : g.in) {
    const GEdge& e = g_.edges[eid];
    if (!e.rival || !g_.edge_valid(e)) continue;
    int k = g_.hyps[static_cast<size_t>(g_.nodes[e.cause].hyp)].rival_roots;
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
      v = g_.edges[eid].cause;
    }
    std::reverse(sc.path.begin(), sc.path.end());
  }
  return sc;
}

std::string Ranker::score_why(const Scored& sc, size_t symptoms, bool fallback,
                              const char* what) const {
  const double pbest = sc.pbest;
  const Severity sev = sc.sev;
  const int extra = sc.extra, rival_of = sc.rival_of;
  const uint32_t rival_node = sc.rival_node;
  const GNode& g = g_.nodes[sc.node];
  auto sy = g_.sympathetic_to.find(sc.node);
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "explains %d of %zu %s%s; chain strength %.2f; severity %s; %d other "
                "kind%s of fault evidence on the device",
                sc.covered, symptoms, what, symptoms == 1 ? "" : "s", pbest, to_string(sev), extra,
                extra == 1 ? "" : "s");
  std::string why = buf;
  if (fallback) why += "; not connected to the symptom by any rule";
  if (g.hyp >= 0) why += "; hypothesised (no log line of its own)";
  if (g.hyp >= 0 && g_.hyps[static_cast<size_t>(g.hyp)].rival_roots >= 2)
    why += "; explains " + std::to_string(g_.hyps[static_cast<size_t>(g.hyp)].rival_roots) +
           " simultaneous faults on different devices at once";
  if (rival_node != kNone)
    why += "; one of " + std::to_string(rival_of) + " simultaneous faults that " +
           g_.ref_of(rival_node).event + " on " + g_.ref_of(rival_node).device +
           " explains at once";
  if (!sc.discount.empty()) why += "; " + sc.discount;
  if (sy != g_.sympathetic_to.end())
    why += "; mutually explained with " + g_.ref_of(sy->second).device +
           ", which has more independent evidence or came first";
  return why;
}

}  // namespace reflex::engine::reasoning
