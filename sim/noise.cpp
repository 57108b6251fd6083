// Noise (benign and sympathetic lines), latent faults (real, but not the
// cause) and per-host background volume. None of it names the root; some of it looks like it.
#include <algorithm>

#include "sim/scenarios.h"

namespace reflex::sim {

namespace {

Us sec(double v) {
  return static_cast<Us>(v * 1e6);
}

void corr_aer_burst(Ctx& x, int h, Us t, const std::string& reporter, const std::string& src,
                    int n) {
  const bool nk = x.new_kernel();
  for (int i = 0; i < n; ++i) {
    Us ti = t + static_cast<Us>(i) * x.r.range(1000, 400000);
    if (nk)
      x.kern(h, ti,
             strf("pcieport %s: AER: Correctable error message received from %s", reporter.c_str(),
                  src.c_str()));
    else
      x.kern(h, ti,
             strf("pcieport %s: AER: Corrected error received: %s", reporter.c_str(), src.c_str()));
    x.kern(h, ti + 3,
           strf("pcieport %s: %sPCIe Bus Error: severity=%s, type=Physical Layer, (Receiver ID)",
                src.c_str(), nk ? "AER: " : "", nk ? "Correctable" : "Corrected"));
    x.kern(h, ti + 5,
           strf("pcieport %s: %s  device [1000:c030] error status/mask=00000001/0000e000",
                src.c_str(), nk ? "AER: " : ""));
    x.kern(h, ti + 7,
           strf("pcieport %s: %s   [ 0] RxErr                  (First)", src.c_str(),
                nk ? "AER: " : ""));
  }
  if (nk && n > 3)
    x.kern(h, t + sec(2),
           strf("pcieport %s: AER: %d Correctable errors not logged (rate limited)", src.c_str(),
                static_cast<int>(x.r.range(10, 4000))));  // [invented] wording
}

void link_flap(Ctx& x, int h, int n, Us t) {
  const SimNic& ni = x.H(h).nics[static_cast<size_t>(n)];
  const Us down = sec(x.r.uniform(0.1, 5));  // shorter than D_ib: no job impact
  x.kern(h, t, strf("mlx5_core %s %s: Link down", ni.bdf.c_str(), ni.netdev.c_str()));
  x.kern(h, t + down, strf("mlx5_core %s %s: Link up", ni.bdf.c_str(), ni.netdev.c_str()));
  if (x.in_job(h) && t > x.I.t_start) {
    x.nccl(h, t + x.r.range(1000, 500000), n, "WARN",
           strf("NET/IB : %s:1 Got async event : port error", ni.name.c_str()));
    x.nccl(h, t + down + x.r.range(1000, 500000), n, "WARN",
           strf("NET/IB : %s:1 Got async event : port active", ni.name.c_str()));
  }
  const SimLeaf& leaf = x.C.leaves[static_cast<size_t>(ni.leaf)];
  x.sm(t + x.r.range(1000, 300000),
       strf("log_trap_info: Received Generic Notice type:1 num:128 (Link state change) Producer:2 "
            "(Switch) from LID:%d TID:0x%016llx",
            leaf.lid, static_cast<unsigned long long>(x.r.range(1, 1 << 30))));
  x.sm(t + down + x.r.range(1000, 300000),
       strf("log_trap_info: Received Generic Notice type:1 num:128 (Link state change) Producer:2 "
            "(Switch) from LID:%d TID:0x%016llx",
            leaf.lid, static_cast<unsigned long long>(x.r.range(1, 1 << 30))));
}

int other_host(Ctx& x, int avoid) {
  const int H = x.nhosts();
  if (H <= 1) return 0;
  int h = x.r.index(static_cast<size_t>(H));
  if (h == avoid) h = (h + 1) % H;
  return h;
}

// One background kernel line of host h at t.
void kernel_chatter(Ctx& x, int h, Us t) {
  switch (x.r.index(10)) {
    case 0:
      x.kern(h, t,
             strf("audit: type=1400 audit(%lld.%03d:%d): apparmor=\"STATUS\" "
                  "operation=\"profile_replace\" info=\"same as current profile, skipping\" "
                  "profile=\"unconfined\" name=\"/usr/bin/man\" pid=%d comm=\"apparmor_parser\"",
                  static_cast<long long>(t / kSec), x.r.index(1000), 100 + x.r.index(900),
                  1000 + x.r.index(90000)));
      break;
    case 1:
      x.kern(h, t,
             strf("IPv6: ADDRCONF(NETDEV_CHANGE): veth%s: link becomes ready", x.r.hex(7).c_str()));
      break;
    case 2:
      x.kern(h, t,
             strf("perf: interrupt took too long (%d > %d), lowering "
                  "kernel.perf_event_max_sample_rate to %d",
                  2500 + x.r.index(3000), 2500, 30000 + x.r.index(50000)));
      break;
    case 3:
      x.kern(h, t,
             strf("docker0: port %d(veth%s) entered forwarding state", 1 + x.r.index(8),
                  x.r.hex(7).c_str()));
      break;
    case 4:
      x.kern(h, t,
             strf("TCP: request_sock_TCP: Possible SYN flooding on port %d. Sending cookies.  "
                  "Check SNMP counters.",
                  29500 + x.r.index(3)));
      break;
    case 5:
      x.kern(h, t, strf("nvidia-nvswitch%d: open (major=%d)", x.r.index(4), 508 + x.r.index(4)));
      break;
    case 6:
      x.kern(h, t, "EXT4-fs (nvme0n1p2): re-mounted. Opts: errors=remount-ro. Quota mode: none.");
      break;
    case 7:
      x.kern(h, t,
             strf("cgroup: fork rejected by pids controller in "
                  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice",
                  x.r.hex(8).c_str()));
      break;
    case 8:
      x.kern(h, t,
             strf("IPVS: rr: TCP 10.96.%d.%d:443 - no destination available", x.r.index(255),
                  x.r.index(255)));
      break;
    default:
      x.kern(h, t,
             strf("usb 1-1.%d: new high-speed USB device number %d using xhci_hcd",
                  1 + x.r.index(4), 2 + x.r.index(40)));
      break;
  }
}

// One background application line (NCCL, PyTorch, the data loader) of host h at t.
void app_chatter(Ctx& x, int h, Us t) {
  const int g = x.r.index(static_cast<size_t>(x.C.gpg));
  const int rk = x.rank(h, g);
  switch (x.r.index(6)) {
    case 0:
      x.nccl(h, t, g, "INFO",
             strf("Channel %02d/1 : %d[%d] -> %d[%d] via P2P/CUMEM/read", x.r.index(32), rk, g,
                  rk - g + (g + 1) % x.C.gpg, (g + 1) % x.C.gpg));
      break;
    case 1:
      x.nccl(h, t, g, "INFO",
             "32 coll channels, 32 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p "
             "channels per peer");
      break;
    case 2:
      x.nccl(h, t, g, "INFO", strf("NVLS multicast support is available on dev %d", g));
      break;
    case 3:
      x.pyerr(h, t, g,
              "/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py:617: "
              "UserWarning: This DataLoader will create 16 worker processes in total. Our "
              "suggested max number of worker in current system is 12, which is smaller than "
              "what this DataLoader is going to create.");
      break;
    case 4:
      x.line(h, t, kApp,
             strf("[rank%d]:[W\x01 ProcessGroupNCCL.cpp:4561] %s using GPU %d to perform barrier "
                  "as devices used by this process are currently unknown. This can potentially "
                  "cause a hang if this rank to GPU mapping is incorrect.",
                  rk, x.pg(rk).c_str(), g),
             g, true);
      break;
    default:
      x.pyerr(h, t, g,
              strf("data loader: fetched shard %05d of /data/tokens (%d samples)", x.r.index(99999),
                   4096 + x.r.index(8192)));
      break;  // [invented] app chatter
  }
}

}  // namespace

void add_incident_noise(Ctx& x, int root_host) {
  const Us a = x.I.t_start, b = x.I.t_end;
  const int H = x.nhosts();
  const int scale = std::min(40, 1 + H / 64);
  auto reps = [&] { return 1 + x.r.index(static_cast<size_t>(scale)); };
  auto anytime = [&] { return a + static_cast<Us>(x.r.uniform() * static_cast<double>(b - a)); };
  // Benign Xid 13 (+43): another tenant / a debug run, hours before or off the job.
  if (x.r.chance(0.35))
    for (int i = 0, n = reps(); i < n; ++i) {
      int h = x.r.index(static_cast<size_t>(H)), g = x.r.index(static_cast<size_t>(x.C.gpg));
      Us t = x.in_job(h) ? a - sec(x.r.uniform(1800, 6 * 3600)) : anytime();
      x.xid(h, g, t, 13,
            strf("Graphics SM Warp Exception on (GPC %d, TPC %d, SM 0): Out Of Range Address",
                 x.r.index(8), x.r.index(9)),
            true);
      if (x.r.chance(0.5)) x.xid(h, g, t + 40000, 43, "Ch 00000020, engmask 00000101", true);
    }
  // Xid 63 alone (row remap recorded, no DBE): precursor, not a root.
  if (x.r.chance(0.2)) {
    int h = other_host(x, root_host);
    x.xid(h, x.r.index(static_cast<size_t>(x.C.gpg)), a - sec(x.r.uniform(600, 5 * 3600)), 63,
          strf("Row Remapper: New row (0x%016llx) marked for remapping, reset gpu to activate.",
               0x10000000LL + x.r.range(0, 0x7fffffff)));
  }
  // Correctable AER bursts on a few ports.
  if (x.r.chance(0.4))
    for (int i = 0, n = reps(); i < n; ++i) {
      int h = x.r.index(static_cast<size_t>(H));
      const SimSwitch& sw = x.H(h).sws[static_cast<size_t>(x.r.index(x.H(h).sws.size()))];
      corr_aer_burst(x, h, anytime(), sw.root_port, sw.bdf, 2 + x.r.index(20));
    }
  // Self-healing link flaps (shorter than D_ib).
  if (x.r.chance(0.3))
    for (int i = 0, n = reps(); i < n; ++i) {
      int h = x.r.index(static_cast<size_t>(H));
      link_flap(x, h, x.r.index(x.H(h).nics.size()), anytime());
    }
  // NFS "not responding" -> "OK" within seconds.
  if (x.r.chance(0.3)) {
    const SimStorage& st = x.C.storage[static_cast<size_t>(x.r.index(x.C.storage.size()))];
    Us t = anytime();
    for (int i = 0, n = reps(); i < n; ++i) {
      int h = x.r.index(static_cast<size_t>(H));
      Us ti = t + x.r.range(0, sec(2));
      x.kern(h, ti, strf("nfs: server %s not responding, still trying", st.ip.c_str()));
      x.kern(h, ti + sec(x.r.uniform(1, 20)), strf("nfs: server %s OK", st.ip.c_str()));
    }
  }
  // Hung-task warning during a long checkpoint write, long before the incident.
  if (x.r.chance(0.15)) {
    int h = x.r.index(static_cast<size_t>(H));
    Us t = a - sec(x.r.uniform(600, 3 * 3600));
    x.kern(h, t, strf("INFO: task python3:%d blocked for more than 122 seconds.", x.pid(h, 0)));
    x.kern(h, t + 10, "      Not tainted 5.15.0-105-generic #115-Ubuntu");
    x.kern(h, t + 20,
           "\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.");
  }
  // Restricted register access: known mlx5 noise (gpud#1164).
  if (x.r.chance(0.3))
    for (int i = 0, n = reps(); i < n; ++i) {
      int h = x.r.index(static_cast<size_t>(H));
      for (int k = 0; k < 1 + x.r.index(5); ++k)
        x.kern(h, anytime(),
               strf("mlx5_core %s: mlx5_cmd_out_err:838:(pid %d): ACCESS_REG(0x805) op_mod(0x1) "
                    "failed, status bad resource(0x5), syndrome (0x305684), err(-22)",
                    x.H(h).nics[static_cast<size_t>(x.r.index(x.H(h).nics.size()))].bdf.c_str(),
                    1000 + x.r.index(2000000)));
    }
  // Transceiver events during maintenance.
  if (x.r.chance(0.1)) {
    int h = x.r.index(static_cast<size_t>(H));
    const SimNic& ni = x.H(h).nics[static_cast<size_t>(x.r.index(x.H(h).nics.size()))];
    Us t = a - sec(x.r.uniform(3600, 8 * 3600));
    x.kern(h, t,
           strf("mlx5_core %s: Port module event: module %d, Cable plugged", ni.bdf.c_str(),
                ni.index));
    if (x.r.chance(0.5))
      x.kern(
          h, anytime(),
          strf("mlx5_core %s: Port module event[error]: module %d, Cable error, High Temperature",
               ni.bdf.c_str(), ni.index));
  }
  if (x.r.chance(0.05)) {
    int h = x.r.index(static_cast<size_t>(H));
    x.kern(h, a - sec(x.r.uniform(3600, 8 * 3600)),
           strf("mlx5_core %s: mlx5_pcie_event:299:(pid %d): Detected insufficient power on the "
                "PCIe slot (27W).",
                x.H(h).nics[0].bdf.c_str(), 100 + x.r.index(300000)));
  }
  // NCCL startup warnings.
  if (x.r.chance(0.3) && !x.J.hosts.empty())
    for (int i = 0, n = reps(); i < n; ++i) {
      int h = x.J.hosts[static_cast<size_t>(x.r.index(x.J.hosts.size()))];
      int g = x.r.index(static_cast<size_t>(x.C.gpg));
      x.nccl(h, a + sec(x.r.uniform(0, 3)), g, "WARN",
             strf("NET/IB : %s:1 Got async event : GID table change",
                  x.H(h).nics[static_cast<size_t>(g)].name.c_str()));
    }
  // Thermal spikes of seconds on some GPU (only visible where CSVs were collected).
  if (x.r.chance(0.5))
    for (int i = 0, n = reps(); i < n; ++i) {
      int h = x.r.index(static_cast<size_t>(H));
      Us t = anytime();
      x.I.throttles.push_back(
          {h, x.r.index(static_cast<size_t>(x.C.gpg)), t, t + sec(x.r.uniform(3, 15)), 0x20u});
    }
  // Xid 74 / SXid non-fatal background on a healthy host: link-level retry, no impact.
  if (x.r.chance(0.08)) {
    int h = other_host(x, root_host), k = x.r.index(4);
    x.kern(h, anytime(),
           strf("nvidia-nvswitch%d: SXid (PCI:%s): 22013, Non-fatal, Link %02d Minion Link DLREQ "
                "interrupt",
                k, x.H(h).nvsw_bdf[static_cast<size_t>(k)].c_str(), x.r.index(64)));
  }
}

void add_latent_faults(Ctx& x, int root_host) {
  const double u = x.r.uniform();
  const int n = u < 0.35 ? 0 : (u < 0.7 ? 1 : (u < 0.9 ? 2 : 3));
  const Us a = x.I.t_start, b = x.I.t_end;
  for (int i = 0; i < n; ++i) {
    const int h = other_host(x, root_host);
    const int kind = x.r.index(4);
    if (kind == 0) {  // flapping / degrading optic on another port: self-healing flaps
      const int nic = x.r.index(x.H(h).nics.size());
      for (int k = 0; k < 1 + x.r.index(3); ++k)
        link_flap(x, h, nic, a + static_cast<Us>(x.r.uniform() * static_cast<double>(b - a)));
      x.I.truth.latent.push_back(
          {"flapping_link", x.hn(h) + "/" + x.H(h).nics[static_cast<size_t>(nic)].name});
    } else if (kind == 1) {  // a GPU that throttles now and then
      const int g = x.r.index(static_cast<size_t>(x.C.gpg));
      for (int k = 0; k < 2 + x.r.index(4); ++k) {
        Us t = a + static_cast<Us>(x.r.uniform() * static_cast<double>(b - a));
        x.I.throttles.push_back({h, g, t, t + sec(x.r.uniform(10, 60)), 0x20u});
      }
      x.I.want_smi[static_cast<size_t>(h)] = 1;
      x.I.truth.latent.push_back({"intermittent_throttle", x.hn(h) + "/gpu" + std::to_string(g)});
    } else if (kind == 2) {  // dying HBM: remaps recorded long before, no DBE yet
      const int g = x.r.index(static_cast<size_t>(x.C.gpg));
      for (int k = 0; k < 1 + x.r.index(2); ++k)
        x.xid(h, g, a - sec(x.r.uniform(3600, 20 * 3600)), 63,
              strf("Row Remapper: New row (0x%016llx) marked for remapping, reset gpu to activate.",
                   0x10000000LL + x.r.range(0, 0x7fffffff)));
      x.I.truth.latent.push_back({"hbm_remaps", x.hn(h) + "/gpu" + std::to_string(g)});
    } else {  // marginal PCIe link: recurring correctable storms
      const SimSwitch& sw = x.H(h).sws[static_cast<size_t>(x.r.index(x.H(h).sws.size()))];
      for (int k = 0; k < 2 + x.r.index(3); ++k)
        corr_aer_burst(x, h, a + static_cast<Us>(x.r.uniform() * static_cast<double>(b - a)),
                       sw.root_port, sw.bdf, 3 + x.r.index(30));
      x.I.truth.latent.push_back({"pcie_correctable_storm", x.hn(h) + "/pcie/" + sw.bdf});
    }
  }
}

void add_host_background(Ctx& x, int h, int lines) {
  const SimHost& X = x.H(h);
  const bool job = x.in_job(h);
  const Us a = x.I.t_start - sec(600), b = x.I.t_end;
  if (job) x.nccl_startup(h, x.I.t_start + sec(x.r.uniform(5, 40)));
  for (int i = 0; i < lines; ++i) {
    const Us t = a + static_cast<Us>(x.r.uniform() * static_cast<double>(b - a));
    const bool app = job && x.r.chance(0.5);
    if (!app)
      kernel_chatter(x, h, t);
    else
      app_chatter(x, h, t);
  }
  // nvidia-smi --query-gpu CSV samples (thermal scenario, latent throttles, or collected anyway).
  if (job && (x.I.smi_all || x.I.want_smi[static_cast<size_t>(h)])) {
    const Us from = std::max(x.I.t_start, x.I.t_end - sec(1800));
    x.line(h, from - 1, kSmi,
           "timestamp, index, pci.bus_id, temperature.gpu, clocks.sm [MHz], "
           "clocks_event_reasons.active, power.draw [W]");
    for (Us t = from; t < x.I.t_end; t += sec(10))
      for (int g = 0; g < x.C.gpg; ++g) {
        unsigned reason = 0;
        for (const auto& th : x.I.throttles)
          if (th.h == h && th.g == g && t >= th.from && t < th.to) reason |= th.reason;
        const bool hot = reason & 0x60u;
        const int temp = hot ? 88 + x.r.index(8) : 55 + x.r.index(20);
        const int clk =
            reason ? (reason & 0x80u ? 1100 : 1250) + x.r.index(200) : 1980 - x.r.index(3) * 15;
        const double pw = reason & 0x80u ? 350 + x.r.uniform(0, 50) : 550 + x.r.uniform(0, 150);
        std::string bus = "0000" + X.gpus[static_cast<size_t>(g)].bdf;
        std::transform(bus.begin(), bus.end(), bus.begin(), ::toupper);
        x.line(
            h, t + g, kSmi,
            strf(", %d, %s, %d, %d MHz, 0x%016x, %.2f W", g, bus.c_str(), temp, clk, reason, pw));
      }
  }
  // sysfs counter dumps (steady low background) where an SRE collected them.
  if (job && (x.I.counters_all || x.I.want_counters[static_cast<size_t>(h)])) {
    const Us from = std::max(x.I.t_start, x.I.t_end - sec(900));
    for (int n = 0; n < static_cast<int>(X.nics.size()); ++n) {
      if (std::find(x.I.counters_done.begin(), x.I.counters_done.end(), std::make_pair(h, n)) !=
          x.I.counters_done.end())
        continue;
      long long sym = x.r.range(0, 20);
      for (Us t = from; t < x.I.t_end; t += sec(60)) {
        if (x.r.chance(0.05)) sym += x.r.range(1, 3);
        x.line(h, t, kCounters,
               strf("/sys/class/infiniband/%s/ports/1/counters/symbol_error:%lld",
                    X.nics[static_cast<size_t>(n)].name.c_str(), sym));
        x.line(h, t + 5, kCounters,
               strf("/sys/class/infiniband/%s/ports/1/counters/link_downed:0",
                    X.nics[static_cast<size_t>(n)].name.c_str()));
      }
    }
  }
}

}  // namespace reflex::sim
