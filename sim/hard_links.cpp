// Hard families of a link failing: a NIC's PCIe function lost (or the switch
// above NIC and GPU), an InfiniBand cable's error rate climbing until the port
// goes down, a GPU's PCIe replays escalating to a fatal error.
#include <algorithm>
#include <string>

#include "sim/hard.h"

namespace reflex::sim {

namespace {

// §3.1 uncorrectable AER, old and new kernel strings; `bits` is one of the
// §3.2 uncorrectable bits ("[14] CmpltTO" / "[14] Completion Timeout").
void aer_uncorrectable(Ctx& x, int h, Us t, const std::string& reporter, const std::string& source,
                       const char* driver, bool fatal) {
  const bool nk = x.new_kernel();
  static const char* kNew[] = {
      "[ 5] SDES                   (First)", "[14] CmpltTO                (First)",
      "[18] MalfTLP                (First)", "[ 4] DLP                    (First)"};
  static const char* kOld[] = {
      "[ 5] Surprise Down Error    (First)", "[14] Completion Timeout     (First)",
      "[18] Malformed TLP          (First)", "[ 4] Data Link Protocol     (First)"};
  static const char* kStatus[] = {"00000020", "00004000", "00040000", "00000010"};
  const int b = fatal ? (x.r.chance(0.5) ? 0 : (x.r.chance(0.5) ? 2 : 3)) : 1;
  const char* sev = fatal ? (nk ? "Uncorrectable (Fatal)" : "Uncorrected (Fatal)")
                          : (nk ? "Uncorrectable (Non-Fatal)" : "Uncorrected (Non-Fatal)");
  if (nk)
    x.kern(h, t,
           strf("pcieport %s: AER: %s error message received from %s", reporter.c_str(), sev,
                source.c_str()));
  else
    x.kern(h, t,
           strf("pcieport %s: AER: %s error received: %s", reporter.c_str(), sev, source.c_str()));
  x.kern(h, t + 5,
         strf("%s %s: %sPCIe Bus Error: severity=%s, type=%s, (%s)", driver, source.c_str(),
              nk ? "AER: " : "", sev, b == 3 ? "Data Link Layer" : "Transaction Layer",
              b == 1 ? "Requester ID" : "Receiver ID"));
  x.kern(h, t + 8,
         strf("%s %s: %s  device [%s] error status/mask=%s/00000000", driver, source.c_str(),
              nk ? "AER: " : "", std::string(driver) == "mlx5_core" ? "15b3:1021" : "10de:2330",
              kStatus[b]));
  x.kern(h, t + 10,
         strf("%s %s: %s  %s", driver, source.c_str(), nk ? "AER: " : "", nk ? kNew[b] : kOld[b]));
}

// One sysfs InfiniBand counter sample of NIC n.
void counter(Ctx& x, int h, Us t, int n, const char* name, long long v, bool hw) {
  x.line(h, t, kCounters,
         strf("/sys/class/infiniband/%s/ports/1/%s/%s:%lld",
              x.H(h).nics[static_cast<size_t>(n)].name.c_str(), hw ? "hw_counters" : "counters",
              name, v));
}

}  // namespace

// ---- nic_pcie: a NIC's PCIe function lost (§3.1 device-driver side, §4.1,
// §6 C15); when the GPU behind the same switch fails too, the root is the
// switch (C15 discriminator -> C01, §3.3 rule b) ----
void new_nic_pcie(Ctx& x, Us t0) {
  const int h = job_host(x), n = any_gpu(x);
  const SimHost& X = x.H(h);
  const SimNic& ni = X.nics[static_cast<size_t>(n)];
  const SimSwitch& sw = X.sws[static_cast<size_t>(ni.sw)];
  const bool shared = x.r.chance(0.35);
  auto nic_lost = [&](const SimNic& nn, Us t) {
    if (x.r.chance(0.75))
      x.kern(h, t,
             strf("mlx5_core %s: mlx5_pci_err_detected Device state = 1 health sensors: 1 "
                  "pci_status: 1. Enter, pci channel state = 2",
                  nn.bdf.c_str()));
    x.kern(h, t + ms(x.r.uniform(100, 2000)),
           strf("mlx5_core %s: mlx5_error_sw_reset:233:(pid %d): PCI channel offline, stop waiting "
                "for NIC IFC",
                nn.bdf.c_str(), 900 + x.r.index(4000)));
    x.nccl(h, t + ms(x.r.uniform(10, 900)), nn.index, "WARN",
           strf("NET/IB : %s:1 Got async event : local catastrophic error", nn.name.c_str()));
  };
  if (!shared) {
    const std::string reporter = x.r.chance(0.6) ? sw.bdf : sw.root_port;
    aer_uncorrectable(x, h, t0, reporter, ni.bdf, "mlx5_core", x.r.chance(0.6));
    nic_lost(ni, t0 + ms(x.r.uniform(1, 30)));
    if (x.r.chance(0.5))
      x.kern(h, t0 + ms(x.r.uniform(500, 3000)),
             strf("pcieport %s: AER: device recovery failed", reporter.c_str()));
    set_truth(x, nic_id(x, h, n), "nic", "C15, §3.1", "mlx5_pci_channel_offline", t0, {x.hn(h)});
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
    x.kern(h, t0 + 300,
           strf("pcieport %s: DPC: containment event, status:0x1f01 source:0x0000",
                sw.root_port.c_str()));
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
    if (x.r.chance(0.5))
      x.kern(h, tx + 30, "NVRM: GPU " + gp.bdf + ": GPU has fallen off the bus.");
  }
  set_truth(x, x.hn(h) + "/pcie/" + sw.bdf, "pcie", "C15 -> C01, §3.3",
            "pcie_switch_nic_and_gpu_lost", t0, {x.hn(h)});
  x.I.truth.notes.push_back("NIC and GPU under one switch lost; the NIC reports first");
  if (g0 < 0) g0 = any_gpu(x);
  x.rank_crash(h, g0, t0 + ms(x.r.uniform(3100, 5000)), "unspecified launch failure");
  rank_gone(x, h, g0, t0 + sec(5), 1, 0.8);
}

// ---- ber_escalation: a link degrading until it fails ----

// §6 C17 then C13, §4.2 thresholds: symbol errors climb past the BER spec,
// link_error_recovery and link_downed step (self-healing flaps, SM trap 129),
// then the port goes down for longer than D_ib and the job fails.
void new_ber_ib(Ctx& x, Us t0) {
  const int h = job_host(x), n = any_gpu(x);
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
      sym += x.r.range(50, 400) +
             static_cast<long long>(f * static_cast<double>(x.r.range(500, 6000)));
      ler += x.r.range(0, 1 + static_cast<long long>(f * 6));
      lat += x.r.range(0, 20 + static_cast<long long>(f * 80));
      if (t < t0 && f > 0.5 && flaps < 2 && x.r.chance(0.15)) {  // a flap that heals (< D_ib)
        ++flaps;
        ++down;
        x.kern(h, t - sec(20),
               strf("mlx5_core %s %s: Link down", ni.bdf.c_str(), ni.netdev.c_str()));
        x.kern(h, t - sec(20) + ms(x.r.uniform(200, 4000)),
               strf("mlx5_core %s %s: Link up", ni.bdf.c_str(), ni.netdev.c_str()));
        opensm_trap(x, t - sec(20) + ms(x.r.uniform(10, 800)), 1, 128, "Link state change",
                    leaf.lid, 0);
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
  set_truth(x, nic_id(x, h, n), "ib_fabric", "C17 -> C13, §4.2", "ib_ber_escalation", t0,
            {x.hn(h)});
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
  const int h = job_host(x), g = any_gpu(x);
  const SimGpu& gp = x.H(h).gpus[static_cast<size_t>(g)];
  const std::string port = x.H(h).sws[static_cast<size_t>(gp.sw)].bdf;
  const bool nk = x.new_kernel();
  static const char* kNew[] = {
      "[ 0] RxErr                  (First)", "[ 6] BadTLP                 (First)",
      "[ 7] BadDLLP                (First)", "[ 8] Rollover               (First)",
      "[12] Timeout                (First)"};
  static const char* kOld[] = {
      "[ 0] Receiver Error         (First)", "[ 6] Bad TLP                (First)",
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
      x.kern(h, t,
             strf("pcieport %s: AER: Correctable error message received from %s", port.c_str(),
                  gp.bdf.c_str()));
    else
      x.kern(h, t,
             strf("pcieport %s: AER: Corrected error received: %s", port.c_str(), gp.bdf.c_str()));
    x.kern(h, t + 3,
           strf("nvidia %s: %sPCIe Bus Error: severity=%s, type=%s, (%s)", gp.bdf.c_str(),
                nk ? "AER: " : "", nk ? "Correctable" : "Corrected",
                b == 0 ? "Physical Layer" : "Data Link Layer",
                b == 0 ? "Receiver ID" : "Transmitter ID"));
    x.kern(h, t + 5,
           strf("nvidia %s: %s  device [10de:2330] error status/mask=%s/00002000", gp.bdf.c_str(),
                nk ? "AER: " : "", kStat[b]));
    x.kern(h, t + 7,
           strf("nvidia %s: %s  %s", gp.bdf.c_str(), nk ? "AER: " : "", nk ? kNew[b] : kOld[b]));
    ++bursts;
    // bursts come closer together as the link degrades
    const double f = static_cast<double>(t - deg) / static_cast<double>(t0 - deg);
    t += sec(x.r.exponential(std::max(5.0, 240.0 * (1.0 - f))));
  }
  aer_uncorrectable(x, h, t0, port, gp.bdf, "nvidia", true);
  if (x.r.chance(0.5)) {
    x.kern(h, t0 + 300,
           strf("pcieport %s: DPC: containment event, status:0x1f01 source:0x0000", port.c_str()));
    x.kern(h, t0 + 320,
           strf("pcieport %s: DPC: unmasked uncorrectable error detected", port.c_str()));
  }
  const Us tx = t0 + ms(x.r.uniform(50, 1000));
  x.xid(h, g, tx, 79, "GPU has fallen off the bus.");
  if (x.r.chance(0.5)) x.kern(h, tx + 30, "NVRM: GPU " + gp.bdf + ": GPU has fallen off the bus.");
  set_truth(x, x.hn(h) + "/pcie/" + port, "pcie", "C03 -> C01, §3.2", "pcie_replay_escalation", t0,
            {x.hn(h)});
  x.I.truth.also = {gpu_id(x, h, g)};  // §3.3 rule a: "that port or GPU g (PCIe path)"
  x.I.truth.notes.push_back(
      strf("%d correctable AER reports over %.0f min before the fatal one", bursts, lead_min));
  x.rank_crash(h, g, tx + ms(x.r.uniform(100, 3000)), "unspecified launch failure");
  rank_gone(x, h, g, tx + sec(3), 1, 0.6);
}

}  // namespace reflex::sim
