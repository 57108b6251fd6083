// The odd-one-out pass (odd_one_out.h): peers grouped by the declared
// relation, one value per (device, value) vote, and a device is odd when it
// holds a value fewer than half of its group hold while another value is held
// by more than half (and by at least two). Two hosts that disagree, or a
// fleet upgraded half-way, name nobody: there is no "rest" to differ from.
#include "odd_one_out.h"

#include <algorithm>
#include <set>

namespace reflex::engine {
namespace {

constexpr size_t kMaxEvents = 50000;   // EVENT lines read per statement
constexpr size_t kMaxDevices = 20000;  // devices compared per statement
constexpr size_t kEvidence = 3;        // lines kept per odd device

}  // namespace

void OddOneOutPass::compute(const KnowledgeBase& kb, const Topology& topo, EventIndex& ix) {
  computed_ = true;
  Interner& in = ix.interner();
  for (const Latent& lat : kb.latents) {
    for (const OddOneOut& form : lat.odd_one_out) {
      uint32_t name = in.find(form.event);
      const NameList* nl = name == kNone ? nullptr : ix.by_name(name);
      if (!nl) continue;
      std::vector<uint32_t> evs(nl->wall.begin(), nl->wall.end());
      evs.insert(evs.end(), nl->nowall.begin(), nl->nowall.end());
      if (evs.size() > kMaxEvents) {
        evs.resize(kMaxEvents);
        truncated_ = true;
      }
      ix.sort_events(evs);
      // device -> value -> its lines
      std::map<std::string, std::map<std::string, std::vector<uint32_t>>> seen;
      for (uint32_t i : evs) {
        Event ev = ix.ev(i);
        const std::string* v = ev.field(form.field);
        if (!v || v->empty()) continue;
        if (seen.size() >= kMaxDevices && !seen.count(ev.device)) {
          truncated_ = true;
          continue;
        }
        seen[ev.device][*v].push_back(i);
      }
      // Peer groups: each device joins the first group whose founder it relates to.
      std::vector<std::vector<const std::string*>> groups;
      std::vector<const std::string*> founders;
      for (const auto& [dev, values] : seen) {
        size_t g = 0;
        for (; g < founders.size(); ++g)
          if (form.among == Relation::any || topo.related(form.among, *founders[g], dev)) break;
        if (g == founders.size()) {
          founders.push_back(&dev);
          groups.emplace_back();
        }
        groups[g].push_back(&dev);
      }
      for (const auto& members : groups) {
        const size_t n = members.size();
        std::map<std::string, size_t> holders;
        for (const std::string* d : members)
          for (const auto& [v, lines] : seen[*d]) ++holders[v];
        std::string majority;
        size_t most = 0;
        for (const auto& [v, k] : holders)
          if (k > most) most = k, majority = v;
        if (holders.size() < 2) continue;  // all agree
        if (most < 2 || 2 * most <= n) {
          // They disagree and no majority says who differs: say so, name nobody.
          std::string counts;
          for (const auto& [v, k] : holders)
            counts += (counts.empty() ? "" : ", ") + v + " on " + std::to_string(k);
          splits_.push_back(
              form.event + " " + form.field + " differs among the " + std::to_string(n) +
              " devices of " + *members.front() + "'s " + to_string(form.among) + " group (" +
              counts + ") with no majority: " + lat.name + " cannot tell which is the odd one");
          continue;
        }
        for (const std::string* d : members) {
          OddFinding f;
          for (const auto& [v, lines] : seen[*d]) {
            if (2 * holders[v] >= n) continue;  // not a minority value
            if (f.value.empty()) f.value = v;
            f.evidence.insert(f.evidence.end(), lines.begin(), lines.end());
          }
          if (f.evidence.empty()) continue;
          ix.sort_events(f.evidence);
          if (f.evidence.size() > kEvidence) f.evidence.resize(kEvidence);
          f.form = &form;
          f.device = *d;
          f.place = *d;
          if (lat.kind == DeviceKind::host) {
            auto info = topo.device(*d);
            if (info && !info->host.empty()) f.place = info->host;
          }
          f.majority = majority;
          f.agree = most;
          f.peers = n;
          by_latent_[lat.name].push_back(std::move(f));
        }
      }
    }
  }
}

std::vector<std::string> OddOneOutPass::placements(const Latent& lat, const Rule& r, const Event& e,
                                                   const Topology& topo) const {
  std::vector<std::string> out;
  auto it = by_latent_.find(lat.name);
  if (it == by_latent_.end()) return out;
  auto effect_dev = [&](const DeviceRef& ref) -> const std::string* {
    return ref.binding.empty() ? &e.device : e.binding(ref.binding);
  };
  for (const OddFinding& f : it->second) {
    bool ok = true;
    for (const auto& c : r.where) {
      const bool lc = c.lhs.side == DeviceRef::Side::cause;
      const bool rc = c.rhs.side == DeviceRef::Side::cause;
      if ((lc && !c.lhs.binding.empty()) || (rc && !c.rhs.binding.empty())) ok = false;
      if (!ok || c.rel == Relation::any) continue;
      const std::string* a = lc ? &f.place : effect_dev(c.lhs);
      const std::string* b = rc ? &f.place : effect_dev(c.rhs);
      if (!a || !b || !topo.related(c.rel, *a, *b)) ok = false;
    }
    if (ok && std::find(out.begin(), out.end(), f.place) == out.end()) out.push_back(f.place);
  }
  return out;
}

const OddFinding* OddOneOutPass::finding(const Latent& lat, const std::string& place) const {
  auto it = by_latent_.find(lat.name);
  if (it == by_latent_.end()) return nullptr;
  for (const OddFinding& f : it->second)
    if (f.place == place) return &f;
  return nullptr;
}

std::string OddOneOutPass::describe(const Latent& lat, const OddFinding& f,
                                    const EventIndex& ix) const {
  std::string s = "hypothesised " + lat.name + " on " + f.place + ": the odd one out, " +
                  f.form->event + " " + f.form->field + " = " + f.value + " on " + f.device +
                  ", while " + std::to_string(f.agree) + " of the " + std::to_string(f.peers) +
                  " devices of its " + to_string(f.form->among) + " group show " + f.majority;
  std::string where;
  for (uint32_t i : f.evidence) where += (where.empty() ? "" : ", ") + ix.evidence(i);
  if (!where.empty()) s += " (" + where + ")";
  return s;
}

}  // namespace reflex::engine
