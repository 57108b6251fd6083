#include <algorithm>
#include <cmath>

#include "reflex/store.h"

namespace reflex {

TimeUs EventIndex::key_time(const Event& ev) {
  if (ev.time.wall) return *ev.time.wall;
  if (ev.time.mono) return static_cast<TimeUs>(std::llround(*ev.time.mono * 1e6));
  return 0;
}

EventIndex::Id EventIndex::add(Event ev) {
  Id id = next_++;
  TimeUs t = key_time(ev);
  latest_ = std::max(latest_, t);
  all_.emplace(t, id);
  by_name_[ev.name].emplace(t, id);
  by_device_[ev.device].emplace(t, id);
  if (!ev.host.empty()) by_host_[ev.host].emplace(t, id);
  events_.emplace(id, std::move(ev));
  return id;
}

const Event* EventIndex::get(Id id) const {
  auto it = events_.find(id);
  return it == events_.end() ? nullptr : &it->second;
}

std::vector<EventIndex::Id> EventIndex::range(const Series& s, TimeUs from, TimeUs to) {
  std::vector<Id> out;
  if (from > to) return out;
  // multimap keeps insertion order among equal keys, so ties stay in ingest order.
  for (auto it = s.lower_bound(from); it != s.end() && it->first <= to; ++it)
    out.push_back(it->second);
  return out;
}

std::vector<EventIndex::Id> EventIndex::by_name(const std::string& name, TimeUs from,
                                                TimeUs to) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? std::vector<Id>{} : range(it->second, from, to);
}

std::vector<EventIndex::Id> EventIndex::by_device(const std::string& device, TimeUs from,
                                                  TimeUs to) const {
  auto it = by_device_.find(device);
  return it == by_device_.end() ? std::vector<Id>{} : range(it->second, from, to);
}

std::vector<EventIndex::Id> EventIndex::by_host(const std::string& host, TimeUs from,
                                                TimeUs to) const {
  auto it = by_host_.find(host);
  return it == by_host_.end() ? std::vector<Id>{} : range(it->second, from, to);
}

std::vector<EventIndex::Id> EventIndex::in_range(TimeUs from, TimeUs to) const {
  return range(all_, from, to);
}

std::optional<EventIndex::Id> EventIndex::first_of(const std::string& name, TimeUs from) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  auto e = it->second.lower_bound(from);
  if (e == it->second.end()) return std::nullopt;
  return e->second;
}

void EventIndex::erase_from(std::unordered_map<std::string, Series>& idx, const std::string& key,
                            TimeUs t, Id id) {
  auto it = idx.find(key);
  if (it == idx.end()) return;
  auto [lo, hi] = it->second.equal_range(t);
  for (auto e = lo; e != hi; ++e) {
    if (e->second == id) {
      it->second.erase(e);
      break;
    }
  }
  if (it->second.empty()) idx.erase(it);  // keys of pruned devices do not linger
}

size_t EventIndex::prune_before(TimeUs cutoff) {
  size_t n = 0;
  while (!all_.empty() && all_.begin()->first < cutoff) {
    auto [t, id] = *all_.begin();
    all_.erase(all_.begin());
    auto ev = events_.find(id);
    if (ev != events_.end()) {
      erase_from(by_name_, ev->second.name, t, id);
      erase_from(by_device_, ev->second.device, t, id);
      if (!ev->second.host.empty()) erase_from(by_host_, ev->second.host, t, id);
      events_.erase(ev);
    }
    ++n;
  }
  return n;
}

}  // namespace reflex
