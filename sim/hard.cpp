// Hard mode (`reflex-sim --hard`): the cases where evidence must be judged
// against its peers rather than read line by line. This file holds the two
// family tables and what several families share: a base rate of benign lines,
// a standard template run under them, a rank's exit. The families are written
// from the published log formats and failure chains (the chain ids of the
// table's source column, as for the standard scenarios) and from the fixtures
// of peer tools (gpud's peermem and libnccl segfault fixtures, NVSentinel's
// BDF-less mlx5 syndrome, the ACCESS_REG noise gpud ignores); never from kb/
// (a generator that reads the rules would test them against themselves).
// Families, one scenario each ("family.variant"):
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
// the floors of tests/accuracy/sim_hard_floors.json stay as they are:
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
#include <string>
#include <vector>

#include "sim/hard.h"

namespace reflex::sim {

namespace {

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

}  // namespace

const ScenarioDef& base_def(const std::string& name) {
  for (const auto& d : scenario_defs())
    if (d.info.name == name) return d;
  return scenario_defs().front();  // unreachable: the names below are the table's
}

// Runs one of the standard templates and returns the host of its root (-1 for
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

// ---- benign lines at a base rate (C29) ----

// nvidia-peermem's invalid context, as gpud's peermem fixture holds it.
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

// The default set: what `--hard` draws and its floors hold.
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
// The families added later (`--families new`).
const std::vector<HardDef>& hard_new_scenario_defs() {
  static const std::vector<HardDef> k = {
      {{{"nccl_segv.one_rank", "nccl_software", "rank|host", "peers.md, §1.1, §5.5", 10.0,
         "segfault in libnccl.so.2 on one rank (kernel line and/or faulthandler or glibc "
         "backtrace), the "
         "others time out or see the peer gone"},
        new_nccl_segv},
       2,
       32},
      {{{"nccl_config.duplicate_gpu", "nccl_software", "job", "§5.1, §6 C29", 8.0,
         "'Duplicate GPU detected': every local rank on cuda:0, or two local ranks of one host on "
         "one GPU "
         "while the others lose them during init"},
        new_duplicate_gpu},
       2,
       32},
      {{{"nvlink.one_of_eight", "nvlink", "gpu", "§6 C07, §2.5 rule 5", 10.0,
         "Xid 74 on 2-4 links of one GPU; the other seven see collateral (Xid 45, NVLink CUDA "
         "errors), "
         "sometimes one sympathetic Xid 74"},
        new_nvlink_one},
       2,
       32},
      {{{"nic_fw.health_syndrome", "nic", "nic", "§6 C14, §4.1", 10.0,
         "mlx5 health: miss count + syndrome dump, a bare syndrome, or the BDF-less form; "
         "ACCESS_REG noise "
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
         "IB symbol errors, link_error_recovery and healed flaps climbing for 15-90 min, SM trap "
         "129, then "
         "the port down and the job fails"},
        new_ber_ib},
       2,
       32},
      {{{"ber_escalation.pcie_replay", "pcie", "pcie", "§6 C03 -> C01, §3.2", 8.0,
         "correctable AER (RxErr/BadTLP/Rollover/replay timeout) coming faster on a GPU's port, "
         "then "
         "uncorrectable fatal and Xid 79"},
        new_ber_pcie},
       2,
       32},
      {{{"user_code.one_rank_exception", "user_code", "rank", "§6 C25, §5.5", 10.0,
         "a Python traceback on one rank (data, shape, assertion), warnings on all; the others "
         "time out"},
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
