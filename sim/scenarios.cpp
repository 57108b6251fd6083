// The scenario table (one incident template per row, in the order of the
// default mix) and the emission helpers that templates of several device
// families share. Each template is one causal chain (its chain id is in the
// table and in truth.json), with stochastic delays around the delays seen in
// practice and stochastic branches (errored vs hung, 94 vs 95, ...). Labels
// follow docs/interfaces.md §5 (device rules) and §6 (fault classes). Message
// texts are the real formats of the kernel, the NVIDIA driver, mlx5, OpenSM,
// NCCL and PyTorch (several as the public fixtures of gpud and NVSentinel
// hold them); where no public example exists the text is marked "[invented]"
// beside it.
#include "sim/templates.h"

namespace reflex::sim {

namespace {

const char* pick_aer_bits(Ctx& x, bool new_names, std::string* status) {
  static const char* kOld[] = {"[ 5] Surprise Down Error    (First)",
                               "[14] Completion Timeout     (First)",
                               "[18] Malformed TLP          (First)"};
  static const char* kNew[] = {"[ 5] SDES                   (First)",
                               "[14] CmpltTO                (First)",
                               "[18] MalfTLP                (First)"};
  static const char* kStatus[] = {"00000020", "00004000", "00040000"};
  int i = x.r.index(3);
  *status = kStatus[i];
  return new_names ? kNew[i] : kOld[i];
}

}  // namespace

// Uncorrectable AER, with the old/new kernel string drift.
void aer_fatal(Ctx& x, int h, Us t, const std::string& reporter, const std::string& source,
               const char* driver, bool fatal) {
  const bool nk = x.new_kernel();
  const char* sev = fatal ? (nk ? "Uncorrectable (Fatal)" : "Uncorrected (Fatal)")
                          : (nk ? "Uncorrectable (Non-Fatal)" : "Uncorrected (Non-Fatal)");
  std::string status;
  const char* bit = pick_aer_bits(x, nk, &status);
  if (nk)
    x.kern(h, t,
           strf("pcieport %s: AER: %s error message received from %s", reporter.c_str(), sev,
                source.c_str()));
  else
    x.kern(h, t,
           strf("pcieport %s: AER: %s%s error received: %s", reporter.c_str(),
                x.r.chance(0.3) ? "Multiple " : "", sev, source.c_str()));
  x.kern(h, t + 5,
         strf("%s %s: %sPCIe Bus Error: severity=%s, type=%s, (%s)", driver, source.c_str(),
              nk ? "AER: " : "", sev, x.r.chance(0.5) ? "Transaction Layer" : "Data Link Layer",
              x.r.chance(0.5) ? "Requester ID" : "Receiver ID"));
  x.kern(h, t + 8,
         strf("%s %s: %s  device [%s] error status/mask=%s/00000000", driver, source.c_str(),
              nk ? "AER: " : "", std::string(driver) == "nvidia" ? "10de:2330" : "1000:c030",
              status.c_str()));
  x.kern(h, t + 10, strf("%s %s: %s  %s", driver, source.c_str(), nk ? "AER: " : "", bit));
}

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
    x.sm(t,
         strf("log_trap_info: Received Generic Notice type:%d num:%d (%s) Producer:2 (Switch) from "
              "LID:%d Port %d TID:0x%016llx",
              type, num, what, lid, port, static_cast<unsigned long long>(x.r.range(1, 1 << 30))));
  else
    x.sm(t, strf("log_trap_info: Received Generic Notice type:%d num:%d (%s) Producer:2 (Switch) "
                 "from LID:%d TID:0x%016llx",
                 type, num, what, lid, static_cast<unsigned long long>(x.r.range(1, 1 << 30))));
}

void port_down_lines(Ctx& x, int h, int n, Us t, bool cable) {
  const SimNic& ni = x.H(h).nics[static_cast<size_t>(n)];
  if (cable && x.r.chance(0.6))
    x.kern(h, t - static_cast<Us>(x.r.uniform(1, 200) * 1000.0),
           strf("mlx5_core %s: Port module event: module %d, Cable unplugged", ni.bdf.c_str(), n));
  x.kern(h, t, strf("mlx5_core %s %s: Link down", ni.bdf.c_str(), ni.netdev.c_str()));
  x.nccl(h, t + static_cast<Us>(x.r.uniform(5, 900) * 1000.0), n, "WARN",
         strf("NET/IB : %s:1 Got async event : port error", ni.name.c_str()));
}

const std::vector<ScenarioDef>& scenario_defs() {
  static const std::vector<ScenarioDef> k = {
      {{"pcie_switch_fatal", "pcie", "pcie", "§6 C01, §3", 4.0,
        "PCIe switch / root-port uncorrectable fatal AER -> Xid 79 (+119, 45, SXid) -> NCCL errors "
        "on peers"},
       sc_pcie_switch_fatal},
      {{"gpu_fallen_off_bus", "gpu_fallen_off_bus", "gpu", "§6 C02, §2.3", 8.0,
        "GPU Xid 79 alone (AER only as a side effect)"},
       sc_gpu_fallen_off_bus},
      {{"gsp_timeout", "gpu_hw", "gpu", "§6 C10", 5.0,
        "GSP RPC timeout Xid 119 / 120 -> hang -> watchdog"},
       sc_gsp},
      {{"gpu_hw_xid", "gpu_hw", "gpu", "§6 C11, §2.3", 6.0, "Xid 62 / 109 / 140 / 143 on one GPU"},
       sc_gpu_hw},
      {{"nvlink_xid74", "nvlink", "gpu", "§6 C07, §2.5", 5.0,
        "Xid 74 on one GPU, sympathetic 74 on its peer"},
       sc_nvlink},
      {{"nvswitch_fatal", "nvswitch", "nvswitch", "§6 C08, §2.6", 3.0,
        "fatal SXid -> FM log -> Xid 74 on several GPUs"},
       sc_nvswitch},
      {{"nvlink5_fatal", "nvlink", "gpu", "§6 C32, §2.4", 3.0,
        "NVLink5 Xid 149 on one GPU, 145 on many in the NVL72 domain"},
       sc_nvlink5},
      {{"hbm_dbe", "gpu_memory", "gpu", "§6 C04", 14.0,
        "HBM DBE Xid 48 -> 63/64, 94/95 -> CUDA ECC error -> crash"},
       sc_hbm_dbe},
      {{"sram_dbe", "gpu_memory", "gpu", "§6 C06", 4.0, "SRAM uncorrectable Xid 48 + 172"},
       sc_sram_dbe},
      {{"nic_link_down", "nic", "nic", "§6 C13, §4.1", 6.0,
        "mlx5 link down -> IB status 12 on both ends naming its IP"},
       sc_nic_link_down},
      {{"nic_health", "nic", "nic", "§6 C14/C15, §4.1", 3.0,
        "mlx5 health syndrome / PCI channel offline / command timeout"},
       sc_nic_health},
      {{"leaf_switch_failure", "ib_fabric", "fabric", "§6 C16, §4.3", 3.0,
        "leaf failure: same NIC index down on every host of the unit + SM traps"},
       sc_leaf},
      {{"optic_degrade", "ib_fabric", "nic", "§6 C17, §4.2", 3.0,
        "degrading optic: symbol errors climbing, fail-slow"},
       sc_optic},
      {{"silent_host_death", "host_kernel", "host", "§6 C21", 2.0,
        "host dies silently; peers' errors name its IPs"},
       sc_silent_host},
      {{"psu_failure", "thermal_power", "host", "§6 C21/C31", 1.0,
        "PSU failure in ipmitool sel -> host loss"},
       sc_psu},
      {{"mce_panic", "host_kernel", "host", "§6 C22", 1.5,
        "machine check -> panic (pstore) or SIGBUS"},
       sc_mce},
      {{"host_oom", "host_kernel", "host", "§6 C25", 1.5, "host OOM killer kills a rank"},
       sc_host_oom},
      {{"cuda_oom", "user_code", "rank", "§6 C24", 6.0, "torch.OutOfMemoryError on one rank"},
       sc_cuda_oom},
      {{"illegal_memory_access", "user_code", "job", "§6 C26, §2.5", 5.0,
        "Xid 13/31 + illegal memory access on every rank"},
       sc_illegal_access},
      {{"nccl_mismatch", "nccl_software", "host|job", "§6 C29, §5.1", 4.0,
        "driver/library mismatch on one host, or NCCL config error on all ranks (launch)"},
       sc_nccl_mismatch},
      {{"nfs_stall", "storage", "storage", "§6 C23", 5.0,
        "NFS not responding -> hung tasks -> watchdog at checkpoint"},
       sc_nfs},
      {{"thermal_throttle", "thermal_power", "gpu", "§6 C12", 3.0,
        "one GPU throttles (clocks_event_reasons) -> iteration time regresses"},
       sc_thermal},
      {{"unknown_watchdog", "", "none", "§1.1, §7.3", 4.0,
        "watchdog timeouts with no device evidence (localizable=false)"},
       sc_unknown},
  };
  return k;
}

}  // namespace reflex::sim
