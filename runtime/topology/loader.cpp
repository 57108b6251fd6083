// The topology file (interfaces.md §1) into the indexes of topology_data.h: JSON
// streamed host by host, every reference checked, the first error aborts.
#include "loader.h"

#include "reflex/values.h"

#include <deque>
#include <nlohmann/json.hpp>

namespace reflex::topo {
namespace {

using json = nlohmann::json;

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
    d.id = cluster_device_id(DeviceKind::fabric_switch, name);
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
        int32_t sd = im_->find(cluster_device_id(DeviceKind::storage, p.names[m]));
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
      d.id = cluster_device_id(DeviceKind::storage, st.name);
      d.kind = DeviceKind::storage;
      d.aux = int32_t(im_->storages.size());
      im_->storages.push_back(std::move(st));
      int32_t dev = add_dev(std::move(d), path, ".name");
      if (dev == kNone) return false;
      im_->storage_devs.push_back(dev);
    }
    return true;
  }

  // One element of $.hosts: the host itself, then its PCIe switches (GPUs and
  // NICs name them), NICs (GPUs name them), GPUs and NVSwitches.
  bool load_host(const json& h, size_t hi) {
    std::string path = idx("$.hosts", hi);
    if (!h.is_object()) return bad(path, "must be an object");
    const int32_t hidx = int32_t(im_->hosts.size());
    if (!add_host(h, path, hidx)) return false;
    // Per-host lookups are tiny: linear scans over (name, dev) pairs.
    SmallMap sw_by_id, nic_by_name;
    std::vector<RootPort> root_ports;
    if (!each(h, "pcie_switches", path, [&](const json& s, const std::string& sp) {
          return load_pcie_switch(s, sp, hidx, &sw_by_id, &root_ports);
        }))
      return false;
    if (!link_root_ports(hidx, root_ports) || !check_pcie_cycles(hidx, path)) return false;
    if (!each(h, "nics", path, [&](const json& n, const std::string& np) {
          return load_nic(n, np, hidx, sw_by_id, &nic_by_name);
        }))
      return false;
    std::vector<int64_t> gpu_indexes;
    if (!each(h, "gpus", path, [&](const json& g, const std::string& gp) {
          return load_gpu(g, gp, hidx, sw_by_id, nic_by_name, &gpu_indexes);
        }))
      return false;
    const Impl::Host& H = im_->hosts[size_t(hidx)];
    if (H.gpus.empty())
      note("host-no-gpus", "host " + H.name + " lists no GPUs",
           "its GPUs are known only by the BDF in log lines (placeholders)");
    return each(h, "nvswitches", path,
                [&](const json& s, const std::string& sp) { return load_nvswitch(s, sp, hidx); });
  }

  // hosts[].bmc: a name or an IP that stands for this host when logs arrive
  // under it (resolve_host); a name that is also a host's is an error.
  bool add_bmc(const std::string& bmc, const std::string& path, int32_t hidx) {
    std::vector<std::string> keys;
    if (auto ip = normalize_ip(bmc)) {
      keys.push_back(*ip);
    } else {
      if (!name_ok(bmc, path, "")) return false;
      keys.push_back(bmc);
      if (std::string s = short_name(bmc); s != bmc) keys.push_back(s);
    }
    if (im_->host_index(bmc) != kNone)
      return bad(path, quoted(bmc) + " is the name of a host, not of its BMC");
    for (const std::string& k : keys) {
      auto [it, fresh] = im_->host_by_bmc.emplace(k, hidx);
      if (!fresh && it->second != hidx) it->second = -2;  // two hosts claim it: never guess
    }
    return true;
  }

  // The host's own fields and device; appends it to im_->hosts as index hidx.
  bool add_host(const json& h, const std::string& path, int32_t hidx) {
    Impl::Host host;
    if (!req_string(h, "name", path, &host.name) || !name_ok(host.name, path, ".name"))
      return false;
    if (reserved_host_name(host.name))
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
    std::string bmc;
    if (!opt_string(h, "bmc", path, &bmc)) return false;
    if (!bmc.empty() && !add_bmc(bmc, path + ".bmc", hidx)) return false;

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
    const Impl::Host& H = im_->hosts.back();
    if (!H.ip.empty()) add_host_ip(H.ip, hidx);
    return true;
  }

  // A switch's root port, resolved once all the host's switches are known.
  struct RootPort {
    int32_t sw;
    std::string bdf, path;
  };

  bool load_pcie_switch(const json& s, const std::string& sp, int32_t hidx, SmallMap* sw_by_id,
                        std::vector<RootPort>* root_ports) {
    Impl::Host& H = im_->hosts[size_t(hidx)];
    std::string id, bdf, rp;
    if (!req_string(s, "id", sp, &id) || !name_ok(id, sp, ".id", true) || !opt_bdf(s, sp, &bdf))
      return false;
    if (!opt_string(s, "root_port", sp, &rp)) return false;
    if (sw_by_id->count(id)) return bad(sp + ".id", "duplicate PCIe switch id " + quoted(id));
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
      d.id = local_id(H.name, DeviceKind::pcie_port, id);
      note("pcie-no-bdf", "host " + H.name + ": PCIe switch " + id + " has no bdf",
           "it is named " + d.id + " and AER lines naming its BDF cannot reach it");
    } else {
      d.id = local_id(H.name, DeviceKind::pcie_port, bdf);
    }
    int32_t dev = add_dev(std::move(d), sp, ".id");
    if (dev == kNone) return false;
    if (!bdf.empty() && !index_bdf(hidx, bdf, dev, sp)) return false;
    sw_by_id->emplace(id, dev);
    H.pcie.push_back(dev);
    if (!rpn.empty())
      root_ports->push_back({dev, rpn, sp + ".root_port"});
    else
      note("pcie-no-root", "host " + H.name + ": PCIe switch " + id + " has no root_port",
           "errors on its root port cannot be tied to the devices below it");
    return true;
  }

  // Root ports: a port BDF that is another switch's BDF chains the switches
  // (cascaded switches); otherwise the root port is a pcie_port of its own.
  bool link_root_ports(int32_t hidx, const std::vector<RootPort>& root_ports) {
    Impl::Host& H = im_->hosts[size_t(hidx)];
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
        d.id = local_id(H.name, DeviceKind::pcie_port, rpbdf);
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
    return true;
  }

  // Cycles in cascaded switches would make below() loop; refuse them.
  bool check_pcie_cycles(int32_t hidx, const std::string& path) {
    for (int32_t sw : im_->hosts[size_t(hidx)].pcie) {
      int32_t p = im_->devs[size_t(sw)].parent;
      for (int depth = 0; p != kNone; ++depth) {
        if (p == sw || depth > 32)
          return bad(path + ".pcie_switches",
                     "the root_port chain of " + im_->devs[size_t(sw)].id + " forms a cycle");
        p = im_->devs[size_t(p)].parent;
      }
    }
    return true;
  }

  bool load_nic(const json& n, const std::string& np, int32_t hidx, const SmallMap& sw_by_id,
                SmallMap* nic_by_name) {
    Impl::Host& H = im_->hosts[size_t(hidx)];
    Impl::Nic nic;
    std::string bdf, sw, fab;
    int64_t port = 0;
    bool has_port;
    if (!req_string(n, "name", np, &nic.name) || !name_ok(nic.name, np, ".name") ||
        !opt_bdf(n, np, &bdf) || !opt_string(n, "netdev", np, &nic.netdev) ||
        !opt_ip(n, np, &nic.ip) || !opt_string(n, "pcie_switch", np, &sw) ||
        !opt_int(n, "port", np, &port, &has_port) || !opt_string(n, "fabric_switch", np, &fab))
      return false;
    if (nic_by_name->count(nic.name))
      return bad(np + ".name", "duplicate NIC name " + quoted(nic.name));
    if (nic.name.find('@') != std::string::npos) return bad(np + ".name", "must not contain '@'");
    Dev d;
    d.id = local_id(H.name, DeviceKind::nic, nic.name);
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
           "mlx5 lines naming its PCI address will place it as " +
               placeholder_id(H.name, DeviceKind::nic, "<bdf>"));
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
    nic_by_name->emplace(rec.name, dev);
    H.nics.push_back(dev);
    return true;
  }

  bool load_gpu(const json& g, const std::string& gp, int32_t hidx, const SmallMap& sw_by_id,
                const SmallMap& nic_by_name, std::vector<int64_t>* gpu_indexes) {
    Impl::Host& H = im_->hosts[size_t(hidx)];
    auto it = g.find("index");
    if (it == g.end() || it->is_null()) return bad(gp, "missing required 'index'");
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > 1000000)
      return bad(gp + ".index", "must be a non-negative integer");
    int64_t index = it->get<int64_t>();
    if (std::find(gpu_indexes->begin(), gpu_indexes->end(), index) != gpu_indexes->end())
      return bad(gp + ".index",
                 "duplicate GPU index " + std::to_string(index) + " on host " + quoted(H.name));
    gpu_indexes->push_back(index);
    std::string bdf, sw, serial, uuid;
    if (!opt_bdf(g, gp, &bdf) || !opt_string(g, "pcie_switch", gp, &sw) ||
        !opt_string(g, "serial", gp, &serial) || !opt_string(g, "uuid", gp, &uuid))
      return false;
    std::vector<std::string> nics;
    bool has_nics;
    if (!string_list(g, "nics", gp, &nics, &has_nics)) return false;
    Dev d;
    d.id = local_id(H.name, DeviceKind::gpu, std::to_string(index));
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
                                             " that does not exist on host " + quoted(H.name));
      if (k == 0) d.link = n->second;
    }
    if (nics.empty())
      note("gpu-no-nic", "host " + H.name + ": GPU " + std::to_string(index) + " has no nics",
           "its rank's NIC is unknown ('paired'/'uses' do not hold; pairing is never "
           "guessed)");
    if (bdf.empty())
      note("gpu-no-bdf", "host " + H.name + ": GPU " + std::to_string(index) + " has no bdf",
           "Xid lines will place it as " + placeholder_id(H.name, DeviceKind::gpu, "<bdf>"));
    int32_t parent = d.parent, nic = d.link;
    int32_t dev = add_dev(std::move(d), gp, ".index");
    if (dev == kNone) return false;
    if (!bdf.empty() && !index_bdf(hidx, bdf, dev, gp)) return false;
    if (parent != kNone) im_->add_child(parent, dev);
    if (nic != kNone) im_->nics[size_t(im_->devs[size_t(nic)].aux)].paired_gpus.push_back(dev);
    H.gpus.push_back(dev);
    return true;
  }

  bool load_nvswitch(const json& s, const std::string& sp, int32_t hidx) {
    Impl::Host& H = im_->hosts[size_t(hidx)];
    std::string id, bdf;
    if (!req_string(s, "id", sp, &id) || !name_ok(id, sp, ".id") || !opt_bdf(s, sp, &bdf))
      return false;
    Dev d;
    d.id = nvswitch_id(H.name, id);
    d.kind = DeviceKind::nvswitch;
    d.host = hidx;
    d.bdf = bdf;
    int32_t dev = add_dev(std::move(d), sp, ".id");
    if (dev == kNone) return false;
    if (!bdf.empty() && !index_bdf(hidx, bdf, dev, sp)) return false;
    H.nvsw.push_back(dev);
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
      d.id = cluster_device_id(DeviceKind::job, job.id);
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
    d.id = rank_id(job.id, rank);
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

bool load_json(std::string_view text, const std::string& origin, TopoData* im, TopologyError* err) {
  Loader loader(im, origin, err);
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
    return false;
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
    return false;
  }
  if (!loader.finish(root)) return false;
  index_short_names(im);
  im->index_links();
  return true;
}

}  // namespace reflex::topo
