// The relations of docs/language.md §3 over a loaded topology. Which kinds
// each relation relates is the model's table (reflex/vocabulary.h); here is
// whether two devices are connected that way, and who is related to whom.
#include <algorithm>
#include <unordered_set>

#include "topology_data.h"

namespace reflex {

using namespace topo;

bool Topology::related(Relation rel, std::string_view a, std::string_view b) const {
  if (rel == Relation::any) return true;
  int32_t ia = impl_->find(a);
  int32_t ib = ia == kNone ? kNone : impl_->find(b);
  if (ia == kNone || ib == kNone) return impl_->rel_structural(rel, a, b);
  return impl_->rel_known(rel, ia, ib);
}

std::vector<std::string> Topology::related_devices(Relation rel, std::string_view b, bool x_is_lhs,
                                                   DeviceKind kind, size_t limit) const {
  const Impl& im = *impl_;
  std::vector<std::string> out;
  int32_t ib = im.find(b);
  if (ib == kNone) {
    // Placeholders relate by host only (and to themselves).
    ParsedId p = parse_id(b);
    if (!p.valid) return out;
    if (p.kind == kind && im.rel_structural(rel, b, b)) out.emplace_back(b);
    if (rel == Relation::any) {
      for (auto& d : im.devs)
        if (d.kind == kind) out.push_back(d.id);
      return out;
    }
    if (rel == Relation::same) return out;
    int32_t h = p.host.empty() ? kNone : im.host_index(p.host);
    const DeviceKind lhs = x_is_lhs ? kind : p.kind, rhs = x_is_lhs ? p.kind : kind;
    bool ok = (rel == Relation::same_host || rel == Relation::on) &&
              relation_allows(rel, lhs, rhs) && host_local(lhs) && host_local(rhs);
    if (!ok) return out;
    if (h == kNone) {
      if (kind == DeviceKind::host && !p.host.empty() && p.kind != DeviceKind::host)
        out.emplace_back(p.host);
      return out;
    }
    std::vector<int32_t> cand;
    im.host_devices(h, kind, &cand);
    for (int32_t x : cand) out.push_back(im.devs[size_t(x)].id);
    return out;
  }

  std::vector<int32_t> ids;
  im.related_ids(rel, ib, x_is_lhs, kind, limit, &ids);
  out.reserve(ids.size());
  for (int32_t x : ids) out.push_back(im.devs[size_t(x)].id);
  return out;
}

// same, same_host, on, below, paired: where a device sits on its host.
void Topology::Impl::placement_candidates(Relation rel, int32_t ib, bool x_is_lhs, DeviceKind kind,
                                          std::vector<int32_t>* cand) const {
  const auto& B = devs[size_t(ib)];
  auto by_host = [&](int32_t h) {
    if (h != kNone) host_devices(h, kind, cand);
  };
  switch (rel) {
    case Relation::same:
      cand->push_back(ib);
      break;
    case Relation::same_host:
      by_host(B.host);
      break;
    case Relation::on:
      if (x_is_lhs)
        by_host(B.kind == DeviceKind::host ? B.host : kNone);
      else if (B.host != kNone)
        cand->push_back(hosts[size_t(B.host)].dev);
      break;
    case Relation::below:
      if (x_is_lhs) {
        // Everything under B: breadth-first over the children lists.
        std::vector<int32_t> q{ib};
        for (size_t i = 0; i < q.size() && i < 1000000; ++i) {
          int32_t ci = devs[size_t(q[i])].aux;
          if (devs[size_t(q[i])].kind != DeviceKind::pcie_port || ci == kNone) continue;
          for (int32_t c : children[size_t(ci)]) {
            cand->push_back(c);
            q.push_back(c);
          }
        }
      } else {
        for (int32_t p = B.parent, d = 0; p != kNone && d < 64; p = devs[size_t(p)].parent, ++d)
          cand->push_back(p);
      }
      break;
    case Relation::paired:
      if (B.kind == DeviceKind::gpu)
        cand->push_back(B.link);
      else if (B.kind == DeviceKind::nic)
        for (int32_t g : nics[size_t(B.aux)].paired_gpus) cand->push_back(g);
      break;
    default:
      break;
  }
}

// nvlink_peer, serves, attached, uplink: the NVLink domain and the fabric.
void Topology::Impl::link_candidates(Relation rel, int32_t ib, bool x_is_lhs, DeviceKind kind,
                                     std::vector<int32_t>* cand) const {
  const auto& B = devs[size_t(ib)];
  switch (rel) {
    case Relation::nvlink_peer:
    case Relation::serves:
      if (B.host != kNone) {
        std::vector<int32_t> hs;
        nvl_hosts(B.host, &hs);
        for (int32_t h : hs) host_devices(h, kind, cand);
      }
      break;
    case Relation::attached:
      if (x_is_lhs && B.kind == DeviceKind::fabric_switch) {
        auto& ns = fabrics[size_t(B.aux)].nics;
        cand->insert(cand->end(), ns.begin(), ns.end());
      } else if (!x_is_lhs && B.kind == DeviceKind::nic) {
        cand->push_back(B.link);
      }
      break;
    case Relation::uplink:
      if (B.kind == DeviceKind::fabric_switch) {
        auto& f = fabrics[size_t(B.aux)];
        auto& v = x_is_lhs ? f.downlinks : f.uplinks;
        cand->insert(cand->end(), v.begin(), v.end());
      }
      break;
    default:
      break;
  }
}

// runs_on, uses, in, same_job, mounts: jobs, their ranks, and storage.
// Job enumerations stop past `cap` (setting *capped).
void Topology::Impl::job_candidates(Relation rel, int32_t ib, bool x_is_lhs, DeviceKind kind,
                                    size_t cap, std::vector<int32_t>* cand, bool* capped) const {
  const auto& B = devs[size_t(ib)];
  switch (rel) {
    case Relation::runs_on:
      if (x_is_lhs) {
        if (B.kind == DeviceKind::host || B.kind == DeviceKind::gpu) {
          auto& rs = hosts[size_t(B.host)].ranks;
          cand->insert(cand->end(), rs.begin(), rs.end());
        }
      } else if (B.kind == DeviceKind::rank) {
        cand->push_back(B.link);
        cand->push_back(hosts[size_t(B.host)].dev);
      }
      break;
    case Relation::uses:
      if (x_is_lhs && B.kind == DeviceKind::nic) {
        for (int32_t g : nics[size_t(B.aux)].paired_gpus) {
          auto& rs = hosts[size_t(devs[size_t(g)].host)].ranks;
          cand->insert(cand->end(), rs.begin(), rs.end());
        }
      } else if (!x_is_lhs && B.kind == DeviceKind::rank && B.link != kNone) {
        cand->push_back(devs[size_t(B.link)].link);
      }
      break;
    case Relation::in:
      if (x_is_lhs && B.kind == DeviceKind::job)
        job_devices(B.aux, kind, cand, cap, capped);
      else if (!x_is_lhs && kind == DeviceKind::job) {
        int32_t one;
        const std::vector<int32_t>* many;
        jobs_of(B, &one, &many);
        if (one != kNone) cand->push_back(jobs[size_t(one)].dev);
        if (many)
          for (int32_t j : *many) cand->push_back(jobs[size_t(j)].dev);
      }
      break;
    case Relation::same_job: {
      if (one_job) {  // every host's devices, up to the cap
        for (size_t h = 0; h < hosts.size() && cand->size() <= cap; ++h)
          host_devices(int32_t(h), kind, cand);
        if (cand->size() > cap) *capped = true;
        break;
      }
      int32_t one;
      const std::vector<int32_t>* many;
      jobs_of(B, &one, &many);
      std::vector<int32_t> js;
      if (one != kNone) js.push_back(one);
      if (many) js.insert(js.end(), many->begin(), many->end());
      for (int32_t j : js) job_devices(j, kind, cand, cap, capped);
      break;
    }
    case Relation::mounts:
      if (x_is_lhs && B.kind == DeviceKind::storage) {
        for (size_t h = 0; h < hosts.size(); ++h) host_devices(int32_t(h), kind, cand);
      } else if (!x_is_lhs && B.host != kNone) {
        cand->insert(cand->end(), storage_devs.begin(), storage_devs.end());
      }
      break;
    default:
      break;
  }
}

void Topology::Impl::related_ids(Relation rel, int32_t ib, bool x_is_lhs, DeviceKind kind,
                                 size_t limit, std::vector<int32_t>* out) const {
  if (rel == Relation::any) {
    for (size_t i = 0; i < devs.size(); ++i)
      if (devs[i].kind == kind) out->push_back(int32_t(i));
    return;
  }
  std::vector<int32_t> cand;
  bool capped = false;
  placement_candidates(rel, ib, x_is_lhs, kind, &cand);
  link_candidates(rel, ib, x_is_lhs, kind, &cand);
  job_candidates(rel, ib, x_is_lhs, kind, limit, &cand, &capped);
  // Filter through related() so both directions agree exactly; dedupe (a
  // short list by a look at what passed: a repeat that failed fails again).
  const bool small = cand.size() <= 32;
  std::unordered_set<int32_t> seen;
  for (int32_t x : cand) {
    if (x == kNone || links[size_t(x)].kind != kind) continue;
    if (small ? std::find(out->begin(), out->end(), x) != out->end() : !seen.insert(x).second)
      continue;
    bool ok = x_is_lhs ? rel_known(rel, x, ib) : rel_known(rel, ib, x);
    if (ok) out->push_back(x);
    if (out->size() > limit) return;
  }
  // A capped enumeration that the filter thinned to `limit` or fewer is not
  // known to be complete: enumerate again in full.
  if (capped) {
    out->clear();
    related_ids(rel, ib, x_is_lhs, kind, static_cast<size_t>(-1), out);
  }
}

bool Topology::related(Relation rel, DeviceId a, DeviceId b) const {
  if (rel == Relation::any) return true;
  const size_t n = impl_->links.size();
  if (a < 0 || b < 0 || size_t(a) >= n || size_t(b) >= n) return false;
  return impl_->rel_known(rel, a, b);
}

int32_t Topology::same_job_key(DeviceId d) const {
  if (d < 0 || size_t(d) >= impl_->links.size()) return kNoJob;
  return impl_->links[size_t(d)].jobs;
}

void Topology::related_device_ids(Relation rel, DeviceId b, bool x_is_lhs, DeviceKind kind,
                                  std::vector<DeviceId>* out, size_t limit) const {
  out->clear();
  if (b < 0 || size_t(b) >= impl_->devs.size()) return;
  impl_->related_ids(rel, b, x_is_lhs, kind, limit, out);
}

}  // namespace reflex
