// Scenario templates. Each is one causal chain of reference/domain.md §6 (the
// chain id is in the table and in truth.json), with stochastic delays around
// the delays given there and stochastic branches (errored vs hung, 94 vs 95,
// ...). Labels follow interfaces.md §5 (device rules) and §6 (fault classes).
// Message texts are the real formats of domain.md §2-§5 and peers.md; where no
// public example exists the text is marked "[invented]" beside it.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "sim/ctx.h"
#include "sim/scenarios.h"

namespace reflex::sim {

namespace {

using SP = Ctx::Prop;

int job_host(Ctx& x) { return x.J.hosts[static_cast<size_t>(x.r.index(x.J.hosts.size()))]; }
int any_gpu(Ctx& x) { return x.r.index(static_cast<size_t>(x.C.gpg)); }
std::string gpu_id(Ctx& x, int h, int g) { return x.hn(h) + "/gpu" + std::to_string(g); }
std::string nic_id(Ctx& x, int h, int n) { return x.hn(h) + "/" + x.H(h).nics[static_cast<size_t>(n)].name; }
Us ms(double v) { return static_cast<Us>(v * 1000.0); }
Us sec(double v) { return static_cast<Us>(v * 1e6); }


// After a local CUDA failure on (h, g): the rank dies, torchrun tears down the
// host, peers fail errored (status 12 toward the host) or hung (watchdog).
Us local_failure(Ctx& x, int h, int g, Us t_err, const std::string& cuda_error, double p_errored = 0.6,
                 bool host_dies = false) {
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
    x.kern(h, t, "NVRM: The NVIDIA GPU " + gp.bdf + "\nNVRM: (PCI ID: 10de:2330) installed in this system has\nNVRM: fallen off the bus and is not responding to commands.");
    x.xid(h, g, t + 20, 79, "GPU has fallen off the bus.");
  } else {
    x.xid(h, g, t, 79, "GPU has fallen off the bus.");
    if (x.r.chance(0.6)) x.kern(h, t + 30, "NVRM: GPU " + gp.bdf + ": GPU has fallen off the bus.");
  }
  if (x.r.chance(0.6)) {
    x.kern(h, t + 900, "NVRM: A GPU crash dump has been created. If possible, please run\nNVRM: nvidia-bug-report.sh as root to collect this data before\nNVRM: the NVIDIA driver is unloaded.");
  }
}

// SXid 20034 on the NVSwitch ports facing a lost GPU (~12 s later, §2.6).
void sxid_link_down(Ctx& x, int h, int g, Us t) {
  const int nsw = 2 + x.r.index(3);
  for (int k = 0; k < nsw && k < 4; ++k) {
    const std::string& bdf = x.H(h).nvsw_bdf[static_cast<size_t>(k)];
    int link = 8 * g + x.r.index(8) + 1;
    Us tk = t + x.r.range(0, 400000);
    x.kern(h, tk, strf("nvidia-nvswitch%d: SXid (PCI:%s): 20034, Fatal, Link %02d LTSSM Fault Up", k, bdf.c_str(), link));
    x.kern(h, tk + 20, strf("nvidia-nvswitch%d: SXid (PCI:%s): 20034, Severity 1 Engine instance %02d Sub-engine instance 00", k, bdf.c_str(), link));
    x.kern(h, tk + 40, strf("nvidia-nvswitch%d: SXid (PCI:%s): 20034, Data {0x50610002, 0x10100030, 0x00000000, 0x10100030, 0x00000000, 0x00000000, 0x00000000, 0x00000000}", k, bdf.c_str()));
  }
}

const char* pick_aer_bits(Ctx& x, bool new_names, std::string* status) {
  static const char* kOld[] = {"[ 5] Surprise Down Error    (First)", "[14] Completion Timeout     (First)", "[18] Malformed TLP          (First)"};
  static const char* kNew[] = {"[ 5] SDES                   (First)", "[14] CmpltTO                (First)", "[18] MalfTLP                (First)"};
  static const char* kStatus[] = {"00000020", "00004000", "00040000"};
  int i = x.r.index(3);
  *status = kStatus[i];
  return new_names ? kNew[i] : kOld[i];
}

// §3.1 AER, with the old/new kernel string drift.
void aer_fatal(Ctx& x, int h, Us t, const std::string& reporter, const std::string& source,
               const char* driver, bool fatal) {
  const bool nk = x.new_kernel();
  const char* sev = fatal ? (nk ? "Uncorrectable (Fatal)" : "Uncorrected (Fatal)")
                          : (nk ? "Uncorrectable (Non-Fatal)" : "Uncorrected (Non-Fatal)");
  std::string status;
  const char* bit = pick_aer_bits(x, nk, &status);
  if (nk)
    x.kern(h, t, strf("pcieport %s: AER: %s error message received from %s", reporter.c_str(), sev, source.c_str()));
  else
    x.kern(h, t, strf("pcieport %s: AER: %s%s error received: %s", reporter.c_str(),
                      x.r.chance(0.3) ? "Multiple " : "", sev, source.c_str()));
  x.kern(h, t + 5, strf("%s %s: %sPCIe Bus Error: severity=%s, type=%s, (%s)", driver, source.c_str(),
                        nk ? "AER: " : "", sev, x.r.chance(0.5) ? "Transaction Layer" : "Data Link Layer",
                        x.r.chance(0.5) ? "Requester ID" : "Receiver ID"));
  x.kern(h, t + 8, strf("%s %s: %s  device [%s] error status/mask=%s/00000000", driver, source.c_str(),
                        nk ? "AER: " : "", std::string(driver) == "nvidia" ? "10de:2330" : "1000:c030",
                        status.c_str()));
  x.kern(h, t + 10, strf("%s %s: %s  %s", driver, source.c_str(), nk ? "AER: " : "", bit));
}

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
    x.kern(h, t0 + 300, strf("pcieport %s: DPC: containment event, status:0x1f01 source:0x0000", reporter.c_str()));
    x.kern(h, t0 + 320, strf("pcieport %s: DPC: %s detected", reporter.c_str(),
                             x.r.chance(0.5) ? "unmasked uncorrectable error" : "ERR_FATAL"));
  }
  if (x.r.chance(0.5))
    x.kern(h, t0 + ms(x.r.uniform(1, 40)), strf("pciehp %s: Slot(%d): Link Down", sw.bdf.c_str(), 10 + s));
  std::vector<int> gpus, nics;
  for (auto& g : X.gpus)
    if (g.sw == s) gpus.push_back(g.index);
  for (auto& n : X.nics)
    if (n.sw == s) nics.push_back(n.index);
  Us t_err = t0 + sec(5);
  for (int g : gpus) {
    Us tx = t0 + ms(x.r.uniform(50, 1000));
    x.kern(h, tx - 10, strf("nvidia %s: AER: can't recover (no error_detected callback)", X.gpus[static_cast<size_t>(g)].bdf.c_str()));
    fallen_off_lines(x, h, g, tx);
    if (x.r.chance(0.6)) x.xid(h, g, tx + sec(x.r.uniform(0, 45)), 119, strf("Timeout after 45s of waiting for RPC response from GPU%d GSP! Expected function 76 (GSP_RM_CONTROL) (0x20800a4c 0x4).", g), true);
    if (x.r.chance(0.5)) x.xid(h, g, tx + sec(x.r.uniform(0.5, 5)), 45, "Ch 00000010", true);
    if (x.r.chance(0.7)) sxid_link_down(x, h, g, tx + sec(x.r.around(12, 0.15, 8, 20)));
    t_err = std::min(t_err, tx + ms(x.r.uniform(100, 4000)));
  }
  for (int n : nics) {
    const SimNic& ni = X.nics[static_cast<size_t>(n)];
    Us tn = t0 + ms(x.r.uniform(5, 300));
    x.kern(h, tn, strf("mlx5_core %s: mlx5_pci_err_detected Device state = 1 health sensors: 1 pci_status: 1. Enter, pci channel state = 2", ni.bdf.c_str()));
    x.kern(h, tn + ms(x.r.uniform(100, 2000)), strf("mlx5_core %s: mlx5_error_sw_reset:233:(pid %d): PCI channel offline, stop waiting for NIC IFC", ni.bdf.c_str(), 900 + x.r.index(4000)));
    x.nccl(h, tn + ms(x.r.uniform(10, 900)), n, "WARN", strf("NET/IB : %s:1 Got async event : local catastrophic error", ni.name.c_str()));
  }
  x.kern(h, t0 + ms(x.r.uniform(1500, 3000)), strf("pcieport %s: AER: %s", reporter.c_str(),
                                                   x.r.chance(0.5) ? "Root Port link has been reset (0)" : "device recovery failed"));
  set_truth(x, x.hn(h) + "/pcie/" + sw.bdf, "pcie", "C01", "pcie_aer_fatal", t0, {x.hn(h)});
  x.I.truth.notes.push_back(at_root_port ? "reported by the root port above the switch" : "reported by the switch port");
  local_failure(x, h, gpus[0], t_err, "unspecified launch failure");
}

// C02: GPU falls off the bus by itself; AER (if any) follows as a side effect.
void sc_gpu_fallen_off_bus(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  const SimHost& X = x.H(h);
  const SimGpu& gp = X.gpus[static_cast<size_t>(g)];
  fallen_off_lines(x, h, g, t0);
  if (x.r.chance(0.55)) x.xid(h, g, t0 + sec(x.r.uniform(0.2, 45)), 119, strf("Timeout after 45s of waiting for RPC response from GPU%d GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).", g), true);
  if (x.r.chance(0.4)) x.xid(h, g, t0 + sec(x.r.uniform(0.5, 5)), 45, "Ch 00000008", true);
  if (x.r.chance(0.7)) sxid_link_down(x, h, g, t0 + sec(x.r.around(12, 0.15, 8, 20)));
  if (x.r.chance(0.4))  // side-effect AER after the Xid (C02 discriminator)
    aer_fatal(x, h, t0 + sec(x.r.uniform(0.5, 6)), X.sws[static_cast<size_t>(gp.sw)].bdf, gp.bdf, "nvidia", false);
  set_truth(x, gpu_id(x, h, g), "gpu_fallen_off_bus", "C02", "xid79_fallen_off_bus", t0, {x.hn(h)});
  local_failure(x, h, g, t0 + ms(x.r.uniform(100, 4000)), "unspecified launch failure");
}

// C04: HBM DBE.
void sc_hbm_dbe(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  const long long addr = 0x10000000LL + x.r.range(0, 0x7fffffff);
  const bool exhausted = x.r.chance(0.15);
  x.xid(h, g, t0, 48, strf("An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x%llx partition %d, subpartition %d.", addr, static_cast<int>(x.r.range(0, 31)), static_cast<int>(x.r.range(0, 3))));
  if (x.r.chance(0.5)) x.xid(h, g, t0 + 50, 171, strf("HBM, Uncorrectable DRAM error in FBPA %d subpartition %d physAddr 0x%llx", static_cast<int>(x.r.range(0, 11)), static_cast<int>(x.r.range(0, 1)), addr));
  if (exhausted)
    x.xid(h, g, t0 + 80, 64, strf("Row Remapper: failed to remap row (0x%016llx): remapping resources exhausted", addr));  // [invented] 64 text
  else
    x.xid(h, g, t0 + 80, 63, strf("Row Remapper: New row (0x%016llx) marked for remapping, reset gpu to activate.", addr));
  if (x.r.chance(0.6))
    x.xid(h, g, t0 + ms(x.r.uniform(1, 500)), 94, "Contained: SM (0x1). RST: No, D-RST: No", true);
  else
    x.xid(h, g, t0 + ms(x.r.uniform(1, 500)), 95, "Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No", true);
  Us t_err = t0 + ms(x.r.uniform(50, 2000));
  if (x.r.chance(0.6)) x.xid(h, g, t_err + ms(x.r.uniform(500, 3000)), 45, "Ch 00000010", true);
  set_truth(x, gpu_id(x, h, g), "gpu_memory", "C04", "xid48_dbe", t0, {x.hn(h)});
  if (exhausted) x.I.truth.notes.push_back("row remapping exhausted (Xid 64)");
  local_failure(x, h, g, t_err, "uncorrectable ECC error encountered");
}

// C06: SRAM uncorrectable (48 + 172).
void sc_sram_dbe(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  x.xid(h, g, t0, 48, "An uncorrectable double bit error (DBE) has been detected on GPU in the SRAM.");  // [invented] SRAM wording
  x.xid(h, g, t0 + 30, 172, strf("Uncorrectable SRAM error in GPC %d TPC %d SM %d", static_cast<int>(x.r.range(0, 7)), static_cast<int>(x.r.range(0, 8)), static_cast<int>(x.r.range(0, 1))));  // [invented]
  if (x.r.chance(0.5))
    x.xid(h, g, t0 + ms(x.r.uniform(1, 400)), 94, "Contained: SM (0x1). RST: No, D-RST: No", true);
  else
    x.xid(h, g, t0 + ms(x.r.uniform(1, 400)), 95, "Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No", true);
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
      x.xid(h, g, t, 120, strf("GSP task timeout @ pc:0x%s, task: 1", x.r.hex(7).c_str()), true);  // [invented] 120 text
    else
      x.xid(h, g, t, 119, strf("Timeout after 45s of waiting for RPC response from GPU%d GSP! Expected function %d (%s) (0x%s 0x%x).", g, i % 2 ? 103 : 76, i % 2 ? "GSP_RM_ALLOC" : "GSP_RM_CONTROL", x.r.hex(8).c_str(), static_cast<unsigned>(x.r.range(1, 8))), true);
    t += sec(x.r.around(45, 0.05, 40, 50));
  }
  if (x.r.chance(0.5)) x.xid(h, g, t0 + sec(x.r.uniform(1, 60)), 154, "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)");
  set_truth(x, gpu_id(x, h, g), "gpu_hw", "C10", is120 ? "xid120_gsp_error" : "xid119_gsp_timeout", t0, {x.hn(h)});
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
    x.xid(h, g, t0, 62, strf("Internal micro-controller halt (PMU) 0x%s", x.r.hex(8).c_str()));  // [invented] 62 text
    if (x.r.chance(0.7)) x.xid(h, g, t0 + sec(x.r.around(30, 0.2, 10, 60)), 45, "Ch 00000010", true);
    if (x.r.chance(0.6)) x.xid(h, g, t0 + sec(x.r.around(75, 0.1, 50, 100)), 119, strf("Timeout after 45s of waiting for RPC response from GPU%d GSP! Expected function 76 (GSP_RM_CONTROL) (0x20800a4c 0x4).", g), true);
    if (x.r.chance(0.4)) x.xid(h, g, t0 + sec(x.r.around(80, 0.1, 50, 120)), 154, "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)");
  } else if (code == 109) {
    x.xid(h, g, t0, 109, "Ch 00000010, errorString CTX SWITCH TIMEOUT, Info 0x3c000", true);  // [invented] detail
  } else if (code == 140) {
    x.xid(h, g, t0, 140, strf("An uncorrectable ECC error escaped containment in the framebuffer at physAddr 0x%llx", 0x10000000LL + x.r.range(0, 0x7fffffff)));  // [invented]
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
    local_failure(x, h, g, t0 + ms(x.r.uniform(50, 3000)), code == 140 ? "uncorrectable ECC error encountered" : "unspecified launch failure");
    return;
  }
  SP p;  // the engine hangs: every rank waits on this one
  p.t_fail = t0;
  p.hosts = {h};
  p.errored = false;
  x.I.truth.regime = "hung";
  x.propagate(p);
}

// ---------------------------------------------------------------- NVLink / NVSwitch

std::string xid74_text(Ctx& x, int link) {
  if (x.r.chance(0.5)) return strf("NVLink: fatal error detected on link %d(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)", link);
  return strf("NVLink: fatal error detected on link %d", link);
}

// C07: NVLink fatal on GPU A; sympathetic 74 on its peer.
void sc_nvlink(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  int peer = (g + 1 + x.r.index(static_cast<size_t>(x.C.gpg - 1))) % x.C.gpg;
  const int nl = 1 + x.r.index(3);
  for (int i = 0; i < nl; ++i) x.xid(h, g, t0 + ms(i * x.r.uniform(0, 30)), 74, xid74_text(x, static_cast<int>(x.r.range(0, 17))));
  x.xid(h, peer, t0 + ms(x.r.uniform(20, 1000)), 74, xid74_text(x, static_cast<int>(x.r.range(0, 17))));
  if (x.r.chance(0.5)) x.xid(h, g, t0 + sec(x.r.uniform(1, 10)), 154, "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)");
  if (x.r.chance(0.3)) {
    int k = x.r.index(4);
    x.kern(h, t0 + ms(x.r.uniform(0, 800)), strf("nvidia-nvswitch%d: SXid (PCI:%s): 22013, Non-fatal, Link %02d Minion Link DLREQ interrupt", k, x.H(h).nvsw_bdf[static_cast<size_t>(k)].c_str(), 8 * g + x.r.index(8)));
  }
  set_truth(x, gpu_id(x, h, g), "nvlink", "C07", "xid74_nvlink", t0, {x.hn(h)});
  if (x.r.chance(0.5)) {
    local_failure(x, h, g, t0 + ms(x.r.uniform(100, 3000)), "uncorrectable NVLink error detected during the execution");
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
  struct F { int code; const char* text; };
  static const F kFatal[] = {{12020, "egress sequence ID error"}, {22011, "Minion Link exterror"},
                             {23001, "ingress VC buffer overflow"}, {24007, "sourcetrack timeout error (First)"}};
  const F f = kFatal[x.r.index(4)];
  const int link = static_cast<int>(x.r.range(0, 63));
  x.kern(h, t0, strf("nvidia-nvswitch%d: SXid (PCI:%s): %d, Fatal, Link %02d %s", k, bdf.c_str(), f.code, link, f.text));
  x.kern(h, t0 + 15, strf("nvidia-nvswitch%d: SXid (PCI:%s): %d, Severity 1 Engine instance %02d Sub-engine instance 00", k, bdf.c_str(), f.code, link));
  x.kern(h, t0 + 30, strf("nvidia-nvswitch%d: SXid (PCI:%s): %d, Data {0x%s, 0x%s, 0x00000000}", k, bdf.c_str(), f.code, x.r.hex(8).c_str(), x.r.hex(8).c_str()));
  // Fabric Manager log (pci bus id in FM's 8-digit-domain form)
  x.line(h, t0 + ms(x.r.uniform(300, 3000)), kFm,
         strf("[ERROR] [tid %d] detected NVSwitch fatal error %d on fid 0 on NVSwitch pci bus id 0000%s physical id %d port %d",
              800 + x.r.index(200), f.code, bdf.c_str(), k, link));
  if (x.r.chance(0.5))
    x.line(h, t0 + ms(x.r.uniform(3000, 6000)), kFm, strf("[ERROR] [tid %d] failed to find the GPU handle %d in the multicast team request", 800 + x.r.index(200), x.r.index(8)));
  std::vector<int> gs(static_cast<size_t>(x.C.gpg));
  for (int i = 0; i < x.C.gpg; ++i) gs[static_cast<size_t>(i)] = i;
  x.r.shuffle(gs);
  const int n = std::min(x.C.gpg, 3 + x.r.index(static_cast<size_t>(std::max(1, x.C.gpg - 2))));
  Us t74 = t0 + ms(x.r.uniform(100, 900));
  for (int i = 0; i < n; ++i) x.xid(h, gs[static_cast<size_t>(i)], t74 + ms(x.r.uniform(0, 400)), 74, xid74_text(x, static_cast<int>(x.r.range(0, 17))));
  set_truth(x, x.hn(h) + "/nvsw" + std::to_string(k), "nvswitch", "C08", "sxid_fatal", t0, {x.hn(h)});
  SP p;
  p.t_fail = t0;
  p.hosts = {h};
  p.errored = x.r.chance(0.3);
  x.I.truth.regime = p.errored ? "errored" : "hung";
  if (p.errored) {
    x.rank_crash(h, gs[0], t74 + ms(x.r.uniform(100, 2000)), "uncorrectable NVLink error detected during the execution");
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
  static const char* kUnits[] = {"NETIR_LINK_EVT", "NETIR_LINK_EVT/NETIR_LINK_DOWN", "SAW_MVB", "TLW_RX/TLW_RX_PIPE0"};
  const int code = x.r.chance(0.7) ? 149 : (x.r.chance(0.5) ? 144 : 146);
  x.xid(h, g, t0, code, strf("%s Fatal XC0 i0 Link %02d (0x%s 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)",
                             code == 149 ? kUnits[x.r.index(2)] : kUnits[2 + (code == 146)], static_cast<int>(x.r.range(0, 17)), x.r.hex(8).c_str()));
  if (x.r.chance(0.6)) x.xid(h, g, t0 + ms(x.r.uniform(100, 600)), 154, "GPU recovery action changed from 0x4 (Drain and Reset) to 0x1 (GPU Reset Required)");
  x.r.shuffle(members);
  const size_t n = members.empty() ? 0 : members.size() / 2 + static_cast<size_t>(x.r.index(members.size() / 2 + 1));
  for (size_t i = 0; i < n; ++i)
    x.xid(members[i].first, members[i].second, t0 + ms(x.r.uniform(20, 7000)), 145,
          strf("RLW_REMAP Nonfatal XC1 i0 Link %02d (0x00000082 0x00000040 0x00000000 0x00000000 0x00000000 0x00000000)", static_cast<int>(x.r.range(0, 17))));
  set_truth(x, gpu_id(x, h, g), "nvlink", "C32", "xid149_nvlink5_fatal", t0, {x.hn(h)});
  local_failure(x, h, g, t0 + ms(x.r.uniform(100, 3000)), "uncorrectable NVLink error detected during the execution", 0.8);
}

// ---------------------------------------------------------------- network

void sysfs_counter(Ctx& x, int h, Us t, int nic, const char* counter, long long v, bool hw = false) {
  x.line(h, t, kCounters, strf("/sys/class/infiniband/%s/ports/1/%s/%s:%lld", x.H(h).nics[static_cast<size_t>(nic)].name.c_str(),
                               hw ? "hw_counters" : "counters", counter, v));
}

// A counter sampled every 60 s over the capture window, stepping at t_change.
void counter_series(Ctx& x, int h, int nic, const char* counter, Us t_change, long long before, long long after) {
  x.I.counters_done.push_back({h, nic});
  const Us from = std::max(x.I.t_start, x.I.t_end - sec(900));
  for (Us t = from; t < x.I.t_end; t += sec(60)) sysfs_counter(x, h, t, nic, counter, t >= t_change ? after : before);
}



// C13: NIC port link down.
void sc_nic_link_down(Ctx& x, Us t0) {
  const int h = job_host(x), n = any_gpu(x);
  port_down_lines(x, h, n, t0, true);
  if (x.I.counters_all || x.r.chance(0.5)) {
    x.I.want_counters[static_cast<size_t>(h)] = 1;
    counter_series(x, h, n, "link_downed", t0, 0, 1 + x.r.index(2));
  }
  const SimLeaf& leaf = x.C.leaves[static_cast<size_t>(x.H(h).nics[static_cast<size_t>(n)].leaf)];
  opensm_trap(x, t0 + ms(x.r.uniform(10, 800)), 1, 128, "Link state change", leaf.lid, 0);
  set_truth(x, nic_id(x, h, n), "nic", "C13", "nic_link_down", t0, {x.hn(h)});
  SP p;
  p.t_fail = t0;
  p.hosts = {h};
  p.rails = {n};
  p.own_side = true;
  p.errored = x.r.chance(0.85);
  x.I.truth.regime = p.errored ? "errored" : "hung";
  x.propagate(p);
}

// C14/C15: NIC firmware health / PCI function lost (the GPU stays healthy).
void sc_nic_health(Ctx& x, Us t0) {
  const int h = job_host(x), n = any_gpu(x);
  const SimNic& ni = x.H(h).nics[static_cast<size_t>(n)];
  const double v = x.r.uniform();
  std::string ev;
  if (v < 0.4) {
    ev = "mlx5_health_compromised";
    x.kern(h, t0, strf("mlx5_core %s: device's health compromised - reached miss count", ni.bdf.c_str()));
    for (int i = 0; i < 5; ++i) x.kern(h, t0 + 10 + i, strf("mlx5_core %s: assert_var[%d] 0x%s", ni.bdf.c_str(), i, x.r.hex(8).c_str()));
    x.kern(h, t0 + 20, strf("mlx5_core %s: assert_exit_ptr 0x%s", ni.bdf.c_str(), x.r.hex(8).c_str()));
    x.kern(h, t0 + 21, strf("mlx5_core %s: fw_ver 28.39.1002", ni.bdf.c_str()));
    x.kern(h, t0 + 22, strf("mlx5_core %s: hw_id 0x00000225", ni.bdf.c_str()));
    x.kern(h, t0 + 23, strf("mlx5_core %s: irisc_index 0", ni.bdf.c_str()));
    x.kern(h, t0 + 24, strf("mlx5_core %s: synd 0x7: irisc not responding", ni.bdf.c_str()));
    x.kern(h, t0 + 25, strf("mlx5_core %s: ext_synd 0x40d0", ni.bdf.c_str()));
  } else if (v < 0.6) {
    ev = "mlx5_unrecoverable";
    x.kern(h, t0, strf("mlx5_core %s: synd 0x8: unrecoverable hardware error", ni.bdf.c_str()));
  } else if (v < 0.8) {
    ev = "mlx5_pci_channel_offline";
    if (x.r.chance(0.5)) aer_fatal(x, h, t0 - ms(x.r.uniform(1, 20)), x.H(h).sws[static_cast<size_t>(ni.sw)].bdf, ni.bdf, "mlx5_core", true);
    x.kern(h, t0, strf("mlx5_core %s: mlx5_pci_err_detected Device state = 1 health sensors: 1 pci_status: 1. Enter, pci channel state = 2", ni.bdf.c_str()));
    x.kern(h, t0 + ms(x.r.uniform(100, 2000)), strf("mlx5_core %s: mlx5_error_sw_reset:233:(pid %d): PCI channel offline, stop waiting for NIC IFC", ni.bdf.c_str(), 900 + x.r.index(4000)));
  } else {
    ev = "mlx5_cmd_timeout";
    x.kern(h, t0, strf("mlx5_core %s: wait_func:1195:(pid %d): ENABLE_HCA(0x104) timeout. Will cause a leak of a command resource", ni.bdf.c_str(), 1000 + x.r.index(2000000)));
  }
  Us td = t0 + sec(x.r.uniform(0.5, 8));
  x.nccl(h, td, n, "WARN", strf("NET/IB : %s:1 Got async event : %s", ni.name.c_str(), x.r.chance(0.6) ? "local catastrophic error" : "port error"));
  if (x.r.chance(0.5)) x.kern(h, td + ms(x.r.uniform(10, 500)), strf("mlx5_core %s %s: Link down", ni.bdf.c_str(), ni.netdev.c_str()));
  set_truth(x, nic_id(x, h, n), "nic", v < 0.8 && v >= 0.6 ? "C15" : "C14", ev, t0, {x.hn(h)});
  SP p;
  p.t_fail = td;
  p.hosts = {h};
  p.rails = {n};
  p.own_side = true;
  p.errored = true;
  x.I.truth.regime = "errored";
  x.propagate(p);
}

// C16: leaf switch failure: same NIC index down on every host of the SU.
void sc_leaf(Ctx& x, Us t0) {
  const int h0 = job_host(x);
  const int rail = any_gpu(x);
  const int li = x.H(h0).nics[static_cast<size_t>(rail)].leaf;
  const SimLeaf& leaf = x.C.leaves[static_cast<size_t>(li)];
  for (int i = 0; i < 3 + x.r.index(6); ++i)
    opensm_trap(x, t0 - ms(x.r.uniform(0, 2000)), 1, 128, "Link state change", leaf.lid, 0);
  std::vector<int> hs;
  for (int q : x.J.hosts)
    if (x.H(q).nics[static_cast<size_t>(rail)].leaf == li) hs.push_back(q);
  for (int q : hs) {
    Us t = t0 + ms(x.r.uniform(0, 300));
    port_down_lines(x, q, rail, t, false);
    if (x.I.counters_all) counter_series(x, q, rail, "link_downed", t, 0, 1);
  }
  set_truth(x, "fabric/" + leaf.name, "ib_fabric", "C16", "leaf_failure", t0, {"fabric/" + leaf.name});
  SP p;
  p.t_fail = t0;
  p.hosts = hs;
  p.rails = {rail};
  p.own_side = true;
  p.errored = true;
  x.I.truth.regime = "errored";
  x.propagate(p);
}

// C17: degrading optic: symbol errors / link error recovery climbing on one
// port (fail-slow), sometimes ending in status 12.
void sc_optic(Ctx& x, Us t0) {
  const int h = job_host(x), n = any_gpu(x);
  x.I.counters_all = true;
  const SimLeaf& leaf = x.C.leaves[static_cast<size_t>(x.H(h).nics[static_cast<size_t>(n)].leaf)];
  x.I.counters_done.push_back({h, n});
  long long sym = x.r.range(0, 40), ler = 0, lat = 0;
  Us t_stop = x.I.t_end;
  for (Us t = t0 - sec(600); t < t_stop; t += sec(60)) {
    if (t >= t0) {
      sym += x.r.range(200, 4000);
      ler += x.r.range(0, 6);
      lat += x.r.range(5, 80);
    }
    sysfs_counter(x, h, t, n, "symbol_error", sym);
    sysfs_counter(x, h, t + 10, n, "link_error_recovery", ler);
    sysfs_counter(x, h, t + 20, n, "local_ack_timeout_err", lat, true);
  }
  for (int i = 0; i < 1 + x.r.index(3); ++i)
    opensm_trap(x, t0 + sec(x.r.uniform(30, 600)), 2, 129, "Local Link Integrity threshold reached", leaf.lid,
                x.H(h).nics[static_cast<size_t>(n)].leaf_port);
  set_truth(x, nic_id(x, h, n), "ib_fabric", "C17", "ib_symbol_errors", t0, {x.hn(h)});
  x.I.truth.regime = "slow";
  x.training(x.I.t_start, t_stop, t0 + sec(x.r.uniform(10, 60)), 1.05 + x.r.uniform(0, 0.25));
  if (x.r.chance(0.35)) {
    SP p;
    p.t_fail = t_stop - sec(60);
    p.hosts = {h};
    p.rails = {n};
    p.own_side = true;
    p.errored = true;
    x.I.truth.regime = "slow+errored";
    x.propagate(p);
  }
}

// ---------------------------------------------------------------- host

void host_vanishes(Ctx& x, int h, Us t_dead, bool errored) {
  x.I.dead_at[static_cast<size_t>(h)] = t_dead;
  for (int n = 0; n < static_cast<int>(x.H(h).nics.size()); ++n) {
    const SimLeaf& leaf = x.C.leaves[static_cast<size_t>(x.H(h).nics[static_cast<size_t>(n)].leaf)];
    opensm_trap(x, t_dead + ms(x.r.uniform(5, 900)), 1, 128, "Link state change", leaf.lid, 0);
  }
  // TCPStore / rendezvous peers see the connection drop.
  if (!x.J.hosts.empty() && x.J.hosts[0] != h && x.r.chance(0.5))
    x.pyerr(x.J.hosts[0], t_dead + sec(x.r.uniform(1, 30)), 0,
            strf("torch.distributed.DistNetworkError: Connection reset by peer (%s:29500)", x.H(h).ip.c_str()));
  SP p;
  p.t_fail = t_dead;
  p.hosts = {h};
  p.dead_hosts = {h};
  p.errored = errored;
  x.I.truth.regime = errored ? "errored" : "hung";
  x.propagate(p);
}

// C21: silent host death: logs stop, peers name its IPs.
void sc_silent_host(Ctx& x, Us t0) {
  const int h = job_host(x);
  if (x.r.chance(0.3))
    x.kern(h, t0 - sec(x.r.uniform(0.5, 3)), strf("watchdog: BUG: soft lockup - CPU#%d stuck for %ds! [python3:%d]", x.r.index(96), 22 + x.r.index(5), x.pid(h, 0)));
  set_truth(x, x.hn(h), "host_kernel", "C21", "host_silent", t0, {x.hn(h)});
  host_vanishes(x, h, t0, x.r.chance(0.75));
}

// PSU failure (ipmitool sel) -> host loss (C21 via power).
void sc_psu(Ctx& x, Us t0) {
  const int h = job_host(x);
  x.I.dead_at[static_cast<size_t>(h)] = t0;
  int ps = 1 + x.r.index(2);
  x.line(h, t0 - sec(x.r.uniform(0, 40)), kSel, strf("Power Supply PSU%d | Failure detected () | Asserted", ps));
  x.line(h, t0 - sec(x.r.uniform(0, 2)), kSel, strf("Power Supply PSU%d | Power Supply AC lost | Asserted", 3 - ps));
  x.line(h, t0 + sec(x.r.uniform(0.1, 1)), kSel, "Power Unit #0x01 | Power off/down | Asserted");
  x.line(h, t0 + sec(x.r.uniform(200, 600)), kSel, "System Event #0x6f | OEM System boot event | Asserted");
  set_truth(x, x.hn(h), "thermal_power", "C21/C31", "psu_failure", t0, {x.hn(h)});
  host_vanishes(x, h, t0, x.r.chance(0.75));
}

// C22: machine check -> panic (or SIGBUS on one rank).
void sc_mce(Ctx& x, Us t0) {
  const int h = job_host(x);
  const int cpu = x.r.index(112), bank = x.r.index(20);
  const bool panic = x.r.chance(0.65);
  std::vector<std::string> mce = {
      strf("mce: [Hardware Error]: CPU %d: Machine Check Exception: 5 Bank %d: be00000000800400", cpu, bank),
      strf("mce: [Hardware Error]: RIP !INEXACT! 10:<ffffffff%s> {intel_idle+0x%x/0x1e0}", x.r.hex(8).c_str(), 0x40 + x.r.index(64)),
      strf("mce: [Hardware Error]: TSC %s ADDR %s MISC 86", x.r.hex(12).c_str(), x.r.hex(9).c_str()),
      strf("mce: [Hardware Error]: PROCESSOR 0:806f8 TIME %lld SOCKET %d APIC %x microcode 2b000571", static_cast<long long>(t0 / kSec), cpu / 56, cpu * 2),
      "mce: [Hardware Error]: Run the above through 'mcelog --ascii'",
  };
  set_truth(x, x.hn(h), "host_kernel", "C22", "mce_uncorrected", t0, {x.hn(h)});
  if (panic) {
    mce.push_back("mce: [Hardware Error]: Machine check: Processor context corrupt");
    mce.push_back("Kernel panic - not syncing: Fatal machine check");
    // The live kernel log may or may not have shipped; pstore keeps the panic.
    const bool shipped = x.r.chance(0.5);
    for (size_t i = 0; i < mce.size(); ++i) {
      if (shipped) x.kern(h, t0 + static_cast<Us>(i) * 20, mce[i]);
      x.line(h, t0 + static_cast<Us>(i) * 20, kPstore, mce[i]);
    }
    if (!shipped) x.I.truth.notes.push_back("panic trace only in pstore");
    host_vanishes(x, h, t0 + 200, x.r.chance(0.75));
    return;
  }
  mce[0] = strf("mce: [Hardware Error]: Machine check events logged");
  for (size_t i = 0; i < mce.size(); ++i) x.kern(h, t0 + static_cast<Us>(i) * 20, mce[i]);
  const long long pfn = 0x100000 + x.r.range(0, 0xfffff);
  x.kern(h, t0 + ms(x.r.uniform(1, 50)), strf("Memory failure: 0x%llx: Sending SIGBUS to python3:%d due to hardware memory corruption", pfn, x.pid(h, 0)));
  x.kern(h, t0 + ms(x.r.uniform(50, 80)), strf("Memory failure: 0x%llx: recovery action for dirty LRU page: Recovered", pfn));
  const int g = any_gpu(x);
  Us td = x.teardown(h, t0 + sec(x.r.uniform(0.2, 3)), g, -7);
  SP p;
  p.t_fail = td;
  p.hosts = {h};
  for (int k = 0; k < x.C.gpg; ++k) p.dead_ranks.push_back({h, k});
  p.errored = x.r.chance(0.6);
  x.I.truth.regime = p.errored ? "errored" : "hung";
  x.propagate(p);
}

// C25 (interfaces.md §6: OOM killer is host_kernel): host OOM kills a rank.
void sc_host_oom(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  const int pid = x.pid(h, g);
  x.kern(h, t0 - ms(x.r.uniform(1, 30)), strf("python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), order=0, oom_score_adj=0"));
  x.kern(h, t0 - ms(1), strf("oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,task_memcg=/,task=python3,pid=%d,uid=0", pid));
  x.kern(h, t0, strf("Out of memory: Killed process %d (python3) total-vm:%lldkB, anon-rss:%lldkB, file-rss:%lldkB, shmem-rss:%lldkB, UID:0 pgtables:%lldkB oom_score_adj:0",
                     pid, 900000000LL + x.r.range(0, 90000000), 200000000LL + x.r.range(0, 90000000), 100000LL + x.r.range(0, 900000), x.r.range(0, 9000000), 400000LL + x.r.range(0, 90000)));
  x.kern(h, t0 + ms(x.r.uniform(50, 400)), strf("oom_reaper: reaped process %d (python3), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB", pid));
  set_truth(x, x.hn(h), "host_kernel", "C25", "oom_killer", t0, {x.hn(h)});
  Us td = x.teardown(h, t0 + sec(x.r.uniform(0.2, 3)), g, -9);
  SP p;
  p.t_fail = td;
  p.hosts = {h};
  for (int k = 0; k < x.C.gpg; ++k) p.dead_ranks.push_back({h, k});
  p.errored = x.r.chance(0.6);
  x.I.truth.regime = p.errored ? "errored" : "hung";
  x.propagate(p);
}

// ---------------------------------------------------------------- software

// C24: CUDA OOM on one rank.
void sc_cuda_oom(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  const double gib = 0.5 + x.r.uniform(0, 12);
  x.pyerr(h, t0 - 3, g, "Traceback (most recent call last):");
  x.pyerr(h, t0 - 2, g, "  File \"/workspace/megatron/model/transformer.py\", line 877, in forward");
  x.pyerr(h, t0 - 1, g, "    attention_scores = torch.baddbmm(");
  if (x.r.chance(0.7))
    x.pyerr(h, t0, g, strf("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU %d has a total capacity of 79.11 GiB of which %.2f GiB is free. Including non-PyTorch memory, this process has %.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by PyTorch, and %.2f GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
                           gib, g, x.r.uniform(0.1, gib), 78.0 - x.r.uniform(0, 1), 74.0 - x.r.uniform(0, 3), x.r.uniform(0.1, 2)));
  else
    x.pyerr(h, t0, g, strf("RuntimeError: CUDA out of memory. Tried to allocate %.2f GiB (GPU %d; 79.11 GiB total capacity; 75.20 GiB already allocated; %.2f GiB free; 77.02 GiB reserved in total by PyTorch)", gib, g, x.r.uniform(0.1, gib)));
  set_truth(x, "job/" + x.J.id + "/rank" + std::to_string(x.rank(h, g)), "user_code", "C24", "cuda_oom", t0, {});
  Us td = x.teardown(h, t0 + sec(x.r.around(2, 0.8, 0.1, 10)), g, 1);
  SP p;
  p.t_fail = td;
  p.hosts = {h};
  for (int k = 0; k < x.C.gpg; ++k) p.dead_ranks.push_back({h, k});
  p.errored = x.r.chance(0.6);
  x.I.truth.regime = p.errored ? "errored" : "hung";
  x.propagate(p);
}

// C26: illegal memory access on every rank at once (software).
void sc_illegal_access(Ctx& x, Us t0) {
  const bool x31 = x.r.chance(0.5);
  Us t_last = t0;
  for (int h : x.J.hosts)
    for (int g = 0; g < x.C.gpg; ++g) {
      if (x.r.chance(0.05)) continue;  // a few GPUs report nothing
      Us t = t0 + ms(x.r.uniform(0, 1500));
      if (x31)
        x.xid(h, g, t, 31, strf("channel 0x%08x, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC%d GPCCLIENT_T1_%d faulted @ 0x7f%s_%s. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
                                2 + x.r.index(8), x.r.index(8), x.r.index(16), x.r.hex(2).c_str(), x.r.hex(8).c_str()), true);
      else
        x.xid(h, g, t, 13, strf("Graphics SM Warp Exception on (GPC %d, TPC %d, SM %d): Out Of Range Address", x.r.index(8), x.r.index(9), x.r.index(2)), true);
      if (x.r.chance(0.6)) x.xid(h, g, t + ms(x.r.uniform(1, 100)), 43, "Ch 00000020, engmask 00000101", true);
      Us te = t + ms(x.r.uniform(20, 900));
      x.rank_crash(h, g, te, "an illegal memory access was encountered");
      t_last = std::max(t_last, te);
    }
  for (int h : x.J.hosts) x.teardown(h, t_last + sec(x.r.uniform(0.5, 5)), x.r.index(static_cast<size_t>(x.C.gpg)), 1);
  set_truth(x, "job/" + x.J.id, "user_code", "C26", x31 ? "xid31_all_ranks" : "xid13_all_ranks", t0, {});
  x.I.truth.regime = "errored";
}

// C29 / launch failures: one host with a different image, or a job-wide NCCL config error.
void sc_nccl_mismatch(Ctx& x, Us t0) {
  x.I.truth.regime = "launch";
  if (x.r.chance(0.5) && x.J.hosts.size() > 1) {
    const int h = job_host(x);
    x.kern(h, t0 - sec(x.r.uniform(1, 30)), "NVRM: API mismatch: the client has the version 550.90.07, but\nNVRM: this kernel module has the version 550.54.15.  Please\nNVRM: make sure that this kernel module and all NVIDIA driver\nNVRM: components have the same version.");
    for (int g = 0; g < x.C.gpg; ++g) {
      Us t = t0 + ms(x.r.uniform(0, 2000));
      x.pyerr(h, t, g, "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda driver combination");
    }
    set_truth(x, x.hn(h), "nccl_software", "C29", "driver_version_mismatch", t0, {x.hn(h)});
    Us td = x.teardown(h, t0 + sec(x.r.uniform(2, 5)), 0, 1);
    // Everyone else waits at rendezvous / communicator init until it times out.
    for (int q : x.J.hosts) {
      if (q == h) continue;
      for (int g = 0; g < x.C.gpg; ++g)
        x.pyerr(q, td + sec(x.r.uniform(1, 30)), g,
                strf("torch.distributed.DistBackendError: [%d] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer", x.rank(q, g)));
      x.teardown(q, td + sec(x.r.uniform(31, 40)), -1, 1);
    }
    return;
  }
  static const char* kCauses[] = {"Bootstrap : no socket interface found", "NET/Socket : No usable listening interface found",
                                  "NET/IB : No device found."};
  const char* cause = kCauses[x.r.index(3)];
  for (int h : x.J.hosts) {
    for (int g = 0; g < x.C.gpg; ++g) {
      Us t = t0 + ms(x.r.uniform(0, 3000));
      x.nccl(h, t, g, "WARN", cause);
      x.nccl(h, t + 100, g, "INFO", strf("init.cc:%d -> 3", 1500 + x.r.index(300)));
      x.pyerr(h, t + ms(x.r.uniform(10, 500)), g,
              "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, internal error - please report this issue to the NCCL developers, NCCL version " + x.I.nccl_version);
      x.pyerr(h, t + ms(x.r.uniform(500, 600)), g, "ncclInternalError: Internal check failed.");
      x.pyerr(h, t + ms(x.r.uniform(600, 700)), g, "Last error:");
      x.pyerr(h, t + ms(x.r.uniform(700, 800)), g, cause);
    }
    x.teardown(h, t0 + sec(x.r.uniform(4, 8)), 0, 1);
  }
  set_truth(x, "job/" + x.J.id, "nccl_software", "§5.1", "nccl_config_error", t0, {});
}

// ---------------------------------------------------------------- storage, thermal, unknown

// C23: shared FS stall -> hung tasks -> watchdog at checkpoint.
void sc_nfs(Ctx& x, Us t0) {
  const int s = x.r.index(x.C.storage.size());
  const SimStorage& st = x.C.storage[static_cast<size_t>(s)];
  const bool by_name = x.r.chance(0.3);
  if (!x.J.hosts.empty()) {
    const int h0 = x.J.hosts[0];
    x.app(h0, t0 - sec(x.r.uniform(1, 20)), 0,
          strf("[rank0]: saving checkpoint at iteration %lld to %s/%s/iter_%07lld", 5000LL + x.r.range(0, 90000), st.exp.c_str(), x.J.id.c_str(), 5000LL + x.r.range(0, 90000)));
  }
  std::vector<std::pair<int, int>> lag;
  for (int h : x.J.hosts) {
    if (!x.r.chance(0.85)) continue;
    Us t = t0 + ms(x.r.uniform(0, 5000));
    x.kern(h, t, strf("nfs: server %s not responding, still trying", by_name ? st.name.c_str() : st.ip.c_str()));
    if (x.r.chance(0.5)) x.kern(h, t + sec(x.r.uniform(1, 60)), strf("nfs: server %s not responding, still trying", by_name ? st.name.c_str() : st.ip.c_str()));
    Us th = t + sec(x.r.around(125, 0.05, 120, 245));
    const int pid = x.pid(h, x.r.index(static_cast<size_t>(x.C.gpg)));
    x.kern(h, th, strf("INFO: task python3:%d blocked for more than %d seconds.", pid, th - t > sec(240) ? 241 : 122));
    x.kern(h, th + 10, "      Not tainted 5.15.0-105-generic #115-Ubuntu");
    x.kern(h, th + 20, "\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.");
    if (x.r.chance(0.5)) lag.push_back({h, x.r.index(static_cast<size_t>(x.C.gpg))});
  }
  set_truth(x, "storage/" + st.name, "storage", "C23", "nfs_not_responding", t0, {"storage/" + st.name});
  SP p;
  p.t_fail = t0;
  p.errored = false;
  p.lagging = lag;
  x.I.truth.regime = "hung";
  x.propagate(p);
}

// C12: thermal / power throttling on one GPU -> the whole job slows.
void sc_thermal(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  x.I.smi_all = true;
  const bool power = x.r.chance(0.3);
  x.I.truth.regime = "slow";
  set_truth(x, gpu_id(x, h, g), "thermal_power", "C12", power ? "hw_power_brake" : "hw_thermal_slowdown", t0, {x.hn(h)});
  x.I.throttles.push_back({h, g, t0, std::numeric_limits<Us>::max(), power ? 0x80u : 0x40u});
  if (x.r.chance(0.3))
    x.kern(h, t0 + sec(x.r.uniform(0, 30)), strf("NVRM: GPU at PCI:%s: GPU is being throttled (%s)", x.H(h).gpus[static_cast<size_t>(g)].bus.c_str(), power ? "power brake" : "HW thermal slowdown"));  // [invented]
  x.training(x.I.t_start, x.I.t_end, t0 + sec(x.r.uniform(5, 40)), 1.06 + x.r.uniform(0, 0.24));
}

// Llama 3 "NCCL watchdog timeouts (cause unknown)": no localizable device.
void sc_unknown(Ctx& x, Us t0) {
  set_truth(x, "job/" + x.J.id, "", "§1.1/§7.3", "unknown", t0, {});
  x.I.truth.localizable = false;
  x.I.truth.accept = {"job/" + x.J.id};
  SP p;
  p.t_fail = t0;
  p.errored = false;
  x.I.truth.regime = "hung";
  x.propagate(p);
}

}  // namespace

// Shared with the hard-mode templates (hard.cpp).
void set_truth(Ctx& x, const std::string& dev, const std::string& cls, const std::string& chain,
               const std::string& event, Us t0, std::vector<std::string> evict) {
  Truth& t = x.I.truth;
  t.device = dev;
  t.fault_class = cls;
  t.chain = chain;
  t.root_event = event;
  t.t0 = t0;
  t.eviction = std::move(evict);
}

void opensm_trap(Ctx& x, Us t, int type, int num, const char* what, int lid, int port) {
  if (port > 0)
    x.sm(t, strf("log_trap_info: Received Generic Notice type:%d num:%d (%s) Producer:2 (Switch) from LID:%d Port %d TID:0x%016llx",
                 type, num, what, lid, port, static_cast<unsigned long long>(x.r.range(1, 1 << 30))));
  else
    x.sm(t, strf("log_trap_info: Received Generic Notice type:%d num:%d (%s) Producer:2 (Switch) from LID:%d TID:0x%016llx",
                 type, num, what, lid, static_cast<unsigned long long>(x.r.range(1, 1 << 30))));
}

void port_down_lines(Ctx& x, int h, int n, Us t, bool cable) {
  const SimNic& ni = x.H(h).nics[static_cast<size_t>(n)];
  if (cable && x.r.chance(0.6))
    x.kern(h, t - static_cast<Us>(x.r.uniform(1, 200) * 1000.0), strf("mlx5_core %s: Port module event: module %d, Cable unplugged", ni.bdf.c_str(), n));
  x.kern(h, t, strf("mlx5_core %s %s: Link down", ni.bdf.c_str(), ni.netdev.c_str()));
  x.nccl(h, t + static_cast<Us>(x.r.uniform(5, 900) * 1000.0), n, "WARN", strf("NET/IB : %s:1 Got async event : port error", ni.name.c_str()));
}

const std::vector<ScenarioDef>& scenario_defs() {
  static const std::vector<ScenarioDef> k = {
      {{"pcie_switch_fatal", "pcie", "pcie", "§6 C01, §3", 4.0, "PCIe switch / root-port uncorrectable fatal AER -> Xid 79 (+119, 45, SXid) -> NCCL errors on peers"}, sc_pcie_switch_fatal},
      {{"gpu_fallen_off_bus", "gpu_fallen_off_bus", "gpu", "§6 C02, §2.3", 8.0, "GPU Xid 79 alone (AER only as a side effect)"}, sc_gpu_fallen_off_bus},
      {{"gsp_timeout", "gpu_hw", "gpu", "§6 C10", 5.0, "GSP RPC timeout Xid 119 / 120 -> hang -> watchdog"}, sc_gsp},
      {{"gpu_hw_xid", "gpu_hw", "gpu", "§6 C11, §2.3", 6.0, "Xid 62 / 109 / 140 / 143 on one GPU"}, sc_gpu_hw},
      {{"nvlink_xid74", "nvlink", "gpu", "§6 C07, §2.5", 5.0, "Xid 74 on one GPU, sympathetic 74 on its peer"}, sc_nvlink},
      {{"nvswitch_fatal", "nvswitch", "nvswitch", "§6 C08, §2.6", 3.0, "fatal SXid -> FM log -> Xid 74 on several GPUs"}, sc_nvswitch},
      {{"nvlink5_fatal", "nvlink", "gpu", "§6 C32, §2.4", 3.0, "NVLink5 Xid 149 on one GPU, 145 on many in the NVL72 domain"}, sc_nvlink5},
      {{"hbm_dbe", "gpu_memory", "gpu", "§6 C04", 14.0, "HBM DBE Xid 48 -> 63/64, 94/95 -> CUDA ECC error -> crash"}, sc_hbm_dbe},
      {{"sram_dbe", "gpu_memory", "gpu", "§6 C06", 4.0, "SRAM uncorrectable Xid 48 + 172"}, sc_sram_dbe},
      {{"nic_link_down", "nic", "nic", "§6 C13, §4.1", 6.0, "mlx5 link down -> IB status 12 on both ends naming its IP"}, sc_nic_link_down},
      {{"nic_health", "nic", "nic", "§6 C14/C15, §4.1", 3.0, "mlx5 health syndrome / PCI channel offline / command timeout"}, sc_nic_health},
      {{"leaf_switch_failure", "ib_fabric", "fabric", "§6 C16, §4.3", 3.0, "leaf failure: same NIC index down on every host of the unit + SM traps"}, sc_leaf},
      {{"optic_degrade", "ib_fabric", "nic", "§6 C17, §4.2", 3.0, "degrading optic: symbol errors climbing, fail-slow"}, sc_optic},
      {{"silent_host_death", "host_kernel", "host", "§6 C21", 2.0, "host dies silently; peers' errors name its IPs"}, sc_silent_host},
      {{"psu_failure", "thermal_power", "host", "§6 C21/C31", 1.0, "PSU failure in ipmitool sel -> host loss"}, sc_psu},
      {{"mce_panic", "host_kernel", "host", "§6 C22", 1.5, "machine check -> panic (pstore) or SIGBUS"}, sc_mce},
      {{"host_oom", "host_kernel", "host", "§6 C25", 1.5, "host OOM killer kills a rank"}, sc_host_oom},
      {{"cuda_oom", "user_code", "rank", "§6 C24", 6.0, "torch.OutOfMemoryError on one rank"}, sc_cuda_oom},
      {{"illegal_memory_access", "user_code", "job", "§6 C26, §2.5", 5.0, "Xid 13/31 + illegal memory access on every rank"}, sc_illegal_access},
      {{"nccl_mismatch", "nccl_software", "host|job", "§6 C29, §5.1", 4.0, "driver/library mismatch on one host, or NCCL config error on all ranks (launch)"}, sc_nccl_mismatch},
      {{"nfs_stall", "storage", "storage", "§6 C23", 5.0, "NFS not responding -> hung tasks -> watchdog at checkpoint"}, sc_nfs},
      {{"thermal_throttle", "thermal_power", "gpu", "§6 C12", 3.0, "one GPU throttles (clocks_event_reasons) -> iteration time regresses"}, sc_thermal},
      {{"unknown_watchdog", "", "none", "§1.1, §7.3", 4.0, "watchdog timeouts with no device evidence (localizable=false)"}, sc_unknown},
  };
  return k;
}

}  // namespace reflex::sim
