// Incident templates of the network: a NIC's port, a NIC's firmware or PCIe
// function, a leaf switch, a degrading optic.
#include <algorithm>

#include "sim/templates.h"

namespace reflex::sim {

namespace {

using SP = Ctx::Prop;

void sysfs_counter(Ctx& x, int h, Us t, int nic, const char* counter, long long v,
                   bool hw = false) {
  x.line(h, t, kCounters,
         strf("/sys/class/infiniband/%s/ports/1/%s/%s:%lld",
              x.H(h).nics[static_cast<size_t>(nic)].name.c_str(), hw ? "hw_counters" : "counters",
              counter, v));
}

// A counter sampled every 60 s over the capture window, stepping at t_change.
void counter_series(Ctx& x, int h, int nic, const char* counter, Us t_change, long long before,
                    long long after) {
  x.I.counters_done.push_back({h, nic});
  const Us from = std::max(x.I.t_start, x.I.t_end - sec(900));
  for (Us t = from; t < x.I.t_end; t += sec(60))
    sysfs_counter(x, h, t, nic, counter, t >= t_change ? after : before);
}

}  // namespace

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
    x.kern(h, t0,
           strf("mlx5_core %s: device's health compromised - reached miss count", ni.bdf.c_str()));
    for (int i = 0; i < 5; ++i)
      x.kern(h, t0 + 10 + i,
             strf("mlx5_core %s: assert_var[%d] 0x%s", ni.bdf.c_str(), i, x.r.hex(8).c_str()));
    x.kern(h, t0 + 20,
           strf("mlx5_core %s: assert_exit_ptr 0x%s", ni.bdf.c_str(), x.r.hex(8).c_str()));
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
    if (x.r.chance(0.5))
      aer_fatal(x, h, t0 - ms(x.r.uniform(1, 20)), x.H(h).sws[static_cast<size_t>(ni.sw)].bdf,
                ni.bdf, "mlx5_core", true);
    x.kern(h, t0,
           strf("mlx5_core %s: mlx5_pci_err_detected Device state = 1 health sensors: 1 "
                "pci_status: 1. Enter, pci channel state = 2",
                ni.bdf.c_str()));
    x.kern(h, t0 + ms(x.r.uniform(100, 2000)),
           strf("mlx5_core %s: mlx5_error_sw_reset:233:(pid %d): PCI channel offline, stop waiting "
                "for NIC IFC",
                ni.bdf.c_str(), 900 + x.r.index(4000)));
  } else {
    ev = "mlx5_cmd_timeout";
    x.kern(h, t0,
           strf("mlx5_core %s: wait_func:1195:(pid %d): ENABLE_HCA(0x104) timeout. Will cause a "
                "leak of a command resource",
                ni.bdf.c_str(), 1000 + x.r.index(2000000)));
  }
  Us td = t0 + sec(x.r.uniform(0.5, 8));
  x.nccl(h, td, n, "WARN",
         strf("NET/IB : %s:1 Got async event : %s", ni.name.c_str(),
              x.r.chance(0.6) ? "local catastrophic error" : "port error"));
  if (x.r.chance(0.5))
    x.kern(h, td + ms(x.r.uniform(10, 500)),
           strf("mlx5_core %s %s: Link down", ni.bdf.c_str(), ni.netdev.c_str()));
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
  set_truth(x, "fabric/" + leaf.name, "ib_fabric", "C16", "leaf_failure", t0,
            {"fabric/" + leaf.name});
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
    opensm_trap(x, t0 + sec(x.r.uniform(30, 600)), 2, 129, "Local Link Integrity threshold reached",
                leaf.lid, x.H(h).nics[static_cast<size_t>(n)].leaf_port);
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

}  // namespace reflex::sim
