// A small hand-built knowledge base and topology for ingest tests. The KB is
// built directly as reflex::KnowledgeBase (the compiler's output format), so
// these tests do not depend on the .rfx front end. Patterns follow the public
// line formats: NVIDIA's Xid catalog (NVRM lines), Linux aer.c, mlx5 and
// PyTorch ProcessGroupNCCL messages.
#pragma once

#include <memory>
#include <string>

#include "reflex/kb.h"
#include "reflex/topology.h"

namespace reflex::test {

inline const char* kXidPattern =
    R"(NVRM: Xid \((?:PCI:)?(?P<bdf>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\): (?P<xid>\d+),)";

inline Condition leaf(Condition::Op op, std::string field, std::vector<std::string> values) {
  Condition c;
  c.op = op;
  c.field = std::move(field);
  c.values = std::move(values);
  return c;
}

inline Signature xid_sig(const std::string& name, const std::string& code, const std::string& cls) {
  Signature s;
  s.name = name;
  s.kind = DeviceKind::gpu;
  s.sources = kTransportKernel;
  s.patterns = {kXidPattern};
  s.fields = {{"bdf", FieldType::bdf}, {"xid", FieldType::int_}};
  s.when = leaf(Condition::Op::eq, "xid", {code});
  s.locators = {{DeviceKind::gpu, "bdf", ""}};
  s.fault_class = cls;
  s.severity = Severity::critical;
  return s;
}

// The KB every ingest test uses. `storms` adds dedup/aggregate/baseline.
inline KnowledgeBase test_kb() {
  KnowledgeBase kb;
  kb.meta.name = "ingest-test";
  kb.classes = {{"gpu_fallen_off_bus", "", "", {}},
                {"gpu_hw", "", "", {}},
                {"pcie", "", "", {}},
                {"gsp_firmware", "gpu_hw", "", {}}};
  kb.signatures.push_back(xid_sig("xid79_fallen_off_bus", "79", "gpu_fallen_off_bus"));
  kb.signatures.push_back(xid_sig("xid119_gsp_timeout", "119", "gsp_firmware"));
  kb.signatures.push_back(xid_sig("xid13_graphics_exception", "13", ""));
  {
    Signature s = xid_sig("xid95_uncontained_ecc", "95", "gpu_hw");
    s.dedup.window_s = 60;
    kb.signatures.push_back(s);
  }
  {
    // The three-line fallen-off-the-bus message (NVIDIA/NVSentinel test fixture).
    Signature s;
    s.name = "gpu_fallen_off_bus_multiline";
    s.kind = DeviceKind::gpu;
    s.sources = kTransportKernel;
    s.patterns = {R"(NVRM: The NVIDIA GPU (?P<bdf>[0-9a-fA-F:.]+)\s*$)",
                  R"(NVRM: \(PCI ID: (?P<pci_id>[0-9a-fA-F:]+)\) installed in this system has)",
                  R"(NVRM: fallen off the bus and is not responding to commands)"};
    s.fields = {{"bdf", FieldType::bdf}, {"pci_id", FieldType::string}};
    s.locators = {{DeviceKind::gpu, "bdf", ""}};
    s.fault_class = "gpu_fallen_off_bus";
    kb.signatures.push_back(s);
  }
  {
    // Linux aer.c: correctable AER (older kernels' wording).
    Signature s;
    s.name = "pcie_aer_corrected_storm";
    s.kind = DeviceKind::pcie_port;
    s.sources = kTransportKernel;
    s.patterns = {
        R"(pcieport (?P<port>[0-9a-fA-F:.]+): AER: Corrected error received: (?P<src>\S+))"};
    s.fields = {{"port", FieldType::bdf}, {"src", FieldType::string}};
    s.locators = {{DeviceKind::pcie_port, "port", ""}};
    s.aggregate.count_at_least = 5;
    s.aggregate.within_s = 10;
    s.fault_class = "pcie";
    kb.signatures.push_back(s);
  }
  {
    // PyTorch ProcessGroupNCCL watchdog timeout, a hang symptom on a rank.
    Signature s;
    s.name = "nccl_watchdog_timeout";
    s.kind = DeviceKind::rank;
    s.sources = kTransportApp;
    s.patterns = {
        R"(\[Rank (?P<rank>\d+)\] Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(?P<seq>\d+))"};
    s.fields = {{"rank", FieldType::int_}, {"seq", FieldType::int_}};
    s.locators = {{DeviceKind::rank, "rank", ""}};
    s.symptom = SymptomKind::hang;
    kb.signatures.push_back(s);
  }
  {
    // Invented format (training-loop log): iteration time, a fail-slow baseline on the job.
    Signature s;
    s.name = "iteration_slowdown";
    s.kind = DeviceKind::job;
    s.sources = kTransportApp;
    s.patterns = {
        R"(iteration (?P<iter>\d+)/\s*\d+ \| elapsed time per iteration \(ms\): (?P<ms>[0-9.]+))"};
    s.fields = {{"iter", FieldType::int_}, {"ms", FieldType::float_}};
    s.baseline.field = "ms";
    s.baseline.factor = 1.2;
    s.baseline.window = 8;
    s.symptom = SymptomKind::slowdown;
    kb.signatures.push_back(s);
  }
  {
    // mlx5 command timeout on a NIC by BDF (NVIDIA/NVSentinel test fixture).
    Signature s;
    s.name = "mlx5_cmd_timeout";
    s.kind = DeviceKind::nic;
    s.sources = kTransportKernel;
    s.patterns = {
        R"(mlx5_core (?P<bdf>[0-9a-fA-F:.]+): wait_func:\d+:\(pid \d+\): (?P<cmd>\w+)\(0x[0-9a-fA-F]+\) timeout)"};
    s.fields = {{"bdf", FieldType::bdf}, {"cmd", FieldType::string}};
    s.locators = {{DeviceKind::nic, "bdf", ""}};
    s.fault_class = "gpu_hw";
    kb.signatures.push_back(s);
  }
  return kb;
}

inline const char* kTopologyJson = R"({
  "cluster": "test",
  "hosts": [
    {"name": "node-0017", "ip": "10.1.0.17",
     "gpus": [{"index": 0, "bdf": "0000:18:00.0", "pcie_switch": "sw0", "nics": ["mlx5_0"]},
              {"index": 3, "bdf": "0000:9b:00.0"}],
     "nics": [{"name": "mlx5_0", "bdf": "0000:19:00.0", "ip": "10.2.17.1", "pcie_switch": "sw0"}],
     "pcie_switches": [{"id": "sw0", "bdf": "0000:17:00.0", "root_port": "0000:16:01.0"}]},
    {"name": "node-0018", "ip": "10.1.0.18",
     "gpus": [{"index": 0, "bdf": "0000:18:00.0"}]}
  ],
  "jobs": [{"id": "job-42", "ranks": [{"rank": 0, "host": "node-0017", "gpu": 0},
                                       {"rank": 1, "host": "node-0017", "gpu": 3},
                                       {"rank": 2, "host": "node-0018", "gpu": 0}]}]
})";

inline std::unique_ptr<Topology> test_topology() {
  TopologyError err;
  auto t = Topology::load_text(kTopologyJson, "test-topology.json", &err);
  return t;
}

}  // namespace reflex::test
