// IngestOptions::announce_folds in the engine: a storm fold's first sighting
// is indexed as soon as it is seen; the fold's closing update (the same name,
// device, evidence, time and line, with its full count/first/last) replaces
// that event's count and span instead of adding an event. The index cannot
// change a record in place, so the updates wait here and are applied by
// rebuilding it (indices unchanged) before it is next read by a diagnosis:
// one O(events) pass for all updates since the last one. The engine treats
// an update it merged as evidence seen again (open incidents that may use it
// are answered again, with the count), never as a new event.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "index.h"
#include "reflex/event.h"

namespace reflex::engine {

class FoldUpdates {
 public:
  static constexpr uint32_t kUnchanged = kNone - 1;

  // kNone: ev updates no indexed event (an event of its own); kUnchanged: it
  // says nothing new (redelivered, or a fold an agent restart cut again: the
  // largest count stands); else the event it updates, whose count and span
  // are recorded for apply().
  uint32_t merge(EventIndex& ix, Interner& in, const Event& ev) {
    if (ev.count <= 1) return kNone;  // a first sighting, or no fold
    const IdList* l = ix.by_name_device(in.id(ev.name), in.id(ev.device));
    if (!l) return kNone;
    for (auto p = l->end(); p != l->begin();) {
      uint32_t i = *--p;
      if (ix.time(i).wall != ev.time.wall || ix.line(i) != ev.line || ix.evidence(i) != ev.evidence)
        continue;
      auto it = pending_.find(i);
      Event& m = it != pending_.end() ? it->second : pending_.emplace(i, ix.ev(i)).first->second;
      if (ev.count <= m.count) return kUnchanged;
      m.count = ev.count;
      m.first = ev.first;
      m.last = ev.last;
      return i;
    }
    return kNone;
  }

  // The last time of event i's fold as recorded (its wall time if none).
  int64_t last(uint32_t i) const {
    auto it = pending_.find(i);
    if (it == pending_.end() || !it->second.last) return kNoWall;
    return *it->second.last;
  }

  void apply(std::unique_ptr<EventIndex>* ix, Interner* in) {
    if (pending_.empty()) return;
    auto fresh = std::make_unique<EventIndex>(in);
    for (uint32_t i = 0; i < (*ix)->size(); ++i) {
      auto it = pending_.find(i);
      fresh->add(it != pending_.end() ? it->second : (*ix)->ev(i));
    }
    fresh->carry_hosts(**ix);
    *ix = std::move(fresh);
    pending_.clear();
  }

 private:
  std::unordered_map<uint32_t, Event> pending_;
};

}  // namespace reflex::engine
