#include "unclassified.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace reflex::engine {
namespace {

bool hex_run(std::string_view s, size_t at, size_t n) {
  if (at + n > s.size()) return false;
  for (size_t i = at; i < at + n; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

// PCI addresses in the line, as the kernel and the driver print them:
// "0000:3b:00.0", "0000:3b:00" (NVRM's Xid form) or "3b:00.0".
std::vector<std::string> pci_addresses(std::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i + 5 <= s.size() && out.size() < 4; ++i) {
    if (i > 0 && std::isxdigit(static_cast<unsigned char>(s[i - 1]))) continue;
    if (hex_run(s, i, 4) && i + 10 <= s.size() && s[i + 4] == ':' && hex_run(s, i + 5, 2) &&
        s[i + 7] == ':' && hex_run(s, i + 8, 2)) {
      size_t end = i + 10;
      if (end + 2 <= s.size() && s[end] == '.' &&
          std::isdigit(static_cast<unsigned char>(s[end + 1])))
        end += 2;
      out.emplace_back(s.substr(i, end - i));
      i = end;
    } else if (hex_run(s, i, 2) && i + 7 <= s.size() && s[i + 2] == ':' && hex_run(s, i + 3, 2) &&
               s[i + 5] == '.' && std::isdigit(static_cast<unsigned char>(s[i + 6])) &&
               (i + 7 == s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 7])))) {
      out.emplace_back("0000:" + std::string(s.substr(i, 7)));
      i += 7;
    }
  }
  return out;
}

// "hosts/<host>/<file>:<line>" -> host; "" otherwise.
std::string host_of_evidence(const std::string& ev) {
  if (ev.rfind("hosts/", 0) != 0) return "";
  size_t slash = ev.find('/', 6);
  return slash == std::string::npos ? "" : ev.substr(6, slash - 6);
}

// The device the line names when the topology knows its PCI address, else
// the host; *component gets the first PCI address either way.
std::string device_of(const UnrecognizedLine& u, const Topology& topo, std::string* component) {
  std::string host = host_of_evidence(u.evidence);
  if (host.empty()) return "";
  const std::vector<std::string> bdfs = pci_addresses(u.line);
  if (!bdfs.empty()) *component = bdfs.front();
  for (const std::string& bdf : bdfs) {
    if (auto d = topo.device_by_bdf(host, bdf); d && !d->placeholder) return d->id;
    if (bdf.size() == 10)  // without its function: try function 0
      if (auto d = topo.device_by_bdf(host, bdf + ".0"); d && !d->placeholder) return d->id;
  }
  return host;
}

// The samples in the KB's order of its suspects (stable within one): the KB
// lists first the families whose lines are causes (a PCIe error, a disk's I/O
// error) and last those that are mostly echoes (a Python exception).
std::vector<UnrecognizedLine> by_suspect_order(const std::vector<UnrecognizedLine>& samples,
                                               const KnowledgeBase& kb) {
  auto rank = [&](const std::string& name) {
    for (size_t i = 0; i < kb.signatures.size(); ++i)
      if (kb.signatures[i].name == name) return i;
    return kb.signatures.size();
  };
  std::vector<std::pair<size_t, const UnrecognizedLine*>> order;
  for (const UnrecognizedLine& u : samples) order.emplace_back(rank(u.suspect), &u);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<UnrecognizedLine> out;
  for (const auto& [r, u] : order) out.push_back(*u);
  return out;
}

std::string stable_id(const std::string& key) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "inc-%012llx",
                static_cast<unsigned long long>(h & 0xffffffffffffull));
  return buf;
}

}  // namespace

void add_unclassified_roots(std::vector<Diagnosis>* ds, const IngestStats& st, const Topology& topo,
                            const KnowledgeBase& kb, size_t max_roots) {
  if (st.unrecognized_samples.empty()) return;
  for (const Diagnosis& d : *ds)
    if (!d.root_causes.empty()) return;
  if (ds->empty()) ds->emplace_back();
  Diagnosis& d = ds->front();
  if (d.incident.empty() || d.incident == "inc-none")
    d.incident = stable_id("unclassified|" + st.unrecognized_samples.front().evidence);
  for (std::string& n : d.notes)
    if (n == "no job-level symptom and no fault evidence in the input")
      n = "no job-level symptom and no recognized fault evidence in the input";
  for (const UnrecognizedLine& u : by_suspect_order(st.unrecognized_samples, kb)) {
    if (d.root_causes.size() >= max_roots) break;
    std::string component;
    std::string dev = device_of(u, topo, &component);
    if (dev.empty()) continue;
    if (std::any_of(d.root_causes.begin(), d.root_causes.end(),
                    [&](const RootCause& r) { return r.device == dev; }))
      continue;
    RootCause rc;
    rc.device = dev;
    if (auto info = topo.device(dev)) rc.host = info->host;
    const Signature* family = kb.find_signature(u.suspect);
    const std::string guess = family ? kb.standard_class(family->fault_class) : "";
    rc.fault_class = guess.empty() ? "unclassified" : guess;
    if (!guess.empty() && guess != family->fault_class) rc.subclass = family->fault_class;
    rc.event = u.suspect;
    rc.score = 0.1 / static_cast<double>(d.root_causes.size() + 1);
    rc.severity = Severity::info;
    rc.confidence = "low";
    rc.basis = "unclassified";
    if (dev.find('/') == std::string::npos)
      rc.component = component;  // the host, and the address it named
    rc.description =
        guess.empty()
            ? "no signature recognizes this line, which looks like fault evidence: " + u.line
            : "no signature recognizes this line; the KB's suspect for its emitter family (" +
                  u.suspect + ") says it is most likely " + guess + ": " + u.line;
    rc.action =
        "read the quoted line and the lines around it; if it is a fault, the emitter's "
        "catalog in kb/catalog/ and a signature for it make the next diagnosis exact";
    ChainLink l;
    l.ev.event = u.suspect;
    l.ev.device = dev;
    l.ev.evidence = u.evidence;
    l.ev.line = u.line;
    rc.chain.push_back(std::move(l));
    rc.why = guess.empty()
                 ? "unclassified: the only fault-like evidence in the input, recognized by no "
                   "signature"
                 : "unclassified line, class from its emitter family: the only fault-like "
                   "evidence in the input, recognized by no signature";
    d.root_causes.push_back(std::move(rc));
  }
  if (!d.root_causes.empty())
    d.notes.push_back(
        "unclassified root cause: nothing recognized explains the input; the most likely device is "
        "the one an unrecognized fault-like line names (low confidence, nothing evicted)");
}

}  // namespace reflex::engine
