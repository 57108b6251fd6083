// Private to reflex_topology: the indexes of a loaded topology, shared by the
// loader (loader*.cpp), the resolver (topology.cpp) and the relations
// (relations.cpp). Everything is indexed at load time so that related() is a
// couple of hash lookups plus O(depth) pointer chasing.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "reflex/device_id.h"
#include "reflex/topology.h"
#include "reflex/vocabulary.h"

namespace reflex {
namespace topo {

constexpr int32_t kNone = -1;

// Ids not in the topology (placeholders, unknown hosts) are read by their
// structure: the model's device-id grammar.
using ParsedId = DeviceIdView;
inline ParsedId parse_id(std::string_view id) {
  return DeviceIdView::parse(id);
}

// A BDF packed into 32 bits (domain 16, bus 8, device 5, function 3) for the
// per-host BDF index. nullopt when the normalised text does not fit.
inline std::optional<uint32_t> pack_bdf(std::string_view n) {
  // normalised: "dddd:bb:dd.f"
  if (n.size() != 12 || n[4] != ':' || n[7] != ':' || n[10] != '.') return std::nullopt;
  auto hex = [](std::string_view s) -> std::optional<uint32_t> {
    uint32_t v = 0;
    for (char c : s) {
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= uint32_t(c - 'a' + 10);
      else
        return std::nullopt;
    }
    return v;
  };
  auto d = hex(n.substr(0, 4)), b = hex(n.substr(5, 2)), dv = hex(n.substr(8, 2)),
       f = hex(n.substr(11, 1));
  if (!d || !b || !dv || !f || *dv > 31 || *f > 7) return std::nullopt;
  return (*d << 16) | (*b << 8) | (*dv << 3) | *f;
}

// Open-addressing hash index (linear probing) from 64-bit keys to int32
// values. Duplicate keys are allowed: find() hands every candidate to a
// predicate, so the same table indexes strings by their hash (verified against
// the stored string) and exact integer keys. No per-entry allocation: a
// 100k-GPU topology has ~500k ids.
class FlatIndex {
 public:
  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    if (cap > keys_.size()) rehash(cap);
  }
  void insert(uint64_t key, int32_t val) {
    if ((size_ + 1) * 2 > keys_.size()) rehash(keys_.empty() ? 16 : keys_.size() * 2);
    size_t i = slot(key);
    while (vals_[i] != kNone) i = (i + 1) & (keys_.size() - 1);
    keys_[i] = key;
    vals_[i] = val;
    ++size_;
  }
  template <typename Pred>
  int32_t find(uint64_t key, Pred&& pred) const {
    if (keys_.empty()) return kNone;
    for (size_t i = slot(key); vals_[i] != kNone; i = (i + 1) & (keys_.size() - 1))
      if (keys_[i] == key && pred(vals_[i])) return vals_[i];
    return kNone;
  }
  int32_t find(uint64_t key) const {
    return find(key, [](int32_t) { return true; });
  }

 private:
  size_t slot(uint64_t key) const {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return size_t(key) & (keys_.size() - 1);
  }
  void rehash(size_t cap) {
    std::vector<uint64_t> k(cap);
    std::vector<int32_t> v(cap, kNone);
    std::swap(k, keys_);
    std::swap(v, vals_);
    size_ = 0;
    for (size_t i = 0; i < k.size(); ++i)
      if (v[i] != kNone) insert(k[i], v[i]);
  }
  std::vector<uint64_t> keys_;
  std::vector<int32_t> vals_;
  size_t size_ = 0;
};

inline uint64_t str_hash(std::string_view s) {
  return std::hash<std::string_view>{}(s);
}

// IPv4 dotted quads pack into 32 bits; anything else (IPv6) is hashed.
inline uint64_t ip_key(std::string_view ip) {
  uint32_t v = 0;
  int parts = 0, cur = -1;
  for (char c : ip) {
    if (c >= '0' && c <= '9') {
      cur = (cur < 0 ? 0 : cur) * 10 + (c - '0');
      if (cur > 255) return str_hash(ip) | (1ULL << 63);
    } else if (c == '.' && cur >= 0) {
      v = (v << 8) | uint32_t(cur);
      cur = -1;
      ++parts;
    } else {
      return str_hash(ip) | (1ULL << 63);
    }
  }
  if (cur < 0 || parts != 3) return str_hash(ip) | (1ULL << 63);
  return (v << 8) | uint32_t(cur);
}

// A handful of (name, value) pairs; linear search beats hashing at this size.
struct SmallMap {
  std::vector<std::pair<std::string, int32_t>> v;
  size_t count(const std::string& k) const { return find(k) == v.end() ? 0 : 1; }
  std::vector<std::pair<std::string, int32_t>>::const_iterator find(const std::string& k) const {
    return std::find_if(v.begin(), v.end(), [&](const auto& p) { return p.first == k; });
  }
  std::vector<std::pair<std::string, int32_t>>::const_iterator end() const { return v.end(); }
  void emplace(const std::string& k, int32_t d) { v.emplace_back(k, d); }
};

static_assert(Topology::kNoJob == kNone);
// same_job's kinds are one set on both sides, so a key per device
// (Topology::same_job_key) can say "relates to nothing" without knowing the
// other device.
constexpr bool same_job_kind(DeviceKind k) {
  return kind_in(relation_info(Relation::same_job).lhs, k);
}
static_assert([] {
  for (const DeviceKindInfo& a : kDeviceKinds)
    for (const DeviceKindInfo& b : kDeviceKinds)
      if (relation_allows(Relation::same_job, a.kind, b.kind) !=
          (same_job_kind(a.kind) && same_job_kind(b.kind)))
        return false;
  return true;
}());

// All indexes of a loaded topology. Topology::Impl derives from it so the loader
// (a free class) can fill it.
struct TopoData {
  struct Dev {
    std::string id;
    std::string bdf;  // normalised, "" when unknown
    DeviceKind kind = DeviceKind::host;
    int32_t host = kNone;    // host table index (rank: the rank's host)
    int32_t parent = kNone;  // gpu/nic/pcie_port: the PCIe port above it
    int32_t link = kNone;    // gpu: first NIC; nic: fabric switch; rank: GPU
    int32_t aux = kNone;  // gpu: index; rank: number; pcie_port: children slot; others: table index
    int32_t job = kNone;  // rank: job table index
  };
  struct Host {
    std::string name;
    std::string ip;
    int32_t dev = kNone;
    int32_t domain = kNone;  // nvl_domain index
    std::vector<int32_t> gpus, nics, pcie, nvsw, ranks;
    std::vector<int32_t> jobs;    // job table indexes
    bool mounts_all = true;       // no hosts[].mounts given
    std::vector<int32_t> mounts;  // storage devs when !mounts_all
  };
  struct Nic {
    std::string name, netdev, ip;
    std::vector<int32_t> paired_gpus;  // GPUs whose first NIC this is
  };
  struct Fabric {
    std::string tier;
    std::vector<int32_t> uplinks, downlinks, nics;
  };
  struct Job {
    std::string id;
    int32_t dev = kNone;
    std::vector<int32_t> ranks;  // rank devs, file order
    std::unordered_map<int, int32_t> by_rank;
  };
  struct Storage {
    std::string name, ip;
  };

  std::string cluster;
  std::deque<Dev> devs;  // deque: ids stay put, the index holds views into them
  // The fields the relation checks read, by device id, in one flat array:
  // rel_known() runs per (cause, effect) pair in the reasoner's hottest loop,
  // where a deque index (a division and two dependent loads) per device was
  // a fifth of its cost. Built by index_links() once the load is complete.
  // `jobs`: Topology::same_job_key(), the device's jobs (jobs_of()) as one
  // integer: its job, kNone for none (or a kind `same_job` does not relate),
  // kManyJobs for two or more. Each of the ~512 ranks of an incident checks
  // `same_job` against every cause in its window: reading both devices' host
  // records and job lists there was a third of the diagnosis's cache misses.
  static constexpr int32_t kManyJobs = Topology::kManyJobs;
  struct Links {
    DeviceKind kind = DeviceKind::host;
    int32_t host = kNone, parent = kNone, link = kNone, aux = kNone, job = kNone;
    int32_t jobs = kNone;
  };
  std::vector<Links> links;
  // Topology::assume_one_job(): no job declared, and the input's hosts taken
  // as one job (same_job holds between any two of their devices).
  bool one_job = false;
  std::string one_job_name;  // --job NAME: the one job's name ("" = unnamed)
  void index_links() {
    links.clear();
    links.reserve(devs.size());
    for (const Dev& d : devs) {
      Links l{d.kind, d.host, d.parent, d.link, d.aux, d.job, kNone};
      int32_t one;
      const std::vector<int32_t>* many;
      jobs_of(d, &one, &many);
      if (!same_job_kind(d.kind))
        l.jobs = kNone;
      else if (one_job)
        l.jobs = 0;  // assume_one_job(): every device is of the input's one job
      else if (one != kNone)
        l.jobs = one;
      else if (many && many->size() == 1)
        l.jobs = many->front();
      else if (many && many->size() > 1)
        l.jobs = kManyJobs;
      links.push_back(l);
    }
  }
  FlatIndex by_id;  // str_hash(id) -> dev
  std::vector<Host> hosts;
  std::unordered_map<std::string, int32_t> host_by_short;  // -2 = ambiguous
  // hosts[].bmc: the name (and its short name) or IP under which the host's
  // management controller logs (an SEL collected on a BMC or a management host)
  std::unordered_map<std::string, int32_t> host_by_bmc;  // -2 = ambiguous
  FlatIndex host_by_ip;                                  // ip_key -> host (first listed wins)
  FlatIndex by_host_bdf;                                 // (host << 32 | packed bdf) -> dev
  FlatIndex nic_by_ip;                                   // ip_key -> dev
  std::vector<Nic> nics;
  std::vector<Fabric> fabrics;
  std::unordered_map<std::string, int32_t> fabric_by_name;  // -> dev
  std::vector<Job> jobs;
  std::vector<Storage> storages;
  std::vector<int32_t> storage_devs;
  std::vector<std::vector<int32_t>> domains;   // nvl_domain -> hosts
  std::vector<std::vector<int32_t>> children;  // pcie port's aux -> devs directly below
  void add_child(int32_t port, int32_t child) {
    Dev& p = devs[size_t(port)];
    if (p.aux == kNone) {
      p.aux = int32_t(children.size());
      children.emplace_back();
    }
    children[size_t(p.aux)].push_back(child);
  }
  std::unordered_set<uint64_t> gpu_job;               // (gpu dev << 32 | job)
  std::unordered_set<uint64_t> host_job_unknown_gpu;  // job has a rank on host without a GPU
  std::vector<std::string> notes;

  static uint64_t pair_key(int32_t a, int32_t b) {
    return (uint64_t(uint32_t(a)) << 32) | uint32_t(b);
  }

  int32_t find(std::string_view id) const {
    return by_id.find(str_hash(id), [&](int32_t d) { return devs[size_t(d)].id == id; });
  }
  int32_t host_index(std::string_view name) const {
    int32_t d = find(name);
    return d != kNone && devs[size_t(d)].kind == DeviceKind::host ? devs[size_t(d)].host : kNone;
  }
  const std::string& host_name_of(const Dev& d) const {
    static const std::string kEmpty;
    return d.host == kNone ? kEmpty : hosts[size_t(d.host)].name;
  }
  DeviceInfo info(int32_t i) const {
    const Dev& d = devs[size_t(i)];
    return DeviceInfo{d.id, d.kind, host_name_of(d), d.bdf, false};
  }
  std::optional<DeviceInfo> opt_info(int32_t i) const {
    if (i == kNone) return std::nullopt;
    return info(i);
  }

  // Jobs a device belongs to (rank: its job; host-local: its host's jobs).
  template <class D>  // Dev or Links
  void jobs_of(const D& d, int32_t* one, const std::vector<int32_t>** many) const {
    *one = kNone;
    *many = nullptr;
    if (d.kind == DeviceKind::rank)
      *one = d.job;
    else if (d.kind == DeviceKind::job)
      *one = d.aux;
    else if (d.host != kNone)
      *many = &hosts[size_t(d.host)].jobs;
  }

  // The host's own ip or one of its NICs' ips.
  bool host_has_ip(int32_t h, std::string_view ip) const {
    if (hosts[size_t(h)].ip == ip) return true;
    for (int32_t n : hosts[size_t(h)].nics)
      if (nics[size_t(devs[size_t(n)].aux)].ip == ip) return true;
    return false;
  }

  bool below(int32_t a, int32_t b) const {
    // Walk up from a; the chain is acyclic (checked at load) and short.
    int32_t p = links[size_t(a)].parent;
    for (int depth = 0; p != kNone && depth < 64; ++depth) {
      if (p == b) return true;
      p = links[size_t(p)].parent;
    }
    return false;
  }
  bool same_nvl(const Links& a, const Links& b) const {
    if (a.host == kNone || b.host == kNone) return false;
    if (a.host == b.host) return true;
    int32_t da = hosts[size_t(a.host)].domain;
    return da != kNone && da == hosts[size_t(b.host)].domain;
  }
  bool mounts(int32_t host, int32_t storage_dev) const {
    const Host& h = hosts[size_t(host)];
    if (h.mounts_all) return true;
    return std::find(h.mounts.begin(), h.mounts.end(), storage_dev) != h.mounts.end();
  }
  bool in_job(int32_t ia, const Links& a, int32_t job) const {
    switch (a.kind) {
      case DeviceKind::rank:
        return a.job == job;
      case DeviceKind::host: {
        auto& js = hosts[size_t(a.host)].jobs;
        return std::find(js.begin(), js.end(), job) != js.end();
      }
      case DeviceKind::gpu:
        return gpu_job.count(pair_key(ia, job)) > 0 ||
               host_job_unknown_gpu.count(pair_key(a.host, job)) > 0;
      default:
        return false;
    }
  }

  // relation_allows() as one load: [relation][a's kind] -> a bit per b's kind.
  static constexpr auto kAllowedKinds = [] {
    std::array<std::array<uint16_t, kDeviceKinds.size()>, kRelations.size()> t{};
    for (const RelationInfo& r : kRelations)
      for (const DeviceKindInfo& a : kDeviceKinds)
        for (const DeviceKindInfo& b : kDeviceKinds)
          if (relation_allows(r.rel, a.kind, b.kind))
            t[size_t(r.rel)][size_t(a.kind)] |= uint16_t(1u << size_t(b.kind));
    return t;
  }();
  static_assert(kDeviceKinds.size() <= 16, "a uint16_t bit per kind");

  // Which kinds each relation relates is the model's table; what remains here
  // is whether these two devices are connected that way.
  bool rel_known(Relation rel, int32_t ia, int32_t ib) const {
    const Links& a = links[size_t(ia)];
    const Links& b = links[size_t(ib)];
    if (!((kAllowedKinds[size_t(rel)][size_t(a.kind)] >> size_t(b.kind)) & 1u)) return false;
    switch (rel) {
      case Relation::same:
        return ia == ib;
      case Relation::any:
        return true;
      case Relation::same_host:
        return a.host == b.host && a.host != kNone;
      case Relation::on:
        return a.host == b.host;
      case Relation::below:
        return below(ia, ib);
      case Relation::paired:
        return a.kind == DeviceKind::gpu ? a.link == ib : b.link == ia;
      case Relation::nvlink_peer:
        return ia != ib && same_nvl(a, b);
      case Relation::serves:
        return same_nvl(a, b);
      case Relation::attached:
        return a.link == ib;
      case Relation::uplink: {
        auto& ups = fabrics[size_t(a.aux)].uplinks;
        return std::find(ups.begin(), ups.end(), ib) != ups.end();
      }
      case Relation::runs_on:
        return b.kind == DeviceKind::gpu ? a.link == ib : a.host == b.host;
      case Relation::uses:
        return a.link != kNone && links[size_t(a.link)].link == ib;
      case Relation::in:
        return in_job(ia, a, b.aux);
      case Relation::same_job:
        return share_job(a, b);
      case Relation::mounts:
        return a.host != kNone && mounts(a.host, ib);
    }
    return false;
  }

  bool share_job(const Links& a, const Links& b) const {
    if (a.jobs == kNone || b.jobs == kNone) return false;
    if (a.jobs != kManyJobs && b.jobs != kManyJobs) return a.jobs == b.jobs;
    int32_t ja, jb;
    const std::vector<int32_t>*ma, *mb;
    jobs_of(a, &ja, &ma);
    jobs_of(b, &jb, &mb);
    auto has = [](int32_t one, const std::vector<int32_t>* many, int32_t j) {
      if (one != kNone) return one == j;
      return many && std::find(many->begin(), many->end(), j) != many->end();
    };
    if (ja != kNone) return has(jb, mb, ja);
    if (!ma) return false;
    for (int32_t j : *ma)
      if (has(jb, mb, j)) return true;
    return false;
  }

  // Relations where one side is not in the topology: placeholders and devices
  // of unknown hosts relate by host only (same_host, on between host-local
  // kinds, and a rank runs_on the host its id names).
  bool rel_structural(Relation rel, std::string_view a, std::string_view b) const {
    if (rel == Relation::any) return true;
    if (rel == Relation::same) return a == b;
    if (rel != Relation::same_host && rel != Relation::on && rel != Relation::runs_on &&
        !(rel == Relation::same_job && one_job))
      return false;
    ParsedId pa = parse_id(a), pb = parse_id(b);
    if (!pa.valid || !pb.valid) return false;
    if (rel == Relation::same_job) return same_job_kind(pa.kind) && same_job_kind(pb.kind);
    // A rank whose id names its host ("node-3/rank@9") runs on that host.
    if (rel == Relation::runs_on)
      return pa.kind == DeviceKind::rank && pb.kind == DeviceKind::host && !pa.host.empty() &&
             pa.host == pb.host;
    return relation_allows(rel, pa.kind, pb.kind) && host_local(pa.kind) && host_local(pb.kind) &&
           !pa.host.empty() && pa.host == pb.host;
  }

  // ---- related_devices helpers ----
  void push_if(std::vector<std::string>* out, int32_t x, DeviceKind kind) const {
    if (x != kNone && devs[size_t(x)].kind == kind) out->push_back(devs[size_t(x)].id);
  }
  void host_devices(int32_t h, DeviceKind kind, std::vector<int32_t>* out) const {
    const Host& H = hosts[size_t(h)];
    switch (kind) {
      case DeviceKind::host:
        out->push_back(H.dev);
        break;
      case DeviceKind::gpu:
        out->insert(out->end(), H.gpus.begin(), H.gpus.end());
        break;
      case DeviceKind::nic:
        out->insert(out->end(), H.nics.begin(), H.nics.end());
        break;
      case DeviceKind::pcie_port:
        out->insert(out->end(), H.pcie.begin(), H.pcie.end());
        break;
      case DeviceKind::nvswitch:
        out->insert(out->end(), H.nvsw.begin(), H.nvsw.end());
        break;
      case DeviceKind::rank:
        out->insert(out->end(), H.ranks.begin(), H.ranks.end());
        break;
      default:
        break;
    }
  }
  void nvl_hosts(int32_t h, std::vector<int32_t>* out) const {
    int32_t d = hosts[size_t(h)].domain;
    if (d == kNone)
      out->push_back(h);
    else
      out->insert(out->end(), domains[size_t(d)].begin(), domains[size_t(d)].end());
  }
  // `cap`: stop once `out` holds more than cap entries (the caller then knows
  // the set is large without enumerating a whole job); sets *capped.
  void job_devices(int32_t job, DeviceKind kind, std::vector<int32_t>* out,
                   size_t cap = static_cast<size_t>(-1), bool* capped = nullptr) const {
    const Job& J = jobs[size_t(job)];
    if (kind == DeviceKind::rank) {
      out->insert(out->end(), J.ranks.begin(), J.ranks.end());
      return;
    }
    if (kind == DeviceKind::job) {
      out->push_back(J.dev);
      return;
    }
    // Hosts of the job, in order of first rank.
    std::unordered_set<int32_t> seen;
    for (int32_t r : J.ranks) {
      int32_t h = devs[size_t(r)].host;
      if (!seen.insert(h).second) continue;
      host_devices(h, kind, out);
      if (out->size() > cap) {
        if (capped) *capped = true;
        return;
      }
    }
  }
};

// Ids of listed devices, built from the device-kind table's id prefixes
// (reflex/vocabulary.h): "<host>/gpu3", "<host>/pcie/<bdf>", "<host>/mlx5_0".
inline std::string local_id(std::string_view host, DeviceKind kind, std::string_view key) {
  std::string id(host);
  id += '/';
  id += kind_info(kind).id_prefix;
  id += key;
  return id;
}
// An NVSwitch as the topology file or a log line names it: "nvsw0" or "0".
inline std::string nvswitch_id(std::string_view host, std::string_view id) {
  const std::string_view pre = kind_info(DeviceKind::nvswitch).id_prefix;
  if (id.substr(0, pre.size()) == pre) id.remove_prefix(pre.size());
  return local_id(host, DeviceKind::nvswitch, id);
}
// "job/<job>/rank<N>".
inline std::string rank_id(std::string_view job, int rank) {
  std::string id = cluster_device_id(DeviceKind::job, job);
  id += '/';
  id += kind_info(DeviceKind::rank).id_prefix;
  id += std::to_string(rank);
  return id;
}
// A host name that would read as the first word of a cluster-level id
// ("fabric", "job", "storage").
inline bool reserved_host_name(std::string_view name) {
  for (const DeviceKindInfo& k : kDeviceKinds) {
    const std::string_view p = k.id_prefix;
    if (!k.host_local && !p.empty() && p.back() == '/' && name == p.substr(0, p.size() - 1))
      return true;
  }
  return false;
}

// A host's short name: before the first dot.
inline std::string short_name(std::string_view s) {
  size_t dot = s.find('.');
  return std::string(dot == std::string_view::npos ? s : s.substr(0, dot));
}

}  // namespace topo

struct Topology::Impl : topo::TopoData {
  static uint64_t next_uid() {
    static std::atomic<uint64_t> n{0};
    return ++n;
  }
  uint64_t uid = next_uid();
  // related_devices() for a device in the table (ib != kNone).
  void related_ids(Relation rel, int32_t ib, bool x_is_lhs, DeviceKind kind, size_t limit,
                   std::vector<int32_t>* out) const;

 private:
  // Candidates for x in `x REL b` (or `b REL x`), a superset of the answer;
  // related_ids() filters them through rel_known(). By family of relations.
  void placement_candidates(Relation rel, int32_t ib, bool x_is_lhs, DeviceKind kind,
                            std::vector<int32_t>* cand) const;
  void link_candidates(Relation rel, int32_t ib, bool x_is_lhs, DeviceKind kind,
                       std::vector<int32_t>* cand) const;
  void job_candidates(Relation rel, int32_t ib, bool x_is_lhs, DeviceKind kind, size_t cap,
                      std::vector<int32_t>* cand, bool* capped) const;
};

}  // namespace reflex
