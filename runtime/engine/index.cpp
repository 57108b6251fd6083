// Event index and KB index of the engine.
#include "index.h"

#include <algorithm>

namespace reflex::engine {

uint32_t Interner::id(std::string_view s) {
  auto it = map_.find(s);
  if (it != map_.end()) return it->second;
  strs_.push_back(std::make_unique<std::string>(s));
  uint32_t id = static_cast<uint32_t>(strs_.size() - 1);
  map_.emplace(std::string_view(*strs_.back()), id);
  return id;
}

uint32_t Interner::find(std::string_view s) const {
  auto it = map_.find(s);
  return it == map_.end() ? kNone : it->second;
}

std::string_view logging_host(const Event& ev) {
  const std::string& c = ev.time.clock;
  auto slash = c.rfind('/');
  if (slash != std::string::npos && slash > 0) return std::string_view(c).substr(0, slash);
  return ev.host;
}

namespace {
uint64_t key2(uint32_t a, uint32_t b) {
  return (static_cast<uint64_t>(a) << 32) | b;
}
}  // namespace

uint32_t EventIndex::add(Event&& ev) {
  Rec r;
  static_cast<rules::EventSpan&>(r) = rules::span_of(ev);
  r.name = in_->id(ev.name);
  r.device = in_->id(ev.device);
  r.clock = in_->id(ev.time.clock);
  r.src_host = in_->id(logging_host(ev));
  uint32_t idx = static_cast<uint32_t>(events_.size());
  events_.push_back(std::move(ev));
  recs_.push_back(r);

  NameList& nl = names_[r.name];
  DevList& ndl = dev_list(key2(r.name, r.device));
  auto& nd = ndl.v;
  HostInfo& hi = hosts_[r.src_host];
  if (r.has_wall()) {
    if (!nl.wall.empty() && !before(nl.wall.back(), idx)) nl.dirty = true;
    nl.wall.push_back(idx);
    nl.max_span = std::max(nl.max_span, r.hi - r.lo);
    if (!nd.empty() && !before(nd.back(), idx)) ndl.dirty = true;
    hi.last = std::max(hi.last, r.hi);
    max_wall_ = std::max(max_wall_, r.hi);
  } else {
    if (!nl.nowall.empty() && !before(nl.nowall.back(), idx)) nl.dirty = true;
    nl.nowall.push_back(idx);
    if (!nd.empty() && !before(nd.back(), idx)) ndl.dirty = true;
    hi.nowall = true;
    any_nowall_ = true;
  }
  nd.push_back(idx);
  return idx;
}

bool EventIndex::before(uint32_t a, uint32_t b) const {
  const Rec& ra = recs_[a];
  const Rec& rb = recs_[b];
  // Events without wall time go last (they are never binary-searched).
  if (ra.has_wall() != rb.has_wall()) return ra.has_wall();
  if (ra.lo != rb.lo) return ra.lo < rb.lo;
  if (ra.mono != rb.mono) return ra.mono < rb.mono;
  const Event& ea = events_[a];
  const Event& eb = events_[b];
  if (int c = ea.evidence.compare(eb.evidence)) return c < 0;
  if (int c = ea.name.compare(eb.name)) return c < 0;
  if (int c = ea.device.compare(eb.device)) return c < 0;
  return a < b;
}

void EventIndex::sort_events(std::vector<uint32_t>& v, bool descending) const {
  struct Key {
    bool nowall;
    int64_t lo;
    double mono;
    uint32_t ev;
  };
  std::vector<Key> keys;
  keys.reserve(v.size());
  for (uint32_t i : v) {
    const Rec& r = recs_[i];
    keys.push_back({!r.has_wall(), r.lo, r.mono, i});
  }
  // The leading comparisons of before(), then before() itself for the rest.
  auto less = [&](const Key& a, const Key& b) {
    if (a.nowall != b.nowall) return b.nowall;
    if (a.lo != b.lo) return a.lo < b.lo;
    if (a.mono != b.mono) return a.mono < b.mono;
    return before(a.ev, b.ev);
  };
  if (descending)
    std::sort(keys.begin(), keys.end(), [&](const Key& a, const Key& b) { return less(b, a); });
  else
    std::sort(keys.begin(), keys.end(), less);
  for (size_t i = 0; i < keys.size(); ++i) v[i] = keys[i].ev;
}

void U32Map::insert(uint32_t key, uint32_t val) {
  if ((size_ + 1) * 2 > keys_.size()) {
    std::vector<uint32_t> k(keys_.empty() ? 64 : keys_.size() * 2), vv(k.size(), kNone);
    std::swap(k, keys_);
    std::swap(vv, vals_);
    size_ = 0;
    for (size_t i = 0; i < k.size(); ++i)
      if (vv[i] != kNone) insert(k[i], vv[i]);
  }
  size_t i = slot(key);
  for (; vals_[i] != kNone; i = (i + 1) & (keys_.size() - 1))
    if (keys_[i] == key) return;
  keys_[i] = key;
  vals_[i] = val;
  ++size_;
}

void EventIndex::sort_list(std::vector<uint32_t>& v) {
  std::sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) { return before(a, b); });
}

const NameList* EventIndex::by_name(uint32_t name) {
  auto it = names_.find(name);
  if (it == names_.end()) return nullptr;
  if (it->second.dirty) {
    sort_list(it->second.wall);
    sort_list(it->second.nowall);
    it->second.dirty = false;
  }
  return &it->second;
}

EventIndex::DevList* EventIndex::find_dev_list(uint64_t key) {
  if (nd_slots_.empty()) return nullptr;
  const size_t mask = nd_slots_.size() - 1;
  for (size_t i = nd_slot(key); nd_slots_[i].val != kNone; i = (i + 1) & mask)
    if (nd_slots_[i].key == key) return &dev_lists_[nd_slots_[i].val];
  return nullptr;
}

EventIndex::DevList& EventIndex::dev_list(uint64_t key) {
  if ((dev_lists_.size() + 1) * 2 > nd_slots_.size()) {
    std::vector<NdSlot> old(nd_slots_.empty() ? 1024 : nd_slots_.size() * 2);
    std::swap(old, nd_slots_);
    for (const NdSlot& o : old) {
      if (o.val == kNone) continue;
      size_t i = nd_slot(o.key);
      while (nd_slots_[i].val != kNone) i = (i + 1) & (nd_slots_.size() - 1);
      nd_slots_[i] = o;
    }
  }
  size_t i = nd_slot(key);
  for (; nd_slots_[i].val != kNone; i = (i + 1) & (nd_slots_.size() - 1))
    if (nd_slots_[i].key == key) return dev_lists_[nd_slots_[i].val];
  nd_slots_[i] = {key, static_cast<uint32_t>(dev_lists_.size())};
  return dev_lists_.emplace_back();
}

const std::vector<uint32_t>* EventIndex::by_name_device(uint32_t name, uint32_t device) {
  DevList* dl = find_dev_list(key2(name, device));
  if (!dl) return nullptr;
  if (dl->dirty) {
    sort_list(dl->v);
    dl->dirty = false;
  }
  return &dl->v;
}

void EventIndex::bind_topology(const Topology& topo) {
  if (bound_topo_ != topo.uid()) {
    bound_topo_ = topo.uid();
    topo_of_.clear();
    interned_of_.assign(topo.device_count(), kNone);
  }
  for (size_t s = topo_of_.size(); s < in_->size(); ++s) {
    Topology::DeviceId d = topo.id(in_->str(static_cast<uint32_t>(s)));
    topo_of_.push_back(d);
    if (d != Topology::kNoDevice) interned_of_[size_t(d)] = static_cast<uint32_t>(s);
  }
}

void EventIndex::sort_all() {
  for (auto& [name, nl] : names_) {
    if (!nl.dirty) continue;
    sort_list(nl.wall);
    sort_list(nl.nowall);
    nl.dirty = false;
  }
  for (auto& dl : dev_lists_) {
    if (!dl.dirty) continue;
    sort_list(dl.v);
    dl.dirty = false;
  }
}

int64_t EventIndex::host_last_wall(uint32_t h) const {
  auto it = hosts_.find(h);
  return it == hosts_.end() ? kNoWall : it->second.last;
}

bool EventIndex::host_has_nowall(uint32_t h) const {
  auto it = hosts_.find(h);
  return it != hosts_.end() && it->second.nowall;
}

bool EventIndex::others_logged_after(uint32_t h, int64_t t) const {
  for (auto& [host, info] : hosts_)
    if (host != h && info.last != kNoWall && info.last > t) return true;
  return false;
}

KbIndex::KbIndex(const KnowledgeBase& k, Interner* in) : kb(k) {
  for (auto& s : kb.signatures) sig[in->id(s.name)] = &s;
  for (auto& [id, s] : sig) {
    if (id >= sig_by_id.size()) sig_by_id.resize(id + 1, nullptr);
    sig_by_id[id] = s;
  }
  for (auto& l : kb.latents) latent[in->id(l.name)] = &l;
  for (auto& r : kb.rules) {
    uint32_t effect = in->id(r.effect);
    rules_by_effect[effect].push_back(&r);
    // Interning the cause is harmless when nothing by that name exists: its
    // event list is empty and it is no latent, as when it was unknown.
    if (effect >= rules_of_effect.size()) rules_of_effect.resize(effect + 1);
    rules_of_effect[effect].push_back({&r, in->id(r.cause)});
    max_window_s = std::max(max_window_s, r.max_s + r.skew_s);
  }
}

std::string job_key(const Event& ev, const Topology& topo) {
  const std::string& d = ev.device;
  if (d.rfind("job/", 0) == 0) {
    auto slash = d.find('/', 4);
    return slash == std::string::npos ? d : d.substr(0, slash);
  }
  std::string host = ev.host;
  if (host.empty()) {
    if (auto info = topo.device(d)) host = info->host;
  }
  if (host.empty()) return "device:" + d;
  auto jobs = topo.jobs_of_host(host);
  if (!jobs.empty()) return "job/" + jobs.front();
  return "host:" + host;
}

}  // namespace reflex::engine
