// Event index and KB index of the engine.
#include "index.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <stdexcept>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace reflex::engine {

uint32_t Interner::id(std::string_view s) {
  auto it = map_.find(s);
  if (it != map_.end()) return it->second;
  strs_.emplace_back(s);
  ptrs_.push_back(&strs_.back());
  uint32_t id = static_cast<uint32_t>(strs_.size() - 1);
  map_.emplace(std::string_view(strs_.back()), id);
  return id;
}

uint32_t Interner::find(std::string_view s) const {
  auto it = map_.find(s);
  return it == map_.end() ? kNone : it->second;
}

uint64_t TextArena::add(std::string_view s) {
  constexpr size_t kBlock = size_t(1) << 20;
  if (blocks_.empty() || blocks_.back().size() + s.size() > blocks_.back().capacity()) {
    blocks_.emplace_back();
    blocks_.back().reserve(std::max(kBlock, s.size()));
  }
  std::string& b = blocks_.back();
  uint64_t at = (static_cast<uint64_t>(blocks_.size() - 1) << 32) | b.size();
  b.append(s);
  return at;
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

// "FILE:N" with N in canonical decimal (what ingest writes): N, else nullopt,
// so that the evidence is rebuilt byte for byte from FILE and N.
std::optional<uint64_t> evidence_line_no(std::string_view ev, size_t* colon) {
  size_t c = ev.rfind(':');
  if (c == std::string_view::npos) return std::nullopt;
  std::string_view d = ev.substr(c + 1);
  if (d.empty() || d.size() > 19 || (d[0] == '0' && d.size() > 1)) return std::nullopt;
  uint64_t n = 0;
  for (char ch : d) {
    if (ch < '0' || ch > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(ch - '0');
  }
  *colon = c;
  return n;
}

uint32_t u32_size(size_t n) {
  if (n > std::numeric_limits<uint32_t>::max()) throw std::length_error("event text over 4 GiB");
  return static_cast<uint32_t>(n);
}
}  // namespace

uint32_t EventIndex::add(const Event& ev) {
  if (recs_.size() >= kNone - 1) throw std::length_error("event index full");
  Rec r;
  static_cast<rules::EventSpan&>(r) = rules::span_of(ev);
  r.name = in_->id(ev.name);
  r.device = in_->id(ev.device);
  r.clock = in_->id(ev.time.clock);
  r.src_host = in_->id(logging_host(ev));
  Stored st;
  st.seq = ev.seq;
  st.host = in_->id(ev.host);
  st.kind = ev.kind;
  st.transport = ev.transport;
  if (ev.time.wall) st.flags |= kWall;
  if (ev.time.mono) st.flags |= kMono;  // the value is r.mono
  if (ev.placeholder_device) st.flags |= kPlaceholder;
  if (ev.time.inherited && ev.time.wall) st.flags |= kInherited;
  st.line_len = u32_size(ev.line.size());
  st.text = lines_.add(ev.line);
  size_t colon = 0;
  auto no = evidence_line_no(ev.evidence, &colon);
  if (no && *no <= std::numeric_limits<uint32_t>::max()) {
    st.flags |= kEvSplit;
    st.ev_no = static_cast<uint32_t>(*no);
    st.ev_file = in_->id(std::string_view(ev.evidence).substr(0, colon));
  }
  uint32_t fields_at = u32_size(fields_.size());
  for (auto& [k, v] : ev.fields) fields_.push_back({in_->id(k), u32_size(v.size()), text_.add(v)});
  if (ev.first || ev.last || ev.count != 1 || ev.fields.size() > kStoredFields ||
      !ev.bindings.empty() || !(st.flags & kEvSplit)) {
    Extra x;
    x.first = ev.first;
    x.last = ev.last;
    x.wall = ev.time.wall.value_or(0);
    x.count = ev.count;
    if (!(st.flags & kEvSplit)) {
      x.ev_len = u32_size(ev.evidence.size());
      x.ev_at = text_.add(ev.evidence);
    }
    x.fields = fields_at;
    x.n_fields = u32_size(ev.fields.size());
    x.bindings = u32_size(bindings_.size());
    x.n_bindings = u32_size(ev.bindings.size());
    for (auto& [k, v] : ev.bindings) bindings_.emplace_back(in_->id(k), in_->id(v));
    st.extra = u32_size(extras_.size());
    extras_.push_back(x);
  } else {
    st.fields = fields_at;
    st.n_fields = static_cast<uint8_t>(ev.fields.size());
  }
  uint32_t idx = static_cast<uint32_t>(recs_.size());
  recs_.push_back(r);
  stored_.push_back(st);
  if ((st.flags & kInherited) && (st.flags & kEvSplit)) inherited_.add(idx);

  NameList& nl = names_[r.name];
  nl.hosts_budget = 0;  // hosts_logging() counts again
  DevListTable::DevList& ndl = nd_.get(key2(r.name, r.device));
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
  if (int c = compare_evidence(a, b)) return c < 0;
  if (int c = name(a).compare(name(b))) return c < 0;
  if (int c = device(a).compare(device(b))) return c < 0;
  return a < b;
}

void EventIndex::evidence_pieces(uint32_t i, EvidencePieces* out) const {
  const Stored& st = stored_[i];
  if (!(st.flags & kEvSplit)) {
    const Extra& x = extras_[st.extra];
    out->p[0] = text_.get(x.ev_at, x.ev_len);
    out->n = 1;
    return;
  }
  out->p[0] = in_->str(st.ev_file);
  out->p[1] = ":";
  auto [end, ec] = std::to_chars(out->buf, out->buf + sizeof out->buf, st.ev_no);
  (void)ec;
  out->p[2] = std::string_view(out->buf, static_cast<size_t>(end - out->buf));
  out->n = 3;
}

int EventIndex::compare_evidence(uint32_t a, uint32_t b) const {
  const Stored& sa = stored_[a];
  const Stored& sb = stored_[b];
  if ((sa.flags & sb.flags & kEvSplit) && sa.ev_file == sb.ev_file) {
    if (sa.ev_no == sb.ev_no) return 0;
    // Same file: the digits compare as strings do ("10" < "9").
    char x[24], y[24];
    auto ex = std::to_chars(x, x + sizeof x, sa.ev_no).ptr;
    auto ey = std::to_chars(y, y + sizeof y, sb.ev_no).ptr;
    return std::string_view(x, size_t(ex - x)).compare(std::string_view(y, size_t(ey - y)));
  }
  // std::string::compare of the two concatenations, piece by piece.
  EvidencePieces pa, pb;
  evidence_pieces(a, &pa);
  evidence_pieces(b, &pb);
  int ia = 0, ib = 0;
  size_t oa = 0, ob = 0;
  for (;;) {
    while (ia < pa.n && oa == pa.p[ia].size()) ++ia, oa = 0;
    while (ib < pb.n && ob == pb.p[ib].size()) ++ib, ob = 0;
    if (ia == pa.n || ib == pb.n) return (ia == pa.n ? 0 : 1) - (ib == pb.n ? 0 : 1);
    size_t k = std::min(pa.p[ia].size() - oa, pb.p[ib].size() - ob);
    if (int c = pa.p[ia].substr(oa, k).compare(pb.p[ib].substr(ob, k))) return c;
    oa += k;
    ob += k;
  }
}

Event EventIndex::ev(uint32_t i) const {
  const Rec& r = recs_[i];
  const Stored& st = stored_[i];
  Event e;
  e.name = in_->str(r.name);
  e.device = in_->str(r.device);
  e.kind = st.kind;
  e.host = in_->str(st.host);
  e.time = time(i);
  e.evidence = evidence(i);
  e.line = line(i);
  e.transport = st.transport;
  e.placeholder_device = st.flags & kPlaceholder;
  e.seq = st.seq;
  if (st.extra != kNone) {
    const Extra& x = extras_[st.extra];
    e.first = x.first;
    e.last = x.last;
    e.count = x.count;
    for (uint32_t k = 0; k < x.n_bindings; ++k) {
      auto [name, dev] = bindings_[x.bindings + k];
      e.bindings.emplace_back(in_->str(name), in_->str(dev));
    }
  }
  auto [at, n] = field_range(i);
  for (uint32_t k = 0; k < n; ++k) {
    const Field& f = fields_[at + k];
    e.fields.emplace_back(in_->str(f.key), text_.get(f.at, f.len));
  }
  return e;
}

EventTime EventIndex::time(uint32_t i) const {
  EventTime t;
  const Stored& st = stored_[i];
  if (st.flags & kWall) t.wall = st.extra == kNone ? recs_[i].lo : extras_[st.extra].wall;
  if (st.flags & kMono) t.mono = recs_[i].mono;
  t.clock = in_->str(recs_[i].clock);
  return t;
}

std::string EventIndex::evidence(uint32_t i) const {
  EvidencePieces p;
  evidence_pieces(i, &p);
  std::string s;
  s.reserve(p.p[0].size() + p.p[1].size() + p.p[2].size());
  for (int k = 0; k < p.n; ++k) s += p.p[k];
  return s;
}

uint64_t EventIndex::count(uint32_t i) const {
  uint32_t x = stored_[i].extra;
  return x == kNone ? 1 : extras_[x].count;
}

const std::string* EventIndex::binding(uint32_t i, std::string_view key) const {
  uint32_t xi = stored_[i].extra;
  if (xi == kNone) return nullptr;
  const Extra& x = extras_[xi];
  for (uint32_t k = 0; k < x.n_bindings; ++k) {
    auto [name, dev] = bindings_[x.bindings + k];
    if (in_->str(name) == key) return &in_->str(dev);
  }
  return nullptr;
}

void EventIndex::sort_events(std::vector<uint32_t>& v, bool descending) const {
  if (v.size() < 2) return;  // most device probes find one event or none
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

void IdList::grow() {
  uint32_t cap = cap_ * 2;
  uint32_t* h = new uint32_t[cap];
  std::copy(begin(), end(), h);
  if (cap_ > kInline) delete[] u_.heap;
  u_.heap = h;
  cap_ = cap;
}

template <class List>
void EventIndex::sort_list(List& v) {
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

size_t EventIndex::hosts_logging(uint32_t name, size_t budget) {
  const NameList* nl = by_name(name);
  if (!nl || budget == 0) return 0;
  NameList& m = names_.find(name)->second;
  if (m.hosts_budget == budget) return m.hosts;
  std::vector<uint32_t> seen;
  size_t left = budget;  // a storm's count, not its every line
  for (const auto* v : {&nl->wall, &nl->nowall})
    for (uint32_t i : *v) {
      if (left-- == 0) break;
      seen.push_back(recs_[i].src_host);
    }
  std::sort(seen.begin(), seen.end());
  m.hosts = static_cast<size_t>(std::unique(seen.begin(), seen.end()) - seen.begin());
  m.hosts_budget = budget;
  return m.hosts;
}

DevListTable::DevList* DevListTable::find(uint64_t key) {
  if (slots_.empty()) return nullptr;
  const size_t mask = slots_.size() - 1;
  for (size_t i = slot(key); slots_[i].val != kNone; i = (i + 1) & mask)
    if (slots_[i].key == key) return &lists_[slots_[i].val];
  return nullptr;
}

DevListTable::DevList& DevListTable::get(uint64_t key) {
  if ((lists_.size() + 1) * 2 > slots_.size()) {
    std::vector<Slot> old(slots_.empty() ? 1024 : slots_.size() * 2);
    std::swap(old, slots_);
    for (const Slot& o : old) {
      if (o.val == kNone) continue;
      size_t i = slot(o.key);
      while (slots_[i].val != kNone) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = o;
    }
  }
  size_t i = slot(key);
  for (; slots_[i].val != kNone; i = (i + 1) & (slots_.size() - 1))
    if (slots_[i].key == key) return lists_[slots_[i].val];
  slots_[i] = {key, static_cast<uint32_t>(lists_.size())};
  return lists_.emplace_back();
}

void DevListTable::advise_huge_pages(HugeAdvice* slots, HugeAdvice* lists) const {
  slots->update(slots_.data(), slots_.size() * sizeof(slots_[0]));
  lists->update(lists_.data(), lists_.size() * sizeof(lists_[0]));
}

const IdList* EventIndex::by_name_device(uint32_t name, uint32_t device) {
  DevListTable::DevList* dl = nd_.find(key2(name, device));
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
  advise_huge_pages();
}

void HugeAdvice::update(const void* p_at, size_t p_bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  if (at != p_at) at = p_at, bytes = 0;  // a new buffer (the vector grew)
  if (p_bytes < bytes + kHuge) return;   // not one more whole page
  auto p = reinterpret_cast<uintptr_t>(at);
  uintptr_t from = (p + bytes + kHuge - 1) & ~(kHuge - 1), to = (p + p_bytes) & ~(kHuge - 1);
  bytes = p_bytes;
  if (to <= from) return;
  void* start = reinterpret_cast<void*>(from);
  // MADV_COLLAPSE (Linux 6.1) makes the pages huge now, whatever the THP
  // setting; MADV_HUGEPAGE (the fallback) only marks them for khugepaged.
  constexpr int kCollapse = 25;  // MADV_COLLAPSE: not in glibc 2.36's headers
  if (madvise(start, to - from, kCollapse) != 0) madvise(start, to - from, MADV_HUGEPAGE);
#else
  (void)p_at, (void)p_bytes;
#endif
}

void EventIndex::advise_huge_pages() {
  auto vec = [](HugeAdvice& a, const auto& v) { a.update(v.data(), v.size() * sizeof(v[0])); };
  vec(advised_[0], recs_);
  vec(advised_[1], stored_);
  nd_.advise_huge_pages(&advised_[2], &advised_[3]);
  vec(advised_[4], topo_of_);
  vec(advised_[5], interned_of_);
  for (auto& [name, nl] : names_) vec(nl.wall_advice, nl.wall);
}

void EventIndex::sort_all() {
  for (auto& [name, nl] : names_) {
    if (!nl.dirty) continue;
    sort_list(nl.wall);
    sort_list(nl.nowall);
    nl.dirty = false;
  }
  for (auto& dl : nd_.lists()) {
    if (!dl.dirty) continue;
    sort_list(dl.v);
    dl.dirty = false;
  }
}

void EventIndex::carry_hosts(const EventIndex& old) {
  for (auto& [h, info] : old.hosts_) {
    HostInfo& mine = hosts_[h];
    mine.last = std::max(mine.last, info.last);
    mine.nowall = mine.nowall || info.nowall;
  }
  input_hosts_.insert(old.input_hosts_.begin(), old.input_hosts_.end());
  max_wall_ = std::max(max_wall_, old.max_wall_);
  any_nowall_ = any_nowall_ || old.any_nowall_;
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
  compute_keep(in);
  std::unordered_map<std::string, std::map<DeviceKind, size_t>> kinds;
  for (auto& s : kb.signatures)
    if (!s.fault_class.empty() && !s.suspect) ++kinds[kb.standard_class(s.fault_class)][s.kind];
  for (auto& [cls, by_kind] : kinds) {
    size_t best = 0;
    for (auto& [kind, n] : by_kind)
      if (n > best) {  // ties: the first kind in DeviceKind order
        best = n;
        class_kind[cls] = kind;
      }
  }
}

void KbIndex::compute_keep(Interner* in) {
  std::vector<uint8_t> fixed;  // 1: kept max_window_s
  auto grow = [&](uint32_t id) {
    if (id >= keep_s_by_name.size()) {
      keep_s_by_name.resize(id + 1, 0.0);
      fixed.resize(id + 1, 0);
    }
  };
  auto fix = [&](const std::string& name) {
    uint32_t id = in->id(name);
    grow(id);
    fixed[id] = 1;
  };
  for (auto& s : kb.signatures) {
    grow(in->id(s.name));
    if (!s.fault_class.empty()) fix(s.name);
    for (auto& c : s.cleared_by) fix(c);
  }
  for (auto& l : kb.latents)
    for (auto& o : l.odd_one_out) fix(o.event);
  for (auto& r : kb.rules) {
    grow(in->id(r.cause));
    grow(in->id(r.effect));
  }
  for (size_t i = 0; i < fixed.size(); ++i)
    if (fixed[i]) keep_s_by_name[i] = max_window_s;
  // Longest chain: keep(c) = max over rules c -> e of window + keep(e),
  // capped. Relaxed a bounded number of times; a name still rising after
  // that sits on a cycle and is kept max_window_s.
  std::vector<uint8_t> rose(keep_s_by_name.size(), 0);
  constexpr int kPasses = 64;
  for (int pass = 0; pass <= kPasses; ++pass) {
    bool changed = false;
    std::fill(rose.begin(), rose.end(), 0);
    for (auto& r : kb.rules) {
      uint32_t c = in->id(r.cause), e = in->id(r.effect);
      if (fixed[c]) continue;
      double v = std::min(max_window_s, std::max(0.0, r.max_s) + r.skew_s + keep_s_by_name[e]);
      if (v > keep_s_by_name[c]) {
        keep_s_by_name[c] = v;
        rose[c] = 1;
        changed = true;
      }
    }
    if (!changed) return;
  }
  for (size_t i = 0; i < rose.size(); ++i)
    if (rose[i]) keep_s_by_name[i] = max_window_s;
}

std::string job_key(const EventIndex& ix, uint32_t ev, const Topology& topo) {
  const std::string& d = ix.device(ev);
  if (d.rfind("job/", 0) == 0) {
    auto slash = d.find('/', 4);
    return slash == std::string::npos ? d : d.substr(0, slash);
  }
  std::string host = ix.host(ev);
  if (host.empty()) {
    if (auto info = topo.device(d)) host = info->host;
  }
  if (host.empty()) return "device:" + d;
  auto jobs = topo.jobs_of_host(host);
  if (!jobs.empty()) return "job/" + jobs.front();
  if (topo.one_job()) return "input";  // the batch input's hosts are one job
  return "host:" + host;
}

}  // namespace reflex::engine
