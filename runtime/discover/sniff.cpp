// Which tool wrote a file, from its first lines: people name collected files
// as they like, so the content decides (the name only for `hostname`).
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

OutputKind sniff(std::string_view file_name, std::string_view text) {
  std::string_view base = file_name.substr(file_name.find_last_of('/') + 1);
  auto ls = kit::lines(text.substr(0, 1 << 16));
  bool bdf_head = false;
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
    if (line[0] != ' ' && line[0] != '\t' && normalize_bdf(toks[0]) && toks.size() > 1)
      bdf_head = true;
    if (bdf_head && (line[0] == ' ' || line[0] == '\t') && t.find(':') != std::string_view::npos)
      return OutputKind::lspci_verbose;
  }
  if ((base == "hostname" || base == "hostname.txt") && looked == 1) return OutputKind::hostname;
  return OutputKind::unknown;
}

}  // namespace reflex::discover
