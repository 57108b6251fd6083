// `nvidia-smi nvlink -s` (`nvlink --status`): a "GPU N: <name> (UUID: <uuid>)"
// line a GPU, then its "Link N: <speed>" lines (indented), a link nvidia-smi
// cannot use printed as "Link N: <inactive>"; a GPU whose links are all down
// gets NVML's one line "Unable to retrieve NVLink information as all links are
// inActive" instead. Only that layout is read here; what a down link means is
// the KB's.
#include <algorithm>

#include "reflex/discover.h"
#include "text_kit.h"

namespace reflex::discover {

namespace {

constexpr int kMaxLinks = 64;      // NVLink 5 has 18 a GPU; room for more
constexpr size_t kMaxGpus = 4096;  // as for --query-gpu

// "Link 12: 25 GB/s" -> 12 and "25 GB/s"; false when `t` is not a link line.
bool link_line(std::string_view t, int* link, std::string_view* value) {
  if (t.substr(0, 5) != "Link ") return false;
  size_t colon = t.find(':');
  if (colon == std::string_view::npos) return false;
  std::string_view num = t.substr(5, colon - 5);
  if (!kit::all_digits(num) || num.size() > 3) return false;
  *link = std::stoi(std::string(num));
  *value = kit::trim(t.substr(colon + 1));
  return true;
}

// "GPU 3: Tesla V100-SXM2-32GB (UUID: GPU-...)" -> 3 and the UUID text.
bool gpu_line(std::string_view t, int* gpu, std::string* uuid) {
  if (t.substr(0, 4) != "GPU ") return false;
  size_t colon = t.find(':');
  if (colon == std::string_view::npos) return false;
  std::string_view num = t.substr(4, colon - 4);
  if (!kit::all_digits(num) || num.size() > 6) return false;
  *gpu = std::stoi(std::string(num));
  uuid->clear();
  size_t u = t.rfind("(UUID: ");
  if (u != std::string_view::npos && t.back() == ')')
    *uuid = std::string(kit::trim(t.substr(u + 7, t.size() - u - 8)));
  return true;
}

}  // namespace

std::optional<std::vector<NvlinkStatus>> parse_nvsmi_nvlink(std::string_view text,
                                                            ParseError* err) {
  auto fail = [&](int line, std::string msg) {
    if (err) *err = {line, std::move(msg)};
    return std::nullopt;
  };
  std::vector<NvlinkStatus> out;
  std::vector<bool> seen;  // link numbers of the current GPU
  int no = 0;
  for (std::string_view line : kit::lines(text)) {
    ++no;
    std::string_view t = kit::trim(line);
    if (t.empty()) continue;
    NvlinkStatus g;
    int link = 0;
    std::string_view value;
    if (line[0] != ' ' && line[0] != '\t' && gpu_line(t, &g.gpu, &g.uuid)) {
      if (std::any_of(out.begin(), out.end(),
                      [&](const NvlinkStatus& o) { return o.gpu == g.gpu; }))
        return fail(no, "GPU " + std::to_string(g.gpu) + " appears twice");
      if (out.size() >= kMaxGpus)
        return fail(no, "more than " + std::to_string(kMaxGpus) + " GPUs");
      out.push_back(std::move(g));
      seen.assign(kMaxLinks, false);
    } else if (link_line(t, &link, &value)) {
      if (out.empty()) return fail(no, "a link line before any 'GPU N:' line");
      NvlinkStatus& cur = out.back();
      if (cur.all_inactive) return fail(no, "a link line after 'all links are inActive'");
      if (link >= kMaxLinks) return fail(no, "link number " + std::to_string(link) + " too large");
      if (seen[size_t(link)]) return fail(no, "link " + std::to_string(link) + " appears twice");
      if (value.empty()) return fail(no, "link " + std::to_string(link) + " has no value");
      seen[size_t(link)] = true;
      ++cur.links;
      if (value == "<inactive>") cur.inactive.push_back(link);
    } else if (t.substr(0, 5) == "NVML:" &&
               kit::lower(t).find("all links are inactive") != std::string::npos) {
      if (out.empty() || out.back().links > 0 || out.back().all_inactive)
        return fail(no, "'all links are inActive' must follow a GPU line directly");
      out.back().all_inactive = true;
    } else {
      return fail(no, "not a 'GPU N:' or 'Link N:' line of nvidia-smi nvlink -s");
    }
  }
  if (out.empty()) return fail(0, "no 'GPU N: ... (UUID: ...)' line found");
  for (NvlinkStatus& g : out) std::sort(g.inactive.begin(), g.inactive.end());
  std::sort(out.begin(), out.end(),
            [](const NvlinkStatus& a, const NvlinkStatus& b) { return a.gpu < b.gpu; });
  return out;
}

}  // namespace reflex::discover
