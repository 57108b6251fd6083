// The Topology API: loading (loader.cpp fills the indexes of
// topology_data.h), resolution for ingest and device lookups. The relations
// are in relations.cpp, the device-id grammar in the model (reflex/device_id.h).
#include "reflex/topology.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <fstream>
#include <string>

#include <sys/stat.h>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "loader.h"
#include "topology_data.h"

#include "reflex/device_id.h"
#include "reflex/values.h"
#include "reflex/vocabulary.h"

namespace reflex {

std::string TopologyError::str() const {
  std::string s = file.empty() ? std::string("topology") : file;
  s += ": ";
  if (!json_path.empty()) {
    s += json_path;
    s += ": ";
  }
  s += message;
  return s;
}

using namespace topo;

Topology::Topology() : impl_(std::make_unique<Impl>()) {}
Topology::~Topology() = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;

std::unique_ptr<Topology> Topology::load_text(std::string_view text, const std::string& origin,
                                              TopologyError* err) {
  try {
    auto impl = std::make_unique<Impl>();
    impl->by_id.reserve(text.size() / 64);
    impl->by_host_bdf.reserve(text.size() / 96);
    impl->host_by_ip.reserve(text.size() / 256);
    impl->nic_by_ip.reserve(text.size() / 256);
    if (!load_json(text, origin, impl.get(), err)) return nullptr;
    auto topo = std::unique_ptr<Topology>(new Topology());
    topo->impl_ = std::move(impl);
    return topo;
  } catch (const std::exception& e) {
    if (err) *err = TopologyError{origin, "$", std::string("cannot load: ") + e.what()};
    return nullptr;
  } catch (...) {
    if (err) *err = TopologyError{origin, "$", "cannot load: unknown error"};
    return nullptr;
  }
}

namespace {
// 12,500 hosts of 8 GPUs, switches and NICs are ~40 MB of JSON.
constexpr int64_t kMaxTopologyBytes = int64_t(1) << 30;
}  // namespace

std::unique_ptr<Topology> Topology::load_file(const std::string& path, TopologyError* err) {
  try {
    // A FIFO or device would block or never end (a topology.json FIFO hung
    // `reflex diagnose`): the topology is a regular file, of bounded size.
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      if (err) *err = TopologyError{path, "", "not a regular file"};
      return nullptr;
    }
    if (st.st_size > kMaxTopologyBytes) {
      if (err)
        *err = TopologyError{path, "",
                             "the file is " + std::to_string(st.st_size) +
                                 " bytes, over the limit of " + std::to_string(kMaxTopologyBytes)};
      return nullptr;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      if (err) *err = TopologyError{path, "", std::string("cannot open: ") + std::strerror(errno)};
      return nullptr;
    }
    std::string text;
    in.seekg(0, std::ios::end);
    auto size = in.tellg();
    if (size > kMaxTopologyBytes) size = kMaxTopologyBytes + 1;  // grew since stat'd
    in.seekg(0, std::ios::beg);
    if (size > 0) {
      text.resize(size_t(size));
      in.read(text.data(), size);
    }
    if (in.bad() || size < 0) {
      if (err) *err = TopologyError{path, "", "cannot read the file"};
      return nullptr;
    }
    text.resize(size_t(in.gcount() > 0 ? in.gcount() : 0));
    if (int64_t(text.size()) > kMaxTopologyBytes) {
      if (err) *err = TopologyError{path, "", "the file grew past the limit while it was read"};
      return nullptr;
    }
    if (text.empty()) {
      if (err) *err = TopologyError{path, "$", "the file is empty (not JSON)"};
      return nullptr;
    }
    return load_text(text, path, err);
  } catch (const std::exception& e) {
    if (err) *err = TopologyError{path, "", std::string("cannot read: ") + e.what()};
    return nullptr;
  }
}

std::unique_ptr<Topology> Topology::empty() {
  return std::unique_ptr<Topology>(new Topology());
}

const std::string& Topology::cluster() const {
  return impl_->cluster;
}
size_t Topology::host_count() const {
  return impl_->hosts.size();
}
std::vector<std::string> Topology::host_names() const {
  std::vector<std::string> v;
  v.reserve(impl_->hosts.size());
  for (auto& h : impl_->hosts) v.push_back(h.name);
  return v;
}
const std::vector<std::string>& Topology::notes() const {
  return impl_->notes;
}

// Exact name, short name, IP; last a host's BMC name or IP (hosts[].bmc).
std::optional<std::string> Topology::resolve_host(std::string_view name) const {
  if (name.empty()) return std::nullopt;
  const Impl& im = *impl_;
  if (int32_t h = im.host_index(name); h != kNone) return im.hosts[size_t(h)].name;
  std::string s = short_name(name);
  if (s.size() != name.size())
    if (int32_t h = im.host_index(s); h != kNone) return im.hosts[size_t(h)].name;
  if (auto it = im.host_by_short.find(s); it != im.host_by_short.end() && it->second >= 0)
    return im.hosts[size_t(it->second)].name;
  if (auto ip = normalize_ip(name)) {
    int32_t h = im.host_by_ip.find(ip_key(*ip), [&](int32_t x) { return im.host_has_ip(x, *ip); });
    if (h != kNone) return im.hosts[size_t(h)].name;
    if (auto it = im.host_by_bmc.find(*ip); it != im.host_by_bmc.end() && it->second >= 0)
      return im.hosts[size_t(it->second)].name;
    return std::nullopt;
  }
  // A host's BMC (hosts[].bmc): its logs are about that host.
  for (const std::string& k : {std::string(name), s})
    if (auto it = im.host_by_bmc.find(k); it != im.host_by_bmc.end() && it->second >= 0)
      return im.hosts[size_t(it->second)].name;
  return std::nullopt;
}

std::optional<DeviceInfo> Topology::device_by_bdf(const std::string& host,
                                                  std::string_view bdf) const {
  int32_t h = impl_->host_index(host);
  if (h == kNone) return std::nullopt;
  auto n = normalize_bdf(bdf);
  if (!n) return std::nullopt;
  auto packed = pack_bdf(*n);
  if (!packed) return std::nullopt;
  int32_t d = impl_->by_host_bdf.find((uint64_t(uint32_t(h)) << 32) | *packed);
  if (d == kNone) return std::nullopt;
  return impl_->info(d);
}

std::optional<DeviceInfo> Topology::gpu_by_index(const std::string& host, int index) const {
  int32_t h = impl_->host_index(host);
  if (h == kNone) return std::nullopt;
  for (int32_t g : impl_->hosts[size_t(h)].gpus)
    if (impl_->devs[size_t(g)].aux == index) return impl_->info(g);
  return std::nullopt;
}

std::optional<DeviceInfo> Topology::nic_by_name(const std::string& host,
                                                std::string_view name) const {
  int32_t h = impl_->host_index(host);
  if (h == kNone || name.empty()) return std::nullopt;
  for (int32_t n : impl_->hosts[size_t(h)].nics) {
    const auto& rec = impl_->nics[size_t(impl_->devs[size_t(n)].aux)];
    if (rec.name == name || (!rec.netdev.empty() && rec.netdev == name)) return impl_->info(n);
  }
  return std::nullopt;
}

std::optional<DeviceInfo> Topology::nic_by_ip(std::string_view ip) const {
  auto n = normalize_ip(ip);
  if (!n) return std::nullopt;
  int32_t d = impl_->nic_by_ip.find(ip_key(*n), [&](int32_t x) {
    return impl_->nics[size_t(impl_->devs[size_t(x)].aux)].ip == *n;
  });
  if (d == kNone) return std::nullopt;
  return impl_->info(d);
}

std::optional<DeviceInfo> Topology::nvswitch_by_id(const std::string& host,
                                                   std::string_view id) const {
  int32_t h = impl_->host_index(host);
  if (h == kNone || id.empty()) return std::nullopt;
  std::string want = nvswitch_id(host, id);
  int32_t d = impl_->find(want);
  if (d == kNone || impl_->devs[size_t(d)].kind != DeviceKind::nvswitch) return std::nullopt;
  return impl_->info(d);
}

std::optional<DeviceInfo> Topology::rank(std::string_view job, int rank) const {
  for (auto& j : impl_->jobs) {
    if (!job.empty() && j.id != job) continue;
    auto it = j.by_rank.find(rank);
    if (it != j.by_rank.end()) return impl_->info(it->second);
    if (!job.empty()) return std::nullopt;
  }
  return std::nullopt;
}

std::optional<DeviceInfo> Topology::fabric_switch(std::string_view name) const {
  auto it = impl_->fabric_by_name.find(std::string(name));
  if (it == impl_->fabric_by_name.end()) return std::nullopt;
  return impl_->info(it->second);
}

std::optional<DeviceInfo> Topology::storage(std::string_view name_or_ip) const {
  const Impl& im = *impl_;
  auto ip = normalize_ip(name_or_ip);
  for (size_t i = 0; i < im.storages.size(); ++i) {
    if (im.storages[i].name == name_or_ip || (ip && im.storages[i].ip == *ip))
      return im.info(im.storage_devs[i]);
  }
  return std::nullopt;
}

void Topology::assume_one_job(const std::string& name) {
  if (!impl_->jobs.empty() || impl_->one_job) return;
  impl_->one_job = true;
  impl_->one_job_name = name;
  impl_->index_links();
}

bool Topology::one_job() const {
  return impl_->one_job;
}

std::vector<std::string> Topology::jobs_of_host(const std::string& host) const {
  if (impl_->one_job && !impl_->one_job_name.empty()) return {impl_->one_job_name};
  std::vector<std::string> v;
  int32_t h = impl_->host_index(host);
  if (h == kNone) return v;
  for (int32_t j : impl_->hosts[size_t(h)].jobs) v.push_back(impl_->jobs[size_t(j)].id);
  return v;
}

std::optional<DeviceInfo> Topology::device(std::string_view id) const {
  int32_t d = impl_->find(id);
  if (d != kNone) return impl_->info(d);
  ParsedId p = parse_id(id);
  if (!p.valid) return std::nullopt;
  // A non-placeholder id on a known host (node-1/gpu9 when it has 8) is an error
  // of the caller, not a placeholder.
  if (!p.placeholder && !p.host.empty() && impl_->host_index(p.host) != kNone) return std::nullopt;
  if (!p.placeholder && p.host.empty()) return std::nullopt;  // unknown fabric/job/storage
  DeviceInfo info;
  info.id = std::string(id);
  info.kind = p.kind;
  info.host = std::string(p.host);
  info.placeholder = true;
  if (auto b = normalize_bdf(p.key); b && p.kind != DeviceKind::rank) info.bdf = *b;
  return info;
}

std::vector<std::string> Topology::devices_of_kind(DeviceKind kind) const {
  std::vector<std::string> out;
  for (auto& d : impl_->devs)
    if (d.kind == kind) out.push_back(d.id);
  return out;
}

Topology::DeviceId Topology::id(std::string_view device) const {
  return impl_->find(device);
}

size_t Topology::device_count() const {
  return impl_->devs.size();
}

// Ids out of range are no device (never undefined behaviour): like unknown names.
const std::string& Topology::id_str(DeviceId d) const {
  static const std::string kEmpty;
  return d >= 0 && size_t(d) < impl_->devs.size() ? impl_->devs[size_t(d)].id : kEmpty;
}

uint64_t Topology::uid() const {
  return impl_->uid;
}

}  // namespace reflex
