// lspci's two views of the PCI hierarchy: the tree drawing of `lspci -t[v]`
// and the per-device blocks of `lspci -vvv` (parents from the bridges' bus
// numbers, port types from the Express capability).
#include <algorithm>
#include <map>

#include "reflex/discover.h"
#include "text_kit.h"

namespace reflex::discover {

namespace {

std::string hex_lower(std::string_view s, size_t width) {
  std::string out = kit::lower(s);
  while (out.size() < width) out.insert(out.begin(), '0');
  return out;
}

void sort_tree(PciTree* t) {
  std::sort(t->devices.begin(), t->devices.end(),
            [](const PciDevice& a, const PciDevice& b) { return a.bdf < b.bdf; });
}

bool fail(ParseError* err, int line, std::string msg) {
  if (err) *err = {line, std::move(msg)};
  return false;
}

// One line of the tree drawing. `open` maps a column where a sibling list was
// opened ('+' of "-+-") to the bus its members sit on.
struct TreeCtx {
  std::string domain = "0000", bus = "00", parent;
};

class TreeParser {
 public:
  TreeParser(PciTree* tree, ParseError* err) : tree_(tree), err_(err) {}

  bool line(std::string_view s, int no) {
    no_ = no;
    size_t i = 0;
    while (i < s.size() && (s[i] == ' ' || s[i] == '|')) ++i;
    if (i == s.size()) return true;  // a blank or a bare continuation line
    TreeCtx ctx;
    if (s[i] == '+' || s[i] == '\\') {
      auto it = open_.find(i);
      if (it == open_.end())
        return fail(err_, no,
                    "branch at column " + std::to_string(i + 1) + " has no parent above it");
      ctx = it->second;
      ++i;
    } else if (s[i] != '-') {
      return fail(err_, no, "not a line of the lspci tree");
    }
    return items(s, i, ctx);
  }

 private:
  bool items(std::string_view s, size_t i, TreeCtx ctx) {
    for (;;) {
      while (i < s.size() && (s[i] == '-' || s[i] == '+')) {
        if (s[i] == '+') open_[i] = ctx;
        ++i;
      }
      if (i == s.size()) return true;  // a bridge with nothing below it
      if (s[i] == '[') {
        size_t close = s.find(']', i);
        if (close == std::string_view::npos) return fail(err_, no_, "unclosed '['");
        std::string_view in = s.substr(i + 1, close - i - 1);
        size_t colon = in.find(':');
        std::string_view dom = colon == std::string_view::npos ? "0000" : in.substr(0, colon);
        std::string_view bus = colon == std::string_view::npos ? in : in.substr(colon + 1);
        if (!kit::all_hex(dom) || dom.size() > 4 || !kit::all_hex(bus) || bus.size() > 2)
          return fail(err_, no_, "bad root bus '[" + std::string(in) + "]'");
        ctx = {hex_lower(dom, 4), hex_lower(bus, 2), ""};
        i = close + 1;
        continue;
      }
      if (i + 4 > s.size() || !kit::is_hex(s[i]) || !kit::is_hex(s[i + 1]) || s[i + 2] != '.' ||
          s[i + 3] < '0' || s[i + 3] > '7')
        return fail(err_, no_,
                    "unexpected '" + std::string(1, s[i]) + "' at column " + std::to_string(i + 1));
      PciDevice d;
      d.bdf = ctx.domain + ":" + ctx.bus + ":" + kit::lower(s.substr(i, 4));
      d.parent = ctx.parent;
      i += 4;
      if (!seen_.emplace(d.bdf, true).second)
        return fail(err_, no_, "device " + d.bdf + " appears twice");
      if (s.substr(i, 2) == "-[") {
        size_t close = s.find(']', i);
        if (close == std::string_view::npos) return fail(err_, no_, "unclosed bus range");
        std::string_view range = s.substr(i + 2, close - i - 2);
        std::string_view sec = range.substr(0, range.find('-'));
        if (!kit::all_hex(sec) || sec.size() > 2)
          return fail(err_, no_, "bad bus range '[" + std::string(range) + "]'");
        d.bridge = true;
        ctx = {ctx.domain, hex_lower(sec, 2), d.bdf};
        tree_->devices.push_back(std::move(d));
        i = close + 1;
        continue;
      }
      d.description = std::string(kit::trim(s.substr(i)));
      tree_->devices.push_back(std::move(d));
      return true;
    }
  }

  PciTree* tree_;
  ParseError* err_;
  int no_ = 0;
  std::map<size_t, TreeCtx> open_;
  std::map<std::string, bool> seen_;
};

// "Express (v2) Root Port (Slot+), MSI 00" -> "Root Port".
std::string express_port_type(std::string_view line) {
  size_t e = line.find("Express (v");
  if (e == std::string_view::npos) {
    e = line.find("Express ");
    if (e == std::string_view::npos) return "";
  }
  size_t start = line.find(')', e);
  start =
      (line.substr(e, 10) == "Express (v" && start != std::string_view::npos) ? start + 1 : e + 8;
  std::string_view rest = kit::trim(line.substr(start));
  size_t end = std::min(rest.find(','), rest.find(" ("));
  return std::string(kit::trim(rest.substr(0, end)));
}

}  // namespace

std::optional<std::string> normalize_bdf(std::string_view text) {
  std::string_view t = kit::trim(text);
  if (t.size() >= 4 && kit::lower(t.substr(0, 4)) == "pci:") t.remove_prefix(4);
  size_t dot = t.rfind('.');
  if (dot == std::string_view::npos || dot + 2 != t.size() || t[dot + 1] < '0' || t[dot + 1] > '7')
    return std::nullopt;
  std::string_view head = t.substr(0, dot);
  size_t c2 = head.rfind(':');
  if (c2 == std::string_view::npos) return std::nullopt;
  std::string_view dev = head.substr(c2 + 1);
  std::string_view left = head.substr(0, c2);
  size_t c1 = left.rfind(':');
  std::string_view bus = c1 == std::string_view::npos ? left : left.substr(c1 + 1);
  std::string_view dom =
      c1 == std::string_view::npos ? std::string_view("0000") : left.substr(0, c1);
  if (!kit::all_hex(dev) || dev.size() != 2 || !kit::all_hex(bus) || bus.size() != 2 ||
      !kit::all_hex(dom) || dom.size() > 8)
    return std::nullopt;
  // nvidia-smi prints an 8-digit domain; PCI domains fit in 16 bits.
  while (dom.size() > 4 && dom.front() == '0') dom.remove_prefix(1);
  if (dom.size() > 4) return std::nullopt;
  return hex_lower(dom, 4) + ":" + kit::lower(bus) + ":" + kit::lower(dev) + "." + t[dot + 1];
}

const PciDevice* PciTree::find(std::string_view bdf) const {
  auto it = std::lower_bound(devices.begin(), devices.end(), bdf,
                             [](const PciDevice& d, std::string_view b) { return d.bdf < b; });
  return it != devices.end() && it->bdf == bdf ? &*it : nullptr;
}

std::optional<PciTree> parse_lspci_tree(std::string_view text, ParseError* err) {
  PciTree tree;
  TreeParser p(&tree, err);
  bool started = false;
  int no = 0;
  for (std::string_view line : kit::lines(text)) {
    ++no;
    std::string_view t = kit::trim(line);
    // A pasted prompt or title before the drawing is not part of it.
    if (!started && (t.empty() || (t[0] != '-' && t[0] != '+' && t[0] != '\\'))) continue;
    started = true;
    if (!p.line(line, no)) return std::nullopt;
  }
  if (tree.devices.empty()) {
    fail(err, 0, "no lspci tree found");
    return std::nullopt;
  }
  sort_tree(&tree);
  return tree;
}

std::optional<PciTree> parse_lspci_verbose(std::string_view text, ParseError* err) {
  PciTree tree;
  std::map<std::string, std::string> secondary;  // "domain:bus" -> bridge bdf
  int no = 0;
  for (std::string_view line : kit::lines(text)) {
    ++no;
    if (line.empty()) continue;
    if (line[0] != ' ' && line[0] != '\t') {
      size_t sp = line.find(' ');
      auto bdf = normalize_bdf(line.substr(0, sp));
      if (!bdf) {
        if (tree.devices.empty()) continue;  // a pasted prompt before the first block
        fail(err, no, "expected a device line (BB:DD.F class: name)");
        return std::nullopt;
      }
      PciDevice d;
      d.bdf = *bdf;
      if (sp != std::string_view::npos) {
        std::string_view rest = line.substr(sp + 1);
        size_t colon = rest.find(": ");
        std::string_view desc = colon == std::string_view::npos ? rest : rest.substr(colon + 2);
        size_t rev = desc.find(" (rev ");
        if (rev == std::string_view::npos) rev = desc.find(" (prog-if ");
        d.description = std::string(kit::trim(desc.substr(0, rev)));
      }
      tree.devices.push_back(std::move(d));
      continue;
    }
    if (tree.devices.empty()) continue;
    PciDevice& d = tree.devices.back();
    std::string_view t = kit::trim(line);
    if (t.substr(0, 12) == "Bus: primary") {
      size_t s = t.find("secondary=");
      if (s == std::string_view::npos || s + 12 > t.size() || !kit::all_hex(t.substr(s + 10, 2))) {
        fail(err, no, "bad 'Bus:' line");
        return std::nullopt;
      }
      d.bridge = true;
      secondary[d.bdf.substr(0, 4) + ":" + kit::lower(t.substr(s + 10, 2))] = d.bdf;
    } else if (t.substr(0, 13) == "Capabilities:" && d.port_type.empty() &&
               t.find(" Express ") != std::string_view::npos) {
      d.port_type = express_port_type(t);
    }
  }
  if (tree.devices.empty()) {
    fail(err, 0, "no lspci device found");
    return std::nullopt;
  }
  std::map<std::string, bool> seen;
  for (PciDevice& d : tree.devices) {
    if (!seen.emplace(d.bdf, true).second) {
      fail(err, 0, "device " + d.bdf + " appears twice");
      return std::nullopt;
    }
    auto it = secondary.find(d.bdf.substr(0, 7));
    if (it != secondary.end() && it->second != d.bdf) d.parent = it->second;
  }
  sort_tree(&tree);
  return tree;
}

PciTree merge_trees(const PciTree& a, const PciTree& b) {
  std::map<std::string, PciDevice> all;
  for (const PciDevice& d : b.devices) all[d.bdf] = d;
  for (const PciDevice& d : a.devices) {
    auto it = all.find(d.bdf);
    if (it == all.end()) {
      all[d.bdf] = d;
      continue;
    }
    PciDevice m = d;
    if (m.parent.empty()) m.parent = it->second.parent;
    if (m.port_type.empty()) m.port_type = it->second.port_type;
    if (m.description.empty()) m.description = it->second.description;
    m.bridge = m.bridge || it->second.bridge;
    it->second = std::move(m);
  }
  PciTree out;
  for (auto& [k, d] : all) out.devices.push_back(std::move(d));
  return out;
}

}  // namespace reflex::discover
