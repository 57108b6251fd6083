// Device-id grammar of interfaces.md §2, driven by the kind table.
#include "reflex/device_id.h"

#include <algorithm>
#include <climits>
#include <cstdint>

#include "reflex/vocabulary.h"

namespace reflex {
namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Decimal digits to an int, saturating (ids carry small numbers).
int number(std::string_view digits) {
  int64_t v = 0;
  for (char c : digits) v = std::min<int64_t>(v * 10 + (c - '0'), INT32_MAX);
  return static_cast<int>(v);
}

bool starts(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// "job/<job>" or "job/<job>/rank<N>" / "job/<job>/rank@<key>"; `rest` follows "job/".
DeviceIdView parse_job(std::string_view rest) {
  DeviceIdView p;
  size_t slash = rest.find('/');
  p.job = rest.substr(0, slash);
  if (slash == std::string_view::npos) {
    p.kind = DeviceKind::job;
    p.valid = !rest.empty();
    return p;
  }
  std::string_view r = rest.substr(slash + 1);
  const std::string_view rank = kind_info(DeviceKind::rank).id_prefix;
  p.kind = DeviceKind::rank;
  if (starts(r, rank) && r.size() > rank.size() && r[rank.size()] == '@') {
    p.placeholder = true;
    p.key = r.substr(rank.size() + 1);
    p.valid = !p.key.empty();
  } else {
    p.valid = starts(r, rank) && all_digits(r.substr(rank.size()));
    if (p.valid) p.rank = number(r.substr(rank.size()));
  }
  return p;
}

// What follows "<host>/": a placeholder "<kind>@<key>" or a concrete name.
void parse_on_host(std::string_view rest, DeviceIdView* p) {
  size_t at = rest.find('@');
  size_t rslash = rest.find('/');
  if (at != std::string_view::npos && (rslash == std::string_view::npos || at < rslash)) {
    auto k = device_kind_named(rest.substr(0, at), /*aliases=*/true);
    if (!k) return;
    p->kind = *k;
    p->placeholder = true;
    p->key = rest.substr(at + 1);
    p->valid = !p->key.empty();
    return;
  }
  p->valid = true;
  const std::string_view pcie = kind_info(DeviceKind::pcie_port).id_prefix;
  const std::string_view gpu = kind_info(DeviceKind::gpu).id_prefix;
  if (starts(rest, pcie)) {
    p->kind = DeviceKind::pcie_port;
    p->key = rest.substr(pcie.size());
    p->valid = !p->key.empty();
  } else if (starts(rest, gpu) && all_digits(rest.substr(gpu.size()))) {
    p->kind = DeviceKind::gpu;
  } else if (starts(rest, kind_info(DeviceKind::nvswitch).id_prefix)) {
    p->kind = DeviceKind::nvswitch;
  } else {
    p->kind = DeviceKind::nic;
  }
}

}  // namespace

DeviceIdView DeviceIdView::parse(std::string_view id) {
  DeviceIdView p;
  if (id.empty()) return p;
  for (DeviceKind k : {DeviceKind::fabric_switch, DeviceKind::storage}) {
    if (starts(id, kind_info(k).id_prefix)) {
      p.kind = k;
      p.valid = id.size() > kind_info(k).id_prefix.size();
      return p;
    }
  }
  if (const std::string_view job = kind_info(DeviceKind::job).id_prefix; starts(id, job))
    return parse_job(id.substr(job.size()));
  size_t slash = id.find('/');
  if (slash == std::string_view::npos) {
    p.kind = DeviceKind::host;
    p.host = id;
    p.valid = true;
    return p;
  }
  p.host = id.substr(0, slash);
  std::string_view rest = id.substr(slash + 1);
  if (p.host.empty() || rest.empty()) return p;
  parse_on_host(rest, &p);
  return p;
}

std::string placeholder_id(std::string_view host, DeviceKind kind, std::string_view key) {
  std::string id(host);
  id += '/';
  id += kind_info(kind).short_name;
  id += '@';
  id += key;
  return id;
}

std::string cluster_device_id(DeviceKind kind, std::string_view name) {
  std::string id(kind_info(kind).id_prefix);
  id += name;
  return id;
}

}  // namespace reflex
