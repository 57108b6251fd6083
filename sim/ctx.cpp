// Job-level symptom emission: how one failed device becomes O(world size)
// symptom lines: NCCL's errors or PyTorch's watchdog on every peer, then the
// launcher's teardown.
#include "sim/ctx.h"

#include <cstdarg>
#include <set>

namespace reflex::sim {

std::string strf(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return {};
  if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, static_cast<size_t>(n));
  std::string s(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(s.data(), s.size(), fmt, ap);
  va_end(ap);
  s.resize(static_cast<size_t>(n));
  return s;
}

// §5.2: the completion error a rank on host h_from (GPU g) prints about its
// peer's NIC on `rail` (NCCL drift: peer named by NIC IP or OOB IP; the
// oldest form names no peer).
std::string Ctx::ib_error(int h_from, int g, int peer_h, int rail, int status, int vendor) {
  const SimNic& mine =
      H(h_from).nics[static_cast<size_t>(H(h_from).gpus[static_cast<size_t>(g)].nics[0])];
  const SimNic& peer = H(peer_h).nics[static_cast<size_t>(rail)];
  const int port = 40000 + static_cast<int>(r.range(0, 20000));
  const char* dir = r.chance(0.5) ? "Send" : "Recv";
  switch (I.nccl_variant % 4) {
    case 3:
      if (I.nccl_variant % 8 == 7)  // pre-2.19: no peer in the message
        return strf("NET/IB : Got completion with error %d, opcode %d, len 0, vendor err %d",
                    status, static_cast<int>(r.range(0, 1)), vendor);
      return strf(
          "NET/IB : Got completion from peer %s<%d> with error %d, opcode %d, len 0, vendor err %d "
          "(%s)",
          H(peer_h).ip.c_str(), port, status, static_cast<int>(r.range(0, 1)), vendor, dir);
    case 2:
      return strf(
          "NET/IB/GIN : Got completion from peer %s<%d> with status=%d opcode=%d len=0 vendor err "
          "%d (%s) localGid %s remoteGids%s hca %s",
          peer.ip.c_str(), port, status, static_cast<int>(r.range(0, 1)), vendor, dir,
          mine.gid.c_str(), peer.gid.c_str(), mine.name.c_str());
    default:
      return strf(
          "NET/IB : Got completion from peer %s<%d> with status=%d opcode=%d len=0 vendor err %d "
          "(%s) localGid %s remoteGids%s hca %s",
          peer.ip.c_str(), port, status, static_cast<int>(r.range(0, 1)), vendor, dir,
          mine.gid.c_str(), peer.gid.c_str(), mine.name.c_str());
  }
}

void Ctx::rank_crash(int h, int g, Us t, const std::string& cuda_error) {
  const bool via_nccl = r.chance(0.3);
  if (via_nccl) {
    nccl(h, t, g, "WARN", strf("Cuda failure '%s'", cuda_error.c_str()));
    nccl(h, t + 200, g, "INFO",
         strf("enqueue.cc:%d -> 1", 1400 + static_cast<int>(r.range(0, 600))));
    torch(h, t + 2000 + r.range(0, 50000), g, 'E', tl().term,
          pg(rank(h, g)) +
              " Process group watchdog thread terminated with exception: NCCL error: " +
              "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version " +
              I.nccl_version);
    pyerr(h, t + 60000, g, "ncclUnhandledCudaError: Call to CUDA function failed.");
    pyerr(h, t + 60001, g, "Last error:");
    pyerr(h, t + 60002, g, strf("Cuda failure '%s'", cuda_error.c_str()));
    return;
  }
  pyerr(h, t, g, "Traceback (most recent call last):");
  pyerr(h, t + 1, g, "  File \"/workspace/megatron/training.py\", line 1412, in train_step");
  pyerr(h, t + 2, g, "    losses_reduced = forward_backward_func(");
  pyerr(h, t + 3, g, "RuntimeError: CUDA error: " + cuda_error);
  pyerr(h, t + 4, g,
        "CUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.");
  pyerr(h, t + 5, g, "For debugging consider passing CUDA_LAUNCH_BLOCKING=1");
  pyerr(h, t + 6, g, "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.");
}

// torchrun tears down the host's other ranks after one exits (D_local).
Us Ctx::teardown(int h, Us t, int failed_g, int exitcode) {
  Us tt = t;
  for (int g = 0; g < C.gpg; ++g) {
    if (g == failed_g) continue;
    tt += r.range(200, 3000);
    torchrun(h, tt, 'W', 897, strf("Sending process %d closing signal SIGTERM", pid(h, g)));
  }
  tt += r.range(100000, 2000000);
  if (failed_g >= 0)
    torchrun(h, tt, 'E', 869,
             strf("failed (exitcode: %d) local_rank: %d (pid: %d) of binary: /usr/bin/python3",
                  exitcode, failed_g, pid(h, failed_g)));
  app(h, tt + 500, -1, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ");
  return tt;
}

// What propagate's two regimes share: the hosts and ranks that print nothing,
// those that already printed their failure, the job size and the line numbers.
struct Ctx::Spread {
  std::set<int> dead;
  std::set<std::pair<int, int>> gone;
  std::set<std::pair<int, int>> done;
  int njob;
  TorchLines L;
  bool alive(int h, int g) const { return !dead.count(h) && !gone.count({h, g}); }
};

// The errored regime of propagate: the failed hosts' ring neighbours see IB
// errors toward them after D_ib, then everyone else aborts in a cascade.
Us Ctx::propagate_errored(const Prop& p, Spread& s) {
  const std::set<int>& dead = s.dead;
  std::set<std::pair<int, int>>& done = s.done;
  const int njob = s.njob;
  const TorchLines L = s.L;
  auto rank_alive = [&](int h, int g) { return s.alive(h, g); };
  Us t_last = p.t_fail;
  Us first_err = p.t_fail + 40 * kSec;
  const double d_ib = r.around(18, 0.35, 7, 35);  // §6 D_ib for this fabric
  for (int fh : p.hosts) {
    const int fp = J.pos[static_cast<size_t>(fh)];
    if (fp < 0) continue;
    std::vector<int> rails = p.rails;
    if (rails.empty())
      for (int i = 0; i < C.gpg; ++i) rails.push_back(i);
    std::vector<int> nb;
    if (njob > 1) nb.push_back(J.hosts[static_cast<size_t>((fp + njob - 1) % njob)]);
    if (njob > 2) nb.push_back(J.hosts[static_cast<size_t>((fp + 1) % njob)]);
    for (int q : nb) {
      if (dead.count(q) || q == fh) continue;
      for (int rail : rails) {
        const int g = rail;  // rail-aligned rings: GPU i uses NIC i
        if (!rank_alive(q, g)) continue;
        Us t = p.t_fail + static_cast<Us>((d_ib + r.uniform(0, 1.5)) * kSec);
        first_err = std::min(first_err, t);
        nccl(q, t, g, "WARN", ib_error(q, g, fh, rail, 12, 129));
        if (r.chance(0.7))
          nccl(q, t + r.range(100, 5000), g, "WARN", ib_error(q, g, fh, rail, 5, 249));
        nccl(q, t + r.range(5000, 9000), g, "INFO",
             strf("transport/net.cc:%d -> 6", 1200 + static_cast<int>(r.range(0, 200))));
        nccl(q, t + r.range(9000, 12000), g, "INFO",
             strf("proxy.cc:%d -> 6 [Progress Thread]", 1400 + static_cast<int>(r.range(0, 500))));
        Us te = t + r.range(200000, 3000000);
        torch(q, te, g, 'E', L.term,
              pg(rank(q, g)) +
                  " Process group watchdog thread terminated with exception: NCCL error: remote "
                  "process exited or there was a network error, NCCL version " +
                  I.nccl_version);
        pyerr(q, te + 10, g,
              "ncclRemoteError: A call failed possibly due to a network error or a remote "
              "process exiting prematurely.");
        pyerr(q, te + 11, g, "Last error:");
        pyerr(q, te + 12, g, ib_error(q, g, fh, rail, 12, 129));
        done.insert({q, g});
        t_last = std::max(t_last, te);
      }
      // Both ends of a live link report (the failed host's own ranks name the neighbours).
      if (p.own_side && !dead.count(fh))
        for (int rail : rails) {
          const int g = rail;
          if (!rank_alive(fh, g) || done.count({fh, g})) continue;
          Us t = p.t_fail + static_cast<Us>((d_ib + r.uniform(0, 1.5)) * kSec);
          nccl(fh, t, g, "WARN", ib_error(fh, g, q, rail, 12, 129));
          Us te = t + r.range(200000, 3000000);
          torch(fh, te, g, 'E', L.term,
                pg(rank(fh, g)) +
                    " Process group watchdog thread terminated with exception: NCCL error: "
                    "remote process exited or there was a network error, NCCL version " +
                    I.nccl_version);
          done.insert({fh, g});
        }
    }
  }
  // Everyone else aborts after the neighbours (cascade), a few with flush errors.
  for (int ph = 0; ph < njob; ++ph) {
    const int h = J.hosts[static_cast<size_t>(ph)];
    if (dead.count(h)) continue;
    Us th = first_err;
    bool any = false;
    for (int g = 0; g < C.gpg; ++g) {
      if (!rank_alive(h, g) || done.count({h, g})) continue;
      Us t = first_err + static_cast<Us>(r.uniform(0.5, 20) * kSec);
      if (r.chance(0.08)) {
        const int q = J.hosts[static_cast<size_t>((ph + 1) % njob)];
        nccl(h, t - 300000, g, "WARN", ib_error(h, g, q, g, 5, 249));
      }
      torch(h, t, g, 'E', L.term,
            pg(rank(h, g)) +
                " Process group watchdog thread terminated with exception: NCCL error: remote "
                "process exited or there was a network error, NCCL version " +
                I.nccl_version);
      pyerr(h, t + 10, g,
            "ncclRemoteError: A call failed possibly due to a network error or a remote process "
            "exiting prematurely.");
      th = std::max(th, t);
      any = true;
    }
    if (any || done.size()) {
      Us te = teardown(h, th + r.range(500000, 4000000), -1, -6);
      t_last = std::max(t_last, te);
    }
  }
  return t_last;
}

Us Ctx::propagate(const Prop& p) {
  Spread s{{p.dead_hosts.begin(), p.dead_hosts.end()},
           {p.dead_ranks.begin(), p.dead_ranks.end()},
           {},  // ranks that already printed their failure
           static_cast<int>(J.hosts.size()),
           tl()};
  if (p.errored) return propagate_errored(p, s);

  const std::set<int>& dead = s.dead;
  std::set<std::pair<int, int>> lag(p.lagging.begin(), p.lagging.end());
  const int njob = s.njob;
  Us t_last = p.t_fail;
  const TorchLines L = s.L;
  auto rank_alive = [&](int h, int g) { return s.alive(h, g); };

  // Hung regime: everyone waits on the same SeqNum until the watchdog fires.
  const Us t_wd = p.t_fail + I.timeout_ms * 1000 + r.range(0, 3 * kSec);
  const long long seq = 1000 + r.range(0, 400000);
  const long long numel = 1LL << (20 + r.range(0, 9));
  const char* op =
      r.chance(0.7) ? "ALLREDUCE" : (r.chance(0.5) ? "_ALLGATHER_BASE" : "_REDUCE_SCATTER_BASE");
  const int extra = static_cast<int>(r.range(0, 2));
  for (int ph = 0; ph < njob; ++ph) {
    const int h = J.hosts[static_cast<size_t>(ph)];
    if (dead.count(h)) continue;
    Us th = t_wd;
    for (int g = 0; g < C.gpg; ++g) {
      if (!rank_alive(h, g)) continue;
      const int rk = rank(h, g);
      if (lag.count({h, g})) continue;  // blocked before enqueueing: nothing pending to time out
      Us t = t_wd + r.range(0, 900000);
      long long ran = I.timeout_ms + r.range(1, 120);
      torch(h, t, g, 'E', L.wd,
            pg(rk) + strf(" Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%lld, "
                          "OpType=%s, NumelIn=%lld, NumelOut=%lld, Timeout(ms)=%lld) ran for %lld "
                          "milliseconds before timing out.",
                          seq, op, numel, numel, static_cast<long long>(I.timeout_ms), ran));
      torch(h, t + 30, g, 'E', L.exc,
            pg(rk) + strf(" Exception (either an error or timeout) detected by watchdog at work: "
                          "%lld, last enqueued NCCL work: %lld, last completed NCCL work: %lld.",
                          seq, seq + extra, seq - 1));
      torch(h, t + 60, g, 'E', L.fail,
            pg(rk) +
                " Some NCCL operations have failed or timed out. Due to the asynchronous nature of "
                "CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.");
      torch(h, t + 90, g, 'E', L.down,
            pg(rk) + " To avoid data inconsistency, we are taking the entire process down.");
      th = std::max(th, t);
    }
    Us te = teardown(h, th + r.range(1000000, 8000000), -1, -6);
    t_last = std::max(t_last, te);
  }
  return t_last;
}

// Training progress on the job's first rank: iteration times (the slowdown
// symptom of interfaces.md §6 lives here).
void Ctx::training(Us t_from, Us t_to, Us slow_at, double factor) {
  if (J.hosts.empty()) return;
  const int h = J.hosts[0];
  long long it = 1000 + r.range(0, 20000);
  const int every = I.step_s < 4 ? 5 : 1;
  Us t = t_from;
  double loss = 2.2 + r.uniform(0, 0.6);
  int k = 0;
  while (t < t_to) {
    double step = I.step_s * (1 + r.normal(0, 0.012));
    if (slow_at > 0 && t >= slow_at) step *= factor;
    t += static_cast<Us>(step * kSec);
    ++it;
    loss -= 0.00002;
    if (++k % every != 0 || t >= t_to) continue;
    if (I.iter_style == 0)
      line(h, t, kApp,
           strf(" [\x02] iteration %8lld/  500000 | consumed samples: %12lld | elapsed time per "
                "iteration (ms): %.1f | learning rate: 2.999E-04 | global batch size:  2048 | lm "
                "loss: %.6E | loss scale: 1.0 | grad norm: %.3f | number of skipped iterations:   "
                "0 | number of nan iterations:   0 |",
                it, it * 2048, step * 1000.0, loss, 0.25 + r.uniform(0, 0.1)),
           0, true);
    else
      line(h, t, kApp,
           strf("[rank0]:[titan] \x02,%03d - root - INFO - step: %lld  loss: %7.4f  memory: "
                "61.23GiB(77.40%%)  tps: %d  tflops: %.2f  mfu: %.2f%%",
                static_cast<int>(r.range(0, 999)), it, loss,
                static_cast<int>(3400.0 * I.step_s / step), 380.0 * I.step_s / step,
                38.4 * I.step_s / step),
           0, true);
  }
}

// Communicator init chatter (NCCL_DEBUG=INFO): constant volume, no meaning.
void Ctx::nccl_startup(int h, Us t) {
  const SimHost& x = H(h);
  const int nranks = static_cast<int>(J.hosts.size()) * C.gpg;
  for (int g = 0; g < C.gpg; ++g) {
    Us tg = t + r.range(0, 2 * kSec);
    const int rk = rank(h, g);
    if (rk == 0 || (I.banner_per_host && g == 0)) {
      const std::string& v = I.host_nccl_version.empty()
                                 ? I.nccl_version
                                 : I.host_nccl_version[static_cast<size_t>(h)];
      nccl(h, tg, g, "INFO", "NCCL version " + v + "+cuda12.4");
    }
    nccl(h, tg + 1000, g, "INFO", strf("Bootstrap : Using eth0:%s<0>", x.ip.c_str()));
    std::string using_ = "NET/IB : Using";
    for (size_t n = 0; n < x.nics.size(); ++n)
      using_ += strf(" [%zu]%s:1/%s", n, x.nics[n].name.c_str(), C.roce ? "RoCE" : "IB");
    using_ += strf(" [RO]; OOB eth0:%s<0>", x.ip.c_str());
    nccl(h, tg + 3000, g, "INFO", using_);
    nccl(h, tg + 5000, g, "INFO", "Using network IB");
    const SimGpu& gp = x.gpus[static_cast<size_t>(g)];
    std::string busid = gp.bdf.substr(5, 2) + "000";
    nccl(h, tg + 90000, g, "INFO",
         strf("comm 0x%s rank %d nranks %d cudaDev %d nvmlDev %d busId %s commId 0x%s - Init START",
              r.hex(12).c_str(), rk, nranks, g, g, busid.c_str(), r.hex(16).c_str()));
    nccl(h, tg + 400000, g, "INFO",
         strf("Channel 00/0 : %d[%d] -> %d[%d] [send] via NET/IB/%d/GDRDMA", rk, g,
              (rk + C.gpg) % std::max(nranks, 1), g, g));
    nccl(h, tg + 800000, g, "INFO", "Connected all rings");
    nccl(h, tg + 900000, g, "INFO", "Connected all trees");
    nccl(h, tg + 1200000, g, "INFO",
         strf("comm 0x%s rank %d nranks %d cudaDev %d nvmlDev %d busId %s commId 0x%s - Init "
              "COMPLETE",
              r.hex(12).c_str(), rk, nranks, g, g, busid.c_str(), r.hex(16).c_str()));
  }
}

}  // namespace reflex::sim
