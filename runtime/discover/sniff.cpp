// Which tool wrote a file, from its first lines: people name collected files
// as they like, so the content decides (the name only for `hostname`).
#include <algorithm>

#include "reflex/discover.h"
#include "text_kit.h"

namespace reflex::discover {

const char* output_kind_name(OutputKind k) {
  switch (k) {
    case OutputKind::lspci_tree:
      return "lspci -tv";
    case OutputKind::lspci_verbose:
      return "lspci -vvv";
    case OutputKind::nvsmi_query:
      return "nvidia-smi -q";
    case OutputKind::nvsmi_topo:
      return "nvidia-smi topo -m";
    case OutputKind::nvsmi_csv:
      return "nvidia-smi --query-gpu";
    case OutputKind::nvsmi_nvlink:
      return "nvidia-smi nvlink -s";
    case OutputKind::ibdev2netdev:
      return "ibdev2netdev";
    case OutputKind::ibstat:
      return "ibstat";
    case OutputKind::hostname:
      return "hostname";
    case OutputKind::unknown:
      break;
  }
  return "unknown";
}

namespace {

// The --query-gpu header names an identity field and the index or the bus id
// (a monitoring CSV of "timestamp, index, power.draw" is not a GPU list); a
// noheader row starts "<index>, <bus id>,".
bool csv_head(std::string_view t) {
  std::vector<std::string> names;
  size_t pos = 0;
  for (;;) {
    size_t comma = t.find(',', pos);
    names.push_back(kit::lower(kit::trim(t.substr(pos, comma == t.npos ? comma : comma - pos))));
    if (comma == t.npos) break;
    pos = comma + 1;
  }
  if (names.size() < 2) return false;
  if (kit::all_digits(names[0])) return names.size() >= 3 && normalize_bdf(names[1]).has_value();
  auto has = [&](std::initializer_list<const char*> any) {
    for (const char* n : any)
      if (std::find(names.begin(), names.end(), n) != names.end()) return true;
    return false;
  };
  return has({"index", "pci.bus_id", "gpu_bus_id"}) &&
         has({"pci.bus_id", "gpu_bus_id", "uuid", "gpu_uuid", "serial", "gpu_serial"});
}

// "GPU 0: <name> (UUID: ...)", also the start of `nvidia-smi -L`: only a link
// line (or NVML's all-inactive line) after it makes it nvlink -s.
bool gpu_uuid_head(std::string_view t) {
  return t.substr(0, 4) == "GPU " && t.size() > 4 && t[4] >= '0' && t[4] <= '9' &&
         t.find("(UUID: ") != std::string_view::npos;
}

}  // namespace

OutputKind sniff(std::string_view file_name, std::string_view text) {
  std::string_view base = file_name.substr(file_name.find_last_of('/') + 1);
  auto ls = kit::lines(text.substr(0, 1 << 16));
  bool bdf_head = false, gpu_head = false;
  int looked = 0;
  for (std::string_view line : ls) {
    std::string_view t = kit::trim(line);
    if (t.empty()) continue;
    if (++looked > 40) break;
    auto toks = kit::tokens(t);
    if (t.find("NVSMI LOG") != std::string_view::npos || t.substr(0, 13) == "Attached GPUs")
      return OutputKind::nvsmi_query;
    if (toks[0] == "GPU0" && (line[0] == ' ' || line[0] == '\t')) return OutputKind::nvsmi_topo;
    if (t.substr(0, 2) == "-[" || t.substr(0, 3) == "-+-" || t.substr(0, 4) == "+-[0" ||
        t.substr(0, 4) == "\\-[0")
      return OutputKind::lspci_tree;
    if (t.find("==>") != std::string_view::npos && t.find("port") != std::string_view::npos)
      return OutputKind::ibdev2netdev;
    if (t.substr(0, 4) == "CA '") return OutputKind::ibstat;
    if (looked == 1 && csv_head(t)) return OutputKind::nvsmi_csv;
    if (line[0] != ' ' && line[0] != '\t' && gpu_uuid_head(t)) {
      gpu_head = true;
      continue;
    }
    if (gpu_head &&
        ((t.substr(0, 5) == "Link " && t.find(':') != t.npos) || t.substr(0, 5) == "NVML:"))
      return OutputKind::nvsmi_nvlink;
    if (line[0] != ' ' && line[0] != '\t' && normalize_bdf(toks[0]) && toks.size() > 1)
      bdf_head = true;
    if (bdf_head && (line[0] == ' ' || line[0] == '\t') && t.find(':') != std::string_view::npos)
      return OutputKind::lspci_verbose;
  }
  if ((base == "hostname" || base == "hostname.txt") && looked == 1) return OutputKind::hostname;
  return OutputKind::unknown;
}

}  // namespace reflex::discover
