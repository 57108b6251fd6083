// `nvidia-smi --query-gpu=index,pci.bus_id,serial,uuid,name --format=csv`:
// a header row of the queried field names (", "-separated, as nvidia-smi
// prints them), then one row a GPU. With `,noheader` the columns are taken in
// the order scripts/collect-topology.sh asks for them.
#include <algorithm>
#include <set>

#include "reflex/discover.h"
#include "text_kit.h"

namespace reflex::discover {

namespace {

enum Col { c_index, c_bdf, c_serial, c_uuid, c_name, c_other };

// nvidia-smi prints a field under the name it was asked by; both spellings
// of `nvidia-smi --help-query-gpu` are accepted.
Col column_of(std::string_view name) {
  std::string n = kit::lower(kit::trim(name));
  if (n == "index") return c_index;
  if (n == "pci.bus_id" || n == "gpu_bus_id") return c_bdf;
  if (n == "serial" || n == "gpu_serial") return c_serial;
  if (n == "uuid" || n == "gpu_uuid") return c_uuid;
  if (n == "name" || n == "gpu_name") return c_name;
  return c_other;
}

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  for (;;) {
    size_t comma = line.find(',', pos);
    out.push_back(
        kit::trim(line.substr(pos, comma == std::string_view::npos ? comma : comma - pos)));
    if (comma == std::string_view::npos) return out;
    pos = comma + 1;
  }
}

bool not_given(std::string_view v) {
  return v.empty() || v == "N/A" || v == "[N/A]" || v == "[Not Supported]";
}

constexpr size_t kMaxGpus = 4096;

}  // namespace

// A header is a row whose first field is not a number: nvidia-smi's data rows
// start with the index when the query does, and the header names an identity
// field (see sniff.cpp).
std::optional<std::vector<GpuRecord>> parse_nvsmi_csv(std::string_view text, ParseError* err) {
  auto fail = [&](int line, std::string msg) {
    if (err) *err = {line, std::move(msg)};
    return std::nullopt;
  };
  std::vector<Col> cols;
  std::vector<GpuRecord> gpus;
  std::set<int> indexes;
  std::set<std::string> bdfs;
  int no = 0;
  for (std::string_view line : kit::lines(text)) {
    ++no;
    if (kit::trim(line).empty()) continue;
    auto f = fields(line);
    if (cols.empty()) {
      if (!kit::all_digits(f[0])) {
        for (std::string_view name : f) cols.push_back(column_of(name));
        if (std::find(cols.begin(), cols.end(), c_index) == cols.end())
          return fail(no, "no 'index' column (query index with --query-gpu)");
        continue;
      }
      cols = {c_index, c_bdf, c_serial, c_uuid, c_name};
      if (f.size() != cols.size())
        return fail(no, "a row without a header must be index, pci.bus_id, serial, uuid, name");
    }
    if (f.size() != cols.size())
      return fail(no, "row has " + std::to_string(f.size()) + " fields, the header " +
                          std::to_string(cols.size()));
    if (gpus.size() >= kMaxGpus)
      return fail(no, "more than " + std::to_string(kMaxGpus) + " GPU rows");
    GpuRecord g;
    for (size_t i = 0; i < cols.size(); ++i) {
      std::string_view v = f[i];
      switch (cols[i]) {
        case c_index:
          if (!kit::all_digits(v) || v.size() > 6)
            return fail(no, "bad index '" + std::string(v) + "'");
          g.index = std::stoi(std::string(v));
          break;
        case c_bdf: {
          auto bdf = normalize_bdf(v);
          if (!bdf) return fail(no, "bad pci.bus_id '" + std::string(v) + "'");
          g.bdf = *bdf;
          break;
        }
        case c_serial:
          if (!not_given(v)) g.serial = std::string(v);
          break;
        case c_uuid:
          if (!not_given(v)) g.uuid = std::string(v);
          break;
        case c_name:
        case c_other:
          break;
      }
    }
    if (!indexes.insert(g.index).second)
      return fail(no, "GPU index " + std::to_string(g.index) + " appears twice");
    if (!g.bdf.empty() && !bdfs.insert(g.bdf).second)
      return fail(no, "GPU address " + g.bdf + " appears twice");
    gpus.push_back(std::move(g));
  }
  if (gpus.empty()) return fail(0, "no GPU rows");
  std::sort(gpus.begin(), gpus.end(),
            [](const GpuRecord& a, const GpuRecord& b) { return a.index < b.index; });
  return gpus;
}

}  // namespace reflex::discover
