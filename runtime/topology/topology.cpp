// Topology loader, resolver and relations (spec §1-2, docs/language.md §3).
//
// Everything is indexed at load time so that related() is a couple of hash
// lookups plus O(depth) pointer chasing: the engine calls it for every
// candidate cause/effect pair.
#include "reflex/topology.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "reflex/values.h"

namespace reflex {

std::string TopologyError::str() const {
  std::string s = file.empty() ? std::string("topology") : file;
  s += ": ";
  if (!json_path.empty()) {
    s += json_path;
    s += ": ";
  }
  s += message;
  return s;
}

namespace {

using json = nlohmann::json;

constexpr int32_t kNone = -1;

// Local copy of the kind names (same spelling as to_string(DeviceKind)); used to
// parse placeholder ids like "node-3/nic@mlx5_9".
std::optional<DeviceKind> kind_from_name(std::string_view s) {
  static constexpr std::pair<std::string_view, DeviceKind> kNames[] = {
      {"host", DeviceKind::host},       {"gpu", DeviceKind::gpu},
      {"nic", DeviceKind::nic},         {"pcie_port", DeviceKind::pcie_port},
      {"pcie", DeviceKind::pcie_port},  {"nvswitch", DeviceKind::nvswitch},
      {"nvsw", DeviceKind::nvswitch},   {"fabric_switch", DeviceKind::fabric_switch},
      {"job", DeviceKind::job},         {"rank", DeviceKind::rank},
      {"storage", DeviceKind::storage},
  };
  for (auto& [n, k] : kNames)
    if (n == s) return k;
  return std::nullopt;
}

bool host_local(DeviceKind k) {
  return k == DeviceKind::host || k == DeviceKind::gpu || k == DeviceKind::nic ||
         k == DeviceKind::pcie_port || k == DeviceKind::nvswitch;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// The structure of an id string, for ids that are not in the topology
// (placeholders, unknown hosts). Hosts never contain '/'.
struct ParsedId {
  bool valid = false;
  bool placeholder = false;  // "<host>/<kind>@<key>"
  DeviceKind kind = DeviceKind::host;
  std::string_view host;  // "" for cluster-level devices
  std::string_view key;   // placeholder key (bdf, name, number)
};

ParsedId parse_id(std::string_view id) {
  ParsedId p;
  if (id.empty()) return p;
  auto starts = [&](std::string_view pre) { return id.substr(0, pre.size()) == pre; };
  if (starts("fabric/")) {
    p.kind = DeviceKind::fabric_switch;
    p.valid = id.size() > 7;
    return p;
  }
  if (starts("storage/")) {
    p.kind = DeviceKind::storage;
    p.valid = id.size() > 8;
    return p;
  }
  if (starts("job/")) {
    std::string_view rest = id.substr(4);
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos) {
      p.kind = DeviceKind::job;
      p.valid = !rest.empty();
      return p;
    }
    std::string_view r = rest.substr(slash + 1);
    p.kind = DeviceKind::rank;
    if (r.substr(0, 5) == "rank@") {
      p.placeholder = true;
      p.key = r.substr(5);
      p.valid = !p.key.empty();
    } else {
      p.valid = r.substr(0, 4) == "rank" && all_digits(r.substr(4));
    }
    return p;
  }
  size_t slash = id.find('/');
  if (slash == std::string_view::npos) {
    p.kind = DeviceKind::host;
    p.host = id;
    p.valid = true;
    return p;
  }
  p.host = id.substr(0, slash);
  std::string_view rest = id.substr(slash + 1);
  if (p.host.empty() || rest.empty()) return p;
  size_t at = rest.find('@');
  size_t rslash = rest.find('/');
  if (at != std::string_view::npos && (rslash == std::string_view::npos || at < rslash)) {
    auto k = kind_from_name(rest.substr(0, at));
    if (!k) return p;
    p.kind = *k;
    p.placeholder = true;
    p.key = rest.substr(at + 1);
    p.valid = !p.key.empty();
    return p;
  }
  p.valid = true;
  if (rest.substr(0, 5) == "pcie/") {
    p.kind = DeviceKind::pcie_port;
    p.key = rest.substr(5);
    p.valid = !p.key.empty();
  } else if (rest.substr(0, 3) == "gpu" && all_digits(rest.substr(3))) {
    p.kind = DeviceKind::gpu;
  } else if (rest.substr(0, 4) == "nvsw") {
    p.kind = DeviceKind::nvswitch;
  } else {
    p.kind = DeviceKind::nic;
  }
  return p;
}

// A BDF packed into 32 bits (domain 16, bus 8, device 5, function 3) for the
// per-host BDF index. nullopt when the normalised text does not fit.
std::optional<uint32_t> pack_bdf(std::string_view n) {
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

uint64_t str_hash(std::string_view s) {
  return std::hash<std::string_view>{}(s);
}

// IPv4 dotted quads pack into 32 bits; anything else (IPv6) is hashed.
uint64_t ip_key(std::string_view ip) {
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

}  // namespace

namespace {

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
  FlatIndex by_id;       // str_hash(id) -> dev
  std::vector<Host> hosts;
  std::unordered_map<std::string, int32_t> host_by_short;  // -2 = ambiguous
  FlatIndex host_by_ip;                                    // ip_key -> host (first listed wins)
  FlatIndex by_host_bdf;                                   // (host << 32 | packed bdf) -> dev
  FlatIndex nic_by_ip;                                     // ip_key -> dev
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
  void jobs_of(const Dev& d, int32_t* one, const std::vector<int32_t>** many) const {
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
    int32_t p = devs[size_t(a)].parent;
    for (int depth = 0; p != kNone && depth < 64; ++depth) {
      if (p == b) return true;
      p = devs[size_t(p)].parent;
    }
    return false;
  }
  bool same_nvl(const Dev& a, const Dev& b) const {
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
  bool in_job(int32_t ia, const Dev& a, int32_t job) const {
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

  bool rel_known(Relation rel, int32_t ia, int32_t ib) const {
    const Dev& a = devs[size_t(ia)];
    const Dev& b = devs[size_t(ib)];
    switch (rel) {
      case Relation::same:
        return ia == ib;
      case Relation::any:
        return true;
      case Relation::same_host:
        return host_local(a.kind) && host_local(b.kind) && a.host == b.host && a.host != kNone;
      case Relation::on:
        return b.kind == DeviceKind::host && a.kind != DeviceKind::host && a.host == b.host &&
               (host_local(a.kind) || a.kind == DeviceKind::rank);
      case Relation::below:
        return b.kind == DeviceKind::pcie_port &&
               (a.kind == DeviceKind::gpu || a.kind == DeviceKind::nic ||
                a.kind == DeviceKind::pcie_port) &&
               below(ia, ib);
      case Relation::paired:
        if (a.kind == DeviceKind::gpu && b.kind == DeviceKind::nic) return a.link == ib;
        if (a.kind == DeviceKind::nic && b.kind == DeviceKind::gpu) return b.link == ia;
        return false;
      case Relation::nvlink_peer:
        return a.kind == DeviceKind::gpu && b.kind == DeviceKind::gpu && ia != ib && same_nvl(a, b);
      case Relation::serves:
        return a.kind == DeviceKind::nvswitch && b.kind == DeviceKind::gpu && same_nvl(a, b);
      case Relation::attached:
        return a.kind == DeviceKind::nic && b.kind == DeviceKind::fabric_switch && a.link == ib;
      case Relation::uplink: {
        if (a.kind != DeviceKind::fabric_switch || b.kind != DeviceKind::fabric_switch)
          return false;
        auto& ups = fabrics[size_t(a.aux)].uplinks;
        return std::find(ups.begin(), ups.end(), ib) != ups.end();
      }
      case Relation::runs_on:
        if (a.kind != DeviceKind::rank) return false;
        if (b.kind == DeviceKind::gpu) return a.link == ib;
        if (b.kind == DeviceKind::host) return a.host == b.host;
        return false;
      case Relation::uses:
        return a.kind == DeviceKind::rank && b.kind == DeviceKind::nic && a.link != kNone &&
               devs[size_t(a.link)].link == ib;
      case Relation::in:
        return b.kind == DeviceKind::job && in_job(ia, a, b.aux);
      case Relation::same_job: {
        if (a.kind == DeviceKind::job || b.kind == DeviceKind::job ||
            a.kind == DeviceKind::fabric_switch || b.kind == DeviceKind::fabric_switch ||
            a.kind == DeviceKind::storage || b.kind == DeviceKind::storage)
          return false;
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
      case Relation::mounts:
        if (b.kind != DeviceKind::storage) return false;
        if (a.kind != DeviceKind::host && a.kind != DeviceKind::rank) return false;
        return a.host != kNone && mounts(a.host, ib);
    }
    return false;
  }

  // Relations where one side is not in the topology: placeholders and devices
  // of unknown hosts relate by host only.
  bool rel_structural(Relation rel, std::string_view a, std::string_view b) const {
    if (rel == Relation::any) return true;
    if (rel == Relation::same) return a == b;
    ParsedId pa = parse_id(a), pb = parse_id(b);
    if (!pa.valid || !pb.valid) return false;
    std::string_view ha = pa.host, hb = pb.host;
    if (rel == Relation::same_host)
      return host_local(pa.kind) && host_local(pb.kind) && !ha.empty() && ha == hb;
    if (rel == Relation::on)
      return pb.kind == DeviceKind::host && pa.kind != DeviceKind::host && host_local(pa.kind) &&
             !ha.empty() && ha == hb;
    return false;
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

// Builds the indexes from JSON; the first error aborts the whole load.
class Loader {
 public:
  explicit Loader(TopoData* out, const std::string& origin, TopologyError* err)
      : origin_(origin), err_(err), im_(out) {}

  // Called by the streaming parser for each element of $.hosts as soon as it
  // is complete, so that only one host's DOM is alive at a time.
  bool host_element(const json& h) {
    size_t i = hosts_seen_++;
    streamed_hosts_ = true;
    return load_host(h, i);
  }

  // Everything else, once the document is parsed ($.hosts is then empty).
  bool finish(const json& root) {
    if (!root.is_object()) return bad("$", "the topology must be a JSON object");
    if (auto it = root.find("cluster"); it != root.end()) {
      if (!it->is_string()) return bad("$.cluster", "must be a string");
      im_->cluster = it->get<std::string>();
    }
    if (auto it = root.find("hosts"); it != root.end()) {
      if (!it->is_array()) return bad("$.hosts", "must be an array");
      for (size_t i = 0; i < it->size(); ++i)  // not streamed (e.g. load from a DOM)
        if (!host_element((*it)[i])) return false;
    } else if (!streamed_hosts_) {
      note("no-hosts", "", "the topology lists no hosts: every device will be a placeholder");
    }
    if (!load_fabric(root)) return false;
    if (!load_storage(root)) return false;
    if (!resolve_pending()) return false;
    if (!finish_fabric()) return false;
    if (!load_jobs(root)) return false;
    finish_notes();
    return true;
  }

 private:
  using Impl = TopoData;
  using Dev = Impl::Dev;

  bool bad(std::string path, std::string msg) {
    if (err_) *err_ = TopologyError{origin_, std::move(path), std::move(msg)};
    return false;
  }

  static std::string idx(std::string_view base, size_t i) {
    std::string s(base);
    s += '[';
    s += std::to_string(i);
    s += ']';
    return s;
  }
  static std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

  // Degradations are summarised: one note per kind, with the first example and a count.
  void note(const std::string& kind, std::string example, std::string consequence) {
    auto [it, fresh] = notes_.try_emplace(kind);
    if (fresh) {
      it->second.example = std::move(example);
      it->second.consequence = std::move(consequence);
      order_.push_back(kind);
    }
    ++it->second.count;
  }
  void finish_notes() {
    for (auto& k : order_) {
      auto& n = notes_[k];
      std::string s = n.example;
      if (n.count > 1) s += " (and " + std::to_string(n.count - 1) + " more like it)";
      if (!s.empty()) s += ": ";
      s += n.consequence;
      im_->notes.push_back(std::move(s));
    }
  }

  // Optional typed members. Return false (error set) when present with the wrong type.
  bool opt_string(const json& o, const char* key, const std::string& path, std::string* out,
                  bool* present = nullptr) {
    if (present) *present = false;
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return true;
    if (!it->is_string()) return bad(path + "." + key, "must be a string");
    *out = it->get<std::string>();
    if (present) *present = true;
    return true;
  }
  bool req_string(const json& o, const char* key, const std::string& path, std::string* out) {
    auto it = o.find(key);
    if (it == o.end() || it->is_null())
      return bad(path, std::string("missing required '") + key + "'");
    if (!it->is_string()) return bad(path + "." + key, "must be a string");
    *out = it->get<std::string>();
    if (out->empty()) return bad(path + "." + key, "must not be empty");
    return true;
  }
  // Paths are passed as base + suffix and joined only on error: loading 100k
  // GPUs must not build a path string per field.
  bool name_ok(const std::string& s, const std::string& base, const char* suffix,
               bool allow_slash = false) {
    if (!allow_slash && s.find('/') != std::string::npos)
      return bad(base + suffix, quoted(s) + " must not contain '/' (it is part of device ids)");
    if (s.find('@') != std::string::npos)
      return bad(base + suffix, quoted(s) + " must not contain '@' (it marks placeholder ids)");
    return true;
  }
  bool opt_int(const json& o, const char* key, const std::string& path, int64_t* out,
               bool* present) {
    *present = false;
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return true;
    if (!it->is_number_integer()) return bad(path + "." + key, "must be an integer");
    *out = it->get<int64_t>();
    *present = true;
    return true;
  }
  bool opt_bdf(const json& o, const std::string& path, std::string* out) {
    std::string raw;
    if (!opt_string(o, "bdf", path, &raw)) return false;
    if (raw.empty()) return true;
    auto n = normalize_bdf(raw);
    if (!n) return bad(path + ".bdf", quoted(raw) + " is not a PCI address");
    *out = *n;
    return true;
  }
  bool opt_ip(const json& o, const std::string& path, std::string* out) {
    std::string raw;
    if (!opt_string(o, "ip", path, &raw)) return false;
    if (raw.empty()) return true;
    auto n = normalize_ip(raw);
    if (!n) return bad(path + ".ip", quoted(raw) + " is not an IP address");
    *out = *n;
    return true;
  }
  bool string_list(const json& o, const char* key, const std::string& path,
                   std::vector<std::string>* out, bool* present) {
    *present = false;
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return true;
    if (!it->is_array()) return bad(path + "." + key, "must be an array of strings");
    for (size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string()) return bad(idx(path + "." + key, i), "must be a string");
      out->push_back((*it)[i].get<std::string>());
    }
    *present = true;
    return true;
  }

  int32_t add_dev(Dev d, const std::string& base, const char* suffix = "") {
    int32_t i = int32_t(im_->devs.size());
    im_->devs.push_back(std::move(d));
    if (im_->find(im_->devs.back().id) != kNone) {
      bad(base + suffix,
          "device id " + quoted(im_->devs.back().id) + " is already used by another device");
      im_->devs.pop_back();
      return kNone;
    }
    im_->by_id.insert(str_hash(im_->devs.back().id), i);
    return i;
  }

  bool index_bdf(int32_t host, const std::string& bdf, int32_t dev, const std::string& path,
                 bool allow_pcie_alias = false) {
    auto packed = pack_bdf(bdf);
    if (!packed) return true;  // exotic domain: only reachable by id
    uint64_t key = (uint64_t(uint32_t(host)) << 32) | *packed;
    int32_t existing = im_->by_host_bdf.find(key);
    if (existing == kNone) im_->by_host_bdf.insert(key, dev);
    if (existing != kNone && !(allow_pcie_alias && existing == dev)) {
      const Dev& other = im_->devs[size_t(existing)];
      return bad(path + ".bdf", "BDF " + bdf + " is already used on host " +
                                    quoted(im_->hosts[size_t(host)].name) + " by " + other.id);
    }
    return true;
  }

  bool load_fabric(const json& root) {
    auto it = root.find("fabric");
    if (it == root.end() || it->is_null()) return true;
    if (!it->is_array()) return bad("$.fabric", "must be an array");
    have_fabric_list_ = true;
    for (size_t i = 0; i < it->size(); ++i) {
      const json& f = (*it)[i];
      std::string path = idx("$.fabric", i);
      if (!f.is_object()) return bad(path, "must be an object");
      std::string name, tier;
      if (!req_string(f, "name", path, &name) || !name_ok(name, path, ".name")) return false;
      if (!opt_string(f, "tier", path, &tier)) return false;
      std::vector<std::string> ups;
      bool has_ups;
      if (!string_list(f, "uplinks", path, &ups, &has_ups)) return false;
      if (im_->fabric_by_name.count(name))
        return bad(path + ".name", "duplicate fabric switch " + quoted(name));
      int32_t d = new_fabric(name, tier, path + ".name");
      if (d == kNone) return false;
      pending_uplinks_.push_back({d, path, std::move(ups)});
    }
    return true;
  }
  int32_t new_fabric(const std::string& name, const std::string& tier, const std::string& path) {
    Dev d;
    d.id = "fabric/" + name;
    d.kind = DeviceKind::fabric_switch;
    d.aux = int32_t(im_->fabrics.size());
    im_->fabrics.push_back(Impl::Fabric{tier, {}, {}, {}});
    int32_t dev = add_dev(std::move(d), path);
    if (dev != kNone) im_->fabric_by_name.emplace(name, dev);
    return dev;
  }
  // NICs' fabric switches and hosts' mounts name things that may come later in the file.
  bool resolve_pending() {
    for (auto& p : pending_fabric_) {
      auto it = im_->fabric_by_name.find(p.name);
      if (it == im_->fabric_by_name.end()) {
        if (have_fabric_list_)
          return bad(p.path,
                     "NIC names fabric switch " + quoted(p.name) + " that is not in $.fabric");
        if (new_fabric(p.name, "", p.path) == kNone) return false;
        it = im_->fabric_by_name.find(p.name);
        note("fabric-implicit",
             "fabric switch " + p.name + " (named by " + im_->devs[size_t(p.nic)].id + ")",
             "the topology has no $.fabric list; switches named by NICs were created without "
             "uplinks");
      }
      im_->devs[size_t(p.nic)].link = it->second;
      im_->fabrics[size_t(im_->devs[size_t(it->second)].aux)].nics.push_back(p.nic);
    }
    for (auto& p : pending_mounts_) {
      for (size_t m = 0; m < p.names.size(); ++m) {
        int32_t sd = im_->find("storage/" + p.names[m]);
        if (sd == kNone)
          return bad(idx(p.path, m),
                     "names storage " + quoted(p.names[m]) + " that does not exist");
        im_->hosts[size_t(p.host)].mounts.push_back(sd);
      }
    }
    return true;
  }

  bool finish_fabric() {
    for (auto& p : pending_uplinks_) {
      auto& fab = im_->fabrics[size_t(im_->devs[size_t(p.dev)].aux)];
      for (size_t u = 0; u < p.ups.size(); ++u) {
        auto it = im_->fabric_by_name.find(p.ups[u]);
        if (it == im_->fabric_by_name.end())
          return bad(idx(p.path + ".uplinks", u),
                     "uplink names fabric switch " + quoted(p.ups[u]) + " that does not exist");
        if (it->second == p.dev)
          return bad(idx(p.path + ".uplinks", u), "a switch cannot be its own uplink");
        if (std::find(fab.uplinks.begin(), fab.uplinks.end(), it->second) != fab.uplinks.end())
          continue;
        fab.uplinks.push_back(it->second);
        im_->fabrics[size_t(im_->devs[size_t(it->second)].aux)].downlinks.push_back(p.dev);
      }
    }
    return true;
  }

  bool load_storage(const json& root) {
    auto it = root.find("storage");
    if (it == root.end() || it->is_null()) return true;
    if (!it->is_array()) return bad("$.storage", "must be an array");
    std::unordered_set<std::string> seen;
    for (size_t i = 0; i < it->size(); ++i) {
      const json& s = (*it)[i];
      std::string path = idx("$.storage", i);
      if (!s.is_object()) return bad(path, "must be an object");
      Impl::Storage st;
      std::string kind, exp;
      if (!req_string(s, "name", path, &st.name) || !name_ok(st.name, path, ".name")) return false;
      if (!opt_ip(s, path, &st.ip) || !opt_string(s, "kind", path, &kind) ||
          !opt_string(s, "export", path, &exp))
        return false;
      if (!seen.insert(st.name).second)
        return bad(path + ".name", "duplicate storage " + quoted(st.name));
      Dev d;
      d.id = "storage/" + st.name;
      d.kind = DeviceKind::storage;
      d.aux = int32_t(im_->storages.size());
      im_->storages.push_back(std::move(st));
      int32_t dev = add_dev(std::move(d), path, ".name");
      if (dev == kNone) return false;
      im_->storage_devs.push_back(dev);
    }
    return true;
  }

  bool load_host(const json& h, size_t hi) {
    std::string path = idx("$.hosts", hi);
    if (!h.is_object()) return bad(path, "must be an object");
    Impl::Host host;
    if (!req_string(h, "name", path, &host.name) || !name_ok(host.name, path, ".name"))
      return false;
    if (host.name == "fabric" || host.name == "job" || host.name == "storage")
      return bad(path + ".name",
                 quoted(host.name) + " is reserved (it starts cluster-level device ids)");
    if (im_->host_index(host.name) != kNone)
      return bad(path + ".name", "duplicate host name " + quoted(host.name));
    std::string rack, domain;
    if (!opt_ip(h, path, &host.ip) || !opt_string(h, "rack", path, &rack)) return false;
    if (auto it = h.find("nvl_domain"); it != h.end() && !it->is_null()) {
      if (it->is_string())
        domain = it->get<std::string>();
      else if (it->is_number_integer())
        domain = std::to_string(it->get<int64_t>());
      else
        return bad(path + ".nvl_domain", "must be a string or an integer");
    }
    std::vector<std::string> mounts;
    bool has_mounts;
    if (!string_list(h, "mounts", path, &mounts, &has_mounts)) return false;

    const int32_t hidx = int32_t(im_->hosts.size());
    Dev hd;
    hd.id = host.name;
    hd.kind = DeviceKind::host;
    hd.host = hidx;
    hd.aux = hidx;
    host.dev = add_dev(std::move(hd), path, ".name");
    if (host.dev == kNone) return false;
    if (!domain.empty()) {
      auto [it, fresh] = domain_ids_.try_emplace(domain, int32_t(im_->domains.size()));
      if (fresh) im_->domains.emplace_back();
      host.domain = it->second;
      im_->domains[size_t(host.domain)].push_back(hidx);
    }
    if (has_mounts) {
      host.mounts_all = false;
      pending_mounts_.push_back({hidx, path + ".mounts", std::move(mounts)});
    }
    im_->hosts.push_back(std::move(host));
    Impl::Host& H = im_->hosts.back();
    if (!H.ip.empty()) add_host_ip(H.ip, hidx);

    // PCIe switches first: GPUs and NICs name them.
    // Per-host lookups are tiny: linear scans over (name, dev) pairs.
    SmallMap sw_by_id;
    struct RootPort {
      int32_t sw;
      std::string bdf, path;
    };
    std::vector<RootPort> root_ports;
    if (!each(h, "pcie_switches", path, [&](const json& s, const std::string& sp) {
          std::string id, bdf, rp;
          if (!req_string(s, "id", sp, &id) || !name_ok(id, sp, ".id", true) ||
              !opt_bdf(s, sp, &bdf))
            return false;
          if (!opt_string(s, "root_port", sp, &rp)) return false;
          if (sw_by_id.count(id)) return bad(sp + ".id", "duplicate PCIe switch id " + quoted(id));
          std::string rpn;
          if (!rp.empty()) {
            auto n = normalize_bdf(rp);
            if (!n) return bad(sp + ".root_port", quoted(rp) + " is not a PCI address");
            rpn = *n;
          }
          Dev d;
          d.kind = DeviceKind::pcie_port;
          d.host = hidx;
          d.bdf = bdf;
          if (bdf.empty()) {
            d.id = H.name + "/pcie/" + id;
            note("pcie-no-bdf", "host " + H.name + ": PCIe switch " + id + " has no bdf",
                 "it is named " + H.name + "/pcie/" + id +
                     " and AER lines naming its BDF cannot reach it");
          } else {
            d.id = H.name + "/pcie/" + bdf;
          }
          int32_t dev = add_dev(std::move(d), sp, ".id");
          if (dev == kNone) return false;
          if (!bdf.empty() && !index_bdf(hidx, bdf, dev, sp)) return false;
          sw_by_id.emplace(id, dev);
          H.pcie.push_back(dev);
          if (!rpn.empty())
            root_ports.push_back({dev, rpn, sp + ".root_port"});
          else
            note("pcie-no-root", "host " + H.name + ": PCIe switch " + id + " has no root_port",
                 "errors on its root port cannot be tied to the devices below it");
          return true;
        }))
      return false;
    // Root ports: a port BDF that is another switch's BDF chains the switches
    // (cascaded switches); otherwise the root port is a pcie_port of its own.
    for (auto& rp : root_ports) {
      const int32_t sw = rp.sw;
      const std::string& rpbdf = rp.bdf;
      auto packed = pack_bdf(rpbdf);
      int32_t port = kNone;
      if (packed) {
        port = im_->by_host_bdf.find((uint64_t(uint32_t(hidx)) << 32) | *packed);
      }
      if (port == kNone) {
        Dev d;
        d.kind = DeviceKind::pcie_port;
        d.host = hidx;
        d.bdf = rpbdf;
        d.id = H.name + "/pcie/" + rpbdf;
        port = im_->find(d.id);
        if (port == kNone) {
          port = add_dev(std::move(d), rp.path);
          if (port == kNone) return false;
          if (!index_bdf(hidx, rpbdf, port, rp.path)) return false;
          H.pcie.push_back(port);
        }
      }
      if (im_->devs[size_t(port)].kind != DeviceKind::pcie_port)
        return bad(rp.path, "root_port " + rpbdf + " is the BDF of " + im_->devs[size_t(port)].id);
      if (port == sw) return bad(rp.path, "a PCIe switch cannot be its own root_port");
      im_->devs[size_t(sw)].parent = port;
      im_->add_child(port, sw);
    }
    // Cycles in cascaded switches would make below() loop; refuse them.
    for (int32_t sw : H.pcie) {
      int32_t p = im_->devs[size_t(sw)].parent;
      for (int depth = 0; p != kNone; ++depth) {
        if (p == sw || depth > 32)
          return bad(path + ".pcie_switches",
                     "the root_port chain of " + im_->devs[size_t(sw)].id + " forms a cycle");
        p = im_->devs[size_t(p)].parent;
      }
    }

    SmallMap nic_by_name;
    if (!each(h, "nics", path, [&](const json& n, const std::string& np) {
          Impl::Nic nic;
          std::string bdf, sw, fab;
          int64_t port = 0;
          bool has_port;
          if (!req_string(n, "name", np, &nic.name) || !name_ok(nic.name, np, ".name") ||
              !opt_bdf(n, np, &bdf) || !opt_string(n, "netdev", np, &nic.netdev) ||
              !opt_ip(n, np, &nic.ip) || !opt_string(n, "pcie_switch", np, &sw) ||
              !opt_int(n, "port", np, &port, &has_port) ||
              !opt_string(n, "fabric_switch", np, &fab))
            return false;
          if (nic_by_name.count(nic.name))
            return bad(np + ".name", "duplicate NIC name " + quoted(nic.name));
          if (nic.name.find('@') != std::string::npos)
            return bad(np + ".name", "must not contain '@'");
          Dev d;
          d.id = H.name + "/" + nic.name;
          d.kind = DeviceKind::nic;
          d.host = hidx;
          d.bdf = bdf;
          d.aux = int32_t(im_->nics.size());
          if (!sw.empty()) {
            auto it = sw_by_id.find(sw);
            if (it == sw_by_id.end())
              return bad(np + ".pcie_switch", "NIC names PCIe switch " + quoted(sw) +
                                                  " that does not exist on host " + quoted(H.name));
            d.parent = it->second;
          } else {
            note("nic-no-switch", "host " + H.name + ": NIC " + nic.name + " has no pcie_switch",
                 "PCIe errors cannot be tied to it by 'below'");
          }
          if (fab.empty())
            note("nic-no-fabric", "host " + H.name + ": NIC " + nic.name + " has no fabric_switch",
                 "fabric (leaf) faults cannot be tied to it");
          if (bdf.empty())
            note("nic-no-bdf", "host " + H.name + ": NIC " + nic.name + " has no bdf",
                 "mlx5 lines naming its PCI address will place it as " + H.name + "/nic@<bdf>");
          int32_t parent = d.parent;
          im_->nics.push_back(std::move(nic));
          int32_t dev = add_dev(std::move(d), np, ".name");
          if (dev == kNone) return false;
          if (!bdf.empty() && !index_bdf(hidx, bdf, dev, np)) return false;
          if (parent != kNone) im_->add_child(parent, dev);
          if (!fab.empty()) pending_fabric_.push_back({dev, np + ".fabric_switch", std::move(fab)});
          const auto& rec = im_->nics.back();
          if (!rec.ip.empty()) {
            uint64_t ipk = ip_key(rec.ip);
            auto same_ip = [&](int32_t x) {
              return im_->nics[size_t(im_->devs[size_t(x)].aux)].ip == rec.ip;
            };
            if (im_->nic_by_ip.find(ipk, same_ip) == kNone)
              im_->nic_by_ip.insert(ipk, dev);
            else
              note("nic-dup-ip", "NIC IP " + rec.ip + " (" + im_->devs[size_t(dev)].id + ")",
                   "is listed more than once; the first NIC listed wins");
            add_host_ip(rec.ip, hidx);
          }
          nic_by_name.emplace(rec.name, dev);
          H.nics.push_back(dev);
          return true;
        }))
      return false;

    std::vector<int64_t> gpu_indexes;
    if (!each(h, "gpus", path, [&](const json& g, const std::string& gp) {
          auto it = g.find("index");
          if (it == g.end() || it->is_null()) return bad(gp, "missing required 'index'");
          if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > 1000000)
            return bad(gp + ".index", "must be a non-negative integer");
          int64_t index = it->get<int64_t>();
          if (std::find(gpu_indexes.begin(), gpu_indexes.end(), index) != gpu_indexes.end())
            return bad(gp + ".index", "duplicate GPU index " + std::to_string(index) + " on host " +
                                          quoted(H.name));
          gpu_indexes.push_back(index);
          std::string bdf, sw, serial, uuid;
          if (!opt_bdf(g, gp, &bdf) || !opt_string(g, "pcie_switch", gp, &sw) ||
              !opt_string(g, "serial", gp, &serial) || !opt_string(g, "uuid", gp, &uuid))
            return false;
          std::vector<std::string> nics;
          bool has_nics;
          if (!string_list(g, "nics", gp, &nics, &has_nics)) return false;
          Dev d;
          d.id = H.name + "/gpu" + std::to_string(index);
          d.kind = DeviceKind::gpu;
          d.host = hidx;
          d.bdf = bdf;
          d.aux = int32_t(index);
          if (!sw.empty()) {
            auto s = sw_by_id.find(sw);
            if (s == sw_by_id.end())
              return bad(gp + ".pcie_switch", "GPU names PCIe switch " + quoted(sw) +
                                                  " that does not exist on host " + quoted(H.name));
            d.parent = s->second;
          } else {
            note("gpu-no-switch",
                 "host " + H.name + ": GPU " + std::to_string(index) + " has no pcie_switch",
                 "PCIe switch/root-port errors cannot be tied to it by 'below'");
          }
          for (size_t k = 0; k < nics.size(); ++k) {
            auto n = nic_by_name.find(nics[k]);
            if (n == nic_by_name.end())
              return bad(idx(gp + ".nics", k), "GPU names NIC " + quoted(nics[k]) +
                                                   " that does not exist on host " +
                                                   quoted(H.name));
            if (k == 0) d.link = n->second;
          }
          if (nics.empty())
            note("gpu-no-nic", "host " + H.name + ": GPU " + std::to_string(index) + " has no nics",
                 "its rank's NIC is unknown ('paired'/'uses' do not hold; pairing is never "
                 "guessed)");
          if (bdf.empty())
            note("gpu-no-bdf", "host " + H.name + ": GPU " + std::to_string(index) + " has no bdf",
                 "Xid lines will place it as " + H.name + "/gpu@<bdf>");
          int32_t parent = d.parent, nic = d.link;
          int32_t dev = add_dev(std::move(d), gp, ".index");
          if (dev == kNone) return false;
          if (!bdf.empty() && !index_bdf(hidx, bdf, dev, gp)) return false;
          if (parent != kNone) im_->add_child(parent, dev);
          if (nic != kNone)
            im_->nics[size_t(im_->devs[size_t(nic)].aux)].paired_gpus.push_back(dev);
          H.gpus.push_back(dev);
          return true;
        }))
      return false;
    if (H.gpus.empty())
      note("host-no-gpus", "host " + H.name + " lists no GPUs",
           "its GPUs are known only by the BDF in log lines (placeholders)");

    if (!each(h, "nvswitches", path, [&](const json& s, const std::string& sp) {
          std::string id, bdf;
          if (!req_string(s, "id", sp, &id) || !name_ok(id, sp, ".id") || !opt_bdf(s, sp, &bdf))
            return false;
          Dev d;
          d.id = H.name + "/" + (id.rfind("nvsw", 0) == 0 ? id : "nvsw" + id);
          d.kind = DeviceKind::nvswitch;
          d.host = hidx;
          d.bdf = bdf;
          int32_t dev = add_dev(std::move(d), sp, ".id");
          if (dev == kNone) return false;
          if (!bdf.empty() && !index_bdf(hidx, bdf, dev, sp)) return false;
          H.nvsw.push_back(dev);
          return true;
        }))
      return false;
    return true;
  }

  void add_host_ip(const std::string& ip, int32_t hidx) {
    uint64_t k = ip_key(ip);
    int32_t existing = im_->host_by_ip.find(k, [&](int32_t h) { return im_->host_has_ip(h, ip); });
    if (existing == kNone) {
      im_->host_by_ip.insert(k, hidx);
      return;
    }
    if (existing != hidx)
      note("host-dup-ip",
           "IP " + ip + " (hosts " + im_->hosts[size_t(existing)].name + " and " +
               im_->hosts[size_t(hidx)].name + ")",
           "is listed on more than one host; the first host listed wins");
  }

  template <typename F>
  bool each(const json& o, const char* key, const std::string& path, F&& fn) {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return true;
    std::string p = path + "." + key;
    if (!it->is_array()) return bad(p, "must be an array");
    for (size_t i = 0; i < it->size(); ++i) {
      std::string ep = idx(p, i);
      if (!(*it)[i].is_object()) return bad(ep, "must be an object");
      if (!fn((*it)[i], ep)) return false;
    }
    return true;
  }

  bool load_jobs(const json& root) {
    auto it = root.find("jobs");
    if (it == root.end() || it->is_null()) return true;
    if (!it->is_array()) return bad("$.jobs", "must be an array");
    for (size_t ji = 0; ji < it->size(); ++ji) {
      const json& j = (*it)[ji];
      std::string path = idx("$.jobs", ji);
      if (!j.is_object()) return bad(path, "must be an object");
      Impl::Job job;
      if (!req_string(j, "id", path, &job.id) || !name_ok(job.id, path, ".id")) return false;
      Dev d;
      d.id = "job/" + job.id;
      d.kind = DeviceKind::job;
      d.aux = int32_t(im_->jobs.size());
      const int32_t jidx = d.aux;
      if (im_->find(d.id) != kNone) return bad(path + ".id", "duplicate job id " + quoted(job.id));
      job.dev = add_dev(std::move(d), path, ".id");
      if (job.dev == kNone) return false;
      im_->jobs.push_back(std::move(job));
      auto rit = j.find("ranks");
      if (rit == j.end() || rit->is_null()) {
        note("job-no-ranks", "job " + im_->jobs.back().id + " lists no ranks",
             "rank-level lines of this job cannot be placed");
        continue;
      }
      std::string rpath = path + ".ranks";
      if (rit->is_array()) {
        for (size_t ri = 0; ri < rit->size(); ++ri) {
          const json& r = (*rit)[ri];
          std::string p = idx(rpath, ri);
          if (!r.is_object()) return bad(p, "must be an object");
          auto rn = r.find("rank");
          if (rn == r.end() || rn->is_null()) return bad(p, "missing required 'rank'");
          if (!rn->is_number_integer() || rn->get<int64_t>() < 0 || rn->get<int64_t>() > 100000000)
            return bad(p + ".rank", "must be a non-negative integer");
          std::string host;
          if (!req_string(r, "host", p, &host)) return false;
          int64_t gpu = -1;
          bool has_gpu;
          if (!opt_int(r, "gpu", p, &gpu, &has_gpu)) return false;
          if (!add_rank(jidx, int(rn->get<int64_t>()), host, has_gpu ? gpu : -1, p, p + ".host",
                        p + ".gpu", true))
            return false;
        }
      } else if (rit->is_object()) {
        auto hs = rit->find("hosts");
        if (hs == rit->end() || !hs->is_array())
          return bad(rpath,
                     "the compact form needs 'hosts' (an array of host names) and 'gpus_per_host'");
        auto gph_it = rit->find("gpus_per_host");
        if (gph_it == rit->end() || !gph_it->is_number_integer() || gph_it->get<int64_t>() <= 0 ||
            gph_it->get<int64_t>() > 4096)
          return bad(rpath + ".gpus_per_host", "must be a positive integer");
        int gph = int(gph_it->get<int64_t>());
        for (size_t k = 0; k < hs->size(); ++k) {
          std::string hp = idx(rpath + ".hosts", k);
          if (!(*hs)[k].is_string()) return bad(hp, "must be a string");
          std::string host = (*hs)[k].get<std::string>();
          for (int g = 0; g < gph; ++g)
            if (!add_rank(jidx, int(k) * gph + g, host, g, hp, hp, hp, false)) return false;
        }
      } else {
        return bad(rpath, "must be an array of ranks or {\"hosts\": [...], \"gpus_per_host\": N}");
      }
    }
    return true;
  }

  bool add_rank(int32_t jidx, int rank, const std::string& host, int64_t gpu,
                const std::string& path, const std::string& host_path, const std::string& gpu_path,
                bool explicit_gpu) {
    Impl::Job& job = im_->jobs[size_t(jidx)];
    int32_t h = im_->host_index(host);
    if (h == kNone)
      return bad(host_path, "rank names host " + quoted(host) + " that is not in $.hosts");
    Impl::Host& H = im_->hosts[size_t(h)];
    int32_t gdev = kNone;
    if (gpu >= 0) {
      for (int32_t g : H.gpus)
        if (im_->devs[size_t(g)].aux == gpu) gdev = g;
      if (gdev == kNone && (explicit_gpu || !H.gpus.empty()))
        return bad(gpu_path, "rank names GPU " + std::to_string(gpu) + " that host " +
                                 quoted(host) + " does not have");
    }
    if (job.by_rank.count(rank))
      return bad(path, "duplicate rank " + std::to_string(rank) + " in job " + quoted(job.id));
    Dev d;
    d.id = "job/" + job.id + "/rank" + std::to_string(rank);
    d.kind = DeviceKind::rank;
    d.host = h;
    d.link = gdev;
    d.aux = rank;
    d.job = jidx;
    int32_t dev = add_dev(std::move(d), path);
    if (dev == kNone) return false;
    job.by_rank.emplace(rank, dev);
    job.ranks.push_back(dev);
    H.ranks.push_back(dev);
    if (std::find(H.jobs.begin(), H.jobs.end(), jidx) == H.jobs.end()) H.jobs.push_back(jidx);
    if (gdev != kNone) {
      im_->gpu_job.insert(Impl::pair_key(gdev, jidx));
    } else {
      im_->host_job_unknown_gpu.insert(Impl::pair_key(h, jidx));
      note("rank-no-gpu", "job " + job.id + ": rank " + std::to_string(rank) + " has no GPU",
           "its GPU is unknown; GPU faults on its host relate to it by host only");
    }
    return true;
  }

  struct PendingFabric {
    int32_t nic;
    std::string path, name;
  };
  struct PendingMounts {
    int32_t host;
    std::string path;
    std::vector<std::string> names;
  };
  std::vector<PendingFabric> pending_fabric_;
  std::vector<PendingMounts> pending_mounts_;
  size_t hosts_seen_ = 0;
  bool streamed_hosts_ = false;
  struct PendingUplinks {
    int32_t dev;
    std::string path;
    std::vector<std::string> ups;
  };
  struct Note {
    std::string example, consequence;
    size_t count = 0;
  };

  std::string origin_;
  TopologyError* err_;
  Impl* im_;
  bool have_fabric_list_ = false;
  std::vector<PendingUplinks> pending_uplinks_;
  std::unordered_map<std::string, int32_t> domain_ids_;
  std::map<std::string, Note> notes_;
  std::vector<std::string> order_;
};

std::string short_name(std::string_view s) {
  size_t dot = s.find('.');
  return std::string(dot == std::string_view::npos ? s : s.substr(0, dot));
}

void index_short_names(TopoData* im) {
  for (size_t i = 0; i < im->hosts.size(); ++i) {
    std::string s = short_name(im->hosts[i].name);
    auto [it, fresh] = im->host_by_short.emplace(s, int32_t(i));
    if (!fresh && it->second != int32_t(i)) it->second = -2;  // ambiguous: never guess
  }
}

// Line/column of a byte offset, for "not JSON" errors.
std::string where(std::string_view text, size_t byte) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

}  // namespace

struct Topology::Impl : TopoData {
  static uint64_t next_uid() {
    static std::atomic<uint64_t> n{0};
    return ++n;
  }
  uint64_t uid = next_uid();
  // related_devices() for a device in the table (ib != kNone).
  void related_ids(Relation rel, int32_t ib, bool x_is_lhs, DeviceKind kind, size_t limit,
                   std::vector<int32_t>* out) const;
};

Topology::Topology() : impl_(std::make_unique<Impl>()) {}
Topology::~Topology() = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;

std::unique_ptr<Topology> Topology::load_text(std::string_view text, const std::string& origin,
                                              TopologyError* err) {
  try {
    auto impl = std::make_unique<Impl>();
    impl->by_id.reserve(text.size() / 64);
    impl->by_host_bdf.reserve(text.size() / 96);
    impl->host_by_ip.reserve(text.size() / 256);
    impl->nic_by_ip.reserve(text.size() / 256);
    Loader loader(impl.get(), origin, err);
    // Stream $.hosts: each host is loaded as soon as its object is complete and
    // then dropped from the DOM, which keeps 100k-GPU topologies small.
    struct Abort {};
    std::string top_key;
    bool in_hosts = false;
    json::parser_callback_t cb = [&](int depth, json::parse_event_t ev, json& parsed) -> bool {
      using E = json::parse_event_t;
      if (depth == 1) {
        if (ev == E::key)
          top_key = parsed.is_string() ? parsed.get<std::string>() : "";
        else if (ev == E::array_start)
          in_hosts = top_key == "hosts";
        else if (ev == E::array_end)
          in_hosts = false;
        return true;
      }
      if (depth != 2 || !in_hosts) return true;
      if (ev == E::object_end) {
        if (!loader.host_element(parsed)) throw Abort{};
        return false;  // discard: already loaded
      }
      if (ev == E::value || ev == E::array_end) {
        if (!loader.host_element(parsed)) throw Abort{};  // reports "must be an object"
        return false;
      }
      return true;
    };
    json root;
    try {
      root = json::parse(text.begin(), text.end(), cb);
    } catch (const Abort&) {
      return nullptr;
    } catch (const json::parse_error& e) {
      bool at_end = e.byte >= text.size();
      std::string what = e.what();
      // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 5: ..."
      size_t colon = what.find(": ", what.find("parse error"));
      std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
      if (err)
        *err = TopologyError{origin, "$",
                             std::string(at_end ? "truncated JSON" : "not valid JSON") + " at " +
                                 where(text, e.byte == 0 ? 0 : e.byte - 1) + ": " + detail};
      return nullptr;
    }
    if (!loader.finish(root)) return nullptr;
    index_short_names(impl.get());
    auto topo = std::unique_ptr<Topology>(new Topology());
    topo->impl_ = std::move(impl);
    return topo;
  } catch (const std::exception& e) {
    if (err) *err = TopologyError{origin, "$", std::string("cannot load: ") + e.what()};
    return nullptr;
  } catch (...) {
    if (err) *err = TopologyError{origin, "$", "cannot load: unknown error"};
    return nullptr;
  }
}

std::unique_ptr<Topology> Topology::load_file(const std::string& path, TopologyError* err) {
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      if (err) *err = TopologyError{path, "", std::string("cannot open: ") + std::strerror(errno)};
      return nullptr;
    }
    std::string text;
    in.seekg(0, std::ios::end);
    auto size = in.tellg();
    in.seekg(0, std::ios::beg);
    if (size > 0) {
      text.resize(size_t(size));
      in.read(text.data(), size);
    }
    if (in.bad() || size < 0) {
      if (err) *err = TopologyError{path, "", "cannot read the file"};
      return nullptr;
    }
    text.resize(size_t(in.gcount() > 0 ? in.gcount() : 0));
    if (text.empty()) {
      if (err) *err = TopologyError{path, "$", "the file is empty (not JSON)"};
      return nullptr;
    }
    return load_text(text, path, err);
  } catch (const std::exception& e) {
    if (err) *err = TopologyError{path, "", std::string("cannot read: ") + e.what()};
    return nullptr;
  }
}

std::unique_ptr<Topology> Topology::empty() {
  return std::unique_ptr<Topology>(new Topology());
}

const std::string& Topology::cluster() const {
  return impl_->cluster;
}
size_t Topology::host_count() const {
  return impl_->hosts.size();
}
std::vector<std::string> Topology::host_names() const {
  std::vector<std::string> v;
  v.reserve(impl_->hosts.size());
  for (auto& h : impl_->hosts) v.push_back(h.name);
  return v;
}
const std::vector<std::string>& Topology::notes() const {
  return impl_->notes;
}

std::optional<std::string> Topology::resolve_host(std::string_view name) const {
  if (name.empty()) return std::nullopt;
  const Impl& im = *impl_;
  if (int32_t h = im.host_index(name); h != kNone) return im.hosts[size_t(h)].name;
  std::string s = short_name(name);
  if (s.size() != name.size())
    if (int32_t h = im.host_index(s); h != kNone) return im.hosts[size_t(h)].name;
  if (auto it = im.host_by_short.find(s); it != im.host_by_short.end() && it->second >= 0)
    return im.hosts[size_t(it->second)].name;
  if (auto ip = normalize_ip(name)) {
    int32_t h = im.host_by_ip.find(ip_key(*ip), [&](int32_t x) { return im.host_has_ip(x, *ip); });
    if (h != kNone) return im.hosts[size_t(h)].name;
  }
  return std::nullopt;
}

std::optional<DeviceInfo> Topology::device_by_bdf(const std::string& host,
                                                  std::string_view bdf) const {
  int32_t h = impl_->host_index(host);
  if (h == kNone) return std::nullopt;
  auto n = normalize_bdf(bdf);
  if (!n) return std::nullopt;
  auto packed = pack_bdf(*n);
  if (!packed) return std::nullopt;
  int32_t d = impl_->by_host_bdf.find((uint64_t(uint32_t(h)) << 32) | *packed);
  if (d == kNone) return std::nullopt;
  return impl_->info(d);
}

std::optional<DeviceInfo> Topology::gpu_by_index(const std::string& host, int index) const {
  int32_t h = impl_->host_index(host);
  if (h == kNone) return std::nullopt;
  for (int32_t g : impl_->hosts[size_t(h)].gpus)
    if (impl_->devs[size_t(g)].aux == index) return impl_->info(g);
  return std::nullopt;
}

std::optional<DeviceInfo> Topology::nic_by_name(const std::string& host,
                                                std::string_view name) const {
  int32_t h = impl_->host_index(host);
  if (h == kNone || name.empty()) return std::nullopt;
  for (int32_t n : impl_->hosts[size_t(h)].nics) {
    const auto& rec = impl_->nics[size_t(impl_->devs[size_t(n)].aux)];
    if (rec.name == name || (!rec.netdev.empty() && rec.netdev == name)) return impl_->info(n);
  }
  return std::nullopt;
}

std::optional<DeviceInfo> Topology::nic_by_ip(std::string_view ip) const {
  auto n = normalize_ip(ip);
  if (!n) return std::nullopt;
  int32_t d = impl_->nic_by_ip.find(ip_key(*n), [&](int32_t x) {
    return impl_->nics[size_t(impl_->devs[size_t(x)].aux)].ip == *n;
  });
  if (d == kNone) return std::nullopt;
  return impl_->info(d);
}

std::optional<DeviceInfo> Topology::nvswitch_by_id(const std::string& host,
                                                   std::string_view id) const {
  int32_t h = impl_->host_index(host);
  if (h == kNone || id.empty()) return std::nullopt;
  std::string want =
      host + "/" + (id.substr(0, 4) == "nvsw" ? std::string(id) : "nvsw" + std::string(id));
  int32_t d = impl_->find(want);
  if (d == kNone || impl_->devs[size_t(d)].kind != DeviceKind::nvswitch) return std::nullopt;
  return impl_->info(d);
}

std::optional<DeviceInfo> Topology::rank(std::string_view job, int rank) const {
  for (auto& j : impl_->jobs) {
    if (!job.empty() && j.id != job) continue;
    auto it = j.by_rank.find(rank);
    if (it != j.by_rank.end()) return impl_->info(it->second);
    if (!job.empty()) return std::nullopt;
  }
  return std::nullopt;
}

std::optional<DeviceInfo> Topology::fabric_switch(std::string_view name) const {
  auto it = impl_->fabric_by_name.find(std::string(name));
  if (it == impl_->fabric_by_name.end()) return std::nullopt;
  return impl_->info(it->second);
}

std::optional<DeviceInfo> Topology::storage(std::string_view name_or_ip) const {
  const Impl& im = *impl_;
  auto ip = normalize_ip(name_or_ip);
  for (size_t i = 0; i < im.storages.size(); ++i) {
    if (im.storages[i].name == name_or_ip || (ip && im.storages[i].ip == *ip))
      return im.info(im.storage_devs[i]);
  }
  return std::nullopt;
}

std::vector<std::string> Topology::jobs_of_host(const std::string& host) const {
  std::vector<std::string> v;
  int32_t h = impl_->host_index(host);
  if (h == kNone) return v;
  for (int32_t j : impl_->hosts[size_t(h)].jobs) v.push_back(impl_->jobs[size_t(j)].id);
  return v;
}

std::optional<DeviceInfo> Topology::device(std::string_view id) const {
  int32_t d = impl_->find(id);
  if (d != kNone) return impl_->info(d);
  ParsedId p = parse_id(id);
  if (!p.valid) return std::nullopt;
  // A non-placeholder id on a known host (node-1/gpu9 when it has 8) is an error
  // of the caller, not a placeholder.
  if (!p.placeholder && !p.host.empty() && impl_->host_index(p.host) != kNone) return std::nullopt;
  if (!p.placeholder && p.host.empty()) return std::nullopt;  // unknown fabric/job/storage
  DeviceInfo info;
  info.id = std::string(id);
  info.kind = p.kind;
  info.host = std::string(p.host);
  info.placeholder = true;
  if (auto b = normalize_bdf(p.key); b && p.kind != DeviceKind::rank) info.bdf = *b;
  return info;
}

bool Topology::related(Relation rel, std::string_view a, std::string_view b) const {
  if (rel == Relation::any) return true;
  int32_t ia = impl_->find(a);
  int32_t ib = ia == kNone ? kNone : impl_->find(b);
  if (ia == kNone || ib == kNone) return impl_->rel_structural(rel, a, b);
  return impl_->rel_known(rel, ia, ib);
}

std::vector<std::string> Topology::related_devices(Relation rel, std::string_view b, bool x_is_lhs,
                                                   DeviceKind kind, size_t limit) const {
  const Impl& im = *impl_;
  std::vector<std::string> out;
  int32_t ib = im.find(b);
  if (ib == kNone) {
    // Placeholders relate by host only (and to themselves).
    ParsedId p = parse_id(b);
    if (!p.valid) return out;
    if (p.kind == kind && im.rel_structural(rel, b, b)) out.emplace_back(b);
    if (rel == Relation::any) {
      for (auto& d : im.devs)
        if (d.kind == kind) out.push_back(d.id);
      return out;
    }
    if (rel == Relation::same) return out;
    int32_t h = p.host.empty() ? kNone : im.host_index(p.host);
    bool ok = (rel == Relation::same_host && host_local(p.kind) && host_local(kind)) ||
              (rel == Relation::on && x_is_lhs && p.kind == DeviceKind::host && host_local(kind) &&
               kind != DeviceKind::host) ||
              (rel == Relation::on && !x_is_lhs && kind == DeviceKind::host && host_local(p.kind) &&
               p.kind != DeviceKind::host);
    if (!ok) return out;
    if (h == kNone) {
      if (kind == DeviceKind::host && !p.host.empty() && p.kind != DeviceKind::host)
        out.emplace_back(p.host);
      return out;
    }
    std::vector<int32_t> cand;
    im.host_devices(h, kind, &cand);
    for (int32_t x : cand) out.push_back(im.devs[size_t(x)].id);
    return out;
  }

  std::vector<int32_t> ids;
  im.related_ids(rel, ib, x_is_lhs, kind, limit, &ids);
  out.reserve(ids.size());
  for (int32_t x : ids) out.push_back(im.devs[size_t(x)].id);
  return out;
}

void Topology::Impl::related_ids(Relation rel, int32_t ib, bool x_is_lhs, DeviceKind kind,
                                 size_t limit, std::vector<int32_t>* out) const {
  const Impl& im = *this;
  if (rel == Relation::any) {
    for (size_t i = 0; i < im.devs.size(); ++i)
      if (im.devs[i].kind == kind) out->push_back(int32_t(i));
    return;
  }
  const auto& B = im.devs[size_t(ib)];
  std::vector<int32_t> cand;
  const size_t cap = limit;  // job enumerations stop past it (see the end)
  bool capped = false;
  auto by_host = [&](int32_t h) {
    if (h != kNone) im.host_devices(h, kind, &cand);
  };
  switch (rel) {
    case Relation::same:
      cand.push_back(ib);
      break;
    case Relation::any:
      break;
    case Relation::same_host:
      by_host(B.host);
      break;
    case Relation::on:
      if (x_is_lhs)
        by_host(B.kind == DeviceKind::host ? B.host : kNone);
      else if (B.host != kNone)
        cand.push_back(im.hosts[size_t(B.host)].dev);
      break;
    case Relation::below:
      if (x_is_lhs) {
        // Everything under B: breadth-first over the children lists.
        std::vector<int32_t> q{ib};
        for (size_t i = 0; i < q.size() && i < 1000000; ++i) {
          int32_t ci = im.devs[size_t(q[i])].aux;
          if (im.devs[size_t(q[i])].kind != DeviceKind::pcie_port || ci == kNone) continue;
          for (int32_t c : im.children[size_t(ci)]) {
            cand.push_back(c);
            q.push_back(c);
          }
        }
      } else {
        for (int32_t p = B.parent, d = 0; p != kNone && d < 64; p = im.devs[size_t(p)].parent, ++d)
          cand.push_back(p);
      }
      break;
    case Relation::paired:
      if (B.kind == DeviceKind::gpu)
        cand.push_back(B.link);
      else if (B.kind == DeviceKind::nic)
        for (int32_t g : im.nics[size_t(B.aux)].paired_gpus) cand.push_back(g);
      break;
    case Relation::nvlink_peer:
    case Relation::serves:
      if (B.host != kNone) {
        std::vector<int32_t> hs;
        im.nvl_hosts(B.host, &hs);
        for (int32_t h : hs) by_host(h);
      }
      break;
    case Relation::attached:
      if (x_is_lhs && B.kind == DeviceKind::fabric_switch) {
        auto& ns = im.fabrics[size_t(B.aux)].nics;
        cand.insert(cand.end(), ns.begin(), ns.end());
      } else if (!x_is_lhs && B.kind == DeviceKind::nic) {
        cand.push_back(B.link);
      }
      break;
    case Relation::uplink:
      if (B.kind == DeviceKind::fabric_switch) {
        auto& f = im.fabrics[size_t(B.aux)];
        auto& v = x_is_lhs ? f.downlinks : f.uplinks;
        cand.insert(cand.end(), v.begin(), v.end());
      }
      break;
    case Relation::runs_on:
      if (x_is_lhs) {
        if (B.kind == DeviceKind::host || B.kind == DeviceKind::gpu) {
          auto& rs = im.hosts[size_t(B.host)].ranks;
          cand.insert(cand.end(), rs.begin(), rs.end());
        }
      } else if (B.kind == DeviceKind::rank) {
        cand.push_back(B.link);
        cand.push_back(im.hosts[size_t(B.host)].dev);
      }
      break;
    case Relation::uses:
      if (x_is_lhs && B.kind == DeviceKind::nic) {
        for (int32_t g : im.nics[size_t(B.aux)].paired_gpus) {
          auto& rs = im.hosts[size_t(im.devs[size_t(g)].host)].ranks;
          cand.insert(cand.end(), rs.begin(), rs.end());
        }
      } else if (!x_is_lhs && B.kind == DeviceKind::rank && B.link != kNone) {
        cand.push_back(im.devs[size_t(B.link)].link);
      }
      break;
    case Relation::in:
      if (x_is_lhs && B.kind == DeviceKind::job)
        im.job_devices(B.aux, kind, &cand, cap, &capped);
      else if (!x_is_lhs && kind == DeviceKind::job) {
        int32_t one;
        const std::vector<int32_t>* many;
        im.jobs_of(B, &one, &many);
        if (one != kNone) cand.push_back(im.jobs[size_t(one)].dev);
        if (many)
          for (int32_t j : *many) cand.push_back(im.jobs[size_t(j)].dev);
      }
      break;
    case Relation::same_job: {
      int32_t one;
      const std::vector<int32_t>* many;
      im.jobs_of(B, &one, &many);
      std::vector<int32_t> js;
      if (one != kNone) js.push_back(one);
      if (many) js.insert(js.end(), many->begin(), many->end());
      for (int32_t j : js) im.job_devices(j, kind, &cand, cap, &capped);
      break;
    }
    case Relation::mounts:
      if (x_is_lhs && B.kind == DeviceKind::storage) {
        for (size_t h = 0; h < im.hosts.size(); ++h) by_host(int32_t(h));
      } else if (!x_is_lhs && B.host != kNone) {
        cand.insert(cand.end(), im.storage_devs.begin(), im.storage_devs.end());
      }
      break;
  }
  // Filter through related() so both directions agree exactly; dedupe (a
  // short list by a look at what passed: a repeat that failed fails again).
  const bool small = cand.size() <= 32;
  std::unordered_set<int32_t> seen;
  for (int32_t x : cand) {
    if (x == kNone || im.devs[size_t(x)].kind != kind) continue;
    if (small ? std::find(out->begin(), out->end(), x) != out->end() : !seen.insert(x).second)
      continue;
    bool ok = x_is_lhs ? im.rel_known(rel, x, ib) : im.rel_known(rel, ib, x);
    if (ok) out->push_back(x);
    if (out->size() > limit) return;
  }
  // A capped enumeration that the filter thinned to `limit` or fewer is not
  // known to be complete: enumerate again in full.
  if (capped) {
    out->clear();
    related_ids(rel, ib, x_is_lhs, kind, static_cast<size_t>(-1), out);
  }
}

std::vector<std::string> Topology::devices_of_kind(DeviceKind kind) const {
  std::vector<std::string> out;
  for (auto& d : impl_->devs)
    if (d.kind == kind) out.push_back(d.id);
  return out;
}

Topology::DeviceId Topology::id(std::string_view device) const {
  return impl_->find(device);
}

size_t Topology::device_count() const {
  return impl_->devs.size();
}

// Ids out of range are no device (never undefined behaviour): like unknown names.
const std::string& Topology::id_str(DeviceId d) const {
  static const std::string kEmpty;
  return d >= 0 && size_t(d) < impl_->devs.size() ? impl_->devs[size_t(d)].id : kEmpty;
}

bool Topology::related(Relation rel, DeviceId a, DeviceId b) const {
  if (rel == Relation::any) return true;
  const size_t n = impl_->devs.size();
  if (a < 0 || b < 0 || size_t(a) >= n || size_t(b) >= n) return false;
  return impl_->rel_known(rel, a, b);
}

void Topology::related_device_ids(Relation rel, DeviceId b, bool x_is_lhs, DeviceKind kind,
                                  std::vector<DeviceId>* out, size_t limit) const {
  out->clear();
  if (b < 0 || size_t(b) >= impl_->devs.size()) return;
  impl_->related_ids(rel, b, x_is_lhs, kind, limit, out);
}

uint64_t Topology::uid() const {
  return impl_->uid;
}

}  // namespace reflex
