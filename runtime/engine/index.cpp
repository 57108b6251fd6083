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
  r.name = in_->id(ev.name);
  r.device = in_->id(ev.device);
  r.clock = in_->id(ev.time.clock);
  r.src_host = in_->id(logging_host(ev));
  if (ev.time.wall) {
    r.lo = ev.first ? std::min(*ev.first, *ev.time.wall) : *ev.time.wall;
    r.hi = ev.last ? std::max(*ev.last, *ev.time.wall) : *ev.time.wall;
    if (r.hi < r.lo) r.hi = r.lo;
  }
  if (ev.time.mono) r.mono = *ev.time.mono;
  uint32_t idx = static_cast<uint32_t>(events_.size());
  events_.push_back(std::move(ev));
  recs_.push_back(r);

  NameList& nl = names_[r.name];
  DevList& ndl = name_dev_[key2(r.name, r.device)];
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

const std::vector<uint32_t>* EventIndex::by_name_device(uint32_t name, uint32_t device) {
  auto it = name_dev_.find(key2(name, device));
  if (it == name_dev_.end()) return nullptr;
  if (it->second.dirty) {
    sort_list(it->second.v);
    it->second.dirty = false;
  }
  return &it->second.v;
}

void EventIndex::sort_all() {
  for (auto& [name, nl] : names_) {
    if (!nl.dirty) continue;
    sort_list(nl.wall);
    sort_list(nl.nowall);
    nl.dirty = false;
  }
  for (auto& [key, dl] : name_dev_) {
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
  for (auto& l : kb.latents) latent[in->id(l.name)] = &l;
  for (auto& r : kb.rules) {
    rules_by_effect[in->id(r.effect)].push_back(&r);
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
