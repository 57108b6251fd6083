// Hard families of software and of one device among its peers: a segfault
// in libnccl on one rank, two ranks on one GPU, one GPU's NVLink among eight,
// a NIC's firmware health, one rank's Python exception.
#include <algorithm>
#include <string>

#include "sim/hard.h"

namespace reflex::sim {

namespace {

// Xid 74's text, with or without the link's error registers.
std::string xid74(Ctx& x, int link) {
  if (x.r.chance(0.3)) return strf("NVLink: fatal error detected on link %d", link);
  static const char* kReg[] = {"0x10000", "0x20000", "0x100", "0x4"};
  return strf("NVLink: fatal error detected on link %d(0x0, 0x0, %s, 0x0, 0x0, 0x0, 0x0)", link,
              kReg[x.r.index(4)]);
}

}  // namespace

// ---- nccl_segv: a segfault inside libnccl on one rank (as in gpud's libnccl
// segfault fixture; §1.1 "software bug"), the others time out ----
void new_nccl_segv(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  const int pid = x.pid(h, g);
  const unsigned long long base =
      0x7f0000000000ULL + (static_cast<unsigned long long>(x.r.range(0x100, 0xfff)) << 28);
  const unsigned long long off = static_cast<unsigned long long>(x.r.range(0x40000, 0x3000000));
  const double v = x.r.uniform();
  const bool kernel_line = v < 0.8;  // printk of unhandled signals is rate-limited (§7.3)
  const bool rank_trace = v >= 0.4;
  if (kernel_line) {
    static const char* kComm[] = {"pt_main_thread", "python3", "python"};
    std::string l =
        strf("%s[%d]: segfault at %llx ip %016llx sp %016llx error %d in libnccl.so.2[%llx+%x]",
             kComm[x.r.index(3)], pid,
             static_cast<unsigned long long>(x.r.range(0, 0xffffffffLL)) +
                 (x.r.chance(0.5) ? base : 0ULL),
             base + off,
             0x7f0000000000ULL + static_cast<unsigned long long>(x.r.range(0, 0xffffffffffLL)),
             x.r.chance(0.7) ? 4 : 6, base, 0xd3d3000);
    if (x.new_kernel())  // kernels >= 5.19 say where it ran
      l += strf(" likely on CPU %d (core %d, socket %d)", x.r.index(112), x.r.index(56),
                x.r.index(2));
    x.kern(h, t0, l);
    if (x.r.chance(0.6))
      x.kern(h, t0 + 2,
             strf("Code: %s %s %s %s <%s> %s", x.r.hex(2).c_str(), x.r.hex(2).c_str(),
                  x.r.hex(2).c_str(), x.r.hex(2).c_str(), x.r.hex(2).c_str(), x.r.hex(2).c_str()));
  }
  if (rank_trace) {
    if (x.r.chance(
            0.5)) {  // Python faulthandler (the crash is in NCCL's proxy thread: no Python frame)
      x.pyerr(h, t0 + 50, g, "Fatal Python error: Segmentation fault");
      x.pyerr(h, t0 + 51, g, "");
      x.pyerr(h, t0 + 52, g,
              strf("Current thread 0x00007f%s (most recent call first):", x.r.hex(10).c_str()));
      x.pyerr(h, t0 + 53, g, "  <no Python frame>");
      x.pyerr(h, t0 + 54, g, "");
      x.pyerr(h, t0 + 55, g,
              strf("Thread 0x00007f%s (most recent call first):", x.r.hex(10).c_str()));
      x.pyerr(h, t0 + 56, g,
              "  File "
              "\"/usr/local/lib/python3.10/dist-packages/torch/distributed/distributed_c10d.py\", "
              "line 2050 in all_reduce");
      x.pyerr(
          h, t0 + 57, g,
          "  File \"/workspace/megatron/core/tensor_parallel/mappings.py\", line 24 in _reduce");
    } else {  // glibc libSegFault backtrace (LD_PRELOAD=libSegFault.so)
      x.pyerr(h, t0 + 50, g, "*** Segmentation fault");
      x.pyerr(h, t0 + 51, g, "Backtrace:");
      static const char* kFn[] = {"ncclProxyProgress", "ncclProxyService", "ncclIbIsend",
                                  "ncclNetIb::test"};
      for (int i = 0; i < 3 + x.r.index(3); ++i)
        x.pyerr(h, t0 + 52 + i, g,
                strf("/usr/lib/x86_64-linux-gnu/libnccl.so.2(%s+0x%x)[0x%llx]",
                     i == 0 ? kFn[x.r.index(4)] : "", static_cast<int>(x.r.range(0x40, 0x4000)),
                     base + off + static_cast<unsigned long long>(i * 0x1a40)));
      x.pyerr(h, t0 + 60, g,
              strf("/lib/x86_64-linux-gnu/libc.so.6(+0x94ac3)[0x7f%s]", x.r.hex(10).c_str()));
    }
  }
  x.app(h, t0 + sec(x.r.uniform(1, 4)), -1,
        strf("  traceback : Signal 11 (SIGSEGV) received by PID %d", pid));
  set_truth(x, rank_trace ? rank_id(x, h, g) : x.hn(h), "nccl_software",
            "peers.md (libnccl segfault), §1.1", "nccl_segfault", t0, {});
  x.I.truth.also = {rank_trace ? x.hn(h) : rank_id(x, h, g)};
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
    const std::string msg =
        strf("Duplicate GPU detected : rank %d and rank %d both on CUDA device %s", x.rank(h, g),
             x.rank(h, other), busid(h, dev_g).c_str());
    x.nccl(h, t, g, "WARN", msg);
    x.nccl(h, t + 100, g, "INFO", strf("init.cc:%d -> 5", 600 + x.r.index(300)));
    x.pyerr(h, t + ms(x.r.uniform(10, 300)), g,
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
            "ProcessGroupNCCL.cpp:1970, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL "
            "version " +
                x.I.nccl_version);
    x.pyerr(h, t + ms(x.r.uniform(300, 400)), g,
            "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.");
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
    set_truth(x, "job/" + x.J.id, "nccl_software", "§5.1 (invalid usage), C29",
              "nccl_duplicate_gpu", t0, {});
    x.I.truth.notes.push_back("every local rank on cuda:0");
    return;
  }
  // One host's launcher maps two local ranks to one GPU (CUDA_VISIBLE_DEVICES);
  // only those two see it, the others lose them during init.
  const int h = job_host(x);
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
              "ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL "
              "version " +
                  x.I.nccl_version);
      x.pyerr(q, t + ms(x.r.uniform(300, 400)), g,
              "ncclRemoteError: A call failed possibly due to a network error or a remote process "
              "exiting prematurely.");
      last = std::max(last, t);
    }
    x.teardown(q, last + sec(x.r.uniform(1, 5)), -1, 1);
  }
  set_truth(x, "job/" + x.J.id, "nccl_software", "§5.1 (invalid usage), C29", "nccl_duplicate_gpu",
            t0, {});
  x.I.truth.also = {x.hn(h)};
  x.I.truth.notes.push_back(strf("local ranks %d and %d of %s on one GPU", a, b, x.hn(h).c_str()));
}

// ---- nvlink: one GPU's fatal NVLink error among eight (§6 C07, §2.5 rule 5:
// at most two GPUs with Xid 74, else it would be the NVSwitch) ----
void new_nvlink_one(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  const int nl = 2 + x.r.index(3);
  for (int i = 0; i < nl; ++i)
    x.xid(h, g, t0 + ms(i * x.r.uniform(0, 40)), 74, xid74(x, static_cast<int>(x.r.range(0, 17))));
  const bool peer74 = x.C.gpg > 1 && x.r.chance(0.4);
  if (peer74) {  // the link partner sees the link go down (sympathetic, later, one link)
    const int p = (g + 1 + x.r.index(static_cast<size_t>(x.C.gpg - 1))) % x.C.gpg;
    x.xid(h, p, t0 + ms(x.r.uniform(80, 1200)), 74, xid74(x, static_cast<int>(x.r.range(0, 17))));
  }
  if (x.r.chance(0.5))
    x.xid(h, g, t0 + sec(x.r.uniform(1, 10)), 154,
          "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)");
  // Collateral: the TP group on the host loses its NVLink peer: the other
  // GPUs' channels are torn down (Xid 45) and their ranks fail with the same
  // CUDA error (cudaErrorNvlinkUncorrectable, §6 C07).
  const Us t_err = t0 + ms(x.r.uniform(100, 3000));
  x.rank_crash(h, g, t_err, "uncorrectable NVLink error detected during the execution");
  for (int k = 0; k < x.C.gpg; ++k) {
    if (k == g) continue;
    const Us tk = t_err + ms(x.r.uniform(5, 900));
    if (x.r.chance(0.6))
      x.xid(h, k, tk + ms(x.r.uniform(1, 400)), 45, strf("Ch %08x", 8 + 8 * x.r.index(4)), true);
    if (x.r.chance(0.7))
      x.rank_crash(h, k, tk, "uncorrectable NVLink error detected during the execution");
  }
  set_truth(x, gpu_id(x, h, g), "nvlink", "C07, §2.5", "xid74_nvlink_one_gpu", t0, {x.hn(h)});
  x.I.truth.notes.push_back(peer74 ? "one sympathetic Xid 74 on a peer"
                                   : "collateral only: Xid 45 and CUDA errors on the peers");
  rank_gone(x, h, g, t_err, 1, 0.5);
}

// ---- nic_fw: mlx5 firmware health (§4.1, §6 C14; charmplusplus/charm#2635
// dump; NVSentinel's BDF-less "mlx5_core: INFO: synd 0x8" form), under the
// ACCESS_REG noise gpud ignores) ----
void new_nic_fw(Ctx& x, Us t0) {
  const int h = job_host(x), n = any_gpu(x);
  const SimNic& ni = x.H(h).nics[static_cast<size_t>(n)];
  static const char* kSynd[] = {"0x7: irisc not responding", "0x1: firmware internal error",
                                "0x8: unrecoverable hardware error", "0x9: firmware CRC error",
                                "0xa: ICM fetch PCI error"};
  const int s = x.r.chance(0.45) ? 0 : 1 + x.r.index(4);
  const double v = x.r.uniform();
  if (v < 0.6) {
    x.kern(h, t0,
           strf("mlx5_core %s: device's health compromised - reached miss count", ni.bdf.c_str()));
    for (int i = 0; i < 5; ++i)
      x.kern(h, t0 + 10 + i,
             strf("mlx5_core %s: assert_var[%d] 0x%s", ni.bdf.c_str(), i, x.r.hex(8).c_str()));
    x.kern(h, t0 + 21,
           strf("mlx5_core %s: fw_ver 28.%d.%d", ni.bdf.c_str(), 36 + x.r.index(5),
                1000 + x.r.index(1100)));
    x.kern(h, t0 + 22, strf("mlx5_core %s: hw_id 0x00000225", ni.bdf.c_str()));
    x.kern(h, t0 + 23, strf("mlx5_core %s: irisc_index %d", ni.bdf.c_str(), x.r.index(3)));
    x.kern(h, t0 + 24, strf("mlx5_core %s: synd %s", ni.bdf.c_str(), kSynd[s]));
    x.kern(h, t0 + 25, strf("mlx5_core %s: ext_synd 0x%s", ni.bdf.c_str(), x.r.hex(4).c_str()));
  } else if (v < 0.85) {
    x.kern(h, t0, strf("mlx5_core %s: synd %s", ni.bdf.c_str(), kSynd[s]));
  } else {
    x.kern(h, t0, strf("mlx5_core: INFO: synd %s.", kSynd[s]));
    x.I.truth.notes.push_back(
        "the health line names no BDF; only NCCL's async event names the HCA");
  }
  const Us td = t0 + sec(x.r.uniform(0.5, 8));
  x.nccl(h, td, n, "WARN",
         strf("NET/IB : %s:1 Got async event : %s", ni.name.c_str(),
              x.r.chance(0.6) ? "local catastrophic error" : "port error"));
  if (x.r.chance(0.5))
    x.kern(h, td + ms(x.r.uniform(10, 500)),
           strf("mlx5_core %s %s: Link down", ni.bdf.c_str(), ni.netdev.c_str()));
  // Noise: restricted-register reads that fail harmlessly, on many hosts.
  for (int q = 0; q < x.nhosts(); ++q) {
    if (!x.r.chance(0.5)) continue;
    const SimNic& qn = x.H(q).nics[static_cast<size_t>(x.r.index(x.H(q).nics.size()))];
    const Us a = std::max(after_boot(x, q), x.I.t_start - hours(6));
    for (int i = 0; i < 1 + x.r.index(4); ++i)
      x.kern(q, a + static_cast<Us>(x.r.uniform() * static_cast<double>(x.I.t_end - a)),
             strf("mlx5_core %s: mlx5_cmd_out_err:838:(pid %d): ACCESS_REG(0x805) op_mod(0x1) "
                  "failed, status bad "
                  "resource(0x5), syndrome (0x305684), err(-22)",
                  qn.bdf.c_str(), 1000 + x.r.index(2000000)));
  }
  base_rate_background(x, x.r.uniform(0.2, 0.5), x.I.t_start - hours(4), x.I.t_end);
  set_truth(x, nic_id(x, h, n), "nic", "C14, §4.1", "mlx5_health_syndrome", t0, {x.hn(h)});
  Ctx::Prop p;
  p.t_fail = td;
  p.hosts = {h};
  p.rails = {n};
  p.own_side = true;
  p.errored = true;
  x.I.truth.regime = "errored";
  x.propagate(p);
}
// ---- user_code: one rank's Python exception (§6 C25), the others time out ----
void new_one_rank_exception(Ctx& x, Us t0) {
  const int h = job_host(x), g = any_gpu(x);
  // noise on every rank: warnings at start-up
  for (int q : x.J.hosts)
    for (int k = 0; k < x.C.gpg; ++k)
      if (x.r.chance(0.5))
        x.pyerr(
            q, x.I.t_start + sec(x.r.uniform(1, 30)), k,
            "/usr/local/lib/python3.10/dist-packages/torch/_utils.py:831: UserWarning: "
            "TypedStorage is deprecated. "
            "It will be removed in the future and UntypedStorage will be the only storage class.");
  struct Exc {
    const char *file, *fn, *code, *err;
  };
  static const Exc kExc[] = {
      {"/workspace/megatron/data/gpt_dataset.py\", line 312, in __getitem__", "",
       "    sample = self._build_sample(idx)",
       "ValueError: cannot reshape array of size 0 into shape (4097,)"},
      {"/workspace/train/collate.py\", line 58, in collate_fn", "",
       "    mask = batch[\"attention_mask\"]", "KeyError: 'attention_mask'"},
      {"/workspace/megatron/data/indexed_dataset.py\", line 477, in __getitem__", "",
       "    bin_buffer = self._bin_buffer_mmap[ptr]",
       "FileNotFoundError: [Errno 2] No such file or directory: '/data/shards/shard-01873.bin'"},
      {"/workspace/megatron/model/transformer.py\", line 611, in forward", "",
       "    hidden_states = hidden_states + residual",
       "RuntimeError: The size of tensor a (4096) must match the size of tensor b (4097) at "
       "non-singleton dimension 1"},
      {"/workspace/train/loop.py\", line 204, in train_step", "",
       "    assert torch.isfinite(loss), f\"loss is {loss}\"", "AssertionError: loss is nan"},
  };
  const Exc& e = kExc[x.r.index(5)];
  x.pyerr(h, t0 - 6, g, "Traceback (most recent call last):");
  x.pyerr(h, t0 - 5, g, "  File \"/workspace/pretrain_gpt.py\", line 231, in <module>");
  x.pyerr(h, t0 - 4, g,
          "    pretrain(train_valid_test_datasets_provider, model_provider, forward_step)");
  x.pyerr(h, t0 - 2, g, std::string("  File \"") + e.file);
  x.pyerr(h, t0 - 1, g, e.code);
  x.pyerr(h, t0, g, e.err);
  set_truth(x, rank_id(x, h, g), "user_code", "C25", "python_exception_one_rank", t0, {});
  rank_gone(x, h, g, t0 + ms(x.r.uniform(50, 2000)), 1, 0.3);
}

}  // namespace reflex::sim
