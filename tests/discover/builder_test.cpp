// The builder end to end: collected host directories and a hostfile ->
// topology.json -> the runtime's Topology::load -> devices and relations.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "reflex/discover.h"
#include "reflex/topology.h"
#include "test_data.h"

using namespace reflex;
using namespace reflex::discover;

namespace {

std::string data_dir() {
  return REFLEX_DISCOVER_TEST_DATA;
}

bool has_note(const std::vector<std::string>& notes, const std::string& part) {
  return std::any_of(notes.begin(), notes.end(),
                     [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

}  // namespace

TEST(Builder, TwoHostsAndHostfile) {
  std::string error;
  auto dirs = host_dirs_of(data_dir() + "/e2e/hosts", &error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(dirs.size(), 2u);
  std::vector<HostOutputs> hosts(2);
  std::vector<std::string> notes;
  for (size_t i = 0; i < 2; ++i)
    ASSERT_TRUE(read_host_dir(dirs[i], &hosts[i], &notes, &error)) << error;
  EXPECT_EQ(hosts[0].name, "asus-a");
  std::ifstream hf(data_dir() + "/e2e/hostfile");
  std::stringstream ss;
  ss << hf.rdbuf();
  ParseError pe;
  auto list = parse_hostlist(ss.str(), &pe);
  ASSERT_TRUE(list);
  BuildOptions opts;
  opts.cluster = "lab";
  opts.job = JobSpec{"job-7", *list, 8};
  std::string json;
  ASSERT_TRUE(build_topology(hosts, opts, &json, &notes, &error)) << error;
  TopologyError terr;
  auto topo = Topology::load_text(json, "built.json", &terr);
  ASSERT_TRUE(topo) << terr.str() << "\n" << json;
  EXPECT_EQ(topo->host_count(), 2u);
  // GPU 1 of asus-b is 0000:41:00.0, on root port 0000:40:01.1 with no switch between.
  auto g = topo->gpu_by_index("asus-b", 1);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->bdf, "0000:41:00.0");
  EXPECT_TRUE(topo->related(Relation::below, "asus-b/gpu1", "asus-b/pcie/0000:40:01.1"));
  EXPECT_FALSE(topo->related(Relation::below, "asus-b/gpu1", "asus-b/pcie/0000:00:01.1"));
  EXPECT_FALSE(topo->related(Relation::below, "asus-a/gpu1", "asus-b/pcie/0000:40:01.1"));
  auto port = topo->device_by_bdf("asus-a", "0000:e0:01.1");
  ASSERT_TRUE(port);
  EXPECT_EQ(port->id, "asus-a/pcie/0000:e0:01.1");
  EXPECT_TRUE(has_note(notes, "no PCIe switch seen: attached to root port"));
  // Ranks 0-3 on asus-a, 4-7 on asus-b, local rank = GPU index.
  auto r5 = topo->rank("job-7", 5);
  ASSERT_TRUE(r5);
  EXPECT_TRUE(topo->related(Relation::runs_on, "job/job-7/rank5", "asus-b/gpu1") ||
              topo->related(Relation::on, "job/job-7/rank5", "asus-b"));
  EXPECT_EQ(json.find("\"rank\": 8"), std::string::npos);
  // The same inputs give the same bytes.
  std::string again;
  std::vector<std::string> n2;
  ASSERT_TRUE(build_topology(hosts, opts, &again, &n2, &error));
  EXPECT_EQ(json, again);
}

// Near-miss hosts written here: a GPU and a NIC behind one switch, a pairing
// shown by topo -m, a tie that must stay unpaired.
TEST(Builder, SwitchPairingAndTie) {
  HostOutputs h;
  h.dir = "mem";
  h.name = "n1";
  ParseError pe;
  h.pci = parse_lspci_tree(
      "-[0000:00]-+-00.0  Host bridge\n"
      "           \\-01.0-[01-04]----00.0-[02-04]--+-00.0-[03]----00.0  NVIDIA Corporation GH100 "
      "[H100 SXM5 80GB]\n"
      "                                           \\-04.0-[04]----00.0  Mellanox Technologies "
      "MT2910 Family [ConnectX-7]\n",
      &pe);
  ASSERT_TRUE(h.pci) << pe.message;
  h.gpus = std::vector<GpuRecord>{{0, "0000:03:00.0", "1650", ""}, {1, "", "", ""}};
  h.topo = parse_nvsmi_topo(
      "\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\n"
      "GPU0\t X \tNV18\tPIX\tSYS\t0-1\n"
      "GPU1\tNV18\t X \tPXB\tPXB\t0-1\n"
      "\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n",
      &pe);
  ASSERT_TRUE(h.topo) << pe.message;
  h.ib = {{"mlx5_0", 1, "0000:04:00.0", "ibp4s0", "Up"}, {"mlx5_1", 1, "", "ibp5s0", "Up"}};
  h.has_ib = true;
  std::string json, error;
  std::vector<std::string> notes;
  ASSERT_TRUE(build_topology({h}, {}, &json, &notes, &error)) << error;
  TopologyError terr;
  auto topo = Topology::load_text(json, "built.json", &terr);
  ASSERT_TRUE(topo) << terr.str() << "\n" << json;
  // Both below the switch's upstream port; each below its own downstream port.
  EXPECT_TRUE(topo->related(Relation::below, "n1/gpu0", "n1/pcie/0000:01:00.0"));
  EXPECT_TRUE(topo->related(Relation::below, "n1/mlx5_0", "n1/pcie/0000:01:00.0"));
  EXPECT_TRUE(topo->related(Relation::below, "n1/gpu0", "n1/pcie/0000:02:00.0"));
  EXPECT_FALSE(topo->related(Relation::below, "n1/mlx5_0", "n1/pcie/0000:02:00.0"));
  EXPECT_TRUE(topo->related(Relation::paired, "n1/gpu0", "n1/mlx5_0"));
  EXPECT_FALSE(topo->related(Relation::paired, "n1/gpu1", "n1/mlx5_0"));
  EXPECT_FALSE(topo->related(Relation::paired, "n1/gpu1", "n1/mlx5_1"));
  EXPECT_TRUE(has_note(notes, "GPU 1 is as close to mlx5_0, mlx5_1: not paired"));
  EXPECT_TRUE(has_note(notes, "mlx5_1 has no PCI address"));
}

// A real tree (data/SOURCES.md, an 8 x H200 KVM guest): each GPU and its NIC
// behind one switch of two ports. The GPU and RDMA lists name the tree's
// addresses and are written here, as is the nvlink -s of GPU 1.
TEST(Builder, RealTreeGpuAndNicUnderOneSwitch) {
  HostOutputs h;
  h.dir = "mem";
  h.name = "207-vm";
  ParseError pe;
  h.pci = parse_lspci_tree(data("nccl-tests-256/lspci-tv-h200-vm.txt"), &pe);
  ASSERT_TRUE(h.pci) << pe.line << ": " << pe.message;
  h.gpus = std::vector<GpuRecord>{{0, "0000:68:00.0", "", ""}, {1, "0000:cc:00.0", "", ""}};
  h.ib = {{"mlx5_0", 1, "0000:67:00.0", "", ""}, {"mlx5_4", 1, "0000:cb:00.0", "", ""}};
  h.has_ib = true;
  h.nvlinks = std::vector<NvlinkStatus>{{1, "GPU-x", 18, {4, 9}, false}, {7, "", 18, {}, false}};
  std::string json, error;
  std::vector<std::string> notes;
  ASSERT_TRUE(build_topology({h}, {}, &json, &notes, &error)) << error;
  TopologyError terr;
  auto topo = Topology::load_text(json, "built.json", &terr);
  ASSERT_TRUE(topo) << terr.str() << "\n" << json;
  // c8:00.0 root port -> c9:00.0 upstream port -> ca:00.0 (NIC) and ca:01.0 (GPU).
  EXPECT_TRUE(topo->related(Relation::below, "207-vm/gpu1", "207-vm/pcie/0000:c9:00.0"));
  EXPECT_TRUE(topo->related(Relation::below, "207-vm/mlx5_4", "207-vm/pcie/0000:c9:00.0"));
  EXPECT_TRUE(topo->related(Relation::below, "207-vm/gpu1", "207-vm/pcie/0000:c8:00.0"));
  EXPECT_TRUE(topo->related(Relation::below, "207-vm/gpu1", "207-vm/pcie/0000:ca:01.0"));
  EXPECT_FALSE(topo->related(Relation::below, "207-vm/mlx5_4", "207-vm/pcie/0000:ca:01.0"));
  EXPECT_FALSE(topo->related(Relation::below, "207-vm/gpu1", "207-vm/pcie/0000:65:00.0"));
  EXPECT_TRUE(topo->related(Relation::below, "207-vm/gpu0", "207-vm/pcie/0000:65:00.0"));
  EXPECT_TRUE(topo->related(Relation::below, "207-vm/mlx5_0", "207-vm/pcie/0000:65:00.0"));
  // No topo -m: the shared switch is shown, a pairing is not guessed from it.
  EXPECT_FALSE(topo->related(Relation::paired, "207-vm/gpu1", "207-vm/mlx5_4"));
  EXPECT_TRUE(has_note(notes, "no nvidia-smi topo -m"));
  // Link lines as nvlink -s printed them; GPU 7 is not in the GPU list.
  auto doc = nlohmann::json::parse(json);
  const auto& g1 = doc["hosts"][0]["gpus"][1];
  ASSERT_EQ(g1["index"], 1);
  EXPECT_EQ(g1["nvlinks"]["links"], 18);
  EXPECT_EQ(g1["nvlinks"]["inactive"], nlohmann::json::array({4, 9}));
  EXPECT_FALSE(g1["nvlinks"].contains("all_inactive"));
  EXPECT_FALSE(doc["hosts"][0]["gpus"][0].contains("nvlinks"));
  EXPECT_TRUE(has_note(notes, "nvlink -s GPU 7 is not in nvidia-smi's GPU list"));
}

// The first VM of the same report: every GPU and NIC on its own root port.
TEST(Builder, RealFlatTreeNoSwitch) {
  HostOutputs h;
  h.dir = "mem";
  h.name = "207-vm";
  ParseError pe;
  h.pci = parse_lspci_tree(data("nccl-tests-256/lspci-tvv-flat-vm.txt"), &pe);
  ASSERT_TRUE(h.pci) << pe.line << ": " << pe.message;
  h.gpus = std::vector<GpuRecord>{{0, "0000:05:00.0", "", ""}};
  h.ib = {{"mlx5_0", 1, "0000:0d:00.0", "", ""}};
  h.has_ib = true;
  std::string json, error;
  std::vector<std::string> notes;
  ASSERT_TRUE(build_topology({h}, {}, &json, &notes, &error)) << error;
  TopologyError terr;
  auto topo = Topology::load_text(json, "built.json", &terr);
  ASSERT_TRUE(topo) << terr.str();
  EXPECT_TRUE(topo->related(Relation::below, "207-vm/gpu0", "207-vm/pcie/0000:00:01.4"));
  EXPECT_FALSE(topo->related(Relation::below, "207-vm/mlx5_0", "207-vm/pcie/0000:00:01.4"));
  EXPECT_TRUE(has_note(notes, "no PCIe switch seen: attached to root port 0000:00:01.4"));
}

TEST(Builder, DuplicateHostRefused) {
  HostOutputs a, b;
  a.dir = "d1", b.dir = "d2";
  a.name = b.name = "same";
  std::string json, error;
  std::vector<std::string> notes;
  EXPECT_FALSE(build_topology({a, b}, {}, &json, &notes, &error));
  EXPECT_NE(error.find("d2: host 'same' is also d1"), std::string::npos);
  b.name = "bad/name";
  EXPECT_FALSE(build_topology({a, b}, {}, &json, &notes, &error));
}
