// The simulated cluster: HGX-style 8-GPU hosts (PCIe switches with GPU-NIC
// pairing, root ports, NVSwitches), a rail-optimized fabric (NIC i of every host
// of a 32-host scalable unit on leaf i), spines, racks and shared storage, as
// large training clusters are built.
#include <cstdio>
#include <string>

#include "sim/model.h"

namespace reflex::sim {

namespace {

constexpr int kHostsPerSu = 32;
constexpr int kHostsPerRack = 4;

std::string fmt_bdf(int bus, int dev = 0) {
  char b[16];
  std::snprintf(b, sizeof b, "0000:%02x:%02x.0", bus, dev);
  return b;
}

}  // namespace

Cluster build_cluster(const SimOptions& o, uint64_t seed) {
  Rng r(derive_seed(seed, 0xc1u));
  Cluster c;
  c.name = "train-" + std::string(1, static_cast<char>('a' + r.index(6)));
  c.gpg = o.gpus_per_host;
  c.pairing22 = o.pairing_2_2;
  c.roce = r.chance(0.25);
  const int H = o.hosts;
  const int width = H >= 10000 ? 5 : 4;
  const int nsu = (H + kHostsPerSu - 1) / kHostsPerSu;
  const int rails = c.gpg;
  // Spines: a few per rail plane; every leaf of a rail uplinks to its rail's spines.
  const int spines_per_rail = nsu <= 1 ? 1 : (nsu < 8 ? 2 : 4);
  for (int i = 0; i < rails * spines_per_rail; ++i) {
    char b[24];
    std::snprintf(b, sizeof b, "spine-%02d", i + 1);
    c.spines.push_back(b);
  }
  const int leaf_width = nsu * rails >= 1000 ? 4 : 3;
  for (int s = 0; s < nsu; ++s)
    for (int rail = 0; rail < rails; ++rail) {
      SimLeaf l;
      char b[24];
      std::snprintf(b, sizeof b, "leaf-%0*d", leaf_width, s * rails + rail + 1);
      l.name = b;
      l.su = s;
      l.rail = rail;
      l.lid = 1 + s * rails + rail;
      for (int k = 0; k < spines_per_rail; ++k) l.spines.push_back(rail * spines_per_rail + k);
      c.leaves.push_back(std::move(l));
    }
  c.storage.push_back({"nfs-01", "nfs", "10.9.0.1", "/ckpt"});
  c.storage.push_back({"nfs-02", "nfs", "10.9.0.2", "/data"});

  // PCIe layout per host (interfaces.md §1 example: root port 16:01.0, switch 17:00.0,
  // GPU 18:00.0, NIC 19:00.0 = ibp25s0).
  static const int k11[] = {0x16, 0x28, 0x38, 0x5a, 0x98, 0xa9, 0xb8, 0xd9};
  static const int k22[] = {0x16, 0x38, 0x98, 0xb8, 0x48, 0xc8, 0x6a, 0xe8};
  c.hosts.resize(static_cast<size_t>(H));
  for (int h = 0; h < H; ++h) {
    SimHost& x = c.hosts[static_cast<size_t>(h)];
    char b[64];
    std::snprintf(b, sizeof b, "node-%0*d", width, h + 1);
    x.name = b;
    const int hi = (h + 1) >> 8, lo = (h + 1) & 255;
    std::snprintf(b, sizeof b, "10.1.%d.%d", hi, lo);
    x.ip = b;
    x.rack = h / kHostsPerRack;
    x.su = h / kHostsPerSu;
    const int per_sw = c.pairing22 ? 2 : 1;
    const int nsw = (c.gpg + per_sw - 1) / per_sw;
    for (int s = 0; s < nsw; ++s) {
      const int base = c.pairing22 ? k22[s % 8] : k11[s % 8];
      SimSwitch sw;
      sw.id = "sw" + std::to_string(s);
      sw.bdf = fmt_bdf(base + 1);
      sw.root_port = fmt_bdf(base, 1);
      x.sws.push_back(sw);
      for (int j = 0; j < per_sw; ++j) {
        const int gi = s * per_sw + j;
        if (gi >= c.gpg) break;
        SimGpu g;
        g.index = gi;
        g.bdf = fmt_bdf(base + 2 + j);
        g.bus = g.bdf.substr(0, 10);
        std::snprintf(b, sizeof b, "1650%09llu",
                      static_cast<unsigned long long>(r.range(0, 999999999)));
        g.serial = b;
        g.uuid =
            "GPU-" + r.hex(8) + "-" + r.hex(4) + "-" + r.hex(4) + "-" + r.hex(4) + "-" + r.hex(12);
        g.sw = s;
        SimNic n;
        n.index = gi;
        n.name = "mlx5_" + std::to_string(gi);
        const int nbus = base + 2 + per_sw + j;
        n.bdf = fmt_bdf(nbus);
        std::snprintf(b, sizeof b, c.roce ? "enp%ds0np0" : "ibp%ds0", nbus);
        n.netdev = b;
        std::snprintf(b, sizeof b, "10.%d.%d.%d", 100 + gi, hi, lo);
        n.ip = b;
        if (c.roce) {
          n.gid = "::ffff:" + n.ip;
        } else {
          std::snprintf(b, sizeof b, "fe80::a088:c203:%x:%x", (h + 1) >> 4,
                        ((h + 1) & 15) * 256 + gi);
          n.gid = b;
        }
        n.sw = s;
        n.leaf = x.su * rails + gi;
        n.leaf_port = (h % kHostsPerSu) + 1;
        x.nics.push_back(n);
        g.nics.push_back(gi);
        x.gpus.push_back(g);
      }
    }
    // In 2+2 designs each GPU lists its own NIC first, then its switch sibling's.
    if (c.pairing22)
      for (auto& g : x.gpus) {
        int sib = g.index ^ 1;
        if (sib < c.gpg) g.nics.push_back(sib);
      }
    for (int k = 0; k < 4; ++k) x.nvsw_bdf.push_back(fmt_bdf(0x05 + k));
  }
  return c;
}

Job build_job(const Cluster& c, Rng& r, int compact_mode) {
  Job j;
  j.gpg = c.gpg;
  j.id = "job-" + std::to_string(r.range(1000, 99999));
  const int H = static_cast<int>(c.hosts.size());
  std::vector<uint8_t> spare(static_cast<size_t>(H), 0);
  // A few spare/other-tenant hosts outside the job (their noise is a trap).
  if (H > 4) {
    int n = static_cast<int>(H * r.uniform(0, 0.06));
    for (int i = 0; i < n; ++i) spare[static_cast<size_t>(r.index(static_cast<size_t>(H)))] = 1;
  }
  j.pos.assign(static_cast<size_t>(H), -1);
  for (int h = 0; h < H; ++h)
    if (!spare[static_cast<size_t>(h)]) {
      j.pos[static_cast<size_t>(h)] = static_cast<int>(j.hosts.size());
      j.hosts.push_back(h);
    }
  j.compact = compact_mode == 1 || (compact_mode < 0 && (H >= 256 || r.chance(0.3)));
  return j;
}

std::string topology_json(const Cluster& c, const Job& j) {
  std::string o;
  o.reserve(c.hosts.size() * 2400 + 4096);
  o += "{\n  \"cluster\": \"" + c.name + "\",\n  \"hosts\": [\n";
  for (size_t h = 0; h < c.hosts.size(); ++h) {
    const SimHost& x = c.hosts[h];
    char b[64];
    std::snprintf(b, sizeof b, "r%03d", x.rack + 1);
    o += "    {\"name\": \"" + x.name + "\", \"ip\": \"" + x.ip + "\", \"rack\": \"" + b + "\"";
    if (!x.nvl_domain.empty()) o += ", \"nvl_domain\": \"" + x.nvl_domain + "\"";
    o += ",\n     \"gpus\": [";
    for (size_t g = 0; g < x.gpus.size(); ++g) {
      const SimGpu& gp = x.gpus[g];
      o += g ? ",\n       " : "\n       ";
      o += "{\"index\": " + std::to_string(gp.index) + ", \"bdf\": \"" + gp.bdf +
           "\", \"serial\": \"" + gp.serial + "\", \"pcie_switch\": \"" +
           x.sws[static_cast<size_t>(gp.sw)].id + "\", \"nics\": [";
      for (size_t k = 0; k < gp.nics.size(); ++k) {
        if (k) o += ", ";
        o += "\"" + x.nics[static_cast<size_t>(gp.nics[k])].name + "\"";
      }
      o += "]}";
    }
    o += "],\n     \"nics\": [";
    for (size_t n = 0; n < x.nics.size(); ++n) {
      const SimNic& ni = x.nics[n];
      o += n ? ",\n       " : "\n       ";
      o += "{\"name\": \"" + ni.name + "\", \"bdf\": \"" + ni.bdf + "\", \"netdev\": \"" +
           ni.netdev + "\", \"ip\": \"" + ni.ip + "\", \"pcie_switch\": \"" +
           x.sws[static_cast<size_t>(ni.sw)].id + "\", \"port\": 1, \"fabric_switch\": \"" +
           c.leaves[static_cast<size_t>(ni.leaf)].name + "\"}";
    }
    o += "],\n     \"pcie_switches\": [";
    for (size_t s = 0; s < x.sws.size(); ++s) {
      o += s ? ", " : "";
      o += "{\"id\": \"" + x.sws[s].id + "\", \"bdf\": \"" + x.sws[s].bdf +
           "\", \"root_port\": \"" + x.sws[s].root_port + "\"}";
    }
    o += "],\n     \"nvswitches\": [";
    for (size_t s = 0; s < x.nvsw_bdf.size(); ++s) {
      o += s ? ", " : "";
      o += "{\"id\": \"nvsw" + std::to_string(s) + "\", \"bdf\": \"" + x.nvsw_bdf[s] + "\"}";
    }
    o += "]}";
    o += h + 1 < c.hosts.size() ? ",\n" : "\n";
  }
  o += "  ],\n  \"fabric\": [\n";
  for (size_t l = 0; l < c.leaves.size(); ++l) {
    o += "    {\"name\": \"" + c.leaves[l].name + "\", \"tier\": \"leaf\", \"uplinks\": [";
    for (size_t k = 0; k < c.leaves[l].spines.size(); ++k) {
      if (k) o += ", ";
      o += "\"" + c.spines[static_cast<size_t>(c.leaves[l].spines[k])] + "\"";
    }
    o += "]},\n";
  }
  for (size_t s = 0; s < c.spines.size(); ++s) {
    o += "    {\"name\": \"" + c.spines[s] + "\", \"tier\": \"spine\"}";
    o += s + 1 < c.spines.size() ? ",\n" : "\n";
  }
  o += "  ],\n  \"storage\": [";
  for (size_t s = 0; s < c.storage.size(); ++s) {
    o += s ? ", " : "";
    o += "{\"name\": \"" + c.storage[s].name + "\", \"kind\": \"" + c.storage[s].kind +
         "\", \"ip\": \"" + c.storage[s].ip + "\", \"export\": \"" + c.storage[s].exp + "\"}";
  }
  if (j.id.empty()) {  // no job (hard mode's snippets)
    o += "],\n  \"jobs\": []\n}\n";
    return o;
  }
  o += "],\n  \"jobs\": [\n    {\"id\": \"" + j.id + "\", \"ranks\": ";
  if (j.compact) {
    o += "{\"hosts\": [";
    for (size_t p = 0; p < j.hosts.size(); ++p) {
      if (p) o += ", ";
      o += "\"" + c.hosts[static_cast<size_t>(j.hosts[p])].name + "\"";
    }
    o += "], \"gpus_per_host\": " + std::to_string(j.gpg) + "}}\n";
  } else {
    o += "[";
    for (size_t p = 0; p < j.hosts.size(); ++p)
      for (int g = 0; g < j.gpg; ++g) {
        o += (p || g) ? ",\n      " : "\n      ";
        o += "{\"rank\": " + std::to_string(static_cast<int>(p) * j.gpg + g) + ", \"host\": \"" +
             c.hosts[static_cast<size_t>(j.hosts[p])].name + "\", \"gpu\": " + std::to_string(g) +
             "}";
      }
    o += "]}\n";
  }
  o += "  ]\n}\n";
  return o;
}

}  // namespace reflex::sim
