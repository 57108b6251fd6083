// Private to the engine: the event index (events by name, by name+device, by
// logging host) and the KB index (rules by effect). Per-incident reasoning runs
// over these, never over a freshly built graph of every event.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "inherited_times.h"
#include "line_store.h"
#include "reflex/diagnosis.h"
#include "reflex/engine_options.h"
#include "reflex/event.h"
#include "reflex/kb.h"
#include "reflex/rules.h"
#include "reflex/topology.h"

namespace reflex::engine {

using rules::kNoWall;
constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// String interning: names, devices, clocks, hosts, evidence files, field and
// binding names share one table. The strings live in a deque (stable
// addresses, no allocation of their own beyond the characters).
class Interner {
 public:
  uint32_t id(std::string_view s);
  uint32_t find(std::string_view s) const;  // kNone when unknown
  const std::string& str(uint32_t id) const { return *ptrs_[id]; }
  size_t size() const { return strs_.size(); }

 private:
  std::unordered_map<std::string_view, uint32_t> map_;
  std::deque<std::string> strs_;
  // strs_[i]'s address: str() is one load (a deque index is a division and
  // two), and the walk's `where` checks take a device's address per pair.
  std::vector<const std::string*> ptrs_;
};

// Bytes appended once and read back by (block, offset): the raw lines and
// field values of the events, without a heap block per string. Blocks of
// 1 MiB (a longer string gets a block of its own), so growth never copies.
class TextArena {
 public:
  uint64_t add(std::string_view s);  // address of the copy
  std::string_view get(uint64_t at, uint32_t len) const {
    return {blocks_[at >> 32].data() + (at & 0xffffffffu), len};
  }

 private:
  std::vector<std::string> blocks_;
};

// Compact per-event record for the hot loops: the times rules read, interned names.
struct Rec : rules::EventSpan {
  uint32_t name = kNone, device = kNone, clock = kNone, src_host = kNone;
};

// A growable array of event indices with two entries inline: most
// (name, device) pairs have one to three events, and a std::vector's heap
// block per pair was most of the (name, device) index's memory.
class IdList {
 public:
  IdList() = default;
  IdList(const IdList&) = delete;
  IdList& operator=(const IdList&) = delete;
  IdList(IdList&& o) noexcept : n_(o.n_), cap_(o.cap_), u_(o.u_) { o.n_ = 0, o.cap_ = kInline; }
  IdList& operator=(IdList&& o) noexcept {
    if (this != &o) {
      this->~IdList();
      new (this) IdList(std::move(o));
    }
    return *this;
  }
  ~IdList() {
    if (cap_ > kInline) delete[] u_.heap;
  }
  void push_back(uint32_t v) {
    if (n_ == cap_) grow();
    data()[n_++] = v;
  }
  uint32_t* begin() { return data(); }
  uint32_t* end() { return data() + n_; }
  const uint32_t* begin() const { return data(); }
  const uint32_t* end() const { return data() + n_; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  uint32_t back() const { return data()[n_ - 1]; }

 private:
  static constexpr uint32_t kInline = 2;
  uint32_t* data() { return cap_ > kInline ? u_.heap : u_.in; }
  const uint32_t* data() const { return cap_ > kInline ? u_.heap : u_.in; }
  void grow();
  uint32_t n_ = 0, cap_ = kInline;
  union U {
    uint32_t in[kInline];
    uint32_t* heap;
  } u_{};
};

// What EventIndex::advise_huge_pages() did with one array's buffer.
struct HugeAdvice {
  const void* at = nullptr;
  size_t bytes = 0;
  // Advises the whole 2 MiB pages of [at, at + bytes) not advised yet.
  void update(const void* at, size_t bytes);
};

struct NameList {
  std::vector<uint32_t> wall;    // events with wall time, sorted by (lo, index) when !dirty
  std::vector<uint32_t> nowall;  // events ordered only within their clock (sorted when !dirty)
  int64_t max_span = 0;          // max (hi - lo) over `wall`
  bool dirty = false;
  // EventIndex::hosts_logging()'s count and the budget it was taken with
  // (hosts_budget 0: none yet; the next event of this name drops it).
  size_t hosts = 0, hosts_budget = 0;
  HugeAdvice wall_advice;
};

// The event lists by (name, device) key: open addressing, linear probing,
// power-of-two size (a node map's prime-modulo hashing and pointer chasing
// were a tenth of the diagnosis time).
class DevListTable {
 public:
  struct DevList {
    IdList v;
    bool dirty = false;  // appended out of order: sorted when next read
  };
  DevList* find(uint64_t key);  // nullptr when absent
  DevList& get(uint64_t key);   // added empty when absent
  std::vector<DevList>& lists() { return lists_; }
  // EventIndex::advise_huge_pages() for the two arrays: slots, then lists.
  void advise_huge_pages(HugeAdvice* slots, HugeAdvice* lists) const;

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t val = kNone;  // kNone = empty slot
  };
  size_t slot(uint64_t key) const {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return static_cast<size_t>(key) & (slots_.size() - 1);
  }
  std::vector<Slot> slots_;  // key and value in one cache line
  std::vector<DevList> lists_;
};

class EventIndex {
 public:
  explicit EventIndex(Interner* in) : in_(in) {}
  uint32_t add(const Event& ev);
  size_t size() const { return recs_.size(); }
  // The event as it was added (rebuilt from the compact record: for output
  // and notes, not for loops over candidates).
  Event ev(uint32_t i) const;
  const Rec& rec(uint32_t i) const { return recs_[i]; }
  // Single fields without rebuilding the event (hot paths). The strings are
  // the interner's: valid as long as it is.
  const std::string& name(uint32_t i) const { return in_->str(recs_[i].name); }
  const std::string& device(uint32_t i) const { return in_->str(recs_[i].device); }
  const std::string& host(uint32_t i) const { return in_->str(stored_[i].host); }
  DeviceKind kind(uint32_t i) const { return stored_[i].kind; }
  uint64_t count(uint32_t i) const;
  EventTime time(uint32_t i) const;
  std::string evidence(uint32_t i) const;
  std::string_view line(uint32_t i) const {
    return lines_.get(stored_[i].text, stored_[i].line_len);
  }
  // Event::binding() of event i (nullptr when it has no such binding).
  const std::string* binding(uint32_t i, std::string_view key) const;
  Interner& interner() const { return *in_; }

  // Sorted views (sorting lazily after out-of-order arrivals).
  const NameList* by_name(uint32_t name);
  const IdList* by_name_device(uint32_t name, uint32_t device);

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
  // The hosts `old` knew (last wall time, lines without one) join this
  // index's, so a retention pass that drops a host's old events leaves what
  // the silent-host checks read as it was.
  void carry_hosts(const EventIndex& old);
  // Sorts every list that out-of-order arrivals left unsorted (the lazy sort
  // otherwise falls on the first diagnosis that touches a list).
  void sort_all();
  // Events whose time was inherited (inherited_times.h): the bounds are
  // settled before each diagnosis; latest(i) is event i's.
  void settle_inherited_times() { inherited_.settle(*this); }
  int64_t latest(uint32_t i) const { return inherited_.latest(i, recs_[i].hi); }
  // For InheritedTimes: a wall time of the event's own line; the evidence
  // file (interned) and line (max_wall(): the latest wall time added).
  bool time_is_own(uint32_t i) const {
    return (stored_[i].flags & (kWall | kEvSplit | kInherited)) == (kWall | kEvSplit);
  }
  uint32_t evidence_file(uint32_t i) const { return stored_[i].ev_file; }
  uint32_t evidence_line(uint32_t i) const { return stored_[i].ev_no; }
  // Asks the kernel to back the large arrays the walk reads at random (the
  // records, the (name, device) table and lists, the names' lists) with
  // 2 MiB pages, once per array buffer and for the part added since. At 1M
  // events they span ~150 MiB: with 4 KiB pages nearly every record read
  // was also a TLB miss, whose page walk misses the cache too (and costs
  // twice under virtualisation). Only whole 2 MiB pages inside the used
  // part are advised, so the resident size does not grow. bind_topology()
  // calls it; a no-op where the kernel has no such advice.
  void advise_huge_pages();
  // Last wall time of anything logged by host `h` (kNoWall when none); whether
  // it logged lines without wall time.
  int64_t host_last_wall(uint32_t h) const;
  bool host_has_nowall(uint32_t h) const;
  // True when some host other than `h` logged after `t`.
  bool others_logged_after(uint32_t h, int64_t t) const;
  // Hosts the input holds lines of, beside those with an event (a bundle's
  // host directories with a non-empty file, the hosts of fed lines). A host
  // with neither is known only from other hosts' lines: its silence is no
  // evidence.
  void mark_input_host(uint32_t h) { input_hosts_.insert(h); }
  bool host_has_input(uint32_t h) const {
    return h != kNone && (hosts_.count(h) > 0 || input_hosts_.count(h) > 0);
  }
  size_t host_count() const { return hosts_.size(); }  // hosts with at least one event
  // Distinct logging hosts (Rec::src_host) of by_name(name)'s events, wall
  // then nowall, at most `budget` of them (0 when none). The budget counts as
  // the reasoner's base-rate count always did: when the wall events use it
  // up, the nowall ones are still all counted. Kept until the next event
  // of that name: the base-rate check asks it for every scored root of every
  // diagnosis, and counting a noise name's ~170,000 events each time was most
  // of a diagnosis at 1M events.
  size_t hosts_logging(uint32_t name, size_t budget);
  bool any_nowall() const { return any_nowall_; }
  int64_t max_wall() const { return max_wall_; }

  // A total order on events that does not depend on arrival order: wall time
  // (events without it last), mono, evidence, name, device.
  bool before(uint32_t a, uint32_t b) const;
  // Sorts event indices by before() (descending: latest first). The same
  // result as std::sort with before(), which is a total order, but the time
  // keys are gathered once instead of read from scattered records per compare.
  void sort_events(std::vector<uint32_t>& v, bool descending = false) const;

 private:
  template <class List>
  void sort_list(List& v);
  // What an Event holds beyond its Rec, with interned strings. Storms,
  // bindings, more than kStoredFields fields and evidence not of the form
  // "FILE:N" (rare or variable) go to extras_.
  struct Stored {
    uint64_t seq = 0;
    uint64_t text = 0;  // lines_ address of the line
    uint32_t line_len = 0;
    uint32_t host = kNone;
    uint32_t ev_file = kNone;  // evidence "FILE:N": interned FILE (kEvSplit)
    uint32_t ev_no = 0;        // and N
    uint32_t extra = kNone;
    uint32_t fields = 0;  // into fields_, when there is no Extra (most events have
                          // fields and nothing else: an Extra each was 80 bytes)
    DeviceKind kind = DeviceKind::host;
    Transport transport = kTransportApp;
    uint8_t flags = 0;
    uint8_t n_fields = 0;
  };
  static constexpr size_t kStoredFields = 255;
  // Event i's fields: (first index into fields_, how many).
  std::pair<uint32_t, uint32_t> field_range(uint32_t i) const {
    const Stored& st = stored_[i];
    if (st.extra == kNone) return {st.fields, st.n_fields};
    return {extras_[st.extra].fields, extras_[st.extra].n_fields};
  }
  InheritedTimes inherited_;
  enum : uint8_t { kWall = 1, kMono = 2, kEvSplit = 4, kPlaceholder = 8, kInherited = 16 };
  struct Extra {
    std::optional<TimeUs> first, last;
    int64_t wall = 0;  // time.wall (kWall); without an Extra it is the Rec's lo
    uint64_t count = 1;
    uint64_t ev_at = 0;  // evidence in the arena (!kEvSplit)
    uint32_t ev_len = 0;
    uint32_t fields = 0, n_fields = 0;      // into fields_
    uint32_t bindings = 0, n_bindings = 0;  // into bindings_
  };
  struct Field {
    uint32_t key;  // interned
    uint32_t len;
    uint64_t at;  // value in the arena
  };
  // The evidence as up to three pieces ("FILE", ":", "N"), for comparing
  // without building the string; `buf` holds the digits.
  struct EvidencePieces {
    std::string_view p[3];
    int n = 0;
    char buf[24];
  };
  void evidence_pieces(uint32_t i, EvidencePieces* out) const;
  int compare_evidence(uint32_t a, uint32_t b) const;
  Interner* in_;
  std::vector<Rec> recs_;
  std::vector<Stored> stored_;
  std::vector<Extra> extras_;
  std::vector<Field> fields_;
  std::vector<std::pair<uint32_t, uint32_t>> bindings_;  // interned name, device
  TextArena text_;   // field values and odd evidence: read by the walk
  LineStore lines_;  // the raw lines: read for output only
  std::unordered_map<uint32_t, NameList> names_;
  DevListTable nd_;                          // (name, device) -> its events
  std::vector<Topology::DeviceId> topo_of_;  // interned string -> topology id
  std::vector<uint32_t> interned_of_;        // topology id -> interned string
  uint64_t bound_topo_ = 0;                  // Topology::uid() of the above; 0 none
  struct HostInfo {
    int64_t last = kNoWall;
    bool nowall = false;
  };
  std::unordered_map<uint32_t, HostInfo> hosts_;
  std::unordered_set<uint32_t> input_hosts_;
  // advise_huge_pages(): per array, how much of its buffer was advised.
  HugeAdvice advised_[6];
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
  void compute_keep(Interner* in);
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
  // The device kind most of a standard class's root-cause signatures are on
  // (gpu for gpu_memory, host for host_kernel): a host-level line of a class
  // usually found on a device names no device, and the host stands in.
  std::unordered_map<std::string, DeviceKind> class_kind;
  // How long before an open incident's first symptom an event of this name
  // can still matter to it, for the streaming retention: max_window_s for
  // every name a diagnosis reads beyond the rules (fault classes: roots,
  // fallback, corroboration; cleared_by and odd_one_out names; names in a
  // cycle of rules), else the longest chain of rule windows from the name to
  // an effect, capped at max_window_s. An NCCL echo wave is kept minutes,
  // not the KB's longest window (a day).
  std::vector<double> keep_s_by_name;
  double keep_s(uint32_t name) const {
    return name < keep_s_by_name.size() ? keep_s_by_name[name] : max_window_s;
  }
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
std::string job_key(const EventIndex& ix, uint32_t ev, const Topology& topo);

}  // namespace reflex::engine
