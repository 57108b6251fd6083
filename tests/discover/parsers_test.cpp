// The discover parsers on real tool outputs (data/SOURCES.md) and on
// near-misses written here.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "reflex/discover.h"
#include "test_data.h"

using namespace reflex::discover;

TEST(NormalizeBdf, Forms) {
  EXPECT_EQ(normalize_bdf("18:00.0"), "0000:18:00.0");
  EXPECT_EQ(normalize_bdf("00000000:AF:00.0"), "0000:af:00.0");
  EXPECT_EQ(normalize_bdf("0001:c3:00.1"), "0001:c3:00.1");
  EXPECT_FALSE(normalize_bdf("18:00"));
  EXPECT_FALSE(normalize_bdf("18:00.8"));
  EXPECT_FALSE(normalize_bdf("1000000000:18:00.0"));
}

TEST(LspciTree, RealEsc8000a) {
  ParseError err;
  auto t = parse_lspci_tree(data("stelline-esc8000a/lspci-tv.txt"), &err);
  ASSERT_TRUE(t) << err.line << ": " << err.message;
  // A GPU on a root port of a non-zero root bus.
  const PciDevice* gpu = t->find("0000:41:00.0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->parent, "0000:40:01.1");
  EXPECT_EQ(gpu->description, "NVIDIA Corporation AD102GL [RTX 6000 Ada Generation]");
  const PciDevice* rp = t->find("0000:40:01.1");
  ASSERT_NE(rp, nullptr);
  EXPECT_TRUE(rp->bridge);
  EXPECT_EQ(rp->parent, "");
  // Two switch levels: the NVMe at 6c:00.0 sits under 6a:04.0 <- 69:00.0 <- 62:04.0 <- 61:00.0 <-
  // 60:01.1.
  std::vector<std::string> chain;
  for (const PciDevice* d = t->find("0000:6c:00.0"); d && !d->parent.empty();
       d = t->find(d->parent))
    chain.push_back(d->parent);
  EXPECT_EQ(chain, (std::vector<std::string>{"0000:6a:04.0", "0000:69:00.0", "0000:62:04.0",
                                             "0000:61:00.0", "0000:60:01.1"}));
  // A sibling continued on a later line ('\-') under a list opened far right.
  ASSERT_NE(t->find("0000:62:1c.0"), nullptr);
  EXPECT_EQ(t->find("0000:62:1c.0")->parent, "0000:61:00.0");
  // A bridge with nothing below it, and the last root bus.
  EXPECT_TRUE(t->find("0000:c0:03.2")->bridge);
  EXPECT_EQ(t->find("0000:e1:00.1")->parent, "0000:e0:01.1");
}

TEST(LspciTree, NearMisses) {
  ParseError err;
  EXPECT_FALSE(parse_lspci_tree("no tree here\n", &err));
  // A branch with no list opened at its column.
  EXPECT_FALSE(parse_lspci_tree("-[0000:00]-+-00.0  Host\n        +-01.0  X\n", &err));
  EXPECT_EQ(err.line, 2);
  // A device twice.
  EXPECT_FALSE(parse_lspci_tree("-[0000:00]-+-00.0  A\n           \\-00.0  B\n", &err));
  EXPECT_NE(err.message.find("twice"), std::string::npos);
  // Text after the drawing is not silently dropped.
  EXPECT_FALSE(parse_lspci_tree("-[0000:00]-+-00.0  A\n           \\-01.0  B\n$ exit\n", &err));
  EXPECT_EQ(err.line, 3);
}

TEST(LspciVerbose, ParentsAndPortTypes) {
  // Near-miss shaped blocks (lspci -vvv layout): a root port, a switch port, an endpoint.
  const char* text =
      "00:01.1 PCI bridge: Advanced Micro Devices, Inc. [AMD] Device 14ab (rev 01) (prog-if 00 "
      "[Normal decode])\n"
      "\tBus: primary=00, secondary=01, subordinate=06, sec-latency=0\n"
      "\tCapabilities: [58] Express (v2) Root Port (Slot+), MSI 00\n"
      "01:00.0 PCI bridge: Mellanox Technologies MT2910 Family [ConnectX-7 PCIe Bridge] (prog-if "
      "00 [Normal decode])\n"
      "\tBus: primary=01, secondary=02, subordinate=06, sec-latency=0\n"
      "\tCapabilities: [60] Express (v2) Upstream Port, MSI 00\n"
      "02:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n"
      "\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n";
  ParseError err;
  auto t = parse_lspci_verbose(text, &err);
  ASSERT_TRUE(t) << err.message;
  EXPECT_EQ(t->find("0000:02:00.0")->parent, "0000:01:00.0");
  EXPECT_EQ(t->find("0000:01:00.0")->parent, "0000:00:01.1");
  EXPECT_EQ(t->find("0000:00:01.1")->port_type, "Root Port");
  EXPECT_EQ(t->find("0000:01:00.0")->port_type, "Upstream Port");
  EXPECT_EQ(t->find("0000:02:00.0")->description,
            "Mellanox Technologies MT2910 Family [ConnectX-7]");
  EXPECT_FALSE(
      parse_lspci_verbose("00:01.1 PCI bridge: X\n\tBus: primary=00, secondary=zz\n", &err));
}

TEST(NvsmiQuery, RealA100) {
  ParseError err;
  auto g = parse_nvsmi_query(data("cuda-samples-104/nvidia-smi-q.txt"), &err);
  ASSERT_TRUE(g) << err.message;
  ASSERT_EQ(g->size(), 1u);
  EXPECT_EQ((*g)[0].index, 0);
  EXPECT_EQ((*g)[0].bdf, "0000:94:00.0");
  EXPECT_EQ((*g)[0].serial, "1324621114474");
  EXPECT_EQ((*g)[0].uuid, "GPU-a75cda02-62ce-2c30-9150-555ef08935e2");
}

TEST(NvsmiQuery, PartialReportRefused) {
  // `nvidia-smi -q -i 3` lists one GPU of eight: its position is not its index.
  ParseError err;
  EXPECT_FALSE(
      parse_nvsmi_query("Attached GPUs : 8\nGPU 00000000:5D:00.0\n    Serial Number : 1\n", &err));
  EXPECT_EQ(err.line, 1);
  EXPECT_FALSE(parse_nvsmi_query("Attached GPUs : 0\n", &err));
}

TEST(NvsmiTopo, RealH100NoLegend) {
  ParseError err;
  auto m = parse_nvsmi_topo(data("nccl-1453/nvidia-smi-topo-m.txt"), &err);
  ASSERT_TRUE(m) << err.line << ": " << err.message;
  EXPECT_EQ(m->gpus.size(), 8u);
  EXPECT_EQ(m->nics.size(), 9u);
  EXPECT_EQ(m->unnamed.size(), 9u);  // the legend is not part of the excerpt
  EXPECT_EQ(m->cells.at("GPU0").at("NIC8"), "PIX");
  EXPECT_EQ(m->cells.at("GPU7").at("NIC1"), "PIX");
  EXPECT_EQ(m->cells.at("GPU4").at("NIC0"), "SYS");
}

TEST(NvsmiTopo, LegendAndShortRow) {
  const char* text =
      "\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\n"
      "GPU0\t X \tNV8\tPIX\tSYS\t0-47\n"
      "GPU1\tNV8\t X \tSYS\tPIX\t48-95\n"
      "\nLegend:\n\n  X    = Self\n\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_3\n";
  ParseError err;
  auto m = parse_nvsmi_topo(text, &err);
  ASSERT_TRUE(m) << err.message;
  EXPECT_EQ(m->nics, (std::vector<std::string>{"mlx5_0", "mlx5_3"}));
  EXPECT_TRUE(m->unnamed.empty());
  EXPECT_EQ(m->cells.at("GPU1").at("mlx5_3"), "PIX");
  EXPECT_FALSE(parse_nvsmi_topo("\tGPU0\tGPU1\tNIC0\nGPU0\t X \tNV8\nGPU1\tNV8\t X \tSYS\n", &err));
  EXPECT_EQ(err.line, 2);
}

TEST(IbDevices, RealIbdev2netdevColumnT) {
  ParseError err;
  auto p = parse_ibdev2netdev(data("imbue-ai-cluster-health-4/ibdev2netdev.txt"), &err);
  ASSERT_TRUE(p) << err.message;
  ASSERT_EQ(p->size(), 12u);
  EXPECT_EQ((*p)[2].device, "mlx5_10");
  EXPECT_EQ((*p)[2].port, 1);
  EXPECT_EQ((*p)[2].netdev, "ibp204s0");
  EXPECT_EQ((*p)[2].state, "Down");
  EXPECT_EQ((*p)[1].state, "Up");
}

TEST(IbDevices, VerboseFormAndIbstat) {
  ParseError err;
  auto p = parse_ibdev2netdev(
      "0000:0c:00.0 mlx5_0 (MT4123 - MCX653106A-HDAT) ConnectX-6 VPI fw 20.28.1002 port 1 (ACTIVE) "
      "==> ibp12s0 (Up)\n",
      &err);
  ASSERT_TRUE(p) << err.message;
  EXPECT_EQ((*p)[0].bdf, "0000:0c:00.0");
  EXPECT_EQ((*p)[0].device, "mlx5_0");
  EXPECT_EQ((*p)[0].netdev, "ibp12s0");
  EXPECT_FALSE(parse_ibdev2netdev("mlx5_0 port 1 ==> ib0 (Up)\nmlx5_1 ib1\n", &err));
  EXPECT_EQ(err.line, 2);
  auto s = parse_ibstat(
      "CA 'mlx5_0'\n\tCA type: MT4129\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n",
      &err);
  ASSERT_TRUE(s) << err.message;
  EXPECT_EQ((*s)[0].device, "mlx5_0");
  EXPECT_EQ((*s)[0].state, "Active");
}

TEST(Hostlist, Forms) {
  ParseError err;
  auto h = parse_hostlist("# job 42\nnode-1 slots=8\nnode-2:4\nnode-3\n", &err);
  ASSERT_TRUE(h) << err.message;
  ASSERT_EQ(h->size(), 3u);
  EXPECT_EQ((*h)[0].slots, 8);
  EXPECT_EQ((*h)[1].slots, 4);
  EXPECT_EQ((*h)[2].slots, 0);
  EXPECT_FALSE(parse_hostlist("node[01-04]\n", &err));
  EXPECT_FALSE(parse_hostlist("node-1 slots=x\n", &err));
  EXPECT_FALSE(parse_hostlist("node-1\nnode-1\n", &err));
  EXPECT_EQ(err.line, 2);
}

TEST(Sniff, ByContent) {
  EXPECT_EQ(sniff("a.txt", data("stelline-esc8000a/lspci-tv.txt")), OutputKind::lspci_tree);
  EXPECT_EQ(sniff("x", data("nccl-1453/nvidia-smi-topo-m.txt")), OutputKind::nvsmi_topo);
  EXPECT_EQ(sniff("x", data("cuda-samples-104/nvidia-smi-q.txt")), OutputKind::nvsmi_query);
  EXPECT_EQ(sniff("x", data("imbue-ai-cluster-health-4/ibdev2netdev.txt")),
            OutputKind::ibdev2netdev);
  EXPECT_EQ(sniff("dir/hostname", "node-7\n"), OutputKind::hostname);
  EXPECT_EQ(sniff("notes.txt", "node-7\n"), OutputKind::unknown);
}
