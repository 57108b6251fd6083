// Private to the engine: the event index (events by name, by name+device, by
// logging host) and the KB index (rules by effect). Per-incident reasoning runs
// over these, never over a freshly built graph of every event.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "reflex/engine.h"
#include "reflex/event.h"
#include "reflex/kb.h"

namespace reflex::engine {

constexpr int64_t kNoWall = std::numeric_limits<int64_t>::min();
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// String interning: names, devices, clocks, hosts share one table.
class Interner {
 public:
  uint32_t id(std::string_view s);
  uint32_t find(std::string_view s) const;  // kNone when unknown
  const std::string& str(uint32_t id) const { return *strs_[id]; }
  size_t size() const { return strs_.size(); }

 private:
  std::unordered_map<std::string_view, uint32_t> map_;
  std::vector<std::unique_ptr<std::string>> strs_;
};

// Compact per-event record for the hot loops.
struct Rec {
  uint32_t name = kNone, device = kNone, clock = kNone, src_host = kNone;
  int64_t lo = kNoWall, hi = kNoWall;  // wall time range (storms: first..last)
  double mono = -1;                    // < 0: none
  bool has_wall() const { return lo != kNoWall; }
};

struct NameList {
  std::vector<uint32_t> wall;    // events with wall time, sorted by (lo, index) when !dirty
  std::vector<uint32_t> nowall;  // events ordered only within their clock (sorted when !dirty)
  int64_t max_span = 0;          // max (hi - lo) over `wall`
  bool dirty = false;
};

class EventIndex {
 public:
  explicit EventIndex(Interner* in) : in_(in) {}
  uint32_t add(Event&& ev);
  size_t size() const { return events_.size(); }
  const Event& ev(uint32_t i) const { return events_[i]; }
  const Rec& rec(uint32_t i) const { return recs_[i]; }
  Interner& interner() const { return *in_; }

  // Sorted views (sorting lazily after out-of-order arrivals).
  const NameList* by_name(uint32_t name);
  const std::vector<uint32_t>* by_name_device(uint32_t name, uint32_t device);
  // Sorts every list that out-of-order arrivals left unsorted (the lazy sort
  // otherwise falls on the first diagnosis that touches a list).
  void sort_all();
  // Last wall time of anything logged by host `h` (kNoWall when none); whether
  // it logged lines without wall time.
  int64_t host_last_wall(uint32_t h) const;
  bool host_has_nowall(uint32_t h) const;
  // True when some host other than `h` logged after `t`.
  bool others_logged_after(uint32_t h, int64_t t) const;
  bool any_nowall() const { return any_nowall_; }
  int64_t max_wall() const { return max_wall_; }

  std::vector<Event> take_events() { return std::move(events_); }
  // A total order on events that does not depend on arrival order: wall time
  // (events without it last), mono, evidence, name, device.
  bool before(uint32_t a, uint32_t b) const;

 private:
  void sort_list(std::vector<uint32_t>& v);
  Interner* in_;
  std::vector<Event> events_;
  std::vector<Rec> recs_;
  std::unordered_map<uint32_t, NameList> names_;
  struct DevList {
    std::vector<uint32_t> v;
    bool dirty = false;
  };
  std::unordered_map<uint64_t, DevList> name_dev_;  // one lookup for list and sort state
  struct HostInfo {
    int64_t last = kNoWall;
    bool nowall = false;
  };
  std::unordered_map<uint32_t, HostInfo> hosts_;
  int64_t max_wall_ = kNoWall;
  bool any_nowall_ = false;
};

struct KbIndex {
  KbIndex(const KnowledgeBase& kb, Interner* in);
  const KnowledgeBase& kb;
  std::unordered_map<uint32_t, const Signature*> sig;
  std::unordered_map<uint32_t, const Latent*> latent;
  std::unordered_map<uint32_t, std::vector<const Rule*>> rules_by_effect;
  double max_window_s = 0;  // largest max_s + skew of any rule
  const Signature* signature(uint32_t name) const {
    auto it = sig.find(name);
    return it == sig.end() ? nullptr : it->second;
  }
  bool is_symptom(uint32_t name) const {
    auto* s = signature(name);
    return s && s->symptom != SymptomKind::none;
  }
  bool has_class(uint32_t name) const {
    auto* s = signature(name);
    return s && !s->fault_class.empty();
  }
};

// The host that logged a line: the clock's owner ("node-1/kernel" -> "node-1"),
// else the event's host.
std::string_view logging_host(const Event& ev);

// Diagnoses the incidents opened by `symptoms` (event indices; may be empty:
// then the fault evidence itself is diagnosed with a null trigger).
// `fallback_scope` limits the no-symptom / no-rule fallback to a job ("" = all).
std::vector<Diagnosis> diagnose_symptoms(const KnowledgeBase& kb, const KbIndex& ki,
                                         const Topology& topo, EventIndex& ix,
                                         const std::vector<uint32_t>& symptoms,
                                         const EngineOptions& o);

// The job key of a symptom event ("job/<id>", or "host:<name>" when no job is known).
std::string job_key(const Event& ev, const Topology& topo);

}  // namespace reflex::engine
