// Private to reflex_topology: the topology loader, split by job into three
// layers that share one load's state: TopoReader (the state, errors, notes,
// typed field readers and the device index; loader.cpp), HostLoader (one
// element of $.hosts and its devices; loader_hosts.cpp) and TopoLoader (the
// whole document: the cluster-level sections and the order of the steps;
// loader_cluster.cpp).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "topology_data.h"

namespace reflex::topo {

// One load's state and the helpers every section uses; the first error
// aborts the whole load.
class TopoReader {
 public:
  using json = nlohmann::json;

  explicit TopoReader(TopoData* out, const std::string& origin, TopologyError* err)
      : origin_(origin), err_(err), im_(out) {}

 protected:
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
  void note(const std::string& kind, std::string example, std::string consequence);
  void finish_notes();

  // Optional typed members. Return false (error set) when present with the wrong type.
  bool opt_string(const json& o, const char* key, const std::string& path, std::string* out,
                  bool* present = nullptr);
  bool req_string(const json& o, const char* key, const std::string& path, std::string* out);
  // Paths are passed as base + suffix and joined only on error: loading 100k
  // GPUs must not build a path string per field.
  bool name_ok(const std::string& s, const std::string& base, const char* suffix,
               bool allow_slash = false);
  bool opt_int(const json& o, const char* key, const std::string& path, int64_t* out,
               bool* present);
  bool opt_bdf(const json& o, const std::string& path, std::string* out);
  bool opt_ip(const json& o, const std::string& path, std::string* out);
  bool string_list(const json& o, const char* key, const std::string& path,
                   std::vector<std::string>* out, bool* present);

  int32_t add_dev(Dev d, const std::string& base, const char* suffix = "");
  bool index_bdf(int32_t host, const std::string& bdf, int32_t dev, const std::string& path,
                 bool allow_pcie_alias = false);

  // fn(element, path) for each object of the array o[key]; absent or null: none.
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

// The elements of $.hosts: the host, its BMC, PCIe switches and root ports,
// NICs, GPUs and NVSwitches.
class HostLoader : public TopoReader {
 public:
  using TopoReader::TopoReader;

  // Called by the streaming parser for each element of $.hosts as soon as it
  // is complete, so that only one host's DOM is alive at a time.
  bool host_element(const json& h) {
    size_t i = hosts_seen_++;
    streamed_hosts_ = true;
    return load_host(h, i);
  }

 protected:
  // A switch's root port, resolved once all the host's switches are known.
  struct RootPort {
    int32_t sw;
    std::string bdf, path;
  };
  // One element of $.hosts: the host itself, then its PCIe switches (GPUs and
  // NICs name them), NICs (GPUs name them), GPUs and NVSwitches.
  bool load_host(const json& h, size_t hi);
  // hosts[].bmc: a name or an IP that stands for this host when logs arrive
  // under it (resolve_host); a name that is also a host's is an error.
  bool add_bmc(const std::string& bmc, const std::string& path, int32_t hidx);
  // The host's own fields and device; appends it to im_->hosts as index hidx.
  bool add_host(const json& h, const std::string& path, int32_t hidx);
  bool load_pcie_switch(const json& s, const std::string& sp, int32_t hidx, SmallMap* sw_by_id,
                        std::vector<RootPort>* root_ports);
  // Root ports: a port BDF that is another switch's BDF chains the switches
  // (cascaded switches); otherwise the root port is a pcie_port of its own.
  bool link_root_ports(int32_t hidx, const std::vector<RootPort>& root_ports);
  // Cycles in cascaded switches would make below() loop; refuse them.
  bool check_pcie_cycles(int32_t hidx, const std::string& path);
  bool load_nic(const json& n, const std::string& np, int32_t hidx, const SmallMap& sw_by_id,
                SmallMap* nic_by_name);
  bool load_gpu(const json& g, const std::string& gp, int32_t hidx, const SmallMap& sw_by_id,
                const SmallMap& nic_by_name, std::vector<int64_t>* gpu_indexes);
  bool load_nvswitch(const json& s, const std::string& sp, int32_t hidx);
  void add_host_ip(const std::string& ip, int32_t hidx);
};

// Builds the indexes from JSON: hosts as they stream in, then the rest.
class TopoLoader : public HostLoader {
 public:
  using HostLoader::HostLoader;

  // Everything else, once the document is parsed ($.hosts is then empty).
  bool finish(const json& root);

 private:
  bool load_fabric(const json& root);
  int32_t new_fabric(const std::string& name, const std::string& tier, const std::string& path);
  // NICs' fabric switches and hosts' mounts name things that may come later in the file.
  bool resolve_pending();
  bool finish_fabric();
  bool load_storage(const json& root);
  bool load_jobs(const json& root);
  bool add_rank(int32_t jidx, int rank, const std::string& host, int64_t gpu,
                const std::string& path, const std::string& host_path, const std::string& gpu_path,
                bool explicit_gpu);
};

}  // namespace reflex::topo
