#include "locate.h"

#include "reflex/device_id.h"
#include "reflex/values.h"
#include "reflex/vocabulary.h"

namespace reflex::ingest {

namespace {

Located found(const DeviceInfo& d, DeviceKind kind) {
  Located l;
  l.id = d.id;
  l.host = d.host;
  l.kind = kind;
  l.placeholder = d.placeholder;
  return l;
}

Located placeholder(const std::string& host, DeviceKind kind, std::string_view key) {
  Located l;
  l.kind = kind;
  l.placeholder = true;
  switch (kind) {
    case DeviceKind::host:
      l.id = key.empty() ? host : std::string(key);
      l.host = l.id;
      return l;
    case DeviceKind::fabric_switch:
      l.id = cluster_device_id(kind, key.empty() ? "unknown" : key);
      return l;
    case DeviceKind::storage:
      l.id = cluster_device_id(kind, key.empty() ? "unknown" : key);
      return l;
    case DeviceKind::job:
      if (!key.empty()) {
        l.id = cluster_device_id(kind, key);
        return l;
      }
      break;
    case DeviceKind::pcie_port:
      if (!key.empty()) {
        l.id = host + "/" + std::string(kind_info(kind).id_prefix) + std::string(key);
        l.host = host;
        return l;
      }
      break;
    default:
      break;
  }
  l.host = host;
  l.id = placeholder_id(host, kind, key.empty() ? "unknown" : key);
  return l;
}

FieldType type_of(const Signature& sig, const std::string& field) {
  for (const FieldDecl& f : sig.fields)
    if (f.name == field) return f.type;
  return FieldType::string;
}

const std::string* value_of(const FieldValues& fields, const std::string& name) {
  for (auto& [n, v] : fields)
    if (n == name) return v.empty() ? nullptr : &v;
  return nullptr;
}

Located locate_rank(const Topology& topo, const std::string& host, int rank) {
  std::vector<std::string> jobs = topo.jobs_of_host(host);
  for (const std::string& j : jobs) {
    auto d = topo.rank(j, rank);
    if (d && (d->host.empty() || d->host == host)) return found(*d, DeviceKind::rank);
  }
  for (const std::string& j : jobs) {
    if (auto d = topo.rank(j, rank)) return found(*d, DeviceKind::rank);
  }
  Located l;
  l.kind = DeviceKind::rank;
  l.placeholder = true;
  l.host = host;
  if (!jobs.empty()) {
    l.id = cluster_device_id(DeviceKind::job, jobs.front()) + "/" +
           std::string(kind_info(DeviceKind::rank).id_prefix) + std::to_string(rank);
  } else {
    l.id = placeholder_id(host, DeviceKind::rank, std::to_string(rank));
  }
  return l;
}

Located locate_job_of_host(const Topology& topo, const std::string& host) {
  std::vector<std::string> jobs = topo.jobs_of_host(host);
  if (jobs.size() == 1) {
    const std::string job = cluster_device_id(DeviceKind::job, jobs.front());
    if (auto d = topo.device(job)) return found(*d, DeviceKind::job);
    Located l;
    l.kind = DeviceKind::job;
    l.id = job;
    return l;
  }
  return placeholder(host, DeviceKind::job, "");
}

}  // namespace

Located locate_device(const Topology& topo, const Signature& sig, DeviceKind kind,
                      const Locator* loc, const FieldValues& fields, const LogRecord& rec) {
  const std::string& host = rec.host;
  if (!loc) {
    switch (kind) {
      case DeviceKind::host: {
        Located l;
        l.id = host;
        l.host = host;
        l.kind = DeviceKind::host;
        l.placeholder = !rec.host_known;
        return l;
      }
      case DeviceKind::job:
        return locate_job_of_host(topo, host);
      case DeviceKind::rank:
        if (rec.rank_hint >= 0) return locate_rank(topo, host, rec.rank_hint);
        return placeholder(host, kind, "");
      default:
        return placeholder(host, kind, "");
    }
  }
  const std::string* raw = value_of(fields, loc->field);
  if (!raw) {
    if (loc->kind == DeviceKind::rank && rec.rank_hint >= 0)
      return locate_rank(topo, host, rec.rank_hint);
    // A named host binding ("as peer_host") whose field the line lacks binds
    // nothing: falling back to the line's own host would make the host that
    // logged the line its own peer.
    if (loc->kind == DeviceKind::host)
      return loc->binding.empty() ? locate_device(topo, sig, kind, nullptr, fields, rec)
                                  : Located{};
    if (loc->kind == DeviceKind::job) return locate_job_of_host(topo, host);
    return placeholder(host, loc->kind, "");
  }
  const std::string& v = *raw;
  FieldType t = type_of(sig, loc->field);
  switch (loc->kind) {
    case DeviceKind::host: {
      if (auto h = topo.resolve_host(v)) {
        Located l;
        l.id = *h;
        l.host = *h;
        l.kind = DeviceKind::host;
        return l;
      }
      return placeholder(host, DeviceKind::host, v);
    }
    case DeviceKind::gpu:
    case DeviceKind::nic:
    case DeviceKind::pcie_port:
    case DeviceKind::nvswitch: {
      if (t == FieldType::bdf) {
        auto bdf = normalize_bdf(v);
        std::string key = bdf ? *bdf : v;
        if (bdf) {
          if (auto d = topo.device_by_bdf(host, key); d && d->kind == loc->kind)
            return found(*d, loc->kind);
        }
        return placeholder(host, loc->kind, key);
      }
      if (loc->kind == DeviceKind::nic && t == FieldType::ip) {
        if (auto d = topo.nic_by_ip(v)) return found(*d, DeviceKind::nic);
        return placeholder(host, DeviceKind::nic, v);
      }
      std::optional<DeviceInfo> d;
      if (loc->kind == DeviceKind::gpu) {
        if (auto idx = parse_int(v); idx && *idx >= 0 && *idx < (1 << 20))
          d = topo.gpu_by_index(host, static_cast<int>(*idx));
      } else if (loc->kind == DeviceKind::nic) {
        d = topo.nic_by_name(host, v);
      } else if (loc->kind == DeviceKind::nvswitch) {
        d = topo.nvswitch_by_id(host, v);
      } else if (auto bdf = normalize_bdf(v)) {
        d = topo.device_by_bdf(host, *bdf);
        if (d && d->kind != DeviceKind::pcie_port) d.reset();
      }
      if (d) return found(*d, loc->kind);
      return placeholder(host, loc->kind, v);
    }
    case DeviceKind::rank: {
      auto r = parse_int(v);
      if (r && *r >= 0 && *r < (1LL << 31)) return locate_rank(topo, host, static_cast<int>(*r));
      if (rec.rank_hint >= 0) return locate_rank(topo, host, rec.rank_hint);
      return placeholder(host, DeviceKind::rank, v);
    }
    case DeviceKind::job: {
      if (auto d = topo.device(cluster_device_id(DeviceKind::job, v)); d && !d->placeholder)
        return found(*d, DeviceKind::job);
      return placeholder(host, DeviceKind::job, v);
    }
    case DeviceKind::fabric_switch: {
      if (auto d = topo.fabric_switch(v)) return found(*d, DeviceKind::fabric_switch);
      return placeholder(host, DeviceKind::fabric_switch, v);
    }
    case DeviceKind::storage: {
      if (auto d = topo.storage(v)) return found(*d, DeviceKind::storage);
      return placeholder(host, DeviceKind::storage, v);
    }
  }
  return placeholder(host, loc->kind, v);
}

}  // namespace reflex::ingest
