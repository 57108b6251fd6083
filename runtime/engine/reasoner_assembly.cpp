// Assembly of a Diagnosis: root causes with their KB text, device and chain,
// confidence from the margins between them, evictions, unexplained symptoms,
// the incident id and the notes.
#include "reasoner_assembly.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <utility>

#include "reflex/device_id.h"

namespace reflex::engine::reasoning {
namespace {

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

// Confidence from the margin over the next candidate: a clear
// winner is high, a close call low; a hypothesis (no line of its own) or
// evidence no rule ties to the symptom is at most medium / low. When the first
// two are close, the check that tells them apart comes from their signatures.
void assess_confidence(Diagnosis* d, bool fallback) {
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

}  // namespace

// The most specific device the evidence supports (interfaces.md §5). A host- or
// job-level root that one line of one known rank reported (the signature binds
// the rank that printed it) is that rank's; folded repeats (count > 1) may come
// from several ranks and keep the coarser device.
std::string DiagnosisAssembly::most_specific_device(const Event& ev, const std::string& dev) const {
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

Diagnosis DiagnosisAssembly::diagnose(const std::vector<uint32_t>& syms_in,
                                      const std::vector<uint32_t>& roots,
                                      const std::vector<uint32_t>& extra_unexplained,
                                      bool null_trigger, bool fallback) {
  Diagnosis d;
  std::vector<uint32_t> syms = syms_in;
  g_.sort_nodes(syms);
  if (!null_trigger && !syms.empty()) {
    d.trigger = g_.ref_of(syms[0]);
    // The symptoms no rooted incident explains that joined this one count
    // too: `explains` is out of all the symptoms the incident lists.
    d.symptoms = static_cast<int>(syms.size() + extra_unexplained.size());
    std::string jk = job_key(ix_, g_.nodes[syms[0]].ev, topo_);
    if (jk.rfind("job/", 0) == 0) d.job = jk;
  }

  std::vector<uint8_t> covered_all(g_.nodes.size(), 0);  // by node: a symptom some root explains
  std::vector<Scored> scored = rank_.rank(roots, syms, fallback, null_trigger, &covered_all);
  top_background_ = !scored.empty() && !scored[0].discount.empty();

  bool order_unknown = false, nowall_in_chain = false;
  std::set<std::pair<std::string, std::string>> listed_roots;
  for (size_t i = 0; i < scored.size() && d.root_causes.size() < o_.max_root_causes; ++i) {
    const Scored& sc = scored[i];
    EventRef root = g_.ref_of(sc.node);
    // Repeats of one event on one device are one candidate (the best of them).
    if (!listed_roots.insert({root.device, root.event}).second) continue;
    RootCause rc = root_cause(sc, root, syms.size() + extra_unexplained.size(), fallback,
                              null_trigger, &order_unknown);
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
  d.notes = g_.notes;
  return d;
}

// One listed root cause: the KB's text for it (the signature's, or the
// latent's) expanded for its device, its score's wording and its chain.
RootCause DiagnosisAssembly::root_cause(const Scored& sc, const EventRef& root, size_t symptoms,
                                        bool fallback, bool null_trigger, bool* order_unknown) {
  RootCause rc;
  const GNode& g = g_.nodes[sc.node];
  std::optional<Event> root_ev;  // rebuilt from the index
  if (g.hyp < 0) root_ev = ix_.ev(g.ev);
  const Event* ev = root_ev ? &*root_ev : nullptr;
  std::optional<Event> odd_ev;  // an odd_one_out latent's first differing line
  std::string cls, action, remediation, description, host;
  if (g.hyp >= 0) {
    const Hyp& h = g_.hyps[static_cast<size_t>(g.hyp)];
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
    hyp_.note_hypothesis(h, &odd_ev);
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
  std::string std_cls = kb_.standard_class(cls);
  if (std_cls.empty()) std_cls = cls;
  // A device fault (a GPU's, a NIC's) reported on the host because the
  // line did not say which device: the host is right, the device a guess.
  // So too a host-level line of a class the KB mostly finds on a device
  // (CUDA's "uncorrectable ECC error" names no GPU).
  if (ev && ev->kind != DeviceKind::job) {
    bool device_level = ev->kind != DeviceKind::host;
    if (!device_level)
      if (auto it = ki_.class_kind.find(std_cls); it != ki_.class_kind.end())
        device_level = it->second != DeviceKind::host && it->second != DeviceKind::job &&
                       it->second != DeviceKind::rank;
    const DeviceIdView id = DeviceIdView::parse(rc.device);
    rc.device_unnamed = device_level && id.valid && id.kind == DeviceKind::host;
  }
  rc.event = root.event;
  if (!sc.discount.empty()) g_.note(rc.event + " on " + root.device + ": " + sc.discount);
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
  // Without a job-level symptom the root explains fault events, not
  // symptoms: `explains` counts what `symptoms` counts (none), `why` the events.
  rc.explains = null_trigger ? 0 : sc.covered;
  rc.why = rank_.score_why(sc, symptoms, fallback, null_trigger ? "fault event" : "symptom");
  rc.host = host_of(rc.device);
  rc.device_evidence = g_.device_evidence(sc.node);
  rc.chain = chain_of(sc, root, order_unknown);
  return rc;
}

// The host a person logs into for `device`: the topology's, else the host part
// of a placeholder id; "" for job, rank and cluster devices.
std::string DiagnosisAssembly::host_of(const std::string& device) const {
  const DeviceIdView id = DeviceIdView::parse(device);
  if (!id.valid || id.kind == DeviceKind::job || id.kind == DeviceKind::rank ||
      id.kind == DeviceKind::fabric_switch || id.kind == DeviceKind::storage)
    return "";
  if (auto info = topo_.device(device); info && !info->host.empty()) return info->host;
  return std::string(id.host);
}

std::vector<ChainLink> DiagnosisAssembly::chain_of(const Scored& sc, const EventRef& root,
                                                   bool* order_unknown) const {
  std::vector<ChainLink> chain;
  ChainLink first;
  first.ev = root;
  chain.push_back(first);
  for (uint32_t eid : sc.path) {
    const GEdge& e = g_.edges[eid];
    ChainLink l;
    l.ev = g_.ref_of(e.effect);
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

void DiagnosisAssembly::choose_evictions(Diagnosis* d, const std::vector<Scored>& scored) {
  // Only devices at fault are evicted (docs/language.md, natures): a root
  // whose nature does not declare `evicts` (user code, configuration,
  // storage) gets an action, not a drain; a minor finding (a remap pending)
  // is acted on without one.
  const RootCause* root = d->root_causes.empty() ? nullptr : &d->root_causes[0];
  const bool at_fault = root && kb_.nature_evicts(root->nature);
  const bool evict = at_fault && root->severity >= Severity::major && root->basis.empty();
  if (root && !root->basis.empty())
    g_.note("no eviction: " + root->device + " has no line of its own in this input (" +
            root->basis + ")");
  else if (root && !evict)
    g_.note("no eviction: the root cause is " +
            (!at_fault ? root->nature
                       : root->nature + " of " + to_string(root->severity) + " severity") +
            " (" + root->fault_class + "); follow its action instead of draining devices");
  if (evict) {
    d->eviction_set.push_back(d->root_causes[0].device);
    uint32_t top = scored[0].node;
    for (auto& [loser, winner] : g_.sympathetic_to)
      if (winner == top) {
        std::string dev = g_.ref_of(loser).device;
        if (std::find(d->eviction_set.begin(), d->eviction_set.end(), dev) == d->eviction_set.end())
          d->eviction_set.push_back(dev);
      }
  }
}

void DiagnosisAssembly::unexplained_notes(Diagnosis* d, const std::vector<uint32_t>& syms,
                                          const std::vector<uint8_t>& covered_all,
                                          const std::vector<uint32_t>& extra_unexplained,
                                          bool null_trigger, bool fallback,
                                          bool chain_without_order) {
  // Unexplained symptoms.
  size_t listed = 0, unexplained = 0;
  auto add_unexplained = [&](uint32_t s) {
    ++unexplained;
    if (listed < o_.max_unexplained) {
      d->unexplained.push_back(g_.ref_of(s));
      ++listed;
    }
  };
  if (!null_trigger) {
    for (uint32_t s : syms)
      if (!covered_all[s]) add_unexplained(s);
  }
  for (uint32_t s : extra_unexplained) add_unexplained(s);
  if (unexplained > listed)
    g_.note(std::to_string(unexplained - listed) + " more unexplained symptom(s) not listed");

  if (null_trigger) {
    if (d->root_causes.empty())
      g_.note("no job-level symptom and no fault evidence in the input");
    else
      g_.note(
          "no job-level symptom in the input: the fault evidence alone was diagnosed (trigger "
          "null)");
  } else if (d->root_causes.empty()) {
    g_.note("no fault evidence explains the symptom");
  }
  if (fallback && !d->root_causes.empty())
    g_.note(
        "no causal rule connects the fault evidence to the symptom; listing fault evidence "
        "near the incident instead");
  if (chain_without_order)
    g_.note(
        "some events have no wall-clock time (raw dmesg without boot_time): they are ordered "
        "only within their own clock; links across clocks were allowed with a lower score");
  if (g_.truncated)
    g_.note(
        "the search was bounded (max_nodes / candidates per rule): some candidate causes "
        "were not considered");
}

}  // namespace reflex::engine::reasoning
