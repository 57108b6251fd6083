// The default hard families: a base rate of benign lines, a prior fault on
// another host, common mode (a PSU, a leaf), one host's other NCCL build, a
// silent host with two waves of symptoms, and a snippet with no job.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "sim/hard.h"

namespace reflex::sim {

namespace {

const std::vector<std::string> kLocalHw = {
    "gpu_fallen_off_bus", "hbm_dbe",           "gsp_timeout", "gpu_hw_xid",
    "nic_link_down",      "pcie_switch_fatal", "nvlink_xid74"};

// A fault of its own on host h at t, long over when the incident starts.
void prior_fault_on(Ctx& x, int h, Us t) {
  const int g = x.r.index(static_cast<size_t>(x.C.gpg));
  const long long addr = 0x10000000LL + x.r.range(0, 0x7fffffff);
  switch (x.r.index(4)) {
    case 0:  // §2.3: a DBE whose error was contained (94); the row remap recorded (63)
      x.xid(h, g, t, 48,
            strf("An uncorrectable double bit error (DBE) has been detected on GPU in the "
                 "framebuffer at physAddr 0x%llx partition %d, subpartition %d.",
                 addr, x.r.index(32), x.r.index(4)));
      x.xid(h, g, t + 80, 63,
            strf("Row Remapper: New row (0x%016llx) marked for remapping, reset gpu to activate.",
                 addr));
      x.xid(h, g, t + ms(x.r.uniform(1, 500)), 94, "Contained: SM (0x1). RST: No, D-RST: No", true);
      break;
    case 1: {  // §4.2: a port down for minutes, then back (longer than a flap)
      const SimNic& ni = x.H(h).nics[static_cast<size_t>(x.r.index(x.H(h).nics.size()))];
      const SimLeaf& leaf = x.C.leaves[static_cast<size_t>(ni.leaf)];
      x.kern(h, t, strf("mlx5_core %s %s: Link down", ni.bdf.c_str(), ni.netdev.c_str()));
      opensm_trap(x, t + ms(x.r.uniform(10, 800)), 1, 128, "Link state change", leaf.lid, 0);
      const Us up = t + sec(x.r.uniform(60, 1800));
      x.kern(h, up, strf("mlx5_core %s %s: Link up", ni.bdf.c_str(), ni.netdev.c_str()));
      opensm_trap(x, up + ms(x.r.uniform(10, 800)), 1, 128, "Link state change", leaf.lid, 0);
      break;
    }
    case 2:  // §2.3: a GSP RPC timeout that a GPU reset cleared (154 says so)
      x.xid(h, g, t, 119,
            strf("Timeout after 45s of waiting for RPC response from GPU%d GSP! Expected function "
                 "76 (GSP_RM_CONTROL) (0x20800a4c 0x4).",
                 g),
            true);
      x.xid(h, g, t + sec(x.r.uniform(1, 30)), 154,
            "GPU recovery action changed from 0x4 (Drain and Reset) to 0x1 (GPU Reset Required)");
      break;
    default: {  // §3.1: an uncorrectable non-fatal AER the port recovered from
      const SimSwitch& sw = x.H(h).sws[static_cast<size_t>(x.r.index(x.H(h).sws.size()))];
      x.kern(h, t,
             strf("pcieport %s: AER: Uncorrected (Non-Fatal) error received: %s",
                  sw.root_port.c_str(), sw.bdf.c_str()));
      x.kern(h, t + 5,
             strf("pcieport %s: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction "
                  "Layer, (Requester ID)",
                  sw.bdf.c_str()));
      x.kern(h, t + 8,
             strf("pcieport %s:   device [1000:c030] error status/mask=00004000/00000000",
                  sw.bdf.c_str()));
      x.kern(h, t + 10,
             strf("pcieport %s:    [14] CmpltTO                (First)", sw.bdf.c_str()));
      break;
    }
  }
}

int nccl_code(const std::string& v) {  // NCCL_VERSION_CODE: 2.18.6 -> 21806
  int a = 0, b = 0, c = 0;
  std::sscanf(v.c_str(), "%d.%d.%d", &a, &b, &c);
  return a * 10000 + b * 100 + c;
}

}  // namespace

// ---- background: a real fault (or none) under a loud benign base rate ----

void hard_background(Ctx& x, Us t0) {
  std::vector<std::string> bases = kLocalHw;
  bases.push_back("cuda_oom");
  bases.push_back("unknown_watchdog");  // nothing localizable: the noise must not become the root
  run_base(x, bases, t0);
  base_rate_background(x, x.r.uniform(0.6, 0.95), x.I.t_start - hours(x.r.uniform(2, 12)),
                       x.I.t_end);
}
// ---- prior_fault: another host's fault hours or days before ----

void hard_prior_fault(Ctx& x, Us t0) {
  std::vector<std::string> bases = kLocalHw;
  bases.push_back("host_oom");
  const int root = run_base(x, bases, t0);
  const int n = 1 + x.r.index(2);
  for (int i = 0; i < n && x.nhosts() > 1; ++i) {
    int h = x.r.index(static_cast<size_t>(x.nhosts()));
    if (h == root) h = (h + 1) % x.nhosts();
    const Us earliest = std::max(after_boot(x, h), t0 - hours(72));
    const Us latest = x.I.t_start - hours(1);
    if (earliest >= latest) continue;
    prior_fault_on(
        x, h, earliest + static_cast<Us>(x.r.uniform() * static_cast<double>(latest - earliest)));
  }
  base_rate_background(x, x.r.uniform(0.2, 0.5), x.I.t_start - hours(6), x.I.t_end);
}

// ---- common_mode: a PSU below every GPU of a host; a leaf below a rail ----

// §6 C31 / §7.3 correlated failures: one PSU of a redundant pair fails, the
// host stays up power-capped and every GPU reports HW power brake (0x80 in
// clocks_event_reasons); the job slows. The BMC's SEL says why; it is
// collected on the host or from the BMC, a name outside the topology.
void hard_psu_brake(Ctx& x, Us t0) {
  const int h = x.J.hosts[static_cast<size_t>(x.r.index(x.J.hosts.size()))];
  const int ps = 1 + x.r.index(2);
  std::vector<Line> sel;
  auto sel_line = [&](Us t, std::string text) {
    Line l;
    l.t = t;
    l.seq = x.I.seq++;
    l.chan = kSel;
    l.text = std::move(text);
    sel.push_back(std::move(l));
  };
  sel_line(t0 - sec(x.r.uniform(0, 20)),
           strf("Power Supply PSU%d | Failure detected () | Asserted", ps));
  if (x.r.chance(0.5))
    sel_line(t0 - sec(x.r.uniform(0, 2)),
             strf("Power Supply PSU%d | Power Supply AC lost | Asserted", ps));
  if (x.r.chance(0.6))
    sel_line(t0 + sec(x.r.uniform(1, 5)),
             "Power Supply #0x01 | Redundancy Lost | Asserted");  // [invented] sensor text
  x.I.smi_all = x.r.chance(0.5);  // the healthy hosts' GPUs, for comparison
  if (x.r.chance(0.5)) {
    for (Line& l : sel) x.I.host_lines[static_cast<size_t>(h)].push_back(std::move(l));
  } else {
    x.I.bmc_sel[x.hn(h) + "-bmc"] = std::move(sel);
  }
  x.I.want_smi[static_cast<size_t>(h)] = 1;
  for (int g = 0; g < x.C.gpg; ++g)
    x.I.throttles.push_back(
        {h, g, t0 + ms(x.r.uniform(0, 900)), std::numeric_limits<Us>::max(), 0x80u});
  set_truth(x, x.hn(h), "thermal_power", "C31", "psu_power_brake", t0, {x.hn(h)});
  x.I.truth.regime = "slow";
  x.I.truth.notes.push_back(strf("all %d GPUs of the host power-brake at once", x.C.gpg));
  x.training(x.I.t_start, x.I.t_end, t0 + sec(x.r.uniform(5, 30)), 1.15 + x.r.uniform(0, 0.4));
}

// §4.3 rail-optimized leaf: the standard template, on a cluster of 2-64 hosts
// (the host count is the hard part), under a base rate of benign lines.
void hard_leaf_rail(Ctx& x, Us t0) {
  base_def("leaf_switch_failure").run(x, t0);
  base_rate_background(x, x.r.uniform(0.2, 0.6), x.I.t_start - hours(4), x.I.t_end);
}

// ---- odd_one_out: one host runs another NCCL build ----

// NCCL init.cc compares every peer's version ("Mismatched NCCL version
// detected : rank %d version %d rank %d version %d", then ncclInvalidUsage):
// each rank reports the first rank whose version differs from its own. Where
// that check does not fire, the communicators hang and only the version
// banners differ (hard mode prints one per host: Ctx::nccl_startup).
void hard_odd_nccl(Ctx& x, Us t0) {
  static const std::vector<std::string> kNccl = {"2.18.6", "2.19.3", "2.20.5", "2.21.5", "2.23.4"};
  const std::string common = x.I.nccl_version;
  std::vector<std::string> others;
  for (const auto& v : kNccl)
    if (v != common) others.push_back(v);
  const std::string odd = x.r.pick(others);
  const int oh = x.J.hosts[static_cast<size_t>(x.r.index(x.J.hosts.size()))];
  x.I.host_nccl_version.assign(static_cast<size_t>(x.nhosts()), common);
  x.I.host_nccl_version[static_cast<size_t>(oh)] = odd;
  const bool explicit_check = x.r.chance(0.6);
  x.I.t_start = t0 - sec(x.r.uniform(45, 90));  // the banners come before t0
  x.I.truth.regime = explicit_check ? "launch" : "hung";
  set_truth(x, x.hn(oh), "nccl_software", "C29", "nccl_version_mismatch", t0, {});
  x.I.truth.notes.push_back("NCCL " + odd + " on this host, " + common + " on the others");
  if (!explicit_check) {
    Ctx::Prop p;
    p.t_fail = t0;
    p.errored = false;
    x.propagate(p);
    return;
  }
  // The first rank of another version, seen from each side.
  const int first_odd = x.rank(oh, 0);
  const int first_common = x.rank(x.J.hosts[0] == oh ? x.J.hosts[1] : x.J.hosts[0], 0);
  for (int h : x.J.hosts) {
    const bool is_odd = h == oh;
    const std::string& mine = is_odd ? odd : common;
    for (int g = 0; g < x.C.gpg; ++g) {
      const Us t = t0 + ms(x.r.uniform(0, 2500));
      x.nccl(h, t, g, "WARN",
             strf("Mismatched NCCL version detected : rank %d version %d rank %d version %d",
                  is_odd ? first_common : first_odd, nccl_code(is_odd ? common : odd), x.rank(h, g),
                  nccl_code(mine)));
      x.nccl(h, t + 100, g, "INFO", strf("init.cc:%d -> 5", 700 + x.r.index(200)));
      x.pyerr(h, t + ms(x.r.uniform(10, 400)), g,
              "torch.distributed.DistBackendError: NCCL error in: "
              "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, invalid usage (run with "
              "NCCL_DEBUG=WARN for details), NCCL version " +
                  mine);
      x.pyerr(h, t + ms(x.r.uniform(400, 500)), g,
              "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.");
    }
    x.teardown(h, t0 + sec(x.r.uniform(3, 8)), 0, 1);
  }
}

// ---- silent_host: a host dies; two waves of symptoms ----

// Wave 1: the dead host's ring neighbours see IB retries exhausted toward it
// (§5.2 status 12, then 5) after D_ib and exit; wave 2: every other rank waits
// until the PyTorch watchdog (§5.3: 10 or 30 min).
void hard_two_wave(Ctx& x, Us t0) {
  const int h = x.J.hosts[static_cast<size_t>(x.r.index(x.J.hosts.size()))];
  const double v = x.r.uniform();
  if (v < 0.35) {  // §7.3: a panic leaves a partial trace in pstore, or none live
    static const char* kPanics[] = {"Kernel panic - not syncing: softlockup: hung tasks",
                                    "Kernel panic - not syncing: hung_task: blocked tasks",
                                    "Kernel panic - not syncing: Fatal machine check"};
    const int k = x.r.index(3);
    if (k == 0)
      x.line(h, t0 - 400, kPstore,
             strf("watchdog: BUG: soft lockup - CPU#%d stuck for %ds! [python3:%d]", x.r.index(96),
                  22 + x.r.index(5), x.pid(h, 0)));
    if (k == 1)
      x.line(h, t0 - 400, kPstore,
             strf("INFO: task python3:%d blocked for more than 122 seconds.", x.pid(h, 1)));
    if (k == 2)
      x.line(
          h, t0 - 400, kPstore,
          strf(
              "mce: [Hardware Error]: CPU %d: Machine Check Exception: 5 Bank %d: be00000000800400",
              x.r.index(112), x.r.index(20)));
    x.line(h, t0, kPstore, kPanics[k]);
    x.I.truth.notes.push_back("panic trace only in pstore");
  } else if (v < 0.6) {
    x.kern(h, t0 - sec(x.r.uniform(0.5, 3)),
           strf("watchdog: BUG: soft lockup - CPU#%d stuck for %ds! [python3:%d]", x.r.index(96),
                22 + x.r.index(5), x.pid(h, 0)));
  }
  x.I.dead_at[static_cast<size_t>(h)] = t0;
  for (const SimNic& ni : x.H(h).nics)
    opensm_trap(x, t0 + ms(x.r.uniform(5, 900)), 1, 128, "Link state change",
                x.C.leaves[static_cast<size_t>(ni.leaf)].lid, 0);
  const int njob = static_cast<int>(x.J.hosts.size());
  const int pos = x.J.pos[static_cast<size_t>(h)];
  std::vector<int> wave1 = {x.J.hosts[static_cast<size_t>((pos + njob - 1) % njob)]};
  if (njob > 2) wave1.push_back(x.J.hosts[static_cast<size_t>((pos + 1) % njob)]);
  const double d_ib = x.r.around(18, 0.35, 7, 35);
  for (int q : wave1) {
    Us last = t0;
    for (int g = 0; g < x.C.gpg; ++g) {
      const Us t = t0 + sec(d_ib + x.r.uniform(0, 1.5));
      x.nccl(q, t, g, "WARN", x.ib_error(q, g, h, g, 12, 129));
      if (x.r.chance(0.7))
        x.nccl(q, t + x.r.range(100, 5000), g, "WARN", x.ib_error(q, g, h, g, 5, 249));
      const Us te = t + x.r.range(200000, 3000000);
      x.torch(q, te, g, 'E', x.tl().term,
              x.pg(x.rank(q, g)) +
                  " Process group watchdog thread terminated with exception: NCCL error: remote "
                  "process exited or there was a network error, NCCL version " +
                  x.I.nccl_version);
      x.pyerr(q, te + 10, g,
              "ncclRemoteError: A call failed possibly due to a network error or a remote process "
              "exiting prematurely.");
      last = std::max(last, te);
    }
    x.teardown(q, last + x.r.range(500000, 4000000), -1, -6);
  }
  set_truth(x, x.hn(h), "host_kernel", "C21", v < 0.35 ? "kernel_panic" : "host_silent", t0,
            {x.hn(h)});
  x.I.truth.regime = "errored+hung";
  Ctx::Prop p;
  p.t_fail = t0;
  p.errored = false;
  p.dead_hosts = wave1;
  p.dead_hosts.push_back(h);
  x.propagate(p);
}

// ---- snippet: one host's kernel log over days, no job ----

// The usual paste: benign lines at their base rate over days or weeks, and at
// most one real fault (not necessarily the last line) on another GPU than the
// application Xids. Without one it is a false alarm: nothing may be evicted.
void hard_snippet(Ctx& x, Us t0) {
  const int h = 0;
  HostProfile& p = x.I.prof[static_cast<size_t>(h)];
  x.I.t_start = t0 - hours(24 * x.r.uniform(2, 20));
  x.I.t_end = t0 + hours(x.r.uniform(1, 48));
  p.boot = x.I.t_start + p.skew - hours(x.r.uniform(2, 120));
  base_rate_background(x, 1.0, x.I.t_start, x.I.t_end);
  const int app_gpu = x.r.index(static_cast<size_t>(x.C.gpg));
  for (int i = 0; i < 1 + x.r.index(4); ++i) {
    const Us t =
        x.I.t_start + static_cast<Us>(x.r.uniform() * static_cast<double>(x.I.t_end - x.I.t_start));
    x.xid(
        h, app_gpu, t, 13,
        strf("Graphics SM Warp Exception on (GPC %d, TPC %d, SM 0): Illegal Instruction Parameter",
             x.r.index(8), x.r.index(9)),
        true);
  }
  x.I.truth.regime = "snippet";
  if (x.r.chance(0.25)) {
    set_truth(x, "", "", "§7.2", "benign_only", t0, {});
    x.I.truth.localizable = false;
    x.I.truth.false_alarm = true;
    return;
  }
  const int g = (app_gpu + 1 + x.r.index(static_cast<size_t>(std::max(1, x.C.gpg - 1)))) % x.C.gpg;
  const SimGpu& gp = x.H(h).gpus[static_cast<size_t>(g)];
  const long long addr = 0x10000000LL + x.r.range(0, 0x7fffffff);
  switch (x.r.index(3)) {
    case 0:  // §2.3: DBE, remap pending, contained (the "contained ECC error")
      x.xid(h, g, t0, 48,
            strf("An uncorrectable double bit error (DBE) has been detected on GPU in the "
                 "framebuffer at physAddr 0x%llx partition %d, subpartition %d.",
                 addr, x.r.index(32), x.r.index(4)));
      x.xid(h, g, t0 + 80, 63,
            strf("Row Remapper: New row (0x%016llx) marked for remapping, reset gpu to activate.",
                 addr));
      x.xid(h, g, t0 + ms(x.r.uniform(1, 500)), 94, "Contained: SM (0x1). RST: No, D-RST: No",
            true);
      set_truth(x, x.hn(h) + "/gpu" + std::to_string(g), "gpu_memory", "C04", "xid48_dbe", t0,
                {x.hn(h)});
      break;
    case 1:  // Xid 79, fallen off the bus (NVIDIA Xid catalog)
      x.xid(h, g, t0, 79, "GPU has fallen off the bus.");
      if (x.r.chance(0.6))
        x.kern(h, t0 + 30, "NVRM: GPU " + gp.bdf + ": GPU has fallen off the bus.");
      set_truth(x, x.hn(h) + "/gpu" + std::to_string(g), "gpu_fallen_off_bus", "C02",
                "xid79_fallen_off_bus", t0, {x.hn(h)});
      break;
    default: {  // §4.1: NIC firmware health lost
      const SimNic& ni = x.H(h).nics[static_cast<size_t>(g % static_cast<int>(x.H(h).nics.size()))];
      x.kern(
          h, t0,
          strf("mlx5_core %s: device's health compromised - reached miss count", ni.bdf.c_str()));
      x.kern(h, t0 + 24, strf("mlx5_core %s: synd 0x7: irisc not responding", ni.bdf.c_str()));
      set_truth(x, x.hn(h) + "/" + ni.name, "nic", "C14", "mlx5_health_compromised", t0, {x.hn(h)});
      break;
    }
  }
}

}  // namespace reflex::sim
