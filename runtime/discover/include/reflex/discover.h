// `reflex topology`'s parsers and builder: topology.json (docs/interfaces.md §1)
// from the outputs an SRE can collect on each host (lspci, nvidia-smi, ibdev2netdev,
// ibstat, hostname) and a job's host list. Only tool *output formats* are parsed
// here; nothing here knows what a log message means.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reflex::discover {

// "dddd:bb:dd.f" (lower case, 4-digit domain) from "bb:dd.f", "dddd:bb:dd.f" or
// nvidia-smi's "dddddddd:bb:dd.f"; nullopt when `text` is none of those.
std::optional<std::string> normalize_bdf(std::string_view text);

// A parser's refusal: what is wrong and where (1-based line, 0 = the whole text).
struct ParseError {
  int line = 0;
  std::string message;
};

// ---- lspci (lspci_tree.cpp) ----
struct PciDevice {
  std::string bdf;          // normalised
  std::string parent;       // the bridge above it; "" when it sits on a root bus
  bool bridge = false;      // it has a secondary bus (a root port or a switch port)
  std::string port_type;    // lspci -vvv's "Root Port", "Downstream Port", ... ("" unknown)
  std::string description;  // vendor and device name, when the output has them
};
struct PciTree {
  std::vector<PciDevice> devices;  // sorted by bdf
  const PciDevice* find(std::string_view bdf) const;
};
// `lspci -t` / `lspci -tv` (any -n/-nn variant): the tree drawing.
std::optional<PciTree> parse_lspci_tree(std::string_view text, ParseError* err);
// `lspci -vvv` (or -vv): parents from each bridge's "Bus: primary=, secondary=".
std::optional<PciTree> parse_lspci_verbose(std::string_view text, ParseError* err);
// Both views of one host: `b`'s parents fill gaps of `a`, port types and names too.
PciTree merge_trees(const PciTree& a, const PciTree& b);

// ---- nvidia-smi -q (nvsmi_query.cpp) ----
struct GpuRecord {
  int index = 0;  // nvidia-smi's index: the order of the -q report
  std::string bdf, serial, uuid;
};
std::optional<std::vector<GpuRecord>> parse_nvsmi_query(std::string_view text, ParseError* err);

// ---- nvidia-smi --query-gpu=... --format=csv[,noheader] (nvsmi_csv.cpp) ----
// Columns by the header's names (index, pci.bus_id, serial, uuid, name or their
// gpu_* aliases; others are ignored); without a header the columns are
// index, pci.bus_id, serial, uuid, name. An `index` column is required; the
// records come sorted by it.
std::optional<std::vector<GpuRecord>> parse_nvsmi_csv(std::string_view text, ParseError* err);

// ---- nvidia-smi nvlink -s / nvlink --status (nvsmi_nvlink.cpp) ----
struct NvlinkStatus {
  int gpu = 0;                // "GPU N:"
  std::string uuid;           // as printed in "(UUID: ...)"
  int links = 0;              // "Link N:" lines printed for the GPU
  std::vector<int> inactive;  // link numbers printed as "<inactive>", ascending
  bool all_inactive = false;  // the "NVML: ... all links are inActive" line instead of links
};
std::optional<std::vector<NvlinkStatus>> parse_nvsmi_nvlink(std::string_view text, ParseError* err);

// ---- nvidia-smi topo -m (nvsmi_topo.cpp) ----
struct TopoMatrix {
  std::vector<std::string> columns;  // device columns: "GPU0".., then NICs by name
  // rows["GPU0"]["mlx5_0"] = "PIX"; NIC columns renamed through the NIC legend
  std::map<std::string, std::map<std::string, std::string>> cells;
  std::vector<int> gpus;             // GPU indexes of the rows
  std::vector<std::string> nics;     // NIC column names (mlx5_N when known)
  std::vector<std::string> unnamed;  // NIC columns the legend does not name
};
std::optional<TopoMatrix> parse_nvsmi_topo(std::string_view text, ParseError* err);

// ---- ibdev2netdev / ibstat (ib_devices.cpp) ----
struct IbPort {
  std::string device;  // mlx5_0
  int port = 0;        // 0 = not given
  std::string bdf;     // ibdev2netdev -v only
  std::string netdev;  // ibdev2netdev only
  std::string state;   // "Up"/"Down" (netdev), ibstat's "Active", ...
};
std::optional<std::vector<IbPort>> parse_ibdev2netdev(std::string_view text, ParseError* err);
std::optional<std::vector<IbPort>> parse_ibstat(std::string_view text, ParseError* err);

// ---- job host lists (hostlist.cpp) ----
struct HostSlots {
  std::string host;
  int slots = 0;  // 0 = not given (the default applies)
};
// `scontrol show hostnames` (a name a line), an Open MPI / DeepSpeed hostfile
// (`host slots=8`), or an MPICH one (`host:8`).
std::optional<std::vector<HostSlots>> parse_hostlist(std::string_view text, ParseError* err);

// ---- what a file is (sniff.cpp) ----
enum class OutputKind {
  unknown,
  lspci_tree,
  lspci_verbose,
  nvsmi_query,
  nvsmi_topo,
  nvsmi_csv,
  nvsmi_nvlink,
  ibdev2netdev,
  ibstat,
  hostname
};
const char* output_kind_name(OutputKind k);
// By content first; `file_name` only tells a bare `hostname` file.
OutputKind sniff(std::string_view file_name, std::string_view text);

// ---- one host's collected directory (host_dir.cpp) ----
struct HostOutputs {
  std::string dir;   // as given
  std::string name;  // from `hostname`, else the directory's name
  std::optional<PciTree> pci;
  std::optional<std::vector<GpuRecord>> gpus;  // --query-gpu, else -q (merged: see read_host_dir)
  std::optional<TopoMatrix> topo;
  std::optional<std::vector<NvlinkStatus>> nvlinks;
  std::vector<IbPort> ib;  // ibdev2netdev and ibstat, merged by device and port
  bool has_ib = false;
};
// Reads every regular file of `dir` (not recursively) and parses what it
// recognises. With both `nvidia-smi -q` and `--query-gpu` the CSV's explicit
// indexes win; the two are joined by BDF and a disagreement is noted. Returns false with `*error`
// naming the file and line when a file is unreadable or a recognised output is malformed; files it
// cannot use are noted and skipped.
bool read_host_dir(const std::string& dir, HostOutputs* out, std::vector<std::string>* notes,
                   std::string* error);
// A directory of host directories, or one host's directory: the host
// directories it stands for (sorted). One holding recognised outputs is a host.
std::vector<std::string> host_dirs_of(const std::string& dir, std::string* error);

// ---- the builder (builder.cpp) ----
struct JobSpec {
  std::string id;
  std::vector<HostSlots> hosts;
  int default_slots = 8;
};
struct BuildOptions {
  std::string cluster;  // "" = none
  std::optional<JobSpec> job;
};
// topology.json text (sorted, 2-space indent) and notes on what could not be
// determined. Returns false with `*error` when the hosts cannot make a
// topology (two directories naming one host, a name with '/' or '@').
bool build_topology(const std::vector<HostOutputs>& hosts, const BuildOptions& opts,
                    std::string* json, std::vector<std::string>* notes, std::string* error);

}  // namespace reflex::discover
