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
#include "reflex/rules.h"
#include "reflex/topology.h"

namespace reflex::engine {

using rules::kNoWall;
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

// Compact per-event record for the hot loops: the times rules read, interned names.
struct Rec : rules::EventSpan {
  uint32_t name = kNone, device = kNone, clock = kNone, src_host = kNone;
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

  // Topology device ids of interned strings and back, so the reasoner asks
  // relations and probes the index with integers instead of hashing names.
  // bind_topology() (re)builds them for `topo` (from scratch when it is another
  // topology than last time, else only for strings interned since); the
  // reasoner calls it before each diagnosis.
  void bind_topology(const Topology& topo);
  // Topology id of interned string `s` (kNoDevice: not a device of it).
  Topology::DeviceId topo_id(uint32_t s) const {
    return s < topo_of_.size() ? topo_of_[s] : Topology::kNoDevice;
  }
  // The interned string of a topology device (kNone: no event names it).
  uint32_t interned_of(Topology::DeviceId d) const {
    return d >= 0 && static_cast<size_t>(d) < interned_of_.size() ? interned_of_[size_t(d)] : kNone;
  }
  // Sorts every list that out-of-order arrivals left unsorted (the lazy sort
  // otherwise falls on the first diagnosis that touches a list).
  void sort_all();
  // Last wall time of anything logged by host `h` (kNoWall when none); whether
  // it logged lines without wall time.
  int64_t host_last_wall(uint32_t h) const;
  bool host_has_nowall(uint32_t h) const;
  // True when some host other than `h` logged after `t`.
  bool others_logged_after(uint32_t h, int64_t t) const;
  size_t host_count() const { return hosts_.size(); }  // hosts with at least one event
  bool any_nowall() const { return any_nowall_; }
  int64_t max_wall() const { return max_wall_; }

  std::vector<Event> take_events() { return std::move(events_); }
  // A total order on events that does not depend on arrival order: wall time
  // (events without it last), mono, evidence, name, device.
  bool before(uint32_t a, uint32_t b) const;
  // Sorts event indices by before() (descending: latest first). The same
  // result as std::sort with before(), which is a total order, but the time
  // keys are gathered once instead of read from scattered records per compare.
  void sort_events(std::vector<uint32_t>& v, bool descending = false) const;

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
  // (name, device) -> index into dev_lists_: open addressing, linear probing,
  // power-of-two size (a node map's prime-modulo hashing and pointer chasing
  // were a tenth of the diagnosis time).
  struct NdSlot {
    uint64_t key = 0;
    uint32_t val = kNone;  // kNone = empty slot
  };
  std::vector<NdSlot> nd_slots_;  // key and value in one cache line
  std::vector<DevList> dev_lists_;
  DevList* find_dev_list(uint64_t key);
  DevList& dev_list(uint64_t key);
  size_t nd_slot(uint64_t key) const {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return static_cast<size_t>(key) & (nd_slots_.size() - 1);
  }
  std::vector<Topology::DeviceId> topo_of_;  // interned string -> topology id
  std::vector<uint32_t> interned_of_;        // topology id -> interned string
  uint64_t bound_topo_ = 0;                  // Topology::uid() of the above; 0 none
  struct HostInfo {
    int64_t last = kNoWall;
    bool nowall = false;
  };
  std::unordered_map<uint32_t, HostInfo> hosts_;
  int64_t max_wall_ = kNoWall;
  bool any_nowall_ = false;
};

// A map from uint32 keys to uint32 values: open addressing, linear probing.
// For the per-diagnosis maps of the reasoner (node of an event), which a node
// map made a hash, a division and a cache miss per lookup.
class U32Map {
 public:
  // The value of `key`, or kNone.
  uint32_t find(uint32_t key) const {
    if (keys_.empty()) return kNone;
    for (size_t i = slot(key);; i = (i + 1) & (keys_.size() - 1)) {
      if (vals_[i] == kNone) return kNone;
      if (keys_[i] == key) return vals_[i];
    }
  }
  // Inserts key -> val (val != kNone) unless the key is present.
  void insert(uint32_t key, uint32_t val);

 private:
  size_t slot(uint32_t key) const {
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15ULL) >> 20) & (keys_.size() - 1);
  }
  std::vector<uint32_t> keys_, vals_;
  size_t size_ = 0;
};

struct KbIndex {
  KbIndex(const KnowledgeBase& kb, Interner* in);
  const KnowledgeBase& kb;
  std::unordered_map<uint32_t, const Signature*> sig;
  std::unordered_map<uint32_t, const Latent*> latent;
  std::unordered_map<uint32_t, std::vector<const Rule*>> rules_by_effect;
  // rules_by_effect as a table by effect name, with each rule's interned cause.
  struct CauseRule {
    const Rule* rule;
    uint32_t cause;
  };
  std::vector<std::vector<CauseRule>> rules_of_effect;
  const std::vector<CauseRule>* rules_for(uint32_t effect) const {
    return effect < rules_of_effect.size() && !rules_of_effect[effect].empty()
               ? &rules_of_effect[effect]
               : nullptr;
  }
  double max_window_s = 0;  // largest max_s + skew of any rule
  const Signature* signature(uint32_t name) const {
    return name < sig_by_id.size() ? sig_by_id[name] : nullptr;
  }
  std::vector<const Signature*> sig_by_id;  // `sig` as a table (hot path)
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
