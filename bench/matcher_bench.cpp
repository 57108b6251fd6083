// Google Benchmark micro benches of the per-line matcher (Hyperscan scan of
// one message + RE2 confirmation on hits) with the bench KB built in code.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <new>

#include "matcher.h"
#include "reflex/ingest.h"

// Counts heap allocations so the benches can report allocations per line.
#include "counting_new.h"

namespace {

using namespace reflex;

KnowledgeBase bench_kb() {
  KnowledgeBase kb;
  auto add = [&](std::string name, std::string pat, DeviceKind kind, uint8_t src) {
    Signature s;
    s.name = std::move(name);
    s.kind = kind;
    s.sources = src;
    s.patterns = {std::move(pat)};
    kb.signatures.push_back(std::move(s));
  };
  // One shared NVRM Xid pattern with 40 `when` variants, as the shipped KB
  // writes its Xid signatures.
  const char* xid =
      R"(NVRM: Xid \((?:PCI:)?(?P<bdf>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\): (?P<xid>\d+),)";
  for (int code = 1; code <= 40; ++code) {
    Signature s;
    s.name = "xid" + std::to_string(code);
    s.kind = DeviceKind::gpu;
    s.sources = kTransportKernel;
    s.patterns = {xid};
    s.fields = {{"bdf", FieldType::bdf}, {"xid", FieldType::int_}};
    Condition c;
    c.field = "xid";
    c.values = {std::to_string(code)};
    s.when = c;
    kb.signatures.push_back(s);
  }
  add("sxid",
      R"(nvidia-nvswitch(\d+): SXid \(PCI:([0-9a-fA-F:.]+)\): (\d+), (Fatal|Non-fatal|Severity \d+|Data))",
      DeviceKind::nvswitch, kTransportKernel);
  add("aer_recv",
      R"(AER: (Multiple )?(Corrected|Correctable|Uncorrected|Uncorrectable) ?(\([^)]*\))? error(?: message)? received:? (?:from )?(\S+))",
      DeviceKind::pcie_port, kTransportKernel);
  add("dpc", R"(DPC: containment event, status:(0x[0-9a-f]+) source:(0x[0-9a-f]+))",
      DeviceKind::pcie_port, kTransportKernel);
  add("mlx5_pme",
      R"(mlx5_core (\S+): Port module event(\[error\])?: module (\d+), ([^,]+)(?:, (.*))?)",
      DeviceKind::nic, kTransportKernel);
  add("nccl_wc",
      R"(NET/IB(?:/GIN)? ?: Got completion from peer (\S+) with status=(\d+) opcode=(\d+) len=(\d+) vendor err (\d+) \((Send|Recv)\))",
      DeviceKind::rank, kTransportApp);
  add("torch_wd",
      R"(\[Rank (\d+)\] Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(\d+), OpType=(\w+).*Timeout\(ms\)=(\d+)\) ran for (\d+) milliseconds)",
      DeviceKind::rank, kTransportApp);
  add("nfs", R"(nfs: server (\S+) not responding, still trying)", DeviceKind::host,
      kTransportKernel);
  add("hung", R"(INFO: task (\S+):(\d+) blocked for more than (\d+) seconds)", DeviceKind::host,
      kTransportKernel);
  return kb;
}

struct Fixture {
  KnowledgeBase kb = bench_kb();
  ingest::Matcher m;
  std::vector<uint32_t> hits;
  Fixture() {
    std::string err;
    std::vector<std::string> notes;
    m.build(kb, &err, &notes);
    m.reserve_hits(&hits);
  }
};

void run(benchmark::State& state, const std::string& line, bool confirm) {
  static Fixture f;
  FieldValues caps;
  caps.reserve(8);
  uint64_t a0 = g_allocs;
  for (auto _ : state) {
    f.m.scan(line, &f.hits);
    if (confirm)
      for (uint32_t p : f.hits) {
        caps.clear();
        benchmark::DoNotOptimize(f.m.confirm(p, line, &caps));
      }
    benchmark::DoNotOptimize(f.hits.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * line.size()));
  state.counters["allocs_per_line"] =
      static_cast<double>(g_allocs - a0) / static_cast<double>(state.iterations());
}

void BM_ScanBenign(benchmark::State& s) {
  run(s,
      "sshd[70083]: Accepted publickey for ubuntu from 10.0.0.5 port 51234 ssh2: RSA SHA256:3q2+7w",
      true);
}
void BM_ScanNcclInfo(benchmark::State& s) {
  run(s, "node-0001:1234:5678 [2] NCCL INFO Channel 00/32 : 0[0] -> 1[1] via P2P/IPC", true);
}
void BM_ScanXidHitWithRe2(benchmark::State& s) {
  run(s, "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.", true);
}
void BM_ScanXidHitScanOnly(benchmark::State& s) {
  run(s, "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.", false);
}
BENCHMARK(BM_ScanBenign);
BENCHMARK(BM_ScanNcclInfo);
BENCHMARK(BM_ScanXidHitWithRe2);
BENCHMARK(BM_ScanXidHitScanOnly);

}  // namespace

BENCHMARK_MAIN();
