// Incident templates of the GPU and its links: PCIe switch, fallen off the bus,
// HBM and SRAM ECC, GSP, other hardware Xids, NVLink and NVSwitch. Split from
// the scenario table so that each file holds one device family.
#include <algorithm>

#include "sim/templates.h"

namespace reflex::sim {

namespace {

using SP = Ctx::Prop;

// After a local CUDA failure on (h, g): the rank dies, torchrun tears down the
// host, peers fail errored (status 12 toward the host) or hung (watchdog).
Us local_failure(Ctx& x, int h, int g, Us t_err, const std::string& cuda_error,
                 double p_errored = 0.6, bool host_dies = false) {
  x.rank_crash(h, g, t_err, cuda_error);
  Us td = t_err + sec(x.r.around(2, 0.8, 0.1, 10));  // D_local
  x.teardown(h, td, g, 1);
  SP p;
  p.t_fail = td;
  p.hosts = {h};
  p.errored = x.r.chance(p_errored);
  x.I.truth.regime = p.errored ? "errored" : "hung";
  p.dead_ranks.clear();
  for (int k = 0; k < x.C.gpg; ++k) p.dead_ranks.push_back({h, k});
  if (host_dies) p.dead_hosts = {h};
  return x.propagate(p);
}

void fallen_off_lines(Ctx& x, int h, int g, Us t) {
  const SimGpu& gp = x.H(h).gpus[static_cast<size_t>(g)];
  x.xid_context(h, g, t - 50);
  const double v = x.r.uniform();
  if (v < 0.1) {  // no Xid number at all (NVSentinel#155 / gpud)
    x.kern(h, t, "NVRM: GPU " + gp.bdf + ": GPU has fallen off the bus.");
  } else if (v < 0.25) {  // multi-line form (NVSentinel fixture)
    x.kern(h, t,
           "NVRM: The NVIDIA GPU " + gp.bdf +
               "\nNVRM: (PCI ID: 10de:2330) installed in this system has\nNVRM: fallen off the bus "
               "and is not responding to commands.");
    x.xid(h, g, t + 20, 79, "GPU has fallen off the bus.");
  } else {
    x.xid(h, g, t, 79, "GPU has fallen off the bus.");
    if (x.r.chance(0.6)) x.kern(h, t + 30, "NVRM: GPU " + gp.bdf + ": GPU has fallen off the bus.");
  }
  if (x.r.chance(0.6)) {
    x.kern(h, t + 900,
           "NVRM: A GPU crash dump has been created. If possible, please run\nNVRM: "
           "nvidia-bug-report.sh as root to collect this data before\nNVRM: the NVIDIA driver is "
           "unloaded.");
  }
}

// SXid 20034 on the NVSwitch ports facing a lost GPU (~12 s later, §2.6).
void sxid_link_down(Ctx& x, int h, int g, Us t) {
  const int nsw = 2 + x.r.index(3);
  for (int k = 0; k < nsw && k < 4; ++k) {
    const std::string& bdf = x.H(h).nvsw_bdf[static_cast<size_t>(k)];
    int link = 8 * g + x.r.index(8) + 1;
    Us tk = t + x.r.range(0, 400000);
    x.kern(h, tk,
           strf("nvidia-nvswitch%d: SXid (PCI:%s): 20034, Fatal, Link %02d LTSSM Fault Up", k,
                bdf.c_str(), link));
    x.kern(h, tk + 20,
           strf("nvidia-nvswitch%d: SXid (PCI:%s): 20034, Severity 1 Engine instance %02d "
                "Sub-engine instance 00",
                k, bdf.c_str(), link));
    x.kern(h, tk + 40,
           strf("nvidia-nvswitch%d: SXid (PCI:%s): 20034, Data {0x50610002, 0x10100030, "
                "0x00000000, 0x10100030, 0x00000000, 0x00000000, 0x00000000, 0x00000000}",
                k, bdf.c_str()));
  }
}

std::string xid74_text(Ctx& x, int link) {
  if (x.r.chance(0.5))
    return strf("NVLink: fatal error detected on link %d(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)",
                link);
  return strf("NVLink: fatal error detected on link %d", link);
}

}  // namespace

// ---------------------------------------------------------------- GPU / PCIe

// C01: PCIe switch (or the root port above it) uncorrectable fatal.
void sc_pcie_switch_fatal(Ctx& x, Us t0) {
  const int h = job_host(x);
  const SimHost& X = x.H(h);
  const int s = x.r.index(X.sws.size());
  const SimSwitch& sw = X.sws[static_cast<size_t>(s)];
  const bool at_root_port = x.r.chance(0.4);
  const std::string reporter = at_root_port ? sw.root_port : sw.bdf;
  aer_fatal(x, h, t0, reporter, sw.bdf, "pcieport", true);
  if (x.r.chance(0.6)) {
    x.kern(
        h, t0 + 300,
        strf("pcieport %s: DPC: containment event, status:0x1f01 source:0x0000", reporter.c_str()));
    x.kern(h, t0 + 320,
           strf("pcieport %s: DPC: %s detected", reporter.c_str(),
                x.r.chance(0.5) ? "unmasked uncorrectable error" : "ERR_FATAL"));
  }
  if (x.r.chance(0.5))
    x.kern(h, t0 + ms(x.r.uniform(1, 40)),
           strf("pciehp %s: Slot(%d): Link Down", sw.bdf.c_str(), 10 + s));
  std::vector<int> gpus, nics;
  for (auto& g : X.gpus)
    if (g.sw == s) gpus.push_back(g.index);
  for (auto& n : X.nics)
    if (n.sw == s) nics.push_back(n.index);
  Us t_err = t0 + sec(5);
  for (int g : gpus) {
    Us tx = t0 + ms(x.r.uniform(50, 1000));
    x.kern(h, tx - 10,
           strf("nvidia %s: AER: can't recover (no error_detected callback)",
                X.gpus[static_cast<size_t>(g)].bdf.c_str()));
    fallen_off_lines(x, h, g, tx);
    if (x.r.chance(0.6))
      x.xid(h, g, tx + sec(x.r.uniform(0, 45)), 119,
            strf("Timeout after 45s of waiting for RPC response from GPU%d GSP! Expected function "
                 "76 (GSP_RM_CONTROL) (0x20800a4c 0x4).",
                 g),
            true);
    if (x.r.chance(0.5)) x.xid(h, g, tx + sec(x.r.uniform(0.5, 5)), 45, "Ch 00000010", true);
    if (x.r.chance(0.7)) sxid_link_down(x, h, g, tx + sec(x.r.around(12, 0.15, 8, 20)));
    t_err = std::min(t_err, tx + ms(x.r.uniform(100, 4000)));
  }
  for (int n : nics) {
    const SimNic& ni = X.nics[static_cast<size_t>(n)];
    Us tn = t0 + ms(x.r.uniform(5, 300));
    x.kern(h, tn,
           strf("mlx5_core %s: mlx5_pci_err_detected Device state = 1 health sensors: 1 "
                "pci_status: 1. Enter, pci channel state = 2",
                ni.bdf.c_str()));
    x.kern(h, tn + ms(x.r.uniform(100, 2000)),
           strf("mlx5_core %s: mlx5_error_sw_reset:233:(pid %d): PCI channel offline, stop waiting "
                "for NIC IFC",
                ni.bdf.c_str(), 900 + x.r.index(4000)));
    x.nccl(h, tn + ms(x.r.uniform(10, 900)), n, "WARN",
           strf("NET/IB : %s:1 Got async event : local catastrophic error", ni.name.c_str()));
  }
  x.kern(h, t0 + ms(x.r.uniform(1500, 3000)),
         strf("pcieport %s: AER: %s", reporter.c_str(),
              x.r.chance(0.5) ? "Root Port link has been reset (0)" : "device recovery failed"));
  set_truth(x, x.hn(h) + "/pcie/" + sw.bdf, "pcie", "C01", "pcie_aer_fatal", t0, {x.hn(h)});
  x.I.truth.notes.push_back(at_root_port ? "reported by the root port above the switch"
                                         : "reported by the switch port");
  local_failure(x, h, gpus[0], t_err, "unspecified launch failure");
}

// C02: GPU falls off the bus by itself; AER (if any) follows as a side effect.
void sc_gpu_fallen_off_bus(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  const SimHost& X = x.H(h);
  const SimGpu& gp = X.gpus[static_cast<size_t>(g)];
  fallen_off_lines(x, h, g, t0);
  if (x.r.chance(0.55))
    x.xid(h, g, t0 + sec(x.r.uniform(0.2, 45)), 119,
          strf("Timeout after 45s of waiting for RPC response from GPU%d GSP! Expected function "
               "103 (GSP_RM_ALLOC) (0x2081 0x4).",
               g),
          true);
  if (x.r.chance(0.4)) x.xid(h, g, t0 + sec(x.r.uniform(0.5, 5)), 45, "Ch 00000008", true);
  if (x.r.chance(0.7)) sxid_link_down(x, h, g, t0 + sec(x.r.around(12, 0.15, 8, 20)));
  if (x.r.chance(0.4))  // side-effect AER after the Xid (C02 discriminator)
    aer_fatal(x, h, t0 + sec(x.r.uniform(0.5, 6)), X.sws[static_cast<size_t>(gp.sw)].bdf, gp.bdf,
              "nvidia", false);
  set_truth(x, gpu_id(x, h, g), "gpu_fallen_off_bus", "C02", "xid79_fallen_off_bus", t0, {x.hn(h)});
  local_failure(x, h, g, t0 + ms(x.r.uniform(100, 4000)), "unspecified launch failure");
}

// C04: HBM DBE.
void sc_hbm_dbe(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  const long long addr = 0x10000000LL + x.r.range(0, 0x7fffffff);
  const bool exhausted = x.r.chance(0.15);
  x.xid(h, g, t0, 48,
        strf("An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer "
             "at physAddr 0x%llx partition %d, subpartition %d.",
             addr, static_cast<int>(x.r.range(0, 31)), static_cast<int>(x.r.range(0, 3))));
  if (x.r.chance(0.5))
    x.xid(h, g, t0 + 50, 171,
          strf("HBM, Uncorrectable DRAM error in FBPA %d subpartition %d physAddr 0x%llx",
               static_cast<int>(x.r.range(0, 11)), static_cast<int>(x.r.range(0, 1)), addr));
  if (exhausted)
    x.xid(h, g, t0 + 80, 64,
          strf("Row Remapper: failed to remap row (0x%016llx): remapping resources exhausted",
               addr));  // [invented] 64 text
  else
    x.xid(h, g, t0 + 80, 63,
          strf("Row Remapper: New row (0x%016llx) marked for remapping, reset gpu to activate.",
               addr));
  if (x.r.chance(0.6))
    x.xid(h, g, t0 + ms(x.r.uniform(1, 500)), 94, "Contained: SM (0x1). RST: No, D-RST: No", true);
  else
    x.xid(h, g, t0 + ms(x.r.uniform(1, 500)), 95,
          "Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No", true);
  Us t_err = t0 + ms(x.r.uniform(50, 2000));
  if (x.r.chance(0.6)) x.xid(h, g, t_err + ms(x.r.uniform(500, 3000)), 45, "Ch 00000010", true);
  set_truth(x, gpu_id(x, h, g), "gpu_memory", "C04", "xid48_dbe", t0, {x.hn(h)});
  if (exhausted) x.I.truth.notes.push_back("row remapping exhausted (Xid 64)");
  local_failure(x, h, g, t_err, "uncorrectable ECC error encountered");
}

// C06: SRAM uncorrectable (48 + 172).
void sc_sram_dbe(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  x.xid(
      h, g, t0, 48,
      "An uncorrectable double bit error (DBE) has been detected on GPU in the SRAM.");  // [invented]
                                                                                         // SRAM
                                                                                         // wording
  x.xid(h, g, t0 + 30, 172,
        strf("Uncorrectable SRAM error in GPC %d TPC %d SM %d", static_cast<int>(x.r.range(0, 7)),
             static_cast<int>(x.r.range(0, 8)), static_cast<int>(x.r.range(0, 1))));  // [invented]
  if (x.r.chance(0.5))
    x.xid(h, g, t0 + ms(x.r.uniform(1, 400)), 94, "Contained: SM (0x1). RST: No, D-RST: No", true);
  else
    x.xid(h, g, t0 + ms(x.r.uniform(1, 400)), 95,
          "Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No", true);
  Us t_err = t0 + ms(x.r.uniform(50, 2000));
  set_truth(x, gpu_id(x, h, g), "gpu_memory", "C06", "xid48_sram", t0, {x.hn(h)});
  local_failure(x, h, g, t_err, "uncorrectable ECC error encountered");
}

// C10: GSP hang (119 repeated / 120), then 154; the rank hangs.
void sc_gsp(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  const bool is120 = x.r.chance(0.3);
  int n = 1 + x.r.index(4);
  Us t = t0;
  for (int i = 0; i < n; ++i) {
    if (is120 && i == 0)
      x.xid(h, g, t, 120, strf("GSP task timeout @ pc:0x%s, task: 1", x.r.hex(7).c_str()),
            true);  // [invented] 120 text
    else
      x.xid(h, g, t, 119,
            strf("Timeout after 45s of waiting for RPC response from GPU%d GSP! Expected function "
                 "%d (%s) (0x%s 0x%x).",
                 g, i % 2 ? 103 : 76, i % 2 ? "GSP_RM_ALLOC" : "GSP_RM_CONTROL", x.r.hex(8).c_str(),
                 static_cast<unsigned>(x.r.range(1, 8))),
            true);
    t += sec(x.r.around(45, 0.05, 40, 50));
  }
  if (x.r.chance(0.5))
    x.xid(h, g, t0 + sec(x.r.uniform(1, 60)), 154,
          "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)");
  set_truth(x, gpu_id(x, h, g), "gpu_hw", "C10", is120 ? "xid120_gsp_error" : "xid119_gsp_timeout",
            t0, {x.hn(h)});
  SP p;
  p.t_fail = t0 - sec(45);  // the RPC had been stuck for 45 s when the first Xid printed
  p.hosts = {h};
  p.errored = false;
  x.I.truth.regime = "hung";
  x.propagate(p);
}

// C11 (+§2.3 rows 62/109/140/143): other GPU hardware Xids.
void sc_gpu_hw(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  static const int kCodes[] = {62, 109, 140, 143};
  const int code = kCodes[x.r.index(4)];
  std::string ev = "xid" + std::to_string(code);
  set_truth(x, gpu_id(x, h, g), "gpu_hw", code == 143 ? "C11/§2.3" : "C11", ev, t0, {x.hn(h)});
  if (code == 62) {  // observed chain 62 -> 45 (+30 s) -> 119 (45 s) -> 154
    x.xid(h, g, t0, 62,
          strf("Internal micro-controller halt (PMU) 0x%s",
               x.r.hex(8).c_str()));  // [invented] 62 text
    if (x.r.chance(0.7))
      x.xid(h, g, t0 + sec(x.r.around(30, 0.2, 10, 60)), 45, "Ch 00000010", true);
    if (x.r.chance(0.6))
      x.xid(h, g, t0 + sec(x.r.around(75, 0.1, 50, 100)), 119,
            strf("Timeout after 45s of waiting for RPC response from GPU%d GSP! Expected function "
                 "76 (GSP_RM_CONTROL) (0x20800a4c 0x4).",
                 g),
            true);
    if (x.r.chance(0.4))
      x.xid(h, g, t0 + sec(x.r.around(80, 0.1, 50, 120)), 154,
            "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)");
  } else if (code == 109) {
    x.xid(h, g, t0, 109, "Ch 00000010, errorString CTX SWITCH TIMEOUT, Info 0x3c000",
          true);  // [invented] detail
  } else if (code == 140) {
    x.xid(
        h, g, t0, 140,
        strf("An uncorrectable ECC error escaped containment in the framebuffer at physAddr 0x%llx",
             0x10000000LL + x.r.range(0, 0x7fffffff)));  // [invented]
  } else {
    x.xid(h, g, t0, 143, "GPU initialization failure (0x62)");  // [invented]
  }
  if (code == 143) {  // at driver load / reset: the job fails at launch on that rank
    x.pyerr(h, t0 + sec(x.r.uniform(2, 20)), g, "RuntimeError: CUDA error: initialization error");
    x.I.truth.regime = "launch";
    Us td = x.teardown(h, t0 + sec(x.r.uniform(20, 30)), g, 1);
    SP p;
    p.t_fail = td;
    p.hosts = {h};
    p.dead_ranks = {{h, g}};
    p.errored = true;
    x.propagate(p);
    return;
  }
  if (code == 140 || x.r.chance(0.3)) {
    local_failure(
        x, h, g, t0 + ms(x.r.uniform(50, 3000)),
        code == 140 ? "uncorrectable ECC error encountered" : "unspecified launch failure");
    return;
  }
  SP p;  // the engine hangs: every rank waits on this one
  p.t_fail = t0;
  p.hosts = {h};
  p.errored = false;
  x.I.truth.regime = "hung";
  x.propagate(p);
}

// C07: NVLink fatal on GPU A; sympathetic 74 on its peer.
void sc_nvlink(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  int peer = (g + 1 + x.r.index(static_cast<size_t>(x.C.gpg - 1))) % x.C.gpg;
  const int nl = 1 + x.r.index(3);
  for (int i = 0; i < nl; ++i)
    x.xid(h, g, t0 + ms(i * x.r.uniform(0, 30)), 74,
          xid74_text(x, static_cast<int>(x.r.range(0, 17))));
  x.xid(h, peer, t0 + ms(x.r.uniform(20, 1000)), 74,
        xid74_text(x, static_cast<int>(x.r.range(0, 17))));
  if (x.r.chance(0.5))
    x.xid(h, g, t0 + sec(x.r.uniform(1, 10)), 154,
          "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)");
  if (x.r.chance(0.3)) {
    int k = x.r.index(4);
    x.kern(h, t0 + ms(x.r.uniform(0, 800)),
           strf("nvidia-nvswitch%d: SXid (PCI:%s): 22013, Non-fatal, Link %02d Minion Link DLREQ "
                "interrupt",
                k, x.H(h).nvsw_bdf[static_cast<size_t>(k)].c_str(), 8 * g + x.r.index(8)));
  }
  set_truth(x, gpu_id(x, h, g), "nvlink", "C07", "xid74_nvlink", t0, {x.hn(h)});
  if (x.r.chance(0.5)) {
    local_failure(x, h, g, t0 + ms(x.r.uniform(100, 3000)),
                  "uncorrectable NVLink error detected during the execution");
    return;
  }
  SP p;
  p.t_fail = t0;
  p.hosts = {h};
  p.errored = false;
  x.I.truth.regime = "hung";
  x.propagate(p);
}

// C08: NVSwitch fatal SXid -> FM -> Xid 74 on several GPUs at once.
void sc_nvswitch(Ctx& x, Us t0) {
  const int h = job_host(x);
  const int k = x.r.index(4);
  const std::string& bdf = x.H(h).nvsw_bdf[static_cast<size_t>(k)];
  struct F {
    int code;
    const char* text;
  };
  static const F kFatal[] = {{12020, "egress sequence ID error"},
                             {22011, "Minion Link exterror"},
                             {23001, "ingress VC buffer overflow"},
                             {24007, "sourcetrack timeout error (First)"}};
  const F f = kFatal[x.r.index(4)];
  const int link = static_cast<int>(x.r.range(0, 63));
  x.kern(h, t0,
         strf("nvidia-nvswitch%d: SXid (PCI:%s): %d, Fatal, Link %02d %s", k, bdf.c_str(), f.code,
              link, f.text));
  x.kern(h, t0 + 15,
         strf("nvidia-nvswitch%d: SXid (PCI:%s): %d, Severity 1 Engine instance %02d Sub-engine "
              "instance 00",
              k, bdf.c_str(), f.code, link));
  x.kern(h, t0 + 30,
         strf("nvidia-nvswitch%d: SXid (PCI:%s): %d, Data {0x%s, 0x%s, 0x00000000}", k, bdf.c_str(),
              f.code, x.r.hex(8).c_str(), x.r.hex(8).c_str()));
  // Fabric Manager log (pci bus id in FM's 8-digit-domain form)
  x.line(h, t0 + ms(x.r.uniform(300, 3000)), kFm,
         strf("[ERROR] [tid %d] detected NVSwitch fatal error %d on fid 0 on NVSwitch pci bus id "
              "0000%s physical id %d port %d",
              800 + x.r.index(200), f.code, bdf.c_str(), k, link));
  if (x.r.chance(0.5))
    x.line(h, t0 + ms(x.r.uniform(3000, 6000)), kFm,
           strf("[ERROR] [tid %d] failed to find the GPU handle %d in the multicast team request",
                800 + x.r.index(200), x.r.index(8)));
  std::vector<int> gs(static_cast<size_t>(x.C.gpg));
  for (int i = 0; i < x.C.gpg; ++i) gs[static_cast<size_t>(i)] = i;
  x.r.shuffle(gs);
  const int n = std::min(x.C.gpg, 3 + x.r.index(static_cast<size_t>(std::max(1, x.C.gpg - 2))));
  Us t74 = t0 + ms(x.r.uniform(100, 900));
  for (int i = 0; i < n; ++i)
    x.xid(h, gs[static_cast<size_t>(i)], t74 + ms(x.r.uniform(0, 400)), 74,
          xid74_text(x, static_cast<int>(x.r.range(0, 17))));
  set_truth(x, x.hn(h) + "/nvsw" + std::to_string(k), "nvswitch", "C08", "sxid_fatal", t0,
            {x.hn(h)});
  SP p;
  p.t_fail = t0;
  p.hosts = {h};
  p.errored = x.r.chance(0.3);
  x.I.truth.regime = p.errored ? "errored" : "hung";
  if (p.errored) {
    x.rank_crash(h, gs[0], t74 + ms(x.r.uniform(100, 2000)),
                 "uncorrectable NVLink error detected during the execution");
    p.t_fail = x.teardown(h, t74 + sec(x.r.uniform(1, 8)), gs[0], 1);
    for (int g = 0; g < x.C.gpg; ++g) p.dead_ranks.push_back({h, g});
  }
  x.propagate(p);
}

// C32: NVLink5 (GB200 NVL72): one GPU's fatal 149, 145 on many in the domain.
void sc_nvlink5(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  const std::string dom = x.H(h).nvl_domain;
  std::vector<std::pair<int, int>> members;
  for (int q = 0; q < x.nhosts(); ++q)
    if (x.H(q).nvl_domain == dom && x.in_job(q))
      for (int k = 0; k < x.C.gpg; ++k)
        if (!(q == h && k == g)) members.push_back({q, k});
  static const char* kUnits[] = {"NETIR_LINK_EVT", "NETIR_LINK_EVT/NETIR_LINK_DOWN", "SAW_MVB",
                                 "TLW_RX/TLW_RX_PIPE0"};
  const int code = x.r.chance(0.7) ? 149 : (x.r.chance(0.5) ? 144 : 146);
  x.xid(
      h, g, t0, code,
      strf(
          "%s Fatal XC0 i0 Link %02d (0x%s 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)",
          code == 149 ? kUnits[x.r.index(2)] : kUnits[2 + (code == 146)],
          static_cast<int>(x.r.range(0, 17)), x.r.hex(8).c_str()));
  if (x.r.chance(0.6))
    x.xid(h, g, t0 + ms(x.r.uniform(100, 600)), 154,
          "GPU recovery action changed from 0x4 (Drain and Reset) to 0x1 (GPU Reset Required)");
  x.r.shuffle(members);
  const size_t n =
      members.empty() ? 0
                      : members.size() / 2 + static_cast<size_t>(x.r.index(members.size() / 2 + 1));
  for (size_t i = 0; i < n; ++i)
    x.xid(members[i].first, members[i].second, t0 + ms(x.r.uniform(20, 7000)), 145,
          strf("RLW_REMAP Nonfatal XC1 i0 Link %02d (0x00000082 0x00000040 0x00000000 0x00000000 "
               "0x00000000 0x00000000)",
               static_cast<int>(x.r.range(0, 17))));
  set_truth(x, gpu_id(x, h, g), "nvlink", "C32", "xid149_nvlink5_fatal", t0, {x.hn(h)});
  local_failure(x, h, g, t0 + ms(x.r.uniform(100, 3000)),
                "uncorrectable NVLink error detected during the execution", 0.8);
}

}  // namespace reflex::sim
