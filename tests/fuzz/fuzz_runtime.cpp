// libFuzzer entry point over the runtime's input side, the part that reads
// what the outside world writes: the first byte picks the mode, the rest is
//   0: a topology file (Topology::load_text),
//   1: JSON envelopes, one a line (interfaces.md §4),
//   2: raw log lines of any format, spread over the topology's hosts and over
//      the kernel/app transports,
// and modes 1-2 end with a batch diagnosis of what was recognized, rendered as
// JSON and text. The knowledge base is the shipped kb/, compiled once, with
// its pattern database precompiled so an Engine per input is cheap.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "reflex/compiler.h"
#include "reflex/diagnosis.h"
#include "reflex/engine.h"
#include "reflex/ingest.h"
#include "reflex/topology.h"

namespace {
struct Setup {
  std::shared_ptr<const reflex::KnowledgeBase> kb;
  std::shared_ptr<const reflex::Topology> topo;
};

const Setup& setup() {
  static const Setup s = [] {
    Setup out;
    std::string err;
    auto kb = reflex::load_kb(REFLEX_FUZZ_KB, &err);
    if (!kb) {
      std::fprintf(stderr, "fuzz_runtime: cannot load %s: %s\n", REFLEX_FUZZ_KB, err.c_str());
      std::abort();
    }
    if (!reflex::precompile_patterns(&*kb, &err))
      std::fprintf(stderr, "fuzz_runtime: no precompiled patterns: %s\n", err.c_str());
    out.kb = std::make_shared<const reflex::KnowledgeBase>(std::move(*kb));
    reflex::TopologyError terr;
    auto topo = reflex::Topology::load_file(REFLEX_FUZZ_TOPOLOGY, &terr);
    if (!topo) {
      std::fprintf(stderr, "fuzz_runtime: cannot load %s\n", REFLEX_FUZZ_TOPOLOGY);
      std::abort();
    }
    out.topo = std::shared_ptr<const reflex::Topology>(std::move(topo));
    return out;
  }();
  return s;
}

constexpr const char* kHosts[] = {"node-0001", "node-0002", "node-0003", "node-0004",
                                  "unknown-host"};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Setup& s = setup();
  const int mode = data[0] % 3;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (mode == 0) {
    reflex::TopologyError err;
    auto topo = reflex::Topology::load_text(rest, "fuzz.json", &err);
    return 0;
  }
  reflex::Engine engine(s.kb, s.topo);
  size_t line_no = 0;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++line_no;
    if (mode == 1) {
      engine.feed_envelope(line);
    } else {
      engine.feed_line(kHosts[line_no % 5],
                       line_no % 2 ? reflex::kTransportKernel : reflex::kTransportApp, line,
                       "fuzz.log", line_no);
    }
  }
  auto diagnoses = engine.diagnose_all();
  (void)reflex::diagnoses_to_json(diagnoses);
  (void)reflex::diagnoses_to_text(diagnoses);
  return 0;
}
