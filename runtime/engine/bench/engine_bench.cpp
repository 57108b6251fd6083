// Engine benchmark: generates a topology (default 12,500 hosts x 8 GPUs =
// 100,000 GPUs, 100 jobs of 64 hosts), a 1,000,000-event window of noise plus
// 100 PCIe-cascade incidents (AER -> Xid 79 -> 512 watchdog timeouts each),
// indexes it once, then times the diagnosis of each incident. Prints p50/p99
// of the per-incident diagnosis, the indexing time, accuracy and peak RSS.
// The KB is a small hand-built one (benchmark vocabulary, not kb/).
#include <malloc.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "index.h"
#include "reflex/engine.h"

using namespace reflex;
using Clock = std::chrono::steady_clock;

namespace {

// CPU time of this thread: on a shared machine, wall time also counts the
// time other processes held the core.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::string hex2(int v) {
  char b[8];
  std::snprintf(b, sizeof b, "%02x", v);
  return b;
}

std::string host_name(int h) {
  return "node-" + std::to_string(h);
}

std::string topology(int hosts, int jobs, int hosts_per_job) {
  std::string s = "{\"cluster\":\"bench\",\"hosts\":[";
  s.reserve(static_cast<size_t>(hosts) * 1400);
  for (int h = 0; h < hosts; ++h) {
    if (h) s += ",";
    s += "{\"name\":\"" + host_name(h) + "\",\"gpus\":[";
    for (int g = 0; g < 8; ++g) {
      if (g) s += ",";
      s += "{\"index\":" + std::to_string(g) + ",\"bdf\":\"0000:" + hex2(0x11 + g * 0x10) +
           ":00.0\",\"pcie_switch\":\"sw" + std::to_string(g) + "\",\"nics\":[\"mlx5_" +
           std::to_string(g) + "\"]}";
    }
    s += "],\"nics\":[";
    for (int g = 0; g < 8; ++g) {
      if (g) s += ",";
      s += "{\"name\":\"mlx5_" + std::to_string(g) + "\",\"bdf\":\"0000:" + hex2(0x12 + g * 0x10) +
           ":00.0\",\"pcie_switch\":\"sw" + std::to_string(g) + "\"}";
    }
    s += "],\"pcie_switches\":[";
    for (int g = 0; g < 8; ++g) {
      if (g) s += ",";
      s += "{\"id\":\"sw" + std::to_string(g) + "\",\"bdf\":\"0000:" + hex2(0x10 + g * 0x10) +
           ":00.0\"}";
    }
    s += "]}";
  }
  s += "],\"jobs\":[";
  for (int j = 0; j < jobs; ++j) {
    if (j) s += ",";
    s += "{\"id\":\"job-" + std::to_string(j) + "\",\"ranks\":{\"hosts\":[";
    for (int k = 0; k < hosts_per_job; ++k) {
      if (k) s += ",";
      s += "\"" + host_name(j * hosts_per_job + k) + "\"";
    }
    s += "],\"gpus_per_host\":8}}";
  }
  s += "]}";
  return s;
}

KnowledgeBase bench_kb() {
  KnowledgeBase kb;
  kb.classes = {{"pcie", "", "", {}},
                {"gpu_fallen_off_bus", "", "", {}},
                {"user_code", "", "", {}},
                {"thermal_power", "", "", {}},
                {"host_kernel", "", "", {}}};
  auto sig = [&](const char* n, DeviceKind k, const char* cls, Severity sev,
                 SymptomKind sym = SymptomKind::none) {
    Signature s;
    s.name = n;
    s.kind = k;
    s.fault_class = cls;
    s.severity = sev;
    s.symptom = sym;
    s.action = "inspect {device}";
    kb.signatures.push_back(s);
  };
  sig("b_aer_fatal", DeviceKind::pcie_port, "pcie", Severity::critical);
  sig("b_xid79", DeviceKind::gpu, "gpu_fallen_off_bus", Severity::critical);
  sig("b_xid13", DeviceKind::gpu, "user_code", Severity::warning);
  sig("b_throttle", DeviceKind::gpu, "thermal_power", Severity::warning);
  sig("b_ecc_sbe", DeviceKind::gpu, "", Severity::info);
  sig("b_info", DeviceKind::host, "", Severity::info);
  sig("b_ib_retry", DeviceKind::host, "", Severity::major);
  sig("b_watchdog", DeviceKind::rank, "", Severity::major, SymptomKind::hang);
  Latent l;
  l.name = "b_host_died";
  l.kind = DeviceKind::host;
  l.fault_class = "host_kernel";
  l.silent = true;
  kb.latents.push_back(l);
  int line = 1;
  auto rule = [&](const char* c, const char* e, Relation rel, bool effect_lhs, const char* eb,
                  double mn, double mx, double st) {
    Rule r;
    r.name = std::string(c) + "_" + e;
    r.loc = {"bench.rfx", line++, 1};
    r.cause = c;
    r.effect = e;
    RelationConstraint w;
    w.rel = rel;
    DeviceRef cause{DeviceRef::Side::cause, ""}, effect{DeviceRef::Side::effect, eb};
    w.lhs = effect_lhs ? effect : cause;
    w.rhs = effect_lhs ? cause : effect;
    r.where.push_back(w);
    r.min_s = mn;
    r.max_s = mx;
    r.skew_s = 5;
    r.strength = st;
    kb.rules.push_back(r);
  };
  rule("b_aer_fatal", "b_xid79", Relation::below, true, "", 0, 30, 0.9);
  rule("b_xid79", "b_watchdog", Relation::runs_on, true, "", 0, 3600, 0.9);
  rule("b_xid79", "b_watchdog", Relation::same_job, true, "", 0, 3600, 0.6);
  rule("b_xid13", "b_watchdog", Relation::runs_on, true, "", 0, 3600, 0.5);
  rule("b_throttle", "b_watchdog", Relation::runs_on, true, "", 0, 3600, 0.3);
  rule("b_ib_retry", "b_watchdog", Relation::same_job, true, "", 0, 3600, 0.7);
  rule("b_host_died", "b_ib_retry", Relation::on, true, "peer_nic", 0, 120, 0.85);
  return kb;
}

struct Args {
  size_t n_events = 1000000;
  int hosts = 12500, jobs = 100, hosts_per_job = 64, incidents = 100, rounds = 3;
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--events")) a.n_events = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--hosts")) a.hosts = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--incidents")) a.incidents = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--rounds")) a.rounds = std::max(1, std::atoi(argv[i + 1]));
  }
  a.jobs = std::min(a.jobs, a.hosts / a.hosts_per_job);
  a.incidents = std::min(a.incidents, a.jobs);
  return a;
}

// Bytes the allocator has handed out and not got back (glibc), for the
// per-phase memory figures; peak RSS also counts what it keeps cached.
double heap_mib() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  struct mallinfo2 mi = mallinfo2();
  return static_cast<double>(mi.uordblks + mi.hblkhd) / (1024.0 * 1024.0);
#else
  return -1;
#endif
}

// Anonymous memory backed by 2 MiB pages (Linux; -1 elsewhere): whether
// EventIndex::advise_huge_pages() took effect.
double huge_mib() {
  std::FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
  if (!f) return -1;
  char line[256];
  double kb = -1;
  while (std::fgets(line, sizeof line, f))
    if (!std::strncmp(line, "AnonHugePages:", 14)) kb = std::strtod(line + 14, nullptr);
  std::fclose(f);
  return kb < 0 ? -1 : kb / 1024.0;
}

// The incidents' symptom events and the device each should blame.
struct Incidents {
  std::vector<std::vector<uint32_t>> symptoms;
  std::vector<std::string> expected;
};

// Noise over a 2 h window plus the incidents (AER -> Xid 79 -> a watchdog
// timeout on every rank of the job), added to `ix` in generation order.
Incidents make_events(const Args& a, engine::EventIndex& ix) {
  const TimeUs base = *parse_rfc3339("2026-03-05T08:00:00Z");
  const double window_s = 7200;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> when(0, window_s);
  std::uniform_int_distribution<int> any_host(0, a.hosts - 1), any_gpu(0, 7);
  uint64_t seq = 0;
  auto add = [&](const std::string& name, std::string device, DeviceKind kind, int h, double t,
                 const char* clock) {
    Event e;
    e.name = name;
    e.device = std::move(device);
    e.kind = kind;
    e.host = host_name(h);
    e.time.wall = base + static_cast<TimeUs>(t * 1e6);
    e.time.clock = e.host + clock;
    e.evidence = "hosts/" + e.host + "/kern.log:" + std::to_string(++seq);
    e.line = "benchmark line " + e.name + " on " + e.device;
    e.seq = seq;
    return ix.add(std::move(e));
  };
  Incidents inc;
  inc.symptoms.resize(static_cast<size_t>(a.incidents));
  inc.expected.resize(static_cast<size_t>(a.incidents));
  for (int i = 0; i < a.incidents; ++i) {
    int job = i;
    int bad = job * a.hosts_per_job + static_cast<int>(rng() % a.hosts_per_job);
    int g = any_gpu(rng);
    double t = 600 + (window_s - 2400) * i / std::max(1, a.incidents);
    std::string sw = host_name(bad) + "/pcie/0000:" + hex2(0x10 + g * 0x10) + ":00.0";
    inc.expected[static_cast<size_t>(i)] = sw;
    add("b_aer_fatal", sw, DeviceKind::pcie_port, bad, t, "/kernel");
    add("b_xid79", host_name(bad) + "/gpu" + std::to_string(g), DeviceKind::gpu, bad, t + 0.6,
        "/kernel");
    for (int k = 0; k < a.hosts_per_job; ++k)
      for (int r = 0; r < 8; ++r) {
        int rank = k * 8 + r;
        int h = job * a.hosts_per_job + k;
        inc.symptoms[static_cast<size_t>(i)].push_back(
            add("b_watchdog", "job/job-" + std::to_string(job) + "/rank" + std::to_string(rank),
                DeviceKind::rank, h, t + 600 + (rng() % 1000) / 1000.0, "/app"));
      }
  }
  const char* noise[] = {"b_info", "b_ecc_sbe", "b_ecc_sbe", "b_info", "b_throttle", "b_xid13"};
  while (ix.size() < a.n_events) {
    int h = any_host(rng);
    const char* n = noise[rng() % 6];
    if (!std::strcmp(n, "b_info"))
      add(n, host_name(h), DeviceKind::host, h, when(rng), "/kernel");
    else
      add(n, host_name(h) + "/gpu" + std::to_string(any_gpu(rng)), DeviceKind::gpu, h, when(rng),
          "/kernel");
  }
  return inc;
}

// Per-diagnosis wall and thread-CPU times (ms) and the top-1 count of round 1.
struct Timings {
  std::vector<double> wall, cpu;
  int correct = 0;
};

Timings diagnose_all(const Args& a, const KnowledgeBase& kb, const engine::KbIndex& ki,
                     const Topology& topo, engine::EventIndex& ix, const Incidents& inc) {
  EngineOptions o;
  Timings tm;
  for (int rep = 0; rep < a.rounds; ++rep)
    for (size_t i = 0; i < inc.symptoms.size(); ++i) {
      auto t = Clock::now();
      double c0 = cpu_ms();
      auto ds = engine::diagnose_symptoms(kb, ki, topo, ix, inc.symptoms[i], o);
      tm.cpu.push_back(cpu_ms() - c0);
      tm.wall.push_back(ms_since(t));
      if (rep == 0 && !ds.empty() && !ds[0].root_causes.empty() &&
          ds[0].root_causes[0].device == inc.expected[i])
        ++tm.correct;
    }
  std::sort(tm.wall.begin(), tm.wall.end());
  std::sort(tm.cpu.begin(), tm.cpu.end());
  return tm;
}

double pct(const std::vector<double>& v, double p) {
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse_args(argc, argv);
  auto t0 = Clock::now();
  std::unique_ptr<Topology> topo;
  {
    std::string tj = topology(a.hosts, a.jobs, a.hosts_per_job);
    TopologyError terr;
    topo = Topology::load_text(tj, "bench-topology.json", &terr);
    if (!topo) {
      std::fprintf(stderr, "topology: %s\n", terr.str().c_str());
      return 1;
    }
  }
  const double topo_ms = ms_since(t0), heap_topo = heap_mib();
  KnowledgeBase kb = bench_kb();
  engine::Interner in;
  engine::EventIndex ix(&in);
  engine::KbIndex ki(kb, &in);
  t0 = Clock::now();
  const Incidents inc = make_events(a, ix);
  // Part of indexing: lists left unsorted by out-of-order arrival are sorted
  // here, not by whichever diagnosis touches them first.
  ix.sort_all();
  // Likewise the topology ids of the interned device names (diagnose_symptoms
  // would otherwise resolve all of them on the first diagnosis).
  ix.bind_topology(*topo);
  const double index_ms = ms_since(t0), heap_events = heap_mib();
  const Timings tm = diagnose_all(a, kb, ki, *topo, ix, inc);
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("engine_bench: %zu events, %d hosts (%d GPUs), %d incidents x %d symptoms\n",
              ix.size(), a.hosts, a.hosts * 8, a.incidents, a.hosts_per_job * 8);
  std::printf("  topology load        %.0f ms\n", topo_ms);
  std::printf("  event generation+index %.0f ms\n", index_ms);
  std::printf("  diagnosis per incident: p50 %.2f ms  p99 %.2f ms  max %.2f ms (%zu runs)\n",
              pct(tm.wall, 0.50), pct(tm.wall, 0.99), tm.wall.back(), tm.wall.size());
  std::printf("  thread CPU per incident: p50 %.2f ms  p99 %.2f ms  max %.2f ms\n",
              pct(tm.cpu, 0.50), pct(tm.cpu, 0.99), tm.cpu.back());
  std::printf("  top-1 correct        %d / %d\n", tm.correct, a.incidents);
  std::printf("  heap in use          topology %.0f MiB, + events and index %.0f MiB\n", heap_topo,
              heap_events - heap_topo);
  std::printf("  peak RSS             %.0f MiB (%.0f MiB in 2 MiB pages)\n", ru.ru_maxrss / 1024.0,
              huge_mib());
  return tm.correct == a.incidents ? 0 : 1;
}
