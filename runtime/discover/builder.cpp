// topology.json from the hosts' parsed outputs: GPUs from nvidia-smi (with
// their NVLink lines as nvlink -s printed them), NICs from the RDMA lists, PCIe
// switches and root ports from the lspci tree above each GPU, NIC and
// NVSwitch, GPU-NIC pairs from `nvidia-smi topo -m`, ranks from the job's host
// list. What the outputs do not show is left out and noted.
#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "reflex/discover.h"
#include "text_kit.h"

namespace reflex::discover {

namespace {

using ojson = nlohmann::ordered_json;

// Notes of one kind are said once, with a count of the others.
class NoteSet {
 public:
  void add(const std::string& kind, std::string text) {
    auto [it, fresh] = first_.emplace(kind, std::move(text));
    if (fresh) order_.push_back(kind);
    ++count_[kind];
  }
  void flush(std::vector<std::string>* out) const {
    for (const std::string& k : order_) {
      int more = count_.at(k) - 1;
      out->push_back(first_.at(k) +
                     (more ? " (and " + std::to_string(more) + " more like it)" : ""));
    }
  }

 private:
  std::vector<std::string> order_;
  std::map<std::string, std::string> first_;
  std::map<std::string, int> count_;
};

// mlx5_2 before mlx5_10.
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (isdigit(static_cast<unsigned char>(a[i])) && isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      std::string_view x = std::string_view(a).substr(i, i2 - i),
                       y = std::string_view(b).substr(j, j2 - j);
      while (x.size() > 1 && x[0] == '0') x.remove_prefix(1);
      while (y.size() > 1 && y[0] == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = i2, j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

bool name_ok(const std::string& n) {
  return !n.empty() && n.find_first_of("/@") == std::string::npos;
}

struct NicInfo {
  std::string bdf, netdev;
  int port = 0;
  std::vector<int> ports;
};

// Bridges above `bdf`, nearest first; nullopt when the tree does not hold it.
std::optional<std::vector<std::string>> bridges_above(const PciTree& t, const std::string& bdf) {
  const PciDevice* d = t.find(bdf);
  if (!d) return std::nullopt;
  std::vector<std::string> out;
  while (!d->parent.empty() && out.size() < 64) {
    out.push_back(d->parent);
    d = t.find(d->parent);
    if (!d) break;
  }
  return out;
}

class HostBuilder {
 public:
  HostBuilder(const HostOutputs& h, NoteSet* notes) : h_(h), notes_(notes) {}

  ojson build(std::map<int, bool>* gpu_indexes) {
    collect_gpus();
    collect_nics();
    if (h_.pci)
      place_in_tree();
    else
      notes_->add("no-pci",
                  "host " + h_.name + ": no lspci output: no PCIe switches or root ports");
    if (h_.topo)
      pair();
    else if (!gpus_.empty() && !nics_.empty())
      notes_->add("no-topo",
                  "host " + h_.name + ": no nvidia-smi topo -m: GPUs are not paired with NICs");
    ojson host;
    host["name"] = h_.name;
    ojson gpus = ojson::array();
    for (auto& [idx, g] : gpus_) {
      (*gpu_indexes)[idx] = true;
      ojson o;
      o["index"] = idx;
      if (!g.bdf.empty()) o["bdf"] = g.bdf;
      if (!g.serial.empty()) o["serial"] = g.serial;
      if (auto s = switch_of(g.bdf); !s.empty()) o["pcie_switch"] = s;
      if (auto p = pairs_.find(idx); p != pairs_.end()) o["nics"] = ojson::array({p->second});
      if (auto n = nvlinks_.find(idx); n != nvlinks_.end()) o["nvlinks"] = nvlink_json(*n->second);
      gpus.push_back(std::move(o));
    }
    if (!gpus.empty()) host["gpus"] = std::move(gpus);
    std::vector<std::string> names;
    for (auto& [n, info] : nics_) names.push_back(n);
    std::sort(names.begin(), names.end(), natural_less);
    ojson nics = ojson::array();
    for (const std::string& n : names) {
      const NicInfo& info = nics_[n];
      ojson o;
      o["name"] = n;
      if (!info.bdf.empty()) o["bdf"] = info.bdf;
      if (!info.netdev.empty()) o["netdev"] = info.netdev;
      if (info.port) o["port"] = info.port;
      if (auto s = switch_of(info.bdf); !s.empty()) o["pcie_switch"] = s;
      nics.push_back(std::move(o));
    }
    if (!nics.empty()) host["nics"] = std::move(nics);
    ojson sws = ojson::array();
    for (auto& [bdf, id] : switch_ids_) {
      ojson o;
      o["id"] = id;
      o["bdf"] = bdf;
      const std::string& parent = h_.pci->find(bdf)->parent;
      if (!parent.empty()) o["root_port"] = parent;
      sws.push_back(std::move(o));
    }
    if (!sws.empty()) host["pcie_switches"] = std::move(sws);
    ojson nvs = ojson::array();
    for (size_t i = 0; i < nvswitches_.size(); ++i)
      nvs.push_back({{"id", "nvsw" + std::to_string(i)}, {"bdf", nvswitches_[i]}});
    if (!nvs.empty()) host["nvswitches"] = std::move(nvs);
    return host;
  }

 private:
  void collect_gpus() {
    if (h_.gpus) {
      for (const GpuRecord& g : *h_.gpus) gpus_[g.index] = g;
      if (h_.topo && h_.topo->gpus.size() != h_.gpus->size())
        notes_->add("gpu-count", "host " + h_.name + ": nvidia-smi lists " +
                                     std::to_string(h_.gpus->size()) + " GPUs, topo -m " +
                                     std::to_string(h_.topo->gpus.size()));
    } else if (h_.topo || h_.nvlinks) {
      if (h_.topo)
        for (int g : h_.topo->gpus) gpus_[g].index = g;
      else
        for (const NvlinkStatus& n : *h_.nvlinks) gpus_[n.gpu].index = n.gpu;
      notes_->add("gpu-no-bdf", "host " + h_.name +
                                    ": no nvidia-smi -q or --query-gpu: GPUs known by index only "
                                    "(no BDF, serial)");
    } else {
      notes_->add("no-gpus", "host " + h_.name + ": no nvidia-smi output: no GPUs listed");
    }
    if (h_.nvlinks) collect_nvlinks();
  }

  // A GPU's link lines go to the GPU of that index; a UUID that names another
  // GPU means the two outputs do not number GPUs alike, so they are left out.
  void collect_nvlinks() {
    for (const NvlinkStatus& n : *h_.nvlinks) {
      std::string what = "host " + h_.name + ": nvlink -s GPU " + std::to_string(n.gpu);
      auto g = gpus_.find(n.gpu);
      if (g == gpus_.end()) {
        notes_->add("nvlink-gpu",
                    what + " is not in nvidia-smi's GPU list: its links are left out");
      } else if (!g->second.uuid.empty() && n.uuid.substr(0, 4) == "GPU-" &&
                 n.uuid != g->second.uuid) {
        notes_->add("nvlink-uuid", what + " has UUID " + n.uuid + ", the GPU list " +
                                       g->second.uuid + ": its links are left out");
      } else {
        nvlinks_[n.gpu] = &n;
      }
    }
  }

  static ojson nvlink_json(const NvlinkStatus& n) {
    ojson o;
    o["links"] = n.links;
    o["inactive"] = n.inactive;
    if (n.all_inactive) o["all_inactive"] = true;
    return o;
  }

  void collect_nics() {
    for (const IbPort& p : h_.ib) {
      if (!name_ok(p.device)) continue;
      NicInfo& n = nics_[p.device];
      n.ports.push_back(p.port);
      if (n.port == 0 || (p.port && p.port < n.port)) {
        n.port = p.port;
        if (!p.netdev.empty()) n.netdev = p.netdev;
      }
      if (n.bdf.empty()) n.bdf = p.bdf;
    }
    for (auto& [name, n] : nics_) {
      if (n.ports.size() > 1)
        notes_->add("nic-ports", "host " + h_.name + ": " + name + " has " +
                                     std::to_string(n.ports.size()) + " ports: port " +
                                     std::to_string(n.port) + " is listed");
      if (n.bdf.empty() && h_.pci)
        notes_->add(
            "nic-no-bdf",
            "host " + h_.name + ": " + name +
                " has no PCI address (ibdev2netdev -v gives it): not placed in the PCIe tree");
    }
    if (h_.topo)
      for (const std::string& n : h_.topo->nics)
        if (name_ok(n) && std::find(h_.topo->unnamed.begin(), h_.topo->unnamed.end(), n) ==
                              h_.topo->unnamed.end())
          nics_.try_emplace(n);
  }

  void place(const std::string& what, const std::string& bdf) {
    auto chain = bridges_above(*h_.pci, bdf);
    if (!chain) {
      notes_->add("not-in-tree",
                  "host " + h_.name + ": " + what + " (" + bdf + ") is not in the lspci tree");
      return;
    }
    if (chain->empty()) {
      notes_->add("root-bus", "host " + h_.name + ": " + what + " (" + bdf +
                                  ") sits on a root bus: no PCIe port above it");
      return;
    }
    if (chain->size() == 1)
      notes_->add("no-switch", "host " + h_.name + ": " + what + " (" + bdf +
                                   "): no PCIe switch seen: attached to root port " +
                                   chain->front());
    // The root port at the top is a switch's root_port, and an entry of its
    // own only when nothing lies between it and the device.
    size_t n = chain->size() == 1 ? 1 : chain->size() - 1;
    for (size_t i = 0; i < n; ++i) switch_ids_.emplace((*chain)[i], "");
    below_[bdf] = chain->front();
  }

  void place_in_tree() {
    for (auto& [idx, g] : gpus_)
      if (!g.bdf.empty()) place("GPU " + std::to_string(idx), g.bdf);
    for (auto& [name, n] : nics_)
      if (!n.bdf.empty()) place(name, n.bdf);
    for (const PciDevice& d : h_.pci->devices)
      if (kit::lower(d.description).find("nvswitch") != std::string::npos) {
        nvswitches_.push_back(d.bdf);
        place("NVSwitch", d.bdf);
      }
    int k = 0;
    for (auto& [bdf, id] : switch_ids_) id = "sw" + std::to_string(k++);
  }

  std::string switch_of(const std::string& bdf) const {
    auto it = below_.find(bdf);
    return it == below_.end() || bdf.empty() ? "" : switch_ids_.at(it->second);
  }

  // A GPU's NIC is the one NIC nearest to it through PCIe switches alone
  // (PIX, else PXB); a tie or no such NIC leaves it unpaired.
  void pair() {
    const TopoMatrix& t = *h_.topo;
    for (int g : t.gpus) {
      const auto& row = t.cells.at("GPU" + std::to_string(g));
      std::vector<std::string> best;
      for (const char* level : {"PIX", "PXB"}) {
        for (const std::string& n : t.nics)
          if (auto c = row.find(n); c != row.end() && c->second == level) best.push_back(n);
        if (!best.empty()) break;
      }
      std::string what = "host " + h_.name + ": GPU " + std::to_string(g);
      if (best.empty()) {
        notes_->add("no-nic", what + ": no NIC behind a PCIe switch with it (PIX/PXB): not paired");
      } else if (best.size() > 1) {
        std::string list;
        for (const std::string& n : best) list += (list.empty() ? "" : ", ") + n;
        notes_->add("nic-tie", what + " is as close to " + list + ": not paired");
      } else if (std::find(t.unnamed.begin(), t.unnamed.end(), best[0]) != t.unnamed.end()) {
        notes_->add("nic-unnamed", what + ": its NIC " + best[0] +
                                       " is not named in the topo -m legend: not paired");
      } else if (!gpus_.count(g)) {
        notes_->add("topo-gpu", what + " of topo -m is not in nvidia-smi's GPU list: not paired");
      } else {
        pairs_[g] = best[0];
      }
    }
  }

  const HostOutputs& h_;
  NoteSet* notes_;
  std::map<int, GpuRecord> gpus_;
  std::map<std::string, NicInfo> nics_;
  std::map<std::string, std::string> switch_ids_;  // bridge bdf -> "swN"
  std::map<std::string, std::string> below_;       // endpoint bdf -> bridge right above it
  std::vector<std::string> nvswitches_;
  std::map<int, std::string> pairs_;
  std::map<int, const NvlinkStatus*> nvlinks_;
};

std::string short_name(const std::string& n) {
  return n.substr(0, n.find('.'));
}

}  // namespace

bool build_topology(const std::vector<HostOutputs>& hosts, const BuildOptions& opts,
                    std::string* json, std::vector<std::string>* notes, std::string* error) {
  std::map<std::string, const HostOutputs*> by_name;
  for (const HostOutputs& h : hosts) {
    if (!name_ok(h.name)) {
      *error = h.dir + ": host name '" + h.name + "' is empty or holds '/', '@' or a blank";
      return false;
    }
    if (auto [it, fresh] = by_name.emplace(h.name, &h); !fresh) {
      *error = h.dir + ": host '" + h.name + "' is also " + it->second->dir;
      return false;
    }
  }
  NoteSet ns;
  std::map<std::string, ojson> out_hosts;
  std::map<std::string, std::map<int, bool>> gpu_idx;
  for (auto& [name, h] : by_name) out_hosts[name] = HostBuilder(*h, &ns).build(&gpu_idx[name]);
  ojson jobs = ojson::array();
  if (opts.job) {
    ojson ranks = ojson::array();
    int rank = 0;
    for (const HostSlots& hs : opts.job->hosts) {
      std::string host = hs.host;
      if (!by_name.count(host)) {
        std::vector<std::string> same;
        for (auto& [n, h] : by_name)
          if (short_name(n) == short_name(host)) same.push_back(n);
        if (same.size() == 1) {
          ns.add("job-short",
                 "job host '" + host + "' is taken as collected host '" + same[0] + "'");
          host = same[0];
        } else if (!out_hosts.count(host)) {
          ns.add("job-missing",
                 "job host '" + host + "' has no collected outputs: listed without devices");
          out_hosts[host] = ojson{{"name", host}};
        }
      }
      int slots = hs.slots ? hs.slots : opts.job->default_slots;
      const auto& gi = gpu_idx[host];
      for (int s = 0; s < slots; ++s, ++rank) {
        ojson r{{"rank", rank}, {"host", host}};
        if (gi.count(s))
          r["gpu"] = s;
        else if (!gi.empty())
          ns.add("rank-no-gpu", "host " + host + ": rank " + std::to_string(rank) + " (local " +
                                    std::to_string(s) +
                                    ") has no GPU of that index: listed without a GPU");
        ranks.push_back(std::move(r));
      }
    }
    jobs.push_back({{"id", opts.job->id}, {"ranks", std::move(ranks)}});
  }
  ojson doc;
  if (!opts.cluster.empty()) doc["cluster"] = opts.cluster;
  doc["hosts"] = ojson::array();
  for (auto& [n, h] : out_hosts) doc["hosts"].push_back(std::move(h));
  if (!jobs.empty()) doc["jobs"] = std::move(jobs);
  *json = doc.dump(2) + "\n";
  ns.flush(notes);
  return true;
}

}  // namespace reflex::discover
