// Incident templates of the host and the software above it: host loss, power,
// machine checks, the OOM killer, CUDA OOM, illegal memory access, NCCL
// mismatch, storage stalls, thermal throttling, and the unknown watchdog.
#include <limits>

#include "sim/templates.h"

namespace reflex::sim {

namespace {

using SP = Ctx::Prop;

void host_vanishes(Ctx& x, int h, Us t_dead, bool errored) {
  x.I.dead_at[static_cast<size_t>(h)] = t_dead;
  for (int n = 0; n < static_cast<int>(x.H(h).nics.size()); ++n) {
    const SimLeaf& leaf = x.C.leaves[static_cast<size_t>(x.H(h).nics[static_cast<size_t>(n)].leaf)];
    opensm_trap(x, t_dead + ms(x.r.uniform(5, 900)), 1, 128, "Link state change", leaf.lid, 0);
  }
  // TCPStore / rendezvous peers see the connection drop.
  if (!x.J.hosts.empty() && x.J.hosts[0] != h && x.r.chance(0.5))
    x.pyerr(x.J.hosts[0], t_dead + sec(x.r.uniform(1, 30)), 0,
            strf("torch.distributed.DistNetworkError: Connection reset by peer (%s:29500)",
                 x.H(h).ip.c_str()));
  SP p;
  p.t_fail = t_dead;
  p.hosts = {h};
  p.dead_hosts = {h};
  p.errored = errored;
  x.I.truth.regime = errored ? "errored" : "hung";
  x.propagate(p);
}

}  // namespace

// C21: silent host death: logs stop, peers name its IPs.
void sc_silent_host(Ctx& x, Us t0) {
  const int h = job_host(x);
  if (x.r.chance(0.3))
    x.kern(h, t0 - sec(x.r.uniform(0.5, 3)),
           strf("watchdog: BUG: soft lockup - CPU#%d stuck for %ds! [python3:%d]", x.r.index(96),
                22 + x.r.index(5), x.pid(h, 0)));
  set_truth(x, x.hn(h), "host_kernel", "C21", "host_silent", t0, {x.hn(h)});
  host_vanishes(x, h, t0, x.r.chance(0.75));
}

// PSU failure (ipmitool sel) -> host loss (C21 via power).
void sc_psu(Ctx& x, Us t0) {
  const int h = job_host(x);
  x.I.dead_at[static_cast<size_t>(h)] = t0;
  int ps = 1 + x.r.index(2);
  x.line(h, t0 - sec(x.r.uniform(0, 40)), kSel,
         strf("Power Supply PSU%d | Failure detected () | Asserted", ps));
  x.line(h, t0 - sec(x.r.uniform(0, 2)), kSel,
         strf("Power Supply PSU%d | Power Supply AC lost | Asserted", 3 - ps));
  x.line(h, t0 + sec(x.r.uniform(0.1, 1)), kSel, "Power Unit #0x01 | Power off/down | Asserted");
  x.line(h, t0 + sec(x.r.uniform(200, 600)), kSel,
         "System Event #0x6f | OEM System boot event | Asserted");
  set_truth(x, x.hn(h), "thermal_power", "C21/C31", "psu_failure", t0, {x.hn(h)});
  host_vanishes(x, h, t0, x.r.chance(0.75));
}

// C22: machine check -> panic (or SIGBUS on one rank).
void sc_mce(Ctx& x, Us t0) {
  const int h = job_host(x);
  const int cpu = x.r.index(112), bank = x.r.index(20);
  const bool panic = x.r.chance(0.65);
  std::vector<std::string> mce = {
      strf("mce: [Hardware Error]: CPU %d: Machine Check Exception: 5 Bank %d: be00000000800400",
           cpu, bank),
      strf("mce: [Hardware Error]: RIP !INEXACT! 10:<ffffffff%s> {intel_idle+0x%x/0x1e0}",
           x.r.hex(8).c_str(), 0x40 + x.r.index(64)),
      strf("mce: [Hardware Error]: TSC %s ADDR %s MISC 86", x.r.hex(12).c_str(),
           x.r.hex(9).c_str()),
      strf(
          "mce: [Hardware Error]: PROCESSOR 0:806f8 TIME %lld SOCKET %d APIC %x microcode 2b000571",
          static_cast<long long>(t0 / kSec), cpu / 56, cpu * 2),
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
  x.kern(
      h, t0 + ms(x.r.uniform(1, 50)),
      strf("Memory failure: 0x%llx: Sending SIGBUS to python3:%d due to hardware memory corruption",
           pfn, x.pid(h, 0)));
  x.kern(h, t0 + ms(x.r.uniform(50, 80)),
         strf("Memory failure: 0x%llx: recovery action for dirty LRU page: Recovered", pfn));
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
  x.kern(h, t0 - ms(x.r.uniform(1, 30)),
         strf("python3 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), "
              "order=0, oom_score_adj=0"));
  x.kern(h, t0 - ms(1),
         strf("oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/"
              ",mems_allowed=0-1,global_oom,task_memcg=/,task=python3,pid=%d,uid=0",
              pid));
  x.kern(
      h, t0,
      strf("Out of memory: Killed process %d (python3) total-vm:%lldkB, anon-rss:%lldkB, "
           "file-rss:%lldkB, shmem-rss:%lldkB, UID:0 pgtables:%lldkB oom_score_adj:0",
           pid, 900000000LL + x.r.range(0, 90000000), 200000000LL + x.r.range(0, 90000000),
           100000LL + x.r.range(0, 900000), x.r.range(0, 9000000), 400000LL + x.r.range(0, 90000)));
  x.kern(
      h, t0 + ms(x.r.uniform(50, 400)),
      strf("oom_reaper: reaped process %d (python3), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB",
           pid));
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
  x.pyerr(h, t0 - 2, g,
          "  File \"/workspace/megatron/model/transformer.py\", line 877, in forward");
  x.pyerr(h, t0 - 1, g, "    attention_scores = torch.baddbmm(");
  if (x.r.chance(0.7))
    x.pyerr(h, t0, g,
            strf("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU %d "
                 "has a total capacity of 79.11 GiB of which %.2f GiB is free. Including "
                 "non-PyTorch memory, this process has %.2f GiB memory in use. Of the allocated "
                 "memory %.2f GiB is allocated by PyTorch, and %.2f GiB is reserved by PyTorch but "
                 "unallocated. If reserved but unallocated memory is large try setting "
                 "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
                 "documentation for Memory Management  "
                 "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
                 gib, g, x.r.uniform(0.1, gib), 78.0 - x.r.uniform(0, 1), 74.0 - x.r.uniform(0, 3),
                 x.r.uniform(0.1, 2)));
  else
    x.pyerr(h, t0, g,
            strf("RuntimeError: CUDA out of memory. Tried to allocate %.2f GiB (GPU %d; 79.11 GiB "
                 "total capacity; 75.20 GiB already allocated; %.2f GiB free; 77.02 GiB reserved "
                 "in total by PyTorch)",
                 gib, g, x.r.uniform(0.1, gib)));
  set_truth(x, "job/" + x.J.id + "/rank" + std::to_string(x.rank(h, g)), "user_code", "C24",
            "cuda_oom", t0, {});
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
        x.xid(
            h, g, t, 31,
            strf("channel 0x%08x, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC%d GPCCLIENT_T1_%d "
                 "faulted @ 0x7f%s_%s. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
                 2 + x.r.index(8), x.r.index(8), x.r.index(16), x.r.hex(2).c_str(),
                 x.r.hex(8).c_str()),
            true);
      else
        x.xid(h, g, t, 13,
              strf("Graphics SM Warp Exception on (GPC %d, TPC %d, SM %d): Out Of Range Address",
                   x.r.index(8), x.r.index(9), x.r.index(2)),
              true);
      if (x.r.chance(0.6))
        x.xid(h, g, t + ms(x.r.uniform(1, 100)), 43, "Ch 00000020, engmask 00000101", true);
      Us te = t + ms(x.r.uniform(20, 900));
      x.rank_crash(h, g, te, "an illegal memory access was encountered");
      t_last = std::max(t_last, te);
    }
  for (int h : x.J.hosts)
    x.teardown(h, t_last + sec(x.r.uniform(0.5, 5)), x.r.index(static_cast<size_t>(x.C.gpg)), 1);
  set_truth(x, "job/" + x.J.id, "user_code", "C26", x31 ? "xid31_all_ranks" : "xid13_all_ranks", t0,
            {});
  x.I.truth.regime = "errored";
}

// C29 / launch failures: one host with a different image, or a job-wide NCCL config error.
void sc_nccl_mismatch(Ctx& x, Us t0) {
  x.I.truth.regime = "launch";
  if (x.r.chance(0.5) && x.J.hosts.size() > 1) {
    const int h = job_host(x);
    x.kern(h, t0 - sec(x.r.uniform(1, 30)),
           "NVRM: API mismatch: the client has the version 550.90.07, but\nNVRM: this kernel "
           "module has the version 550.54.15.  Please\nNVRM: make sure that this kernel module and "
           "all NVIDIA driver\nNVRM: components have the same version.");
    for (int g = 0; g < x.C.gpg; ++g) {
      Us t = t0 + ms(x.r.uniform(0, 2000));
      x.pyerr(h, t, g,
              "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
              "functions before calling NumCudaDevices() that might have already set an error? "
              "Error 803: system has unsupported display driver / cuda driver combination");
    }
    set_truth(x, x.hn(h), "nccl_software", "C29", "driver_version_mismatch", t0, {x.hn(h)});
    Us td = x.teardown(h, t0 + sec(x.r.uniform(2, 5)), 0, 1);
    // Everyone else waits at rendezvous / communicator init until it times out.
    for (int q : x.J.hosts) {
      if (q == h) continue;
      for (int g = 0; g < x.C.gpg; ++g)
        x.pyerr(q, td + sec(x.r.uniform(1, 30)), g,
                strf("torch.distributed.DistBackendError: [%d] is setting up NCCL communicator and "
                     "retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but "
                     "store->get('0') got error: Connection reset by peer",
                     x.rank(q, g)));
      x.teardown(q, td + sec(x.r.uniform(31, 40)), -1, 1);
    }
    return;
  }
  static const char* kCauses[] = {"Bootstrap : no socket interface found",
                                  "NET/Socket : No usable listening interface found",
                                  "NET/IB : No device found."};
  const char* cause = kCauses[x.r.index(3)];
  for (int h : x.J.hosts) {
    for (int g = 0; g < x.C.gpg; ++g) {
      Us t = t0 + ms(x.r.uniform(0, 3000));
      x.nccl(h, t, g, "WARN", cause);
      x.nccl(h, t + 100, g, "INFO", strf("init.cc:%d -> 3", 1500 + x.r.index(300)));
      x.pyerr(h, t + ms(x.r.uniform(10, 500)), g,
              "torch.distributed.DistBackendError: NCCL error in: "
              "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, internal error - please "
              "report this issue to the NCCL developers, NCCL version " +
                  x.I.nccl_version);
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
          strf("[rank0]: saving checkpoint at iteration %lld to %s/%s/iter_%07lld",
               5000LL + x.r.range(0, 90000), st.exp.c_str(), x.J.id.c_str(),
               5000LL + x.r.range(0, 90000)));
  }
  std::vector<std::pair<int, int>> lag;
  for (int h : x.J.hosts) {
    if (!x.r.chance(0.85)) continue;
    Us t = t0 + ms(x.r.uniform(0, 5000));
    x.kern(h, t,
           strf("nfs: server %s not responding, still trying",
                by_name ? st.name.c_str() : st.ip.c_str()));
    if (x.r.chance(0.5))
      x.kern(h, t + sec(x.r.uniform(1, 60)),
             strf("nfs: server %s not responding, still trying",
                  by_name ? st.name.c_str() : st.ip.c_str()));
    Us th = t + sec(x.r.around(125, 0.05, 120, 245));
    const int pid = x.pid(h, x.r.index(static_cast<size_t>(x.C.gpg)));
    x.kern(h, th,
           strf("INFO: task python3:%d blocked for more than %d seconds.", pid,
                th - t > sec(240) ? 241 : 122));
    x.kern(h, th + 10, "      Not tainted 5.15.0-105-generic #115-Ubuntu");
    x.kern(h, th + 20,
           "\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.");
    if (x.r.chance(0.5)) lag.push_back({h, x.r.index(static_cast<size_t>(x.C.gpg))});
  }
  set_truth(x, "storage/" + st.name, "storage", "C23", "nfs_not_responding", t0,
            {"storage/" + st.name});
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
  set_truth(x, gpu_id(x, h, g), "thermal_power", "C12",
            power ? "hw_power_brake" : "hw_thermal_slowdown", t0, {x.hn(h)});
  x.I.throttles.push_back({h, g, t0, std::numeric_limits<Us>::max(), power ? 0x80u : 0x40u});
  if (x.r.chance(0.3))
    x.kern(h, t0 + sec(x.r.uniform(0, 30)),
           strf("NVRM: GPU at PCI:%s: GPU is being throttled (%s)",
                x.H(h).gpus[static_cast<size_t>(g)].bus.c_str(),
                power ? "power brake" : "HW thermal slowdown"));  // [invented]
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

}  // namespace reflex::sim
