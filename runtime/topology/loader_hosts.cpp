// HostLoader, the topology loader's $.hosts elements: the host, its BMC, its PCIe switches
// and root ports, NICs, GPUs and NVSwitches, and the per-host BDF and IP indexes.
#include "loader_classes.h"
#include "reflex/values.h"

namespace reflex::topo {

// One element of $.hosts: the host itself, then its PCIe switches (GPUs and
// NICs name them), NICs (GPUs name them), GPUs and NVSwitches.
bool HostLoader::load_host(const json& h, size_t hi) {
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
bool HostLoader::add_bmc(const std::string& bmc, const std::string& path, int32_t hidx) {
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
bool HostLoader::add_host(const json& h, const std::string& path, int32_t hidx) {
  Impl::Host host;
  if (!req_string(h, "name", path, &host.name) || !name_ok(host.name, path, ".name")) return false;
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

bool HostLoader::load_pcie_switch(const json& s, const std::string& sp, int32_t hidx,
                                  SmallMap* sw_by_id, std::vector<RootPort>* root_ports) {
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
bool HostLoader::link_root_ports(int32_t hidx, const std::vector<RootPort>& root_ports) {
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
bool HostLoader::check_pcie_cycles(int32_t hidx, const std::string& path) {
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

bool HostLoader::load_nic(const json& n, const std::string& np, int32_t hidx,
                          const SmallMap& sw_by_id, SmallMap* nic_by_name) {
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

bool HostLoader::load_gpu(const json& g, const std::string& gp, int32_t hidx,
                          const SmallMap& sw_by_id, const SmallMap& nic_by_name,
                          std::vector<int64_t>* gpu_indexes) {
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

bool HostLoader::load_nvswitch(const json& s, const std::string& sp, int32_t hidx) {
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

void HostLoader::add_host_ip(const std::string& ip, int32_t hidx) {
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

}  // namespace reflex::topo
