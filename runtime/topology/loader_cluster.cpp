// TopoLoader, the whole topology document after its hosts: $.fabric (switches
// and their uplinks), $.storage, $.jobs (ranks, explicit or compact), and the
// names that refer forward in the file, resolved once everything is read.
#include "loader_classes.h"
#include "reflex/values.h"

namespace reflex::topo {

// Everything else, once the document is parsed ($.hosts is then empty).
bool TopoLoader::finish(const json& root) {
  if (!root.is_object()) return bad("$", "the topology must be a JSON object");
  if (auto it = root.find("cluster"); it != root.end()) {
    if (!it->is_string()) return bad("$.cluster", "must be a string");
    im_->cluster = it->get<std::string>();
  }
  if (auto it = root.find("hosts"); it != root.end()) {
    if (!it->is_array()) return bad("$.hosts", "must be an array");
    for (size_t i = 0; i < it->size(); ++i)  // not streamed (e.g. load from a DOM)
      if (!host_element((*it)[i])) return false;
  } else if (!streamed_hosts_) {
    note("no-hosts", "", "the topology lists no hosts: every device will be a placeholder");
  }
  if (!load_fabric(root)) return false;
  if (!load_storage(root)) return false;
  if (!resolve_pending()) return false;
  if (!finish_fabric()) return false;
  if (!load_jobs(root)) return false;
  finish_notes();
  return true;
}

bool TopoLoader::load_fabric(const json& root) {
  auto it = root.find("fabric");
  if (it == root.end() || it->is_null()) return true;
  if (!it->is_array()) return bad("$.fabric", "must be an array");
  have_fabric_list_ = true;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& f = (*it)[i];
    std::string path = idx("$.fabric", i);
    if (!f.is_object()) return bad(path, "must be an object");
    std::string name, tier;
    if (!req_string(f, "name", path, &name) || !name_ok(name, path, ".name")) return false;
    if (!opt_string(f, "tier", path, &tier)) return false;
    std::vector<std::string> ups;
    bool has_ups;
    if (!string_list(f, "uplinks", path, &ups, &has_ups)) return false;
    if (im_->fabric_by_name.count(name))
      return bad(path + ".name", "duplicate fabric switch " + quoted(name));
    int32_t d = new_fabric(name, tier, path + ".name");
    if (d == kNone) return false;
    pending_uplinks_.push_back({d, path, std::move(ups)});
  }
  return true;
}

int32_t TopoLoader::new_fabric(const std::string& name, const std::string& tier,
                               const std::string& path) {
  Dev d;
  d.id = cluster_device_id(DeviceKind::fabric_switch, name);
  d.kind = DeviceKind::fabric_switch;
  d.aux = int32_t(im_->fabrics.size());
  im_->fabrics.push_back(Impl::Fabric{tier, {}, {}, {}});
  int32_t dev = add_dev(std::move(d), path);
  if (dev != kNone) im_->fabric_by_name.emplace(name, dev);
  return dev;
}

// NICs' fabric switches and hosts' mounts name things that may come later in the file.
bool TopoLoader::resolve_pending() {
  for (auto& p : pending_fabric_) {
    auto it = im_->fabric_by_name.find(p.name);
    if (it == im_->fabric_by_name.end()) {
      if (have_fabric_list_)
        return bad(p.path,
                   "NIC names fabric switch " + quoted(p.name) + " that is not in $.fabric");
      if (new_fabric(p.name, "", p.path) == kNone) return false;
      it = im_->fabric_by_name.find(p.name);
      note("fabric-implicit",
           "fabric switch " + p.name + " (named by " + im_->devs[size_t(p.nic)].id + ")",
           "the topology has no $.fabric list; switches named by NICs were created without "
           "uplinks");
    }
    im_->devs[size_t(p.nic)].link = it->second;
    im_->fabrics[size_t(im_->devs[size_t(it->second)].aux)].nics.push_back(p.nic);
  }
  for (auto& p : pending_mounts_) {
    for (size_t m = 0; m < p.names.size(); ++m) {
      int32_t sd = im_->find(cluster_device_id(DeviceKind::storage, p.names[m]));
      if (sd == kNone)
        return bad(idx(p.path, m), "names storage " + quoted(p.names[m]) + " that does not exist");
      im_->hosts[size_t(p.host)].mounts.push_back(sd);
    }
  }
  return true;
}

bool TopoLoader::finish_fabric() {
  for (auto& p : pending_uplinks_) {
    auto& fab = im_->fabrics[size_t(im_->devs[size_t(p.dev)].aux)];
    for (size_t u = 0; u < p.ups.size(); ++u) {
      auto it = im_->fabric_by_name.find(p.ups[u]);
      if (it == im_->fabric_by_name.end())
        return bad(idx(p.path + ".uplinks", u),
                   "uplink names fabric switch " + quoted(p.ups[u]) + " that does not exist");
      if (it->second == p.dev)
        return bad(idx(p.path + ".uplinks", u), "a switch cannot be its own uplink");
      if (std::find(fab.uplinks.begin(), fab.uplinks.end(), it->second) != fab.uplinks.end())
        continue;
      fab.uplinks.push_back(it->second);
      im_->fabrics[size_t(im_->devs[size_t(it->second)].aux)].downlinks.push_back(p.dev);
    }
  }
  return true;
}

bool TopoLoader::load_storage(const json& root) {
  auto it = root.find("storage");
  if (it == root.end() || it->is_null()) return true;
  if (!it->is_array()) return bad("$.storage", "must be an array");
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& s = (*it)[i];
    std::string path = idx("$.storage", i);
    if (!s.is_object()) return bad(path, "must be an object");
    Impl::Storage st;
    std::string kind, exp;
    if (!req_string(s, "name", path, &st.name) || !name_ok(st.name, path, ".name")) return false;
    if (!opt_ip(s, path, &st.ip) || !opt_string(s, "kind", path, &kind) ||
        !opt_string(s, "export", path, &exp))
      return false;
    if (!seen.insert(st.name).second)
      return bad(path + ".name", "duplicate storage " + quoted(st.name));
    Dev d;
    d.id = cluster_device_id(DeviceKind::storage, st.name);
    d.kind = DeviceKind::storage;
    d.aux = int32_t(im_->storages.size());
    im_->storages.push_back(std::move(st));
    int32_t dev = add_dev(std::move(d), path, ".name");
    if (dev == kNone) return false;
    im_->storage_devs.push_back(dev);
  }
  return true;
}

bool TopoLoader::load_jobs(const json& root) {
  auto it = root.find("jobs");
  if (it == root.end() || it->is_null()) return true;
  if (!it->is_array()) return bad("$.jobs", "must be an array");
  for (size_t ji = 0; ji < it->size(); ++ji) {
    const json& j = (*it)[ji];
    std::string path = idx("$.jobs", ji);
    if (!j.is_object()) return bad(path, "must be an object");
    Impl::Job job;
    if (!req_string(j, "id", path, &job.id) || !name_ok(job.id, path, ".id")) return false;
    Dev d;
    d.id = cluster_device_id(DeviceKind::job, job.id);
    d.kind = DeviceKind::job;
    d.aux = int32_t(im_->jobs.size());
    const int32_t jidx = d.aux;
    if (im_->find(d.id) != kNone) return bad(path + ".id", "duplicate job id " + quoted(job.id));
    job.dev = add_dev(std::move(d), path, ".id");
    if (job.dev == kNone) return false;
    im_->jobs.push_back(std::move(job));
    auto rit = j.find("ranks");
    if (rit == j.end() || rit->is_null()) {
      note("job-no-ranks", "job " + im_->jobs.back().id + " lists no ranks",
           "rank-level lines of this job cannot be placed");
      continue;
    }
    std::string rpath = path + ".ranks";
    if (rit->is_array()) {
      for (size_t ri = 0; ri < rit->size(); ++ri) {
        const json& r = (*rit)[ri];
        std::string p = idx(rpath, ri);
        if (!r.is_object()) return bad(p, "must be an object");
        auto rn = r.find("rank");
        if (rn == r.end() || rn->is_null()) return bad(p, "missing required 'rank'");
        if (!rn->is_number_integer() || rn->get<int64_t>() < 0 || rn->get<int64_t>() > 100000000)
          return bad(p + ".rank", "must be a non-negative integer");
        std::string host;
        if (!req_string(r, "host", p, &host)) return false;
        int64_t gpu = -1;
        bool has_gpu;
        if (!opt_int(r, "gpu", p, &gpu, &has_gpu)) return false;
        if (!add_rank(jidx, int(rn->get<int64_t>()), host, has_gpu ? gpu : -1, p, p + ".host",
                      p + ".gpu", true))
          return false;
      }
    } else if (rit->is_object()) {
      auto hs = rit->find("hosts");
      if (hs == rit->end() || !hs->is_array())
        return bad(rpath,
                   "the compact form needs 'hosts' (an array of host names) and 'gpus_per_host'");
      auto gph_it = rit->find("gpus_per_host");
      if (gph_it == rit->end() || !gph_it->is_number_integer() || gph_it->get<int64_t>() <= 0 ||
          gph_it->get<int64_t>() > 4096)
        return bad(rpath + ".gpus_per_host", "must be a positive integer");
      int gph = int(gph_it->get<int64_t>());
      for (size_t k = 0; k < hs->size(); ++k) {
        std::string hp = idx(rpath + ".hosts", k);
        if (!(*hs)[k].is_string()) return bad(hp, "must be a string");
        std::string host = (*hs)[k].get<std::string>();
        for (int g = 0; g < gph; ++g)
          if (!add_rank(jidx, int(k) * gph + g, host, g, hp, hp, hp, false)) return false;
      }
    } else {
      return bad(rpath, "must be an array of ranks or {\"hosts\": [...], \"gpus_per_host\": N}");
    }
  }
  return true;
}

bool TopoLoader::add_rank(int32_t jidx, int rank, const std::string& host, int64_t gpu,
                          const std::string& path, const std::string& host_path,
                          const std::string& gpu_path, bool explicit_gpu) {
  Impl::Job& job = im_->jobs[size_t(jidx)];
  int32_t h = im_->host_index(host);
  if (h == kNone)
    return bad(host_path, "rank names host " + quoted(host) + " that is not in $.hosts");
  Impl::Host& H = im_->hosts[size_t(h)];
  int32_t gdev = kNone;
  if (gpu >= 0) {
    for (int32_t g : H.gpus)
      if (im_->devs[size_t(g)].aux == gpu) gdev = g;
    if (gdev == kNone && (explicit_gpu || !H.gpus.empty()))
      return bad(gpu_path, "rank names GPU " + std::to_string(gpu) + " that host " + quoted(host) +
                               " does not have");
  }
  if (job.by_rank.count(rank))
    return bad(path, "duplicate rank " + std::to_string(rank) + " in job " + quoted(job.id));
  Dev d;
  d.id = rank_id(job.id, rank);
  d.kind = DeviceKind::rank;
  d.host = h;
  d.link = gdev;
  d.aux = rank;
  d.job = jidx;
  int32_t dev = add_dev(std::move(d), path);
  if (dev == kNone) return false;
  job.by_rank.emplace(rank, dev);
  job.ranks.push_back(dev);
  H.ranks.push_back(dev);
  if (std::find(H.jobs.begin(), H.jobs.end(), jidx) == H.jobs.end()) H.jobs.push_back(jidx);
  if (gdev != kNone) {
    im_->gpu_job.insert(Impl::pair_key(gdev, jidx));
  } else {
    im_->host_job_unknown_gpu.insert(Impl::pair_key(h, jidx));
    note("rank-no-gpu", "job " + job.id + ": rank " + std::to_string(rank) + " has no GPU",
         "its GPU is unknown; GPU faults on its host relate to it by host only");
  }
  return true;
}

}  // namespace reflex::topo
