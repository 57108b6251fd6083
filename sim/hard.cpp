// Hard mode (`reflex-sim --hard`, issue 12): the cases where evidence must be
// judged against its peers rather than read line by line. Written from
// reference/domain.md (§3.1 correctable AER, §4.3 rail-optimized leaves and SM
// traps, §5.1-§5.4 NCCL/PyTorch, §6 C21/C29/C31, §7.2 noise, §7.3 realism) and
// peers.md; never from kb/ (a generator that reads the rules would test them
// against themselves). Families, one scenario each ("family.variant"):
//   background.*   benign lines at a base rate on most hosts, a real fault elsewhere
//   prior_fault.*  a fault on another host hours or days before the incident
//   common_mode.*  one cause below many devices: a PSU under all GPUs of a host,
//                  a leaf under the same NIC index of 2-64 hosts
//   odd_one_out.*  one host runs another NCCL build
//   silent_host.*  a host dies (silently or with a panic in pstore); its ring
//                  neighbours fail first, everyone else at the watchdog
//   snippet.*      one host's kernel log over days, no job at all
//
// Added later, kept out of the default plan (`reflex-sim --hard --families
// new`, or `all`; `--scenario NAME` reaches any) so that the default set and
// the floors of tests/accuracy/sim_hard_floors.json stay as they are. Written
// from domain.md (§2.3, §2.5, §3.1-§3.3, §4.1-§4.3, §5.1, §5.5, §6 C01, C03,
// C07, C13-C15, C17, C25, C29) and peers.md (gpud's libnccl segfault fixture,
// NVSentinel's BDF-less mlx5 syndrome, ACCESS_REG noise); never from kb/:
//   nccl_segv.one_rank        segfault in libnccl.so.2 on one rank (kernel line
//                             and/or faulthandler / glibc backtrace on the rank);
//                             the others time out -> nccl_software on the rank
//                             (the host when only the kernel saw it)
//   nccl_config.duplicate_gpu "Duplicate GPU detected": every local rank on
//                             cuda:0, or two ranks of one host on one GPU ->
//                             nccl_software on the job
//   nvlink.one_of_eight       Xid 74 on one GPU, collateral (Xid 45, NVLink CUDA
//                             errors, at most one sympathetic 74) on the others
//                             -> nvlink on that GPU
//   nic_fw.health_syndrome    mlx5 health syndromes (dump, bare, BDF-less) under
//                             ACCESS_REG noise -> nic on that NIC
//   nic_pcie.function_lost    AER on the NIC + PCI channel offline -> nic (C15);
//                             the switch losing NIC and GPU -> pcie on the switch
//   ber_escalation.ib_cable   symbol errors / link_error_recovery / healed flaps
//                             climbing, then the port down -> ib_fabric on the NIC
//   ber_escalation.pcie_replay correctable replays coming faster, then fatal AER
//                             and Xid 79 -> pcie on the GPU's port
//   user_code.one_rank_exception a traceback on one rank -> user_code on the rank
//   thin.one_host             a job on one host only
//   thin.paste                2-8 kernel lines of one host, no topology, no job
//   thin.no_topology          several hosts, no topology.json (a GPU's truth is
//                             its placeholder <host>/gpu@<bdf>, the index form in
//                             also_acceptable)
#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "sim/ctx.h"
#include "sim/scenarios.h"

namespace reflex::sim {

namespace {

Us ms(double v) {
  return static_cast<Us>(v * 1000.0);
}
Us sec(double v) {
  return static_cast<Us>(v * 1e6);
}
Us hours(double v) {
  return static_cast<Us>(v * 3600e6);
}

const ScenarioDef& base_def(const std::string& name) {
  for (const auto& d : scenario_defs())
    if (d.info.name == name) return d;
  return scenario_defs().front();  // unreachable: the names below are the table's
}

// Runs one of the standard templates and returns the host of its root ("" for
// cluster-level roots).
int run_base(Ctx& x, const std::vector<std::string>& names, Us t0) {
  base_def(names[static_cast<size_t>(x.r.index(names.size()))]).run(x, t0);
  const std::string& dev = x.I.truth.device;
  const std::string hn = dev.substr(0, dev.find('/'));
  for (int h = 0; h < x.nhosts(); ++h)
    if (x.hn(h) == hn) return h;
  return -1;
}

// The earliest instant host h's kernel can have logged (dmesg seconds since
// boot stay positive), with an hour of margin.
Us after_boot(Ctx& x, int h) {
  return x.I.prof[static_cast<size_t>(h)].boot + hours(1);
}

// ---- benign lines at a base rate (§7.2, C29) ----

// gpud's peermem fixture (peers.md source list; domain.md C29).
void peermem_invalid_context(Ctx& x, int h, Us t) {
  const int n = 1 + x.r.index(3);  // printed in small bursts
  for (int i = 0; i < n; ++i)
    x.kern(h, t + i * 30,
           strf("nvidia-peermem nv_get_p2p_free_callback:%d ERROR detected invalid context, "
                "skipping further processing",
                127 + (x.r.chance(0.2) ? 1 : 0)));
}

// §3.1 correctable AER, old and new kernel strings, one event.
void corrected_aer(Ctx& x, int h, Us t) {
  const SimSwitch& sw = x.H(h).sws[static_cast<size_t>(x.r.index(x.H(h).sws.size()))];
  const bool nk = x.new_kernel();
  if (nk)
    x.kern(h, t,
           strf("pcieport %s: AER: Correctable error message received from %s",
                sw.root_port.c_str(), sw.bdf.c_str()));
  else
    x.kern(h, t,
           strf("pcieport %s: AER: Corrected error received: %s", sw.root_port.c_str(),
                sw.bdf.c_str()));
  x.kern(h, t + 3,
         strf("pcieport %s: %sPCIe Bus Error: severity=%s, type=Physical Layer, (Receiver ID)",
              sw.bdf.c_str(), nk ? "AER: " : "", nk ? "Correctable" : "Corrected"));
  x.kern(h, t + 5,
         strf("pcieport %s: %s  device [1000:c030] error status/mask=00000001/00002000",
              sw.bdf.c_str(), nk ? "AER: " : ""));
  x.kern(h, t + 7,
         strf("pcieport %s: %s   [ 0] %s", sw.bdf.c_str(), nk ? "AER: " : "",
              nk ? "RxErr                  (First)" : "Receiver Error"));
}

// An application-class Xid (§2.5 rule 2: 13/31/43 are APP) from another
// tenant's or a debug process: one GPU, no hardware Xid beside it.
void benign_app_xid(Ctx& x, int h, Us t) {
  const int g = x.r.index(static_cast<size_t>(x.C.gpg));
  if (x.r.chance(0.6))
    x.xid(
        h, g, t, 13,
        strf("Graphics SM Warp Exception on (GPC %d, TPC %d, SM 0): %s", x.r.index(8), x.r.index(9),
             x.r.chance(0.5) ? "Out Of Range Address" : "Illegal Instruction Parameter"),
        true);
  else
    x.xid(
        h, g, t, 31,
        strf("channel 0x%08x, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC%d GPCCLIENT_T1_%d "
             "faulted @ 0x7f%s_%s. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
             2 + x.r.index(8), x.r.index(8), x.r.index(16), x.r.hex(2).c_str(), x.r.hex(8).c_str()),
        true);
  if (x.r.chance(0.5)) x.xid(h, g, t + ms(40), 43, "Ch 00000020, engmask 00000101", true);
}

// On `share` of the hosts, each of the three kinds at its own steady rate
// over [from, to] (rate per host: every 20 min to every 4 h).
void base_rate_background(Ctx& x, double share, Us from, Us to) {
  for (int h = 0; h < x.nhosts(); ++h) {
    if (!x.r.chance(share)) continue;
    const Us a = std::max(from, after_boot(x, h));
    if (a >= to) continue;
    const bool kinds[3] = {x.r.chance(0.7), x.r.chance(0.5), x.r.chance(0.35)};
    for (int k = 0; k < 3; ++k) {
      if (!kinds[k]) continue;
      const double every_h = x.r.uniform(1.0 / 3, 4);
      for (Us t = a + hours(x.r.uniform(0, every_h)); t < to;
           t += hours(x.r.exponential(every_h))) {
        if (k == 0) peermem_invalid_context(x, h, t);
        if (k == 1) corrected_aer(x, h, t);
        if (k == 2) benign_app_xid(x, h, t);
      }
    }
  }
}

const std::vector<std::string> kLocalHw = {
    "gpu_fallen_off_bus", "hbm_dbe",           "gsp_timeout", "gpu_hw_xid",
    "nic_link_down",      "pcie_switch_fatal", "nvlink_xid74"};

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

int nccl_code(const std::string& v) {  // NCCL_VERSION_CODE: 2.18.6 -> 21806
  int a = 0, b = 0, c = 0;
  std::sscanf(v.c_str(), "%d.%d.%d", &a, &b, &c);
  return a * 10000 + b * 100 + c;
}

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
    case 1:  // §2.1 / peers.md: fallen off the bus
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


// ======== --families new (written from domain.md and peers.md, never kb/) ========

std::string gpu_dev(Ctx& x, int h, int g) { return x.hn(h) + "/gpu" + std::to_string(g); }
std::string nic_dev(Ctx& x, int h, int n) {
  return x.hn(h) + "/" + x.H(h).nics[static_cast<size_t>(n)].name;
}
std::string rank_dev(Ctx& x, int h, int g) {
  return "job/" + x.J.id + "/rank" + std::to_string(x.rank(h, g));
}
int some_job_host(Ctx& x) { return x.J.hosts[static_cast<size_t>(x.r.index(x.J.hosts.size()))]; }
int some_gpu(Ctx& x) { return x.r.index(static_cast<size_t>(x.C.gpg)); }

// A rank (h, g) has exited: torchrun tears the host down (D_local), the other
// hosts fail errored (status 12 toward it) or hung (watchdog), §5.3/§5.5.
Us rank_gone(Ctx& x, int h, int g, Us t_exit, int exitcode, double p_errored) {
  const Us td = x.teardown(h, t_exit + sec(x.r.around(2, 0.8, 0.1, 10)), g, exitcode);
  Ctx::Prop p;
  p.t_fail = td;
  p.hosts = {h};
  for (int k = 0; k < x.C.gpg; ++k) p.dead_ranks.push_back({h, k});
  p.errored = x.r.chance(p_errored);
  x.I.truth.regime = p.errored ? "errored" : "hung";
  return x.propagate(p);
}

// §3.1 uncorrectable AER, old and new kernel strings; `bits` is one of the
// §3.2 uncorrectable bits ("[14] CmpltTO" / "[14] Completion Timeout").
void aer_uncorrectable(Ctx& x, int h, Us t, const std::string& reporter, const std::string& source,
                       const char* driver, bool fatal) {
  const bool nk = x.new_kernel();
  static const char* kNew[] = {"[ 5] SDES                   (First)",
                               "[14] CmpltTO                (First)",
                               "[18] MalfTLP                (First)", "[ 4] DLP                    (First)"};
  static const char* kOld[] = {"[ 5] Surprise Down Error    (First)",
                               "[14] Completion Timeout     (First)",
                               "[18] Malformed TLP          (First)",
                               "[ 4] Data Link Protocol     (First)"};
  static const char* kStatus[] = {"00000020", "00004000", "00040000", "00000010"};
  const int b = fatal ? (x.r.chance(0.5) ? 0 : (x.r.chance(0.5) ? 2 : 3)) : 1;
  const char* sev = fatal ? (nk ? "Uncorrectable (Fatal)" : "Uncorrected (Fatal)")
                          : (nk ? "Uncorrectable (Non-Fatal)" : "Uncorrected (Non-Fatal)");
  if (nk)
    x.kern(h, t, strf("pcieport %s: AER: %s error message received from %s", reporter.c_str(), sev,
                      source.c_str()));
  else
    x.kern(h, t, strf("pcieport %s: AER: %s error received: %s", reporter.c_str(), sev, source.c_str()));
  x.kern(h, t + 5,
         strf("%s %s: %sPCIe Bus Error: severity=%s, type=%s, (%s)", driver, source.c_str(),
              nk ? "AER: " : "", sev, b == 3 ? "Data Link Layer" : "Transaction Layer",
              b == 1 ? "Requester ID" : "Receiver ID"));
  x.kern(h, t + 8,
         strf("%s %s: %s  device [%s] error status/mask=%s/00000000", driver, source.c_str(),
              nk ? "AER: " : "", std::string(driver) == "mlx5_core" ? "15b3:1021" : "10de:2330",
              kStatus[b]));
  x.kern(h, t + 10, strf("%s %s: %s  %s", driver, source.c_str(), nk ? "AER: " : "", nk ? kNew[b] : kOld[b]));
}

// ---- nccl_segv: a segfault inside libnccl on one rank (peers.md: gpud's
// libnccl segfault fixture; §1.1 "software bug"), the others time out ----
void new_nccl_segv(Ctx& x, Us t0) {
  const int h = some_job_host(x), g = some_gpu(x);
  const int pid = x.pid(h, g);
  const unsigned long long base = 0x7f0000000000ULL + (static_cast<unsigned long long>(x.r.range(0x100, 0xfff)) << 28);
  const unsigned long long off = static_cast<unsigned long long>(x.r.range(0x40000, 0x3000000));
  const double v = x.r.uniform();
  const bool kernel_line = v < 0.8;  // printk of unhandled signals is rate-limited (§7.3)
  const bool rank_trace = v >= 0.4;
  if (kernel_line) {
    static const char* kComm[] = {"pt_main_thread", "python3", "python"};
    std::string l = strf("%s[%d]: segfault at %llx ip %016llx sp %016llx error %d in libnccl.so.2[%llx+%x]",
                         kComm[x.r.index(3)], pid,
                         static_cast<unsigned long long>(x.r.range(0, 0xffffffffLL)) + (x.r.chance(0.5) ? base : 0ULL),
                         base + off, 0x7f0000000000ULL + static_cast<unsigned long long>(x.r.range(0, 0xffffffffffLL)),
                         x.r.chance(0.7) ? 4 : 6, base, 0xd3d3000);
    if (x.new_kernel())  // kernels >= 5.19 say where it ran
      l += strf(" likely on CPU %d (core %d, socket %d)", x.r.index(112), x.r.index(56), x.r.index(2));
    x.kern(h, t0, l);
    if (x.r.chance(0.6))
      x.kern(h, t0 + 2, strf("Code: %s %s %s %s <%s> %s", x.r.hex(2).c_str(), x.r.hex(2).c_str(), x.r.hex(2).c_str(),
                             x.r.hex(2).c_str(), x.r.hex(2).c_str(), x.r.hex(2).c_str()));
  }
  if (rank_trace) {
    if (x.r.chance(0.5)) {  // Python faulthandler (the crash is in NCCL's proxy thread: no Python frame)
      x.pyerr(h, t0 + 50, g, "Fatal Python error: Segmentation fault");
      x.pyerr(h, t0 + 51, g, "");
      x.pyerr(h, t0 + 52, g, strf("Current thread 0x00007f%s (most recent call first):", x.r.hex(10).c_str()));
      x.pyerr(h, t0 + 53, g, "  <no Python frame>");
      x.pyerr(h, t0 + 54, g, "");
      x.pyerr(h, t0 + 55, g, strf("Thread 0x00007f%s (most recent call first):", x.r.hex(10).c_str()));
      x.pyerr(h, t0 + 56, g, "  File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py\", line 2050 in all_reduce");
      x.pyerr(h, t0 + 57, g, "  File \"/workspace/megatron/core/tensor_parallel/mappings.py\", line 24 in _reduce");
    } else {  // glibc libSegFault backtrace (LD_PRELOAD=libSegFault.so)
      x.pyerr(h, t0 + 50, g, "*** Segmentation fault");
      x.pyerr(h, t0 + 51, g, "Backtrace:");
      static const char* kFn[] = {"ncclProxyProgress", "ncclProxyService", "ncclIbIsend", "ncclNetIb::test"};
      for (int i = 0; i < 3 + x.r.index(3); ++i)
        x.pyerr(h, t0 + 52 + i, g,
                strf("/usr/lib/x86_64-linux-gnu/libnccl.so.2(%s+0x%x)[0x%llx]", i == 0 ? kFn[x.r.index(4)] : "",
                     static_cast<int>(x.r.range(0x40, 0x4000)), base + off + static_cast<unsigned long long>(i * 0x1a40)));
      x.pyerr(h, t0 + 60, g, strf("/lib/x86_64-linux-gnu/libc.so.6(+0x94ac3)[0x7f%s]", x.r.hex(10).c_str()));
    }
  }
  x.app(h, t0 + sec(x.r.uniform(1, 4)), -1, strf("  traceback : Signal 11 (SIGSEGV) received by PID %d", pid));
  set_truth(x, rank_trace ? rank_dev(x, h, g) : x.hn(h), "nccl_software", "peers.md (libnccl segfault), §1.1",
            "nccl_segfault", t0, {});
  x.I.truth.also = {rank_trace ? x.hn(h) : rank_dev(x, h, g)};
  rank_gone(x, h, g, t0 + ms(x.r.uniform(5, 200)), -11, 0.3);
}

// ---- nccl_config: two ranks on one GPU. NCCL init.cc: "Duplicate GPU
// detected : rank %d and rank %d both on CUDA device %lx", then
// ncclInvalidUsage (§5.1 code 5) ----
void new_duplicate_gpu(Ctx& x, Us t0) {
  x.I.truth.regime = "launch";
  x.I.t_start = t0 - sec(x.r.uniform(45, 90));
  auto busid = [&](int h, int g) {
    const std::string& b = x.H(h).gpus[static_cast<size_t>(g)].bdf;  // 0000:1b:00.0 -> 1b000
    return b.substr(5, 2) + "000";
  };
  auto dup = [&](int h, int g, int other, int dev_g, Us t) {
    const std::string msg = strf("Duplicate GPU detected : rank %d and rank %d both on CUDA device %s", x.rank(h, g),
                                 x.rank(h, other), busid(h, dev_g).c_str());
    x.nccl(h, t, g, "WARN", msg);
    x.nccl(h, t + 100, g, "INFO", strf("init.cc:%d -> 5", 600 + x.r.index(300)));
    x.pyerr(h, t + ms(x.r.uniform(10, 300)), g,
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
            "ProcessGroupNCCL.cpp:1970, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version " +
                x.I.nccl_version);
    x.pyerr(h, t + ms(x.r.uniform(300, 400)), g, "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.");
    x.pyerr(h, t + ms(x.r.uniform(400, 450)), g, "Last error:");
    x.pyerr(h, t + ms(x.r.uniform(450, 500)), g, msg);
  };
  if (x.r.chance(0.5) || x.J.hosts.size() < 2) {
    // The script never calls torch.cuda.set_device(local_rank): every local rank on cuda:0.
    for (int h : x.J.hosts) {
      for (int g = 0; g < x.C.gpg && x.C.gpg > 1; ++g)
        dup(h, g, g == 0 ? 1 : 0, 0, t0 + ms(x.r.uniform(0, 2500)));
      x.teardown(h, t0 + sec(x.r.uniform(3, 8)), 0, 1);
    }
    set_truth(x, "job/" + x.J.id, "nccl_software", "§5.1 (invalid usage), C29", "nccl_duplicate_gpu", t0, {});
    x.I.truth.notes.push_back("every local rank on cuda:0");
    return;
  }
  // One host's launcher maps two local ranks to one GPU (CUDA_VISIBLE_DEVICES);
  // only those two see it, the others lose them during init.
  const int h = some_job_host(x);
  const int a = x.r.index(static_cast<size_t>(std::max(1, x.C.gpg - 1)));
  const int b = std::min(a + 1, x.C.gpg - 1);
  dup(h, a, b, a, t0 + ms(x.r.uniform(0, 800)));
  if (b != a) dup(h, b, a, a, t0 + ms(x.r.uniform(0, 800)));
  const Us td = x.teardown(h, t0 + sec(x.r.uniform(2, 6)), a, 1);
  for (int q : x.J.hosts) {
    if (q == h) continue;
    Us last = td;
    for (int g = 0; g < x.C.gpg; ++g) {
      if (!x.r.chance(0.7)) continue;
      const Us t = td + sec(x.r.uniform(0.2, 20));
      const std::string peer = strf("%s<%d>", x.H(h).ip.c_str(), 40000 + x.r.index(20000));
      x.nccl(q, t, g, "WARN", "socketProgress: Connection closed by remote peer " + peer);
      x.nccl(q, t + 50, g, "INFO", strf("misc/socket.cc:%d -> 6", 50 + x.r.index(800)));
      x.pyerr(q, t + ms(x.r.uniform(10, 300)), g,
              "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
              "ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version " +
                  x.I.nccl_version);
      x.pyerr(q, t + ms(x.r.uniform(300, 400)), g,
              "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.");
      last = std::max(last, t);
    }
    x.teardown(q, last + sec(x.r.uniform(1, 5)), -1, 1);
  }
  set_truth(x, "job/" + x.J.id, "nccl_software", "§5.1 (invalid usage), C29", "nccl_duplicate_gpu", t0, {});
  x.I.truth.also = {x.hn(h)};
  x.I.truth.notes.push_back(strf("local ranks %d and %d of %s on one GPU", a, b, x.hn(h).c_str()));
}

// ---- nvlink: one GPU's fatal NVLink error among eight (§6 C07, §2.5 rule 5:
// at most two GPUs with Xid 74, else it would be the NVSwitch) ----
std::string xid74(Ctx& x, int link) {
  if (x.r.chance(0.3)) return strf("NVLink: fatal error detected on link %d", link);
  static const char* kReg[] = {"0x10000", "0x20000", "0x100", "0x4"};
  return strf("NVLink: fatal error detected on link %d(0x0, 0x0, %s, 0x0, 0x0, 0x0, 0x0)", link, kReg[x.r.index(4)]);
}
void new_nvlink_one(Ctx& x, Us t0) {
  const int h = some_job_host(x), g = some_gpu(x);
  const int nl = 2 + x.r.index(3);
  for (int i = 0; i < nl; ++i) x.xid(h, g, t0 + ms(i * x.r.uniform(0, 40)), 74, xid74(x, static_cast<int>(x.r.range(0, 17))));
  const bool peer74 = x.C.gpg > 1 && x.r.chance(0.4);
  if (peer74) {  // the link partner sees the link go down (sympathetic, later, one link)
    const int p = (g + 1 + x.r.index(static_cast<size_t>(x.C.gpg - 1))) % x.C.gpg;
    x.xid(h, p, t0 + ms(x.r.uniform(80, 1200)), 74, xid74(x, static_cast<int>(x.r.range(0, 17))));
  }
  if (x.r.chance(0.5))
    x.xid(h, g, t0 + sec(x.r.uniform(1, 10)), 154, "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)");
  // Collateral: the TP group on the host loses its NVLink peer: the other
  // GPUs' channels are torn down (Xid 45) and their ranks fail with the same
  // CUDA error (cudaErrorNvlinkUncorrectable, §6 C07).
  const Us t_err = t0 + ms(x.r.uniform(100, 3000));
  x.rank_crash(h, g, t_err, "uncorrectable NVLink error detected during the execution");
  for (int k = 0; k < x.C.gpg; ++k) {
    if (k == g) continue;
    const Us tk = t_err + ms(x.r.uniform(5, 900));
    if (x.r.chance(0.6)) x.xid(h, k, tk + ms(x.r.uniform(1, 400)), 45, strf("Ch %08x", 8 + 8 * x.r.index(4)), true);
    if (x.r.chance(0.7)) x.rank_crash(h, k, tk, "uncorrectable NVLink error detected during the execution");
  }
  set_truth(x, gpu_dev(x, h, g), "nvlink", "C07, §2.5", "xid74_nvlink_one_gpu", t0, {x.hn(h)});
  x.I.truth.notes.push_back(peer74 ? "one sympathetic Xid 74 on a peer" : "collateral only: Xid 45 and CUDA errors on the peers");
  rank_gone(x, h, g, t_err, 1, 0.5);
}

// ---- nic_fw: mlx5 firmware health (§4.1, §6 C14; charmplusplus/charm#2635
// dump; NVSentinel's BDF-less "mlx5_core: INFO: synd 0x8" form), under the
// ACCESS_REG noise gpud ignores (peers.md) ----
void new_nic_fw(Ctx& x, Us t0) {
  const int h = some_job_host(x), n = some_gpu(x);
  const SimNic& ni = x.H(h).nics[static_cast<size_t>(n)];
  static const char* kSynd[] = {"0x7: irisc not responding", "0x1: firmware internal error",
                                "0x8: unrecoverable hardware error", "0x9: firmware CRC error",
                                "0xa: ICM fetch PCI error"};
  const int s = x.r.chance(0.45) ? 0 : 1 + x.r.index(4);
  const double v = x.r.uniform();
  if (v < 0.6) {
    x.kern(h, t0, strf("mlx5_core %s: device's health compromised - reached miss count", ni.bdf.c_str()));
    for (int i = 0; i < 5; ++i)
      x.kern(h, t0 + 10 + i, strf("mlx5_core %s: assert_var[%d] 0x%s", ni.bdf.c_str(), i, x.r.hex(8).c_str()));
    x.kern(h, t0 + 21, strf("mlx5_core %s: fw_ver 28.%d.%d", ni.bdf.c_str(), 36 + x.r.index(5), 1000 + x.r.index(1100)));
    x.kern(h, t0 + 22, strf("mlx5_core %s: hw_id 0x00000225", ni.bdf.c_str()));
    x.kern(h, t0 + 23, strf("mlx5_core %s: irisc_index %d", ni.bdf.c_str(), x.r.index(3)));
    x.kern(h, t0 + 24, strf("mlx5_core %s: synd %s", ni.bdf.c_str(), kSynd[s]));
    x.kern(h, t0 + 25, strf("mlx5_core %s: ext_synd 0x%s", ni.bdf.c_str(), x.r.hex(4).c_str()));
  } else if (v < 0.85) {
    x.kern(h, t0, strf("mlx5_core %s: synd %s", ni.bdf.c_str(), kSynd[s]));
  } else {
    x.kern(h, t0, strf("mlx5_core: INFO: synd %s.", kSynd[s]));
    x.I.truth.notes.push_back("the health line names no BDF; only NCCL's async event names the HCA");
  }
  const Us td = t0 + sec(x.r.uniform(0.5, 8));
  x.nccl(h, td, n, "WARN",
         strf("NET/IB : %s:1 Got async event : %s", ni.name.c_str(), x.r.chance(0.6) ? "local catastrophic error" : "port error"));
  if (x.r.chance(0.5))
    x.kern(h, td + ms(x.r.uniform(10, 500)), strf("mlx5_core %s %s: Link down", ni.bdf.c_str(), ni.netdev.c_str()));
  // Noise: restricted-register reads that fail harmlessly, on many hosts.
  for (int q = 0; q < x.nhosts(); ++q) {
    if (!x.r.chance(0.5)) continue;
    const SimNic& qn = x.H(q).nics[static_cast<size_t>(x.r.index(x.H(q).nics.size()))];
    const Us a = std::max(after_boot(x, q), x.I.t_start - hours(6));
    for (int i = 0; i < 1 + x.r.index(4); ++i)
      x.kern(q, a + static_cast<Us>(x.r.uniform() * static_cast<double>(x.I.t_end - a)),
             strf("mlx5_core %s: mlx5_cmd_out_err:838:(pid %d): ACCESS_REG(0x805) op_mod(0x1) failed, status bad "
                  "resource(0x5), syndrome (0x305684), err(-22)",
                  qn.bdf.c_str(), 1000 + x.r.index(2000000)));
  }
  base_rate_background(x, x.r.uniform(0.2, 0.5), x.I.t_start - hours(4), x.I.t_end);
  set_truth(x, nic_dev(x, h, n), "nic", "C14, §4.1", "mlx5_health_syndrome", t0, {x.hn(h)});
  Ctx::Prop p;
  p.t_fail = td;
  p.hosts = {h};
  p.rails = {n};
  p.own_side = true;
  p.errored = true;
  x.I.truth.regime = "errored";
  x.propagate(p);
}

// ---- nic_pcie: a NIC's PCIe function lost (§3.1 device-driver side, §4.1,
// §6 C15); when the GPU behind the same switch fails too, the root is the
// switch (C15 discriminator -> C01, §3.3 rule b) ----
void new_nic_pcie(Ctx& x, Us t0) {
  const int h = some_job_host(x), n = some_gpu(x);
  const SimHost& X = x.H(h);
  const SimNic& ni = X.nics[static_cast<size_t>(n)];
  const SimSwitch& sw = X.sws[static_cast<size_t>(ni.sw)];
  const bool shared = x.r.chance(0.35);
  auto nic_lost = [&](const SimNic& nn, Us t) {
    if (x.r.chance(0.75))
      x.kern(h, t, strf("mlx5_core %s: mlx5_pci_err_detected Device state = 1 health sensors: 1 pci_status: 1. Enter, pci channel state = 2", nn.bdf.c_str()));
    x.kern(h, t + ms(x.r.uniform(100, 2000)),
           strf("mlx5_core %s: mlx5_error_sw_reset:233:(pid %d): PCI channel offline, stop waiting for NIC IFC", nn.bdf.c_str(), 900 + x.r.index(4000)));
    x.nccl(h, t + ms(x.r.uniform(10, 900)), nn.index, "WARN",
           strf("NET/IB : %s:1 Got async event : local catastrophic error", nn.name.c_str()));
  };
  if (!shared) {
    const std::string reporter = x.r.chance(0.6) ? sw.bdf : sw.root_port;
    aer_uncorrectable(x, h, t0, reporter, ni.bdf, "mlx5_core", x.r.chance(0.6));
    nic_lost(ni, t0 + ms(x.r.uniform(1, 30)));
    if (x.r.chance(0.5))
      x.kern(h, t0 + ms(x.r.uniform(500, 3000)), strf("pcieport %s: AER: device recovery failed", reporter.c_str()));
    set_truth(x, nic_dev(x, h, n), "nic", "C15, §3.1", "mlx5_pci_channel_offline", t0, {x.hn(h)});
    x.I.truth.notes.push_back("the GPU behind the same switch stays healthy");
    Ctx::Prop p;
    p.t_fail = t0 + sec(x.r.uniform(0.5, 3));
    p.hosts = {h};
    p.rails = {n};
    p.own_side = true;
    p.errored = true;
    x.I.truth.regime = "errored";
    x.propagate(p);
    return;
  }
  // The switch (reported by the root port above it) takes GPU and NIC down;
  // the NIC's lines come first, the GPU's Xid 79 up to seconds later.
  aer_uncorrectable(x, h, t0, sw.root_port, sw.bdf, "pcieport", true);
  if (x.r.chance(0.5)) {
    x.kern(h, t0 + 300, strf("pcieport %s: DPC: containment event, status:0x1f01 source:0x0000", sw.root_port.c_str()));
    x.kern(h, t0 + 320, strf("pcieport %s: DPC: ERR_FATAL detected", sw.root_port.c_str()));
  }
  for (const SimNic& nn : X.nics)
    if (nn.sw == ni.sw) nic_lost(nn, t0 + ms(x.r.uniform(2, 40)));
  int g0 = -1;
  for (const SimGpu& gp : X.gpus) {
    if (gp.sw != ni.sw) continue;
    if (g0 < 0) g0 = gp.index;
    const Us tx = t0 + ms(x.r.uniform(300, 3000));
    x.xid(h, gp.index, tx, 79, "GPU has fallen off the bus.");
    if (x.r.chance(0.5)) x.kern(h, tx + 30, "NVRM: GPU " + gp.bdf + ": GPU has fallen off the bus.");
  }
  set_truth(x, x.hn(h) + "/pcie/" + sw.bdf, "pcie", "C15 -> C01, §3.3", "pcie_switch_nic_and_gpu_lost", t0, {x.hn(h)});
  x.I.truth.notes.push_back("NIC and GPU under one switch lost; the NIC reports first");
  if (g0 < 0) g0 = some_gpu(x);
  x.rank_crash(h, g0, t0 + ms(x.r.uniform(3100, 5000)), "unspecified launch failure");
  rank_gone(x, h, g0, t0 + sec(5), 1, 0.8);
}

// ---- ber_escalation: a link degrading until it fails ----
void counter(Ctx& x, int h, Us t, int n, const char* name, long long v, bool hw) {
  x.line(h, t, kCounters, strf("/sys/class/infiniband/%s/ports/1/%s/%s:%lld", x.H(h).nics[static_cast<size_t>(n)].name.c_str(),
                               hw ? "hw_counters" : "counters", name, v));
}

// §6 C17 then C13, §4.2 thresholds: symbol errors climb past the BER spec,
// link_error_recovery and link_downed step (self-healing flaps, SM trap 129),
// then the port goes down for longer than D_ib and the job fails.
void new_ber_ib(Ctx& x, Us t0) {
  const int h = some_job_host(x), n = some_gpu(x);
  const SimNic& ni = x.H(h).nics[static_cast<size_t>(n)];
  const SimLeaf& leaf = x.C.leaves[static_cast<size_t>(ni.leaf)];
  const double lead_min = x.r.uniform(15, 90);  // degradation before the failure
  x.I.t_start = std::min(x.I.t_start, t0 - sec(lead_min * 60 + 900));
  const Us deg = t0 - sec(lead_min * 60);
  x.I.want_counters[static_cast<size_t>(h)] = 1;
  x.I.counters_done.push_back({h, n});
  long long sym = x.r.range(0, 30), ler = 0, down = 0, lat = 0;
  int flaps = 0;
  for (Us t = deg - sec(600); t < x.I.t_end; t += sec(60)) {
    if (t >= deg) {
      const double f = std::min(1.0, static_cast<double>(t - deg) / static_cast<double>(t0 - deg));
      sym += x.r.range(50, 400) + static_cast<long long>(f * static_cast<double>(x.r.range(500, 6000)));
      ler += x.r.range(0, 1 + static_cast<long long>(f * 6));
      lat += x.r.range(0, 20 + static_cast<long long>(f * 80));
      if (t < t0 && f > 0.5 && flaps < 2 && x.r.chance(0.15)) {  // a flap that heals (< D_ib)
        ++flaps;
        ++down;
        x.kern(h, t - sec(20), strf("mlx5_core %s %s: Link down", ni.bdf.c_str(), ni.netdev.c_str()));
        x.kern(h, t - sec(20) + ms(x.r.uniform(200, 4000)), strf("mlx5_core %s %s: Link up", ni.bdf.c_str(), ni.netdev.c_str()));
        opensm_trap(x, t - sec(20) + ms(x.r.uniform(10, 800)), 1, 128, "Link state change", leaf.lid, 0);
      }
    }
    if (t >= t0 && down == flaps) ++down;
    counter(x, h, t, n, "symbol_error", sym, false);
    counter(x, h, t + 10, n, "link_error_recovery", ler, false);
    counter(x, h, t + 20, n, "link_downed", down, false);
    counter(x, h, t + 30, n, "local_ack_timeout_err", lat, true);
  }
  for (int i = 0; i < 1 + x.r.index(3); ++i)
    opensm_trap(x, deg + static_cast<Us>(x.r.uniform() * static_cast<double>(t0 - deg)), 2, 129,
                "Local Link Integrity threshold reached", leaf.lid, ni.leaf_port);
  port_down_lines(x, h, n, t0, false);
  opensm_trap(x, t0 + ms(x.r.uniform(10, 800)), 1, 128, "Link state change", leaf.lid, 0);
  x.training(x.I.t_start, t0, deg + sec(x.r.uniform(60, 300)), 1.03 + x.r.uniform(0, 0.15));
  x.I.truth.regime = "slow+errored";
  set_truth(x, nic_dev(x, h, n), "ib_fabric", "C17 -> C13, §4.2", "ib_ber_escalation", t0, {x.hn(h)});
  Ctx::Prop p;
  p.t_fail = t0;
  p.hosts = {h};
  p.rails = {n};
  p.own_side = true;
  p.errored = true;
  x.propagate(p);
}

// §6 C03 then C01: a correctable storm (BadTLP / replay timer / rollover,
// rate-limited) on the port above one GPU escalates to an uncorrectable
// fatal error; the GPU falls off the bus (§3.3 rule a).
void new_ber_pcie(Ctx& x, Us t0) {
  const int h = some_job_host(x), g = some_gpu(x);
  const SimGpu& gp = x.H(h).gpus[static_cast<size_t>(g)];
  const std::string port = x.H(h).sws[static_cast<size_t>(gp.sw)].bdf;
  const bool nk = x.new_kernel();
  static const char* kNew[] = {"[ 0] RxErr                  (First)", "[ 6] BadTLP                 (First)",
                               "[ 7] BadDLLP                (First)", "[ 8] Rollover               (First)",
                               "[12] Timeout                (First)"};
  static const char* kOld[] = {"[ 0] Receiver Error         (First)", "[ 6] Bad TLP                (First)",
                               "[ 7] Bad DLLP               (First)", "[ 8] REPLAY_NUM Rollover    (First)",
                               "[12] Replay Timer Timeout   (First)"};
  static const char* kStat[] = {"00000001", "00000040", "00000080", "00000100", "00001000"};
  const double lead_min = x.r.uniform(10, 60);
  const Us deg = t0 - sec(lead_min * 60);
  x.I.t_start = std::min(x.I.t_start, deg - sec(600));
  Us t = deg;
  int bursts = 0;
  while (t < t0 - sec(5)) {
    const int b = x.r.index(5);
    if (nk)
      x.kern(h, t, strf("pcieport %s: AER: Correctable error message received from %s", port.c_str(), gp.bdf.c_str()));
    else
      x.kern(h, t, strf("pcieport %s: AER: Corrected error received: %s", port.c_str(), gp.bdf.c_str()));
    x.kern(h, t + 3, strf("nvidia %s: %sPCIe Bus Error: severity=%s, type=%s, (%s)", gp.bdf.c_str(), nk ? "AER: " : "",
                          nk ? "Correctable" : "Corrected", b == 0 ? "Physical Layer" : "Data Link Layer",
                          b == 0 ? "Receiver ID" : "Transmitter ID"));
    x.kern(h, t + 5, strf("nvidia %s: %s  device [10de:2330] error status/mask=%s/00002000", gp.bdf.c_str(), nk ? "AER: " : "", kStat[b]));
    x.kern(h, t + 7, strf("nvidia %s: %s  %s", gp.bdf.c_str(), nk ? "AER: " : "", nk ? kNew[b] : kOld[b]));
    ++bursts;
    // bursts come closer together as the link degrades
    const double f = static_cast<double>(t - deg) / static_cast<double>(t0 - deg);
    t += sec(x.r.exponential(std::max(5.0, 240.0 * (1.0 - f))));
  }
  aer_uncorrectable(x, h, t0, port, gp.bdf, "nvidia", true);
  if (x.r.chance(0.5)) {
    x.kern(h, t0 + 300, strf("pcieport %s: DPC: containment event, status:0x1f01 source:0x0000", port.c_str()));
    x.kern(h, t0 + 320, strf("pcieport %s: DPC: unmasked uncorrectable error detected", port.c_str()));
  }
  const Us tx = t0 + ms(x.r.uniform(50, 1000));
  x.xid(h, g, tx, 79, "GPU has fallen off the bus.");
  if (x.r.chance(0.5)) x.kern(h, tx + 30, "NVRM: GPU " + gp.bdf + ": GPU has fallen off the bus.");
  set_truth(x, x.hn(h) + "/pcie/" + port, "pcie", "C03 -> C01, §3.2", "pcie_replay_escalation", t0, {x.hn(h)});
  x.I.truth.also = {gpu_dev(x, h, g)};  // §3.3 rule a: "that port or GPU g (PCIe path)"
  x.I.truth.notes.push_back(strf("%d correctable AER reports over %.0f min before the fatal one", bursts, lead_min));
  x.rank_crash(h, g, tx + ms(x.r.uniform(100, 3000)), "unspecified launch failure");
  rank_gone(x, h, g, tx + sec(3), 1, 0.6);
}

// ---- user_code: one rank's Python exception (§6 C25), the others time out ----
void new_one_rank_exception(Ctx& x, Us t0) {
  const int h = some_job_host(x), g = some_gpu(x);
  // noise on every rank: warnings at start-up
  for (int q : x.J.hosts)
    for (int k = 0; k < x.C.gpg; ++k)
      if (x.r.chance(0.5))
        x.pyerr(q, x.I.t_start + sec(x.r.uniform(1, 30)), k,
                "/usr/local/lib/python3.10/dist-packages/torch/_utils.py:831: UserWarning: TypedStorage is deprecated. "
                "It will be removed in the future and UntypedStorage will be the only storage class.");
  struct Exc {
    const char *file, *fn, *code, *err;
  };
  static const Exc kExc[] = {
      {"/workspace/megatron/data/gpt_dataset.py\", line 312, in __getitem__", "", "    sample = self._build_sample(idx)",
       "ValueError: cannot reshape array of size 0 into shape (4097,)"},
      {"/workspace/train/collate.py\", line 58, in collate_fn", "", "    mask = batch[\"attention_mask\"]",
       "KeyError: 'attention_mask'"},
      {"/workspace/megatron/data/indexed_dataset.py\", line 477, in __getitem__", "", "    bin_buffer = self._bin_buffer_mmap[ptr]",
       "FileNotFoundError: [Errno 2] No such file or directory: '/data/shards/shard-01873.bin'"},
      {"/workspace/megatron/model/transformer.py\", line 611, in forward", "", "    hidden_states = hidden_states + residual",
       "RuntimeError: The size of tensor a (4096) must match the size of tensor b (4097) at non-singleton dimension 1"},
      {"/workspace/train/loop.py\", line 204, in train_step", "", "    assert torch.isfinite(loss), f\"loss is {loss}\"",
       "AssertionError: loss is nan"},
  };
  const Exc& e = kExc[x.r.index(5)];
  x.pyerr(h, t0 - 6, g, "Traceback (most recent call last):");
  x.pyerr(h, t0 - 5, g, "  File \"/workspace/pretrain_gpt.py\", line 231, in <module>");
  x.pyerr(h, t0 - 4, g, "    pretrain(train_valid_test_datasets_provider, model_provider, forward_step)");
  x.pyerr(h, t0 - 2, g, std::string("  File \"") + e.file);
  x.pyerr(h, t0 - 1, g, e.code);
  x.pyerr(h, t0, g, e.err);
  set_truth(x, rank_dev(x, h, g), "user_code", "C25", "python_exception_one_rank", t0, {});
  rank_gone(x, h, g, t0 + ms(x.r.uniform(50, 2000)), 1, 0.3);
}

// ---- thin evidence ----
// The GPU of a truth id as the logs alone name it (interfaces.md §2
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

// One host, the job on it alone (8 ranks, no peers to compare with).
void new_thin_one_host(Ctx& x, Us t0) {
  run_base(x, {"gpu_fallen_off_bus", "hbm_dbe", "gsp_timeout", "gpu_hw_xid", "nvlink_xid74", "nic_health",
               "cuda_oom", "host_oom"},
           t0);
}

// Several hosts' logs and no topology.json (the SRE attached only logs).
void new_thin_no_topology(Ctx& x, Us t0) {
  x.I.no_topology = true;
  run_base(x, {"gpu_fallen_off_bus", "hbm_dbe", "sram_dbe", "gsp_timeout", "gpu_hw_xid", "nic_link_down",
               "host_oom", "mce_panic"},
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
  if (x.r.chance(0.5)) corrected_aer(x, h, t0 - sec(x.r.uniform(1, 300)));  // context the SRE copied along
  if (x.r.chance(0.3)) peermem_invalid_context(x, h, t0 - sec(x.r.uniform(1, 300)));
  const int g = some_gpu(x);
  const SimGpu& gp = x.H(h).gpus[static_cast<size_t>(g)];
  const long long addr = 0x10000000LL + x.r.range(0, 0x7fffffff);
  switch (x.r.index(5)) {
    case 0:  // §2.3 Xid 79 (+119)
      x.xid(h, g, t0, 79, "GPU has fallen off the bus.");
      if (x.r.chance(0.5))
        x.xid(h, g, t0 + sec(x.r.uniform(1, 45)), 119,
              strf("Timeout after 45s of waiting for RPC response from GPU%d GSP! Expected function 76 (GSP_RM_CONTROL) (0x20800a4c 0x4).", g));
      set_truth(x, x.hn(h) + "/gpu" + std::to_string(g), "gpu_fallen_off_bus", "C02", "xid79_fallen_off_bus", t0, {x.hn(h)});
      break;
    case 1:  // §2.3 DBE chain
      x.xid(h, g, t0, 48,
            strf("An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x%llx partition %d, subpartition %d.",
                 addr, x.r.index(32), x.r.index(4)));
      x.xid(h, g, t0 + 80, 63, strf("Row Remapper: New row (0x%016llx) marked for remapping, reset gpu to activate.", addr));
      if (x.r.chance(0.5))
        x.xid(h, g, t0 + ms(x.r.uniform(1, 500)), 94, "Contained: SM (0x1). RST: No, D-RST: No", true);
      else
        x.xid(h, g, t0 + ms(x.r.uniform(1, 500)), 95, "Uncontained: LTC TAG (0x2,0x0). RST: Yes, D-RST: No", true);
      set_truth(x, x.hn(h) + "/gpu" + std::to_string(g), "gpu_memory", "C04", "xid48_dbe", t0, {x.hn(h)});
      break;
    case 2:  // §6 C10 GSP
      x.xid(h, g, t0, 119,
            strf("Timeout after 45s of waiting for RPC response from GPU%d GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).", g), true);
      x.xid(h, g, t0 + sec(x.r.uniform(1, 30)), 154, "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)");
      set_truth(x, x.hn(h) + "/gpu" + std::to_string(g), "gpu_hw", "C10", "xid119_gsp_timeout", t0, {x.hn(h)});
      break;
    case 3: {  // §4.1 mlx5 health
      const SimNic& ni = x.H(h).nics[static_cast<size_t>(g % static_cast<int>(x.H(h).nics.size()))];
      x.kern(h, t0, strf("mlx5_core %s: device's health compromised - reached miss count", ni.bdf.c_str()));
      x.kern(h, t0 + 24, strf("mlx5_core %s: synd 0x7: irisc not responding", ni.bdf.c_str()));
      set_truth(x, x.hn(h) + "/" + ni.name, "nic", "C14", "mlx5_health_compromised", t0, {x.hn(h)});
      break;
    }
    default:  // §6 C25 OOM killer (interfaces.md §6: host_kernel)
      x.kern(h, t0, strf("Out of memory: Killed process %d (python3) total-vm:%lldkB, anon-rss:%lldkB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:%lldkB oom_score_adj:0",
                         x.pid(h, g), 900000000LL + x.r.range(0, 90000000), 200000000LL + x.r.range(0, 90000000), 400000LL + x.r.range(0, 90000)));
      set_truth(x, x.hn(h), "host_kernel", "C25", "oom_killer", t0, {x.hn(h)});
      break;
  }
  (void)gp;
  placeholder_truth(x);
}

}  // namespace

const std::vector<HardDef>& hard_scenario_defs() {
  static const std::vector<HardDef> k = {
      {{{"background.base_rate", "", "mixed", "§7.2, C29", 20.0,
         "peermem invalid context, correctable AER and app Xids on most hosts; a real fault (or "
         "none) elsewhere"},
        hard_background},
       3,
       32},
      {{{"prior_fault.other_host", "", "mixed", "§7.3", 15.0,
         "a DBE, port outage, GSP timeout or AER on another host hours to days before the "
         "incident"},
        hard_prior_fault},
       3,
       32},
      {{{"common_mode.psu", "thermal_power", "host", "§6 C31, §7.3", 12.5,
         "one PSU lost: every GPU of the host power-brakes; the SEL (host or BMC) says why"},
        hard_psu_brake},
       2,
       32},
      {{{"common_mode.leaf", "ib_fabric", "fabric", "§6 C16, §4.3", 12.5,
         "leaf failure: the same NIC index down on 2-64 hosts at once, SM traps from outside the "
         "topology"},
        hard_leaf_rail},
       2,
       64},
      {{{"odd_one_out.nccl_version", "nccl_software", "host", "§6 C29, §5.1", 15.0,
         "one host runs another NCCL build: Mismatched NCCL version, or only its banner differs"},
        hard_odd_nccl},
       3,
       32},
      {{{"silent_host.two_wave", "host_kernel", "host", "§6 C21, §5.3", 15.0,
         "a host dies (pstore panic or silence): neighbours fail at D_ib, the rest at the "
         "watchdog"},
        hard_two_wave},
       3,
       48},
      {{{"snippet.one_host", "", "mixed", "§7.2, §7.3", 10.0,
         "one host's kernel log over days, no job: the worst fault, or nothing (false alarm)"},
        hard_snippet},
       1,
       1,
       false},
  };
  return k;
}


const std::vector<HardDef>& hard_new_scenario_defs() {
  static const std::vector<HardDef> k = {
      {{{"nccl_segv.one_rank", "nccl_software", "rank|host", "peers.md, §1.1, §5.5", 10.0,
         "segfault in libnccl.so.2 on one rank (kernel line and/or faulthandler or glibc backtrace), the "
         "others time out or see the peer gone"},
        new_nccl_segv},
       2,
       32},
      {{{"nccl_config.duplicate_gpu", "nccl_software", "job", "§5.1, §6 C29", 8.0,
         "'Duplicate GPU detected': every local rank on cuda:0, or two local ranks of one host on one GPU "
         "while the others lose them during init"},
        new_duplicate_gpu},
       2,
       32},
      {{{"nvlink.one_of_eight", "nvlink", "gpu", "§6 C07, §2.5 rule 5", 10.0,
         "Xid 74 on 2-4 links of one GPU; the other seven see collateral (Xid 45, NVLink CUDA errors), "
         "sometimes one sympathetic Xid 74"},
        new_nvlink_one},
       2,
       32},
      {{{"nic_fw.health_syndrome", "nic", "nic", "§6 C14, §4.1", 10.0,
         "mlx5 health: miss count + syndrome dump, a bare syndrome, or the BDF-less form; ACCESS_REG noise "
         "on many hosts"},
        new_nic_fw},
       2,
       32},
      {{{"nic_pcie.function_lost", "", "mixed", "§6 C15/C01, §3.1, §3.3", 10.0,
         "AER on the NIC's port + mlx5 PCI channel offline (nic), or the switch losing NIC and GPU "
         "(pcie on the switch)"},
        new_nic_pcie},
       2,
       32},
      {{{"ber_escalation.ib_cable", "ib_fabric", "nic", "§6 C17 -> C13, §4.2", 8.0,
         "IB symbol errors, link_error_recovery and healed flaps climbing for 15-90 min, SM trap 129, then "
         "the port down and the job fails"},
        new_ber_ib},
       2,
       32},
      {{{"ber_escalation.pcie_replay", "pcie", "pcie", "§6 C03 -> C01, §3.2", 8.0,
         "correctable AER (RxErr/BadTLP/Rollover/replay timeout) coming faster on a GPU's port, then "
         "uncorrectable fatal and Xid 79"},
        new_ber_pcie},
       2,
       32},
      {{{"user_code.one_rank_exception", "user_code", "rank", "§6 C25, §5.5", 10.0,
         "a Python traceback on one rank (data, shape, assertion), warnings on all; the others time out"},
        new_one_rank_exception},
       2,
       32},
      {{{"thin.one_host", "", "mixed", "§7.3", 8.0,
         "a job on one host only: a GPU, NIC, OOM or host fault with no peers to compare"},
        new_thin_one_host},
       1,
       1},
      {{{"thin.paste", "", "mixed", "§7.3", 8.0,
         "a short paste of one host's kernel lines (2-8 lines), no topology, no job"},
        new_thin_paste},
       1,
       1,
       false},
      {{{"thin.no_topology", "", "mixed", "§7.3, interfaces.md §2 placeholders", 10.0,
         "several hosts' logs without topology.json: the truth names a GPU by its BDF"},
        new_thin_no_topology},
       2,
       8},
  };
  return k;
}

}  // namespace reflex::sim
