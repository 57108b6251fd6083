// Hard families of thin evidence: a job on one host only, several hosts'
// logs without topology.json, a short paste of one host's kernel lines.
#include <algorithm>
#include <string>

#include "sim/hard.h"

namespace reflex::sim {

namespace {

// The GPU of a truth id as the logs alone name it (docs/interfaces.md §2
// placeholders: without a topology a GPU is known by its BDF).
void placeholder_truth(Ctx& x) {
  Truth& t = x.I.truth;
  const size_t sl = t.device.find('/');
  if (sl == std::string::npos) return;
  const std::string hn = t.device.substr(0, sl), rest = t.device.substr(sl + 1);
  for (int h = 0; h < x.nhosts(); ++h) {
    if (x.hn(h) != hn) continue;
    for (const SimGpu& gp : x.H(h).gpus)
      if (rest == "gpu" + std::to_string(gp.index)) {
        t.also.push_back(t.device);
        t.device = hn + "/gpu@" + gp.bdf;
      }
    for (const SimNic& ni : x.H(h).nics)
      if (rest == ni.name) {
        t.also.push_back(t.device);
        t.also.push_back(hn + "/nic@" + ni.name);
        t.device = hn + "/nic@" + ni.bdf;
      }
  }
}

}  // namespace

// One host, the job on it alone (8 ranks, no peers to compare with).
void new_thin_one_host(Ctx& x, Us t0) {
  run_base(x,
           {"gpu_fallen_off_bus", "hbm_dbe", "gsp_timeout", "gpu_hw_xid", "nvlink_xid74",
            "nic_health", "cuda_oom", "host_oom"},
           t0);
}

// Several hosts' logs and no topology.json (the SRE attached only logs).
void new_thin_no_topology(Ctx& x, Us t0) {
  x.I.no_topology = true;
  run_base(x,
           {"gpu_fallen_off_bus", "hbm_dbe", "sram_dbe", "gsp_timeout", "gpu_hw_xid",
            "nic_link_down", "host_oom", "mce_panic"},
           t0);
  placeholder_truth(x);
}

// A short paste: a handful of kernel lines of one host, no topology, no job.
void new_thin_paste(Ctx& x, Us t0) {
  x.I.no_topology = true;
  x.I.paste = true;
  const int h = 0;
  HostProfile& p = x.I.prof[static_cast<size_t>(h)];
  x.I.t_start = t0 - sec(x.r.uniform(5, 600));
  x.I.t_end = t0 + sec(x.r.uniform(5, 120));
  p.boot = std::min(p.boot, x.I.t_start + p.skew - hours(x.r.uniform(2, 120)));
  x.I.truth.regime = "snippet";
  if (x.r.chance(0.5))
    corrected_aer(x, h, t0 - sec(x.r.uniform(1, 300)));  // context the SRE copied along
  if (x.r.chance(0.3)) peermem_invalid_context(x, h, t0 - sec(x.r.uniform(1, 300)));
  const int g = any_gpu(x);
  const SimGpu& gp = x.H(h).gpus[static_cast<size_t>(g)];
  const long long addr = 0x10000000LL + x.r.range(0, 0x7fffffff);
  switch (x.r.index(5)) {
    case 0:  // §2.3 Xid 79 (+119)
      x.xid(h, g, t0, 79, "GPU has fallen off the bus.");
      if (x.r.chance(0.5))
        x.xid(h, g, t0 + sec(x.r.uniform(1, 45)), 119,
              strf("Timeout after 45s of waiting for RPC response from GPU%d GSP! Expected "
                   "function 76 (GSP_RM_CONTROL) (0x20800a4c 0x4).",
                   g));
      set_truth(x, x.hn(h) + "/gpu" + std::to_string(g), "gpu_fallen_off_bus", "C02",
                "xid79_fallen_off_bus", t0, {x.hn(h)});
      break;
    case 1:  // §2.3 DBE chain
      x.xid(h, g, t0, 48,
            strf("An uncorrectable double bit error (DBE) has been detected on GPU in the "
                 "framebuffer at physAddr 0x%llx partition %d, subpartition %d.",
                 addr, x.r.index(32), x.r.index(4)));
      x.xid(h, g, t0 + 80, 63,
            strf("Row Remapper: New row (0x%016llx) marked for remapping, reset gpu to activate.",
                 addr));
      if (x.r.chance(0.5))
        x.xid(h, g, t0 + ms(x.r.uniform(1, 500)), 94, "Contained: SM (0x1). RST: No, D-RST: No",
              true);
      else
        x.xid(h, g, t0 + ms(x.r.uniform(1, 500)), 95,
              "Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No", true);
      set_truth(x, x.hn(h) + "/gpu" + std::to_string(g), "gpu_memory", "C04", "xid48_dbe", t0,
                {x.hn(h)});
      break;
    case 2:  // §6 C10 GSP
      x.xid(h, g, t0, 119,
            strf("Timeout after 45s of waiting for RPC response from GPU%d GSP! Expected function "
                 "103 (GSP_RM_ALLOC) (0x2081 0x4).",
                 g),
            true);
      x.xid(h, g, t0 + sec(x.r.uniform(1, 30)), 154,
            "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)");
      set_truth(x, x.hn(h) + "/gpu" + std::to_string(g), "gpu_hw", "C10", "xid119_gsp_timeout", t0,
                {x.hn(h)});
      break;
    case 3: {  // §4.1 mlx5 health
      const SimNic& ni = x.H(h).nics[static_cast<size_t>(g % static_cast<int>(x.H(h).nics.size()))];
      x.kern(
          h, t0,
          strf("mlx5_core %s: device's health compromised - reached miss count", ni.bdf.c_str()));
      x.kern(h, t0 + 24, strf("mlx5_core %s: synd 0x7: irisc not responding", ni.bdf.c_str()));
      set_truth(x, x.hn(h) + "/" + ni.name, "nic", "C14", "mlx5_health_compromised", t0, {x.hn(h)});
      break;
    }
    default:  // §6 C25 OOM killer (interfaces.md §6: host_kernel)
      x.kern(h, t0,
             strf("Out of memory: Killed process %d (python3) total-vm:%lldkB, anon-rss:%lldkB, "
                  "file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:%lldkB oom_score_adj:0",
                  x.pid(h, g), 900000000LL + x.r.range(0, 90000000),
                  200000000LL + x.r.range(0, 90000000), 400000LL + x.r.range(0, 90000)));
      set_truth(x, x.hn(h), "host_kernel", "C25", "oom_killer", t0, {x.hn(h)});
      break;
  }
  (void)gp;
  placeholder_truth(x);
}

}  // namespace reflex::sim
