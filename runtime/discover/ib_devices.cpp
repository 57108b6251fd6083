// RDMA device lists: `ibdev2netdev` (and its -v form, which leads with the
// PCI address) and `ibstat`'s per-CA, per-port blocks.
#include "reflex/discover.h"
#include "text_kit.h"

namespace reflex::discover {

namespace {

std::string unparen(std::string_view s) {
  if (s.size() >= 2 && s.front() == '(' && s.back() == ')') s = s.substr(1, s.size() - 2);
  return std::string(s);
}

}  // namespace

std::optional<std::vector<IbPort>> parse_ibdev2netdev(std::string_view text, ParseError* err) {
  std::vector<IbPort> out;
  int no = 0;
  for (std::string_view line : kit::lines(text)) {
    ++no;
    auto toks = kit::tokens(line);
    if (toks.empty()) continue;
    size_t arrow = 0;
    while (arrow < toks.size() && toks[arrow] != "==>") ++arrow;
    if (arrow == toks.size()) {
      if (out.empty()) continue;  // a pasted prompt before the list
      if (err) *err = {no, "expected 'DEVICE port N ==> NETDEV (STATE)'"};
      return std::nullopt;
    }
    IbPort p;
    size_t first = 0;
    if (auto bdf = normalize_bdf(toks[0]); bdf && toks.size() > 1) {
      p.bdf = *bdf;
      first = 1;
    }
    p.device = std::string(toks[first]);
    for (size_t i = first + 1; i + 1 < arrow; ++i)
      if (toks[i] == "port" && kit::all_digits(toks[i + 1]))
        p.port = std::stoi(std::string(toks[i + 1]));
    if (p.port == 0 || p.device.find('/') != std::string::npos) {
      if (err) *err = {no, "expected 'DEVICE port N ==> NETDEV (STATE)'"};
      return std::nullopt;
    }
    if (arrow + 1 < toks.size()) p.netdev = std::string(toks[arrow + 1]);
    if (arrow + 2 < toks.size()) p.state = unparen(toks[arrow + 2]);
    out.push_back(std::move(p));
  }
  if (out.empty()) {
    if (err) *err = {0, "no 'DEVICE port N ==> NETDEV' line found"};
    return std::nullopt;
  }
  return out;
}

std::optional<std::vector<IbPort>> parse_ibstat(std::string_view text, ParseError* err) {
  std::vector<IbPort> out;
  std::string ca;
  int no = 0;
  for (std::string_view line : kit::lines(text)) {
    ++no;
    std::string_view t = kit::trim(line);
    std::string_view v;
    if (t.substr(0, 4) == "CA '" && t.size() > 5 && t.back() == '\'') {
      ca = std::string(t.substr(4, t.size() - 5));
    } else if (!ca.empty() && t.substr(0, 5) == "Port " && t.back() == ':' &&
               kit::all_digits(t.substr(5, t.size() - 6))) {
      IbPort p;
      p.device = ca;
      p.port = std::stoi(std::string(t.substr(5, t.size() - 6)));
      out.push_back(std::move(p));
    } else if (!out.empty() && out.back().device == ca && kit::key_value(line, "State", &v)) {
      out.back().state = std::string(v);
    }
  }
  if (out.empty()) {
    if (err) *err = {0, "no \"CA '...'\" block with a port found"};
    return std::nullopt;
  }
  return out;
}

}  // namespace reflex::discover
