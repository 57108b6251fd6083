// A job's hosts: `scontrol show hostnames` output (a name a line), an Open MPI
// or DeepSpeed hostfile (`node-1 slots=8`), or an MPICH one (`node-1:8`).
#include "reflex/discover.h"
#include "text_kit.h"

namespace reflex::discover {

std::optional<std::vector<HostSlots>> parse_hostlist(std::string_view text, ParseError* err) {
  std::vector<HostSlots> out;
  int no = 0;
  auto fail = [&](std::string msg) {
    if (err) *err = {no, std::move(msg)};
    return std::nullopt;
  };
  for (std::string_view line : kit::lines(text)) {
    ++no;
    line = line.substr(0, line.find('#'));
    auto toks = kit::tokens(line);
    if (toks.empty()) continue;
    HostSlots h;
    std::string_view name = toks[0];
    if (size_t colon = name.find(':'); colon != std::string_view::npos) {
      std::string_view n = name.substr(colon + 1);
      if (!kit::all_digits(n)) return fail("bad slot count '" + std::string(n) + "'");
      h.slots = std::stoi(std::string(n));
      name = name.substr(0, colon);
    }
    if (name.find_first_of("[],/@") != std::string_view::npos)
      return fail("'" + std::string(name) +
                  "' is not a host name (give the expanded list: scontrol show hostnames)");
    h.host = std::string(name);
    for (size_t i = 1; i < toks.size(); ++i) {
      std::string_view t = toks[i];
      if (t.substr(0, 6) == "slots=") {
        if (!kit::all_digits(t.substr(6))) return fail("bad '" + std::string(t) + "'");
        h.slots = std::stoi(std::string(t.substr(6)));
      } else if (t.substr(0, 10) != "max_slots=" && t.substr(0, 10) != "max-slots=") {
        return fail("unexpected '" + std::string(t) + "' (expected 'slots=N')");
      }
    }
    if (h.slots < 0 || h.slots > 4096) return fail("slot count out of range");
    if (h.slots == 0 && (toks.size() > 1 || toks[0].find(':') != std::string_view::npos))
      return fail("a host with 0 slots runs no rank");
    for (const HostSlots& o : out)
      if (o.host == h.host) return fail("host '" + h.host + "' is listed twice");
    out.push_back(std::move(h));
  }
  if (out.empty()) return fail("no host listed");
  return out;
}

}  // namespace reflex::discover
