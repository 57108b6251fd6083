// Emission helpers shared by the scenario templates, the noise and the latent
// faults: one place that knows each source's real line format and its version
// drift across driver, kernel, NCCL and PyTorch versions.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/model.h"

namespace reflex::sim {

std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

class Ctx {
 public:
  Ctx(Incident& inc, Rng& rng) : I(inc), C(*inc.c), J(inc.job), r(rng) {}
  Incident& I;
  Cluster& C;
  const Job& J;
  Rng& r;

  const SimHost& H(int h) const { return C.hosts[static_cast<size_t>(h)]; }
  const std::string& hn(int h) const { return H(h).name; }
  bool in_job(int h) const { return J.pos[static_cast<size_t>(h)] >= 0; }
  int rank(int h, int g) const { return J.rank(h, g); }
  int nhosts() const { return static_cast<int>(C.hosts.size()); }
  int pid(int h, int g) const { return I.prof[static_cast<size_t>(h)].pid_base + g; }

  // ---- raw emission ----
  void line(int h, Us t, Chan ch, std::string s, int lrank = -1, bool timed = false) {
    Line l;
    l.t = t;
    l.seq = I.seq++;
    l.chan = ch;
    l.lrank = static_cast<int16_t>(lrank);
    l.timed = timed;
    l.text = std::move(s);
    I.host_lines[static_cast<size_t>(h)].push_back(std::move(l));
  }
  void kern(int h, Us t, std::string s) { line(h, t, kKern, std::move(s)); }
  void app(int h, Us t, int lr, std::string s) { line(h, t, kApp, std::move(s), lr); }
  void sm(Us t, std::string s) {
    Line l;
    l.t = t;
    l.seq = I.seq++;
    l.chan = kSm;
    l.text = std::move(s);
    I.sm_lines.push_back(std::move(l));
  }
  // PyTorch c10 log line of rank (h, g): "[rankR]:[E305 10:11:12.123456789 FILE:LINE] msg"
  void torch(int h, Us t, int g, char level, int file_line, const std::string& msg) {
    line(h, t, kApp,
         strf("[rank%d]:[%c\x01 ProcessGroupNCCL.cpp:%d] ", rank(h, g), level, file_line) + msg, g,
         true);
  }
  // "[rankR]: msg" (Python traceback / exception text as torchrun prefixes it)
  void pyerr(int h, Us t, int g, const std::string& msg) {
    app(h, t, g, strf("[rank%d]: ", rank(h, g)) + msg);
  }
  // torchrun (elastic agent) on host h: "W305 10:11:12.123000 140023 torch/...py:897] msg"
  void torchrun(int h, Us t, char level, int py_line, const std::string& msg) {
    line(h, t, kApp,
         strf("%c\x01 %d torch/distributed/elastic/multiprocessing/api.py:%d] ", level,
              I.prof[static_cast<size_t>(h)].pid_base - 7, py_line) +
             msg,
         -1, true);
  }
  // NCCL: "node-0017:2345:2901 [3] NCCL WARN msg"
  void nccl(int h, Us t, int g, const char* level, const std::string& msg) {
    const HostProfile& p = I.prof[static_cast<size_t>(h)];
    app(h, t, g,
        strf("%s:%d:%d [%d] NCCL %s ", p.nccl_name.c_str(), p.pid_base + g,
             p.pid_base + g + 560 + (g * 7) % 13, g, level) +
            msg);
  }
  std::string pg(int rank_) const {
    switch (I.torch_variant) {
      case 0:
        return strf("[PG 0 Rank %d]", rank_);
      case 1:
        return strf("[Rank %d]", rank_);
      case 2:
        return strf("[PG ID 0 PG GUID 0(default_pg) Rank %d]", rank_);
      default:
        return strf("[PG 0 (default_pg) Rank %d]", rank_);
    }
  }
  struct TorchLines {
    int wd, exc, fail, down, term;
  };
  TorchLines tl() const {
    static const TorchLines k[] = {{632, 1709, 630, 636, 1902},
                                   {607, 1664, 621, 627, 1895},
                                   {616, 1783, 626, 632, 1968},
                                   {1618, 1783, 1637, 1643, 1715}};
    return k[I.torch_variant % 4];
  }

  // ---- kernel formats ----
  // NVRM Xid with the driver drift of §2.1: with or without pid=/name=.
  void xid(int h, int g, Us t, int code, const std::string& text, bool process_ctx = false) {
    const SimGpu& gp = H(h).gpus[static_cast<size_t>(g)];
    std::string who;
    if (I.nccl_variant % 3 != 2) {
      who = process_ctx ? strf(" pid=%d, name=python,", pid(h, g))
                        : " pid='<unknown>', name=<unknown>,";
    }
    kern(h, t,
         strf("NVRM: Xid (PCI:%s): %d,%s %s", gp.bus.c_str(), code, who.c_str(), text.c_str()));
  }
  void xid_context(int h, int g, Us t) {
    const SimGpu& gp = H(h).gpus[static_cast<size_t>(g)];
    kern(h, t, strf("NVRM: GPU at PCI:%s: %s", gp.bus.c_str(), gp.uuid.c_str()));
    kern(h, t, strf("NVRM: GPU Board Serial Number: %s", gp.serial.c_str()));
  }
  bool new_kernel() const { return I.nccl_variant % 2 == 1; }

  // ---- job-level symptoms ----
  struct Prop {
    Us t_fail = 0;
    std::vector<int> hosts;                       // hosts whose endpoints stopped answering
    std::vector<int> rails;                       // affected rails (empty = all)
    bool own_side = false;                        // the failed host still logs its side (NIC down)
    bool errored = true;                          // errored (IB status 12) vs hung (watchdog)
    std::vector<int> dead_hosts;                  // no lines from their ranks
    std::vector<std::pair<int, int>> dead_ranks;  // (h, g) exited ranks
    std::vector<std::pair<int, int>> lagging;     // CPU-side blocked ranks (hung regime)
    bool launch = false;                          // init-time failure
  };
  Us propagate(const Prop& p);
  void rank_crash(int h, int g, Us t, const std::string& cuda_error);
  Us teardown(int h, Us t, int failed_g, int exitcode);
  std::string ib_error(int h_from, int g, int peer_h, int rail, int status, int vendor);
  void training(Us t_from, Us t_to, Us slow_at, double factor);
  void nccl_startup(int h, Us t);

 private:
  struct Spread;  // what propagate's two regimes share (ctx.cpp)
  Us propagate_errored(const Prop& p, Spread& s);
};

}  // namespace reflex::sim
