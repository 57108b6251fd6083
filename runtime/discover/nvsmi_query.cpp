// `nvidia-smi -q`: one block a GPU, headed "GPU 00000000:18:00.0", in the
// order of nvidia-smi's own index.
#include "reflex/discover.h"
#include "text_kit.h"

namespace reflex::discover {

std::optional<std::vector<GpuRecord>> parse_nvsmi_query(std::string_view text, ParseError* err) {
  std::vector<GpuRecord> gpus;
  long attached = -1;
  int attached_line = 0, no = 0;
  auto fail = [&](int line, std::string msg) {
    if (err) *err = {line, std::move(msg)};
    return std::nullopt;
  };
  for (std::string_view line : kit::lines(text)) {
    ++no;
    std::string_view v;
    if (line.substr(0, 4) == "GPU " && line.size() > 4 && line[4] != ' ') {
      auto bdf = normalize_bdf(line.substr(4));
      if (!bdf) return fail(no, "bad GPU address '" + std::string(line.substr(4)) + "'");
      GpuRecord g;
      g.index = int(gpus.size());
      g.bdf = *bdf;
      gpus.push_back(std::move(g));
    } else if (kit::key_value(line, "Attached GPUs", &v)) {
      if (!kit::all_digits(v)) return fail(no, "bad 'Attached GPUs' count");
      attached = std::stol(std::string(v));
      attached_line = no;
    } else if (!gpus.empty() && kit::key_value(line, "Serial Number", &v)) {
      if (v != "N/A" && v != "[N/A]") gpus.back().serial = std::string(v);
    } else if (!gpus.empty() && kit::key_value(line, "GPU UUID", &v)) {
      if (v != "N/A") gpus.back().uuid = std::string(v);
    }
  }
  if (gpus.empty()) return fail(0, "no GPU block ('GPU 00000000:BB:DD.F') found");
  // A report of some GPUs only (nvidia-smi -q -i N) numbers them from 0: its
  // order is not nvidia-smi's index then.
  if (attached >= 0 && attached != long(gpus.size()))
    return fail(attached_line, "'Attached GPUs' says " + std::to_string(attached) +
                                   " but the report holds " + std::to_string(gpus.size()) +
                                   " (a partial report cannot give GPU indexes)");
  return gpus;
}

}  // namespace reflex::discover
