// `nvidia-smi topo -m`: the connection matrix (header row of device columns,
// then one row a device) and the NIC legend ("NIC0: mlx5_0") of newer drivers.
#include <algorithm>

#include "reflex/discover.h"
#include "text_kit.h"

namespace reflex::discover {

namespace {

bool is_gpu_col(std::string_view t) {
  return t.size() > 3 && t.substr(0, 3) == "GPU" && kit::all_digits(t.substr(3));
}
bool is_nic_placeholder(std::string_view t) {
  return t.size() > 3 && t.substr(0, 3) == "NIC" && kit::all_digits(t.substr(3));
}

}  // namespace

std::optional<TopoMatrix> parse_nvsmi_topo(std::string_view text, ParseError* err) {
  TopoMatrix m;
  auto fail = [&](int line, std::string msg) {
    if (err) *err = {line, std::move(msg)};
    return std::nullopt;
  };
  std::vector<std::string_view> ls = kit::lines(text);
  size_t hi = 0;
  for (; hi < ls.size(); ++hi) {
    auto toks = kit::tokens(ls[hi]);
    if (!toks.empty() && toks[0] == "GPU0") break;
  }
  if (hi == ls.size()) return fail(0, "no header row starting with GPU0");
  // Device columns run until the affinity columns ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID").
  for (std::string_view t : kit::tokens(ls[hi])) {
    if (t == "CPU" || t == "NUMA" || (t == "GPU" && !m.columns.empty())) break;
    m.columns.emplace_back(t);
  }
  std::map<std::string, std::string> legend;  // NIC0 -> mlx5_0
  for (size_t i = hi + 1; i < ls.size(); ++i) {
    auto toks = kit::tokens(ls[i]);
    if (toks.size() == 2 && toks[0].size() > 1 && toks[0].back() == ':' &&
        is_nic_placeholder(toks[0].substr(0, toks[0].size() - 1)))
      legend[std::string(toks[0].substr(0, toks[0].size() - 1))] = std::string(toks[1]);
  }
  std::vector<std::string> names;  // columns renamed through the legend
  for (const std::string& c : m.columns) {
    auto it = legend.find(c);
    names.push_back(it != legend.end() ? it->second : c);
    if (is_gpu_col(c)) {
      m.gpus.push_back(std::stoi(c.substr(3)));
    } else {
      m.nics.push_back(names.back());
      if (it == legend.end() && is_nic_placeholder(c)) m.unnamed.push_back(c);
    }
  }
  for (size_t i = hi + 1; i < ls.size(); ++i) {
    auto toks = kit::tokens(ls[i]);
    if (toks.empty()) continue;
    if (toks[0] == "Legend:" || toks[0] == "NIC" || (toks[0].back() == ':' && toks.size() <= 2))
      break;
    auto col = std::find(m.columns.begin(), m.columns.end(), toks[0]);
    if (col == m.columns.end())
      return fail(int(i + 1), "row '" + std::string(toks[0]) + "' is not a column of the header");
    if (toks.size() < m.columns.size() + 1)
      return fail(int(i + 1), "row " + std::string(toks[0]) + " has " +
                                  std::to_string(toks.size() - 1) + " cells, the header " +
                                  std::to_string(m.columns.size()) + " columns");
    std::string row = names[size_t(col - m.columns.begin())];
    if (m.cells.count(row))
      return fail(int(i + 1), "row " + std::string(toks[0]) + " appears twice");
    auto& cells = m.cells[row];
    for (size_t c = 0; c < m.columns.size(); ++c) cells[names[c]] = std::string(toks[c + 1]);
  }
  for (int g : m.gpus)
    if (!m.cells.count("GPU" + std::to_string(g)))
      return fail(int(hi + 1), "no row for GPU" + std::to_string(g));
  return m;
}

}  // namespace reflex::discover
