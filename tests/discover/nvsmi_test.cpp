// nvidia-smi's --query-gpu CSV and nvlink -s on real outputs (data/SOURCES.md)
// and on near-misses and hostile inputs written here.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "reflex/discover.h"
#include "test_data.h"

using namespace reflex::discover;

TEST(NvsmiCsv, RealHeaderInAnotherOrder) {
  // name, pci.bus, index, uuid: columns are found by name; pci.bus alone is no address.
  ParseError err;
  auto g = parse_nvsmi_csv(data("nuxhash-10/nvidia-smi-query-gpu.csv"), &err);
  ASSERT_TRUE(g) << err.line << ": " << err.message;
  ASSERT_EQ(g->size(), 5u);
  EXPECT_EQ((*g)[4].index, 4);
  EXPECT_EQ((*g)[4].uuid, "GPU-ff3318a7-f0dd-dc57-1fb8-cc95ba35c56e");
  EXPECT_EQ((*g)[1].bdf, "");
  EXPECT_EQ((*g)[1].serial, "");
  EXPECT_EQ(sniff("x", data("nuxhash-10/nvidia-smi-query-gpu.csv")), OutputKind::nvsmi_csv);
}

// A host directory with both GPU lists: the real -q of data/cuda-samples-104
// and a CSV written here, first agreeing with it, then not.
TEST(NvsmiCsv, JoinedWithQueryByAddress) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("reflex-nvsmi-join-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(std::string(REFLEX_DISCOVER_TEST_DATA) + "/cuda-samples-104/nvidia-smi-q.txt",
                dir / "q.txt");
  std::ofstream(dir / "gpus.csv") << "index, pci.bus_id, serial, uuid, name\n"
                                  << "0, 00000000:94:00.0, [N/A], [N/A], NVIDIA A100-SXM4-80GB\n";
  HostOutputs h;
  std::vector<std::string> notes;
  std::string error;
  ASSERT_TRUE(read_host_dir(dir.string(), &h, &notes, &error)) << error;
  ASSERT_TRUE(h.gpus);
  ASSERT_EQ(h.gpus->size(), 1u);
  EXPECT_EQ((*h.gpus)[0].serial, "1324621114474");  // from -q
  EXPECT_EQ((*h.gpus)[0].uuid, "GPU-a75cda02-62ce-2c30-9150-555ef08935e2");
  for (const std::string& n : notes) EXPECT_EQ(n.find("disagree"), std::string::npos) << n;
  std::ofstream(dir / "gpus.csv") << "index, pci.bus_id\n0, 00000000:17:00.0\n";
  HostOutputs h2;
  notes.clear();
  ASSERT_TRUE(read_host_dir(dir.string(), &h2, &notes, &error)) << error;
  EXPECT_EQ((*h2.gpus)[0].bdf, "0000:17:00.0");
  bool noted = false;
  for (const std::string& n : notes) noted |= n.find("disagree") != std::string::npos;
  EXPECT_TRUE(noted);
  fs::remove_all(dir);
}

TEST(NvsmiCsv, RealWithoutIndexRefused) {
  // uuid, pci.bus_id, pci.domain: the row order is not said to be nvidia-smi's index.
  ParseError err;
  std::string text = data("nvidia-docker-1418/nvidia-smi-query-gpu.csv");
  EXPECT_EQ(sniff("gpus.csv", text), OutputKind::nvsmi_csv);
  EXPECT_FALSE(parse_nvsmi_csv(text, &err));
  EXPECT_EQ(err.line, 1);
  EXPECT_NE(err.message.find("no 'index' column"), std::string::npos);
}

TEST(NvsmiCsv, CollectedFormAndNoHeader) {
  // The layout of scripts/collect-topology.sh's query (values written here).
  const char* with_header =
      "index, pci.bus_id, serial, uuid, name\n"
      "1, 00000000:2A:00.0, [N/A], GPU-b, NVIDIA H100 80GB HBM3\n"
      "0, 00000000:18:00.0, 1654922006536, GPU-a, NVIDIA H100 80GB HBM3\n";
  ParseError err;
  auto g = parse_nvsmi_csv(with_header, &err);
  ASSERT_TRUE(g) << err.message;
  ASSERT_EQ(g->size(), 2u);
  EXPECT_EQ((*g)[0].index, 0);
  EXPECT_EQ((*g)[0].bdf, "0000:18:00.0");
  EXPECT_EQ((*g)[0].serial, "1654922006536");
  EXPECT_EQ((*g)[1].bdf, "0000:2a:00.0");
  EXPECT_EQ((*g)[1].serial, "");  // [N/A] is no serial
  auto n = parse_nvsmi_csv("0, 00000000:18:00.0, 1654922006536, GPU-a, NVIDIA H100\n", &err);
  ASSERT_TRUE(n) << err.message;
  EXPECT_EQ((*n)[0].uuid, "GPU-a");
  EXPECT_EQ(sniff("x", "0, 00000000:18:00.0, 1654922006536, GPU-a, NVIDIA H100\n"),
            OutputKind::nvsmi_csv);
}

TEST(NvsmiCsv, NearMissesAndHostile) {
  ParseError err;
  // Without a header the five collected columns are required.
  EXPECT_FALSE(parse_nvsmi_csv("0, 00000000:18:00.0\n", &err));
  // A row cut short (a truncated file) is named by line.
  EXPECT_FALSE(
      parse_nvsmi_csv("index, pci.bus_id, uuid\n0, 00000000:18:00.0, GPU-a\n1, 000", &err));
  EXPECT_EQ(err.line, 3);
  EXPECT_FALSE(parse_nvsmi_csv("index, pci.bus_id\n0, 00000000:18:00\n", &err));
  EXPECT_NE(err.message.find("bad pci.bus_id"), std::string::npos);
  EXPECT_FALSE(parse_nvsmi_csv("index, uuid\n0, GPU-a\n0, GPU-b\n", &err));
  EXPECT_NE(err.message.find("twice"), std::string::npos);
  EXPECT_FALSE(parse_nvsmi_csv("index, pci.bus_id\n0, 18:00.0\n1, 0000:18:00.0\n", &err));
  EXPECT_FALSE(parse_nvsmi_csv("index, uuid\n", &err));
  EXPECT_FALSE(parse_nvsmi_csv("index, uuid\n99999999, GPU-a\n", &err));
  // A GPU name with a comma would shift the columns: refused, not misread.
  EXPECT_FALSE(parse_nvsmi_csv("index, name, uuid\n0, NVIDIA, Test, GPU-a\n", &err));
  // Many rows: bounded.
  std::string big = "index, uuid\n";
  for (int i = 0; i < 5000; ++i) big += std::to_string(i) + ", GPU-" + std::to_string(i) + "\n";
  EXPECT_FALSE(parse_nvsmi_csv(big, &err));
  EXPECT_NE(err.message.find("more than"), std::string::npos);
  // A monitoring CSV without an identity column is not taken for a GPU list.
  EXPECT_EQ(sniff("x", "timestamp, index, power.draw [W]\n2026/09/12, 0, 100\n"),
            OutputKind::unknown);
}

TEST(NvsmiNvlink, RealAllInactiveGpu) {
  ParseError err;
  std::string text = data("siboehm-bench/nvidia-smi-nvlink-s.txt");
  EXPECT_EQ(sniff("x", text), OutputKind::nvsmi_nvlink);
  auto n = parse_nvsmi_nvlink(text, &err);
  ASSERT_TRUE(n) << err.line << ": " << err.message;
  ASSERT_EQ(n->size(), 3u);
  EXPECT_EQ((*n)[0].links, 4);
  EXPECT_TRUE((*n)[0].inactive.empty());
  EXPECT_EQ((*n)[0].uuid, "GPU-5baec991-de63-c196-1766-04c38407e133");
  EXPECT_EQ((*n)[2].links, 0);
  EXPECT_TRUE((*n)[2].all_inactive);
}

TEST(NvsmiNvlink, RealInactiveLinks) {
  ParseError err;
  auto n = parse_nvsmi_nvlink(data("azhpc-diagnostics-73/nvidia-smi-nvlink-s.txt"), &err);
  ASSERT_TRUE(n) << err.line << ": " << err.message;
  ASSERT_EQ(n->size(), 1u);
  EXPECT_EQ((*n)[0].gpu, 3);
  EXPECT_EQ((*n)[0].links, 6);
  EXPECT_EQ((*n)[0].inactive, (std::vector<int>{3, 5}));
  EXPECT_FALSE((*n)[0].all_inactive);
  auto a = parse_nvsmi_nvlink(data("nccl-tests-228/nvidia-smi-nvlink-s.txt"), &err);
  ASSERT_TRUE(a) << err.line << ": " << err.message;
  ASSERT_EQ(a->size(), 2u);
  EXPECT_EQ((*a)[1].links, 12);
  EXPECT_TRUE((*a)[1].inactive.empty());
}

TEST(NvsmiNvlink, NearMissesAndHostile) {
  ParseError err;
  // `nvidia-smi -L` has the same GPU lines but no links: not nvlink -s.
  EXPECT_EQ(sniff("x",
                  "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1)\nGPU 1: NVIDIA A100-SXM4-80GB "
                  "(UUID: GPU-2)\n"),
            OutputKind::unknown);
  // An excerpt marked "...." by the person who pasted it is not the tool's output.
  EXPECT_FALSE(parse_nvsmi_nvlink("....\nGPU 3: Tesla V100 (UUID: x)\n\t Link 0: 25 GB/s\n", &err));
  EXPECT_EQ(err.line, 1);
  // A line cut short.
  EXPECT_FALSE(parse_nvsmi_nvlink("GPU 0: X (UUID: GPU-1)\n\t Link 0: 25 GB/s\n\t Lin", &err));
  EXPECT_EQ(err.line, 3);
  EXPECT_FALSE(parse_nvsmi_nvlink("\t Link 0: 25 GB/s\n", &err));
  EXPECT_FALSE(parse_nvsmi_nvlink("GPU 0: X (UUID: a)\n\t Link 0: 1\n\t Link 0: 1\n", &err));
  EXPECT_FALSE(parse_nvsmi_nvlink("GPU 0: X (UUID: a)\n\t Link 999: 1\n", &err));
  EXPECT_FALSE(parse_nvsmi_nvlink("GPU 0: X (UUID: a)\nGPU 0: X (UUID: a)\n", &err));
  EXPECT_FALSE(parse_nvsmi_nvlink("GPU 0: X (UUID: a)\n\t Link 0:\n", &err));
  EXPECT_FALSE(parse_nvsmi_nvlink(
      "GPU 0: X (UUID: a)\n\t Link 0: 1\nNVML: Unable to retrieve NVLink information as all links "
      "are inActive\n",
      &err));
  EXPECT_FALSE(parse_nvsmi_nvlink("", &err));
  // Binary-looking bytes are an error with a line, not a crash.
  EXPECT_FALSE(parse_nvsmi_nvlink(std::string("GPU 0: X (UUID: a)\n\x01\xff\xfe\n"), &err));
  EXPECT_EQ(err.line, 2);
  // A GPU without NVLink prints its line alone.
  auto n = parse_nvsmi_nvlink("GPU 0: NVIDIA L40S (UUID: GPU-1)\n", &err);
  ASSERT_TRUE(n) << err.message;
  EXPECT_EQ((*n)[0].links, 0);
  EXPECT_FALSE((*n)[0].all_inactive);
}
