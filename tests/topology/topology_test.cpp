// Topology loading, validation errors, device ids and the resolver (docs/interfaces.md §1-2).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "reflex/topology.h"

namespace reflex {
namespace {

const std::string kData = REFLEX_TOPOLOGY_TEST_DATA;

std::unique_ptr<Topology> load_fixture() {
  TopologyError err;
  auto t = Topology::load_file(kData + "/two_hosts.json", &err);
  EXPECT_TRUE(t) << err.str();
  return t;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(TopologyLoad, FixtureLoadsWithSpecIds) {
  auto t = load_fixture();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->cluster(), "train-a");
  EXPECT_EQ(t->host_count(), 3u);
  EXPECT_EQ(t->host_names(),
            (std::vector<std::string>{"node-0017.cluster.local", "node-0018", "node-0019"}));
  const std::string h = "node-0017.cluster.local";
  for (std::string id :
       {h, h + "/gpu0", h + "/gpu3", h + "/mlx5_2", h + "/pcie/0000:17:00.0",
        h + "/pcie/0000:16:01.0", h + "/pcie/sw2", h + "/nvsw0", h + "/nvsw1",
        std::string("fabric/leaf-03"), std::string("job/job-42"), std::string("job/job-42/rank3"),
        std::string("job/job-7/rank3"), std::string("storage/nfs-03")}) {
    auto d = t->device(id);
    ASSERT_TRUE(d) << id;
    EXPECT_EQ(d->id, id);
    EXPECT_FALSE(d->placeholder) << id;
  }
  EXPECT_EQ(t->device(h + "/gpu3")->kind, DeviceKind::gpu);
  EXPECT_EQ(t->device(h + "/gpu3")->bdf, "0000:9b:00.0");
  EXPECT_EQ(t->device(h + "/gpu3")->host, h);
  EXPECT_EQ(t->device(h + "/pcie/0000:16:01.0")->kind, DeviceKind::pcie_port);
  EXPECT_EQ(t->device("fabric/leaf-03")->kind, DeviceKind::fabric_switch);
  EXPECT_EQ(t->device("fabric/leaf-03")->host, "");
  EXPECT_EQ(t->device("job/job-42/rank3")->kind, DeviceKind::rank);
  EXPECT_EQ(t->device("job/job-42/rank3")->host, "node-0018");
  EXPECT_EQ(t->device("storage/nfs-03")->kind, DeviceKind::storage);
  // GPU 2 does not exist on node-0017: not a placeholder, an unknown id.
  EXPECT_FALSE(t->device(h + "/gpu2"));
  EXPECT_FALSE(t->device("fabric/leaf-99"));
}

TEST(TopologyLoad, PlaceholderIdsParse) {
  auto t = load_fixture();
  ASSERT_TRUE(t);
  auto p = t->device("node-0018/gpu@0000:3b:00.0");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->placeholder);
  EXPECT_EQ(p->kind, DeviceKind::gpu);
  EXPECT_EQ(p->host, "node-0018");
  EXPECT_EQ(p->bdf, "0000:3b:00.0");
  auto n = t->device("node-0018/nic@mlx5_9");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->kind, DeviceKind::nic);
  EXPECT_EQ(n->bdf, "");
  EXPECT_EQ(t->device("node-0018/pcie_port@0000:40:01.0")->kind, DeviceKind::pcie_port);
  EXPECT_EQ(t->device("node-0018/nvswitch@0000:c3:00.0")->kind, DeviceKind::nvswitch);
  // A host that is not in the topology (e.g. the subnet manager) and its devices.
  auto sm = t->device("ufm-01");
  ASSERT_TRUE(sm);
  EXPECT_TRUE(sm->placeholder);
  EXPECT_EQ(sm->kind, DeviceKind::host);
  auto g = t->device("node-0999/gpu4");
  ASSERT_TRUE(g);
  EXPECT_TRUE(g->placeholder);
  EXPECT_EQ(g->kind, DeviceKind::gpu);
  EXPECT_EQ(g->host, "node-0999");
  EXPECT_FALSE(t->device("node-0018/bogus@x") &&
               t->device("node-0018/bogus@x")->kind == DeviceKind::gpu);
  EXPECT_FALSE(t->device(""));
}

TEST(TopologyLoad, EmptyTopologyMakesEverythingPlaceholder) {
  auto t = Topology::empty();
  EXPECT_EQ(t->host_count(), 0u);
  auto d = t->device("node-0017/gpu3");
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->placeholder);
  EXPECT_TRUE(t->related(Relation::same_host, "node-0017/gpu3", "node-0017/gpu@0000:18:00.0"));
  EXPECT_FALSE(t->resolve_host("node-0017"));
}

TEST(TopologyLoad, NotesSayDegradationsOnce) {
  auto t = load_fixture();
  ASSERT_TRUE(t);
  const auto& notes = t->notes();
  auto count = [&](const std::string& needle) {
    return std::count_if(notes.begin(), notes.end(),
                         [&](const std::string& n) { return n.find(needle) != std::string::npos; });
  };
  EXPECT_EQ(count("PCIe switch sw2 has no bdf"), 1) << ::testing::PrintToString(notes);
  EXPECT_EQ(count("node-0019/gpu@<bdf>"), 0);  // node-0019's GPU has a bdf
  EXPECT_EQ(count("GPU 0 has no pcie_switch"), 1);
  EXPECT_EQ(count("rank 0 has no GPU"), 1);
  // Said once, however many devices share the degradation.
  std::string text = R"({"hosts": [
    {"name": "a", "gpus": [{"index": 0}, {"index": 1}, {"index": 2}]},
    {"name": "b", "gpus": [{"index": 0}]}]})";
  TopologyError err;
  auto t2 = Topology::load_text(text, "inline.json", &err);
  ASSERT_TRUE(t2) << err.str();
  int bdf_notes = 0;
  for (auto& n : t2->notes())
    if (n.find("has no bdf") != std::string::npos) {
      ++bdf_notes;
      EXPECT_NE(n.find("host a: GPU 0 has no bdf (and 3 more like it)"), std::string::npos) << n;
      EXPECT_NE(n.find("a/gpu@<bdf>"), std::string::npos) << n;
    }
  EXPECT_EQ(bdf_notes, 1);
}

TEST(TopologyLoad, UnknownFieldsAreIgnored) {
  TopologyError err;
  auto t = Topology::load_text(
      R"({"version": 3, "hosts": [{"name": "a", "color": "red", "gpus": [{"index": 0, "x": []}]}]})",
      "t.json", &err);
  ASSERT_TRUE(t) << err.str();
  EXPECT_TRUE(t->device("a/gpu0"));
}

// ---- errors: each names the file, the JSON path and the problem ----

struct ErrorCase {
  const char* name;
  const char* json;
  const char* path;     // expected JSON path
  const char* message;  // expected substring of the message
};

void PrintTo(const ErrorCase& c, std::ostream* os) {
  *os << c.name;
}

class TopologyErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(TopologyErrors, NamesFilePathAndProblem) {
  const ErrorCase& c = GetParam();
  TopologyError err;
  auto t = Topology::load_text(c.json, "cluster/topology.json", &err);
  EXPECT_FALSE(t);
  EXPECT_EQ(err.file, "cluster/topology.json");
  EXPECT_EQ(err.json_path, c.path) << err.str();
  EXPECT_NE(err.message.find(c.message), std::string::npos) << err.str();
  EXPECT_EQ(err.str().rfind("cluster/topology.json: " + std::string(c.path) + ": ", 0), 0u)
      << err.str();
}

const ErrorCase kErrorCases[] = {
    {"not_json", "hosts: [node-1]", "$", "not valid JSON at line 1, column 1"},
    {"truncated", R"({"hosts": [{"name": "a",)", "$", "truncated JSON"},
    {"empty_text", "", "$", "truncated JSON"},
    {"not_object", "[1, 2]", "$", "must be a JSON object"},
    {"hosts_not_array", R"({"hosts": {"name": "a"}})", "$.hosts", "must be an array"},
    {"host_not_object", R"({"hosts": ["a"]})", "$.hosts[0]", "must be an object"},
    {"host_no_name", R"({"hosts": [{"name": "a"}, {"ip": "10.0.0.1"}]})", "$.hosts[1]",
     "missing required 'name'"},
    {"host_name_type", R"({"hosts": [{"name": 17}]})", "$.hosts[0].name", "must be a string"},
    {"dup_host", R"({"hosts": [{"name": "a"}, {"name": "b"}, {"name": "a"}]})", "$.hosts[2].name",
     "duplicate host name 'a'"},
    {"gpu_no_index", R"({"hosts": [{"name": "a", "gpus": [{"bdf": "0000:18:00.0"}]}]})",
     "$.hosts[0].gpus[0]", "missing required 'index'"},
    {"gpu_index_type", R"({"hosts": [{"name": "a", "gpus": [{"index": "3"}]}]})",
     "$.hosts[0].gpus[0].index", "non-negative integer"},
    {"dup_gpu_index", R"({"hosts": [{"name": "a", "gpus": [{"index": 1}, {"index": 1}]}]})",
     "$.hosts[0].gpus[1].index", "duplicate GPU index 1"},
    {"dup_bdf",
     R"({"hosts": [{"name": "a", "gpus": [{"index": 0, "bdf": "0000:18:00.0"},
        {"index": 1, "bdf": "18:00"}]}]})",
     "$.hosts[0].gpus[1].bdf", "BDF 0000:18:00.0 is already used on host 'a' by a/gpu0"},
    {"dup_bdf_nic_gpu",
     R"({"hosts": [{"name": "a", "nics": [{"name": "mlx5_0", "bdf": "0000:19:00.0"}],
        "gpus": [{"index": 0, "bdf": "0000:19:00.0"}]}]})",
     "$.hosts[0].gpus[0].bdf", "already used on host 'a' by a/mlx5_0"},
    {"bad_bdf", R"({"hosts": [{"name": "a", "gpus": [{"index": 0, "bdf": "slot 3"}]}]})",
     "$.hosts[0].gpus[0].bdf", "'slot 3' is not a PCI address"},
    {"gpu_unknown_switch",
     R"({"hosts": [{"name": "a"}, {"name": "b", "pcie_switches": [{"id": "sw0"}],
        "gpus": [{"index": 0}, {"index": 1, "pcie_switch": "sw9"}]}]})",
     "$.hosts[1].gpus[1].pcie_switch", "GPU names PCIe switch 'sw9' that does not exist"},
    {"gpu_unknown_nic", R"({"hosts": [{"name": "a", "gpus": [{"index": 0, "nics": ["mlx5_7"]}]}]})",
     "$.hosts[0].gpus[0].nics[0]", "GPU names NIC 'mlx5_7' that does not exist"},
    {"gpu_nics_type", R"({"hosts": [{"name": "a", "gpus": [{"index": 0, "nics": "mlx5_0"}]}]})",
     "$.hosts[0].gpus[0].nics", "must be an array of strings"},
    {"nic_no_name", R"({"hosts": [{"name": "a", "nics": [{"bdf": "0000:19:00.0"}]}]})",
     "$.hosts[0].nics[0]", "missing required 'name'"},
    {"nic_unknown_switch",
     R"({"hosts": [{"name": "a", "nics": [{"name": "m", "pcie_switch": "x"}]}]})",
     "$.hosts[0].nics[0].pcie_switch", "NIC names PCIe switch 'x'"},
    {"nic_port_type", R"({"hosts": [{"name": "a", "nics": [{"name": "m", "port": "1"}]}]})",
     "$.hosts[0].nics[0].port", "must be an integer"},
    {"nic_bad_ip", R"({"hosts": [{"name": "a", "nics": [{"name": "m", "ip": "10.2.300.1"}]}]})",
     "$.hosts[0].nics[0].ip", "is not an IP address"},
    {"nic_unknown_fabric",
     R"({"fabric": [{"name": "leaf-01"}], "hosts": [{"name": "a", "nics": [{"name": "m",
        "fabric_switch": "leaf-02"}]}]})",
     "$.hosts[0].nics[0].fabric_switch", "fabric switch 'leaf-02' that is not in $.fabric"},
    {"switch_no_id", R"({"hosts": [{"name": "a", "pcie_switches": [{"bdf": "0000:17:00.0"}]}]})",
     "$.hosts[0].pcie_switches[0]", "missing required 'id'"},
    {"root_port_bad",
     R"({"hosts": [{"name": "a", "pcie_switches": [{"id": "s", "root_port": "rp"}]}]})",
     "$.hosts[0].pcie_switches[0].root_port", "'rp' is not a PCI address"},
    {"switch_cycle",
     R"({"hosts": [{"name": "a", "pcie_switches": [
        {"id": "s0", "bdf": "0000:17:00.0", "root_port": "0000:27:00.0"},
        {"id": "s1", "bdf": "0000:27:00.0", "root_port": "0000:17:00.0"}]}]})",
     "$.hosts[0].pcie_switches", "forms a cycle"},
    {"nvswitch_no_id", R"({"hosts": [{"name": "a", "nvswitches": [{"bdf": "0000:a5:00.0"}]}]})",
     "$.hosts[0].nvswitches[0]", "missing required 'id'"},
    {"fabric_no_name", R"({"fabric": [{"tier": "leaf"}]})", "$.fabric[0]",
     "missing required 'name'"},
    {"fabric_unknown_uplink",
     R"({"fabric": [{"name": "leaf-01", "uplinks": ["spine-01", "spine-09"]}, {"name": "spine-01"}]})",
     "$.fabric[0].uplinks[1]", "uplink names fabric switch 'spine-09' that does not exist"},
    {"dup_fabric", R"({"fabric": [{"name": "x"}, {"name": "x"}]})", "$.fabric[1].name",
     "duplicate fabric switch"},
    {"storage_no_name", R"({"storage": [{"kind": "nfs"}]})", "$.storage[0]",
     "missing required 'name'"},
    {"mount_unknown",
     R"({"storage": [{"name": "nfs"}], "hosts": [{"name": "a", "mounts": ["lustre"]}]})",
     "$.hosts[0].mounts[0]", "names storage 'lustre' that does not exist"},
    {"job_no_id", R"({"jobs": [{"ranks": []}]})", "$.jobs[0]", "missing required 'id'"},
    {"rank_no_rank",
     R"({"hosts": [{"name": "a"}], "jobs": [{"id": "j", "ranks": [{"host": "a"}]}]})",
     "$.jobs[0].ranks[0]", "missing required 'rank'"},
    {"rank_no_host", R"({"hosts": [{"name": "a"}], "jobs": [{"id": "j", "ranks": [{"rank": 0}]}]})",
     "$.jobs[0].ranks[0]", "missing required 'host'"},
    {"rank_unknown_host",
     R"({"hosts": [{"name": "a"}], "jobs": [{"id": "j", "ranks": [{"rank": 0, "host": "b"}]}]})",
     "$.jobs[0].ranks[0].host", "rank names host 'b' that is not in $.hosts"},
    {"rank_unknown_gpu",
     R"({"hosts": [{"name": "a", "gpus": [{"index": 0}]}], "jobs": [{"id": "j", "ranks": [
        {"rank": 0, "host": "a", "gpu": 0}, {"rank": 1, "host": "a", "gpu": 5}]}]})",
     "$.jobs[0].ranks[1].gpu", "rank names GPU 5 that host 'a' does not have"},
    {"dup_rank",
     R"({"hosts": [{"name": "a"}], "jobs": [{"id": "j", "ranks": [{"rank": 0, "host": "a"},
        {"rank": 0, "host": "a"}]}]})",
     "$.jobs[0].ranks[1]", "duplicate rank 0"},
    {"compact_unknown_host",
     R"({"hosts": [{"name": "a"}], "jobs": [{"id": "j", "ranks": {"hosts": ["a", "c"], "gpus_per_host": 8}}]})",
     "$.jobs[0].ranks.hosts[1]", "rank names host 'c'"},
    {"compact_bad_gph",
     R"({"hosts": [{"name": "a"}], "jobs": [{"id": "j", "ranks": {"hosts": ["a"], "gpus_per_host": 0}}]})",
     "$.jobs[0].ranks.gpus_per_host", "positive integer"},
    {"dup_job", R"({"jobs": [{"id": "j"}, {"id": "j"}]})", "$.jobs[1].id", "duplicate job id"},
    {"id_collision",
     R"({"hosts": [{"name": "a", "nics": [{"name": "gpu0"}], "gpus": [{"index": 0}]}]})",
     "$.hosts[0].gpus[0].index", "device id 'a/gpu0' is already used"},
    {"slash_in_name", R"({"hosts": [{"name": "a/b"}]})", "$.hosts[0].name", "must not contain '/'"},
};

INSTANTIATE_TEST_SUITE_P(Topology, TopologyErrors, ::testing::ValuesIn(kErrorCases),
                         [](const auto& tp) { return std::string(tp.param.name); });

TEST(TopologyLoad, MissingFileIsAnErrorNamingTheFile) {
  TopologyError err;
  auto t = Topology::load_file(kData + "/no_such_file.json", &err);
  EXPECT_FALSE(t);
  EXPECT_EQ(err.file, kData + "/no_such_file.json");
  EXPECT_NE(err.message.find("cannot open"), std::string::npos);
}

// A FIFO would block the load for ever, a device never end it.
TEST(TopologyLoad, FifoAndDeviceAreRefusedNotRead) {
  const std::string fifo = ::testing::TempDir() + "topology_fifo_" + std::to_string(::getpid());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero")}) {
    TopologyError err;
    EXPECT_FALSE(Topology::load_file(path, &err)) << path;
    EXPECT_EQ(err.file, path);
    EXPECT_EQ(err.message, "not a regular file");
  }
  ::unlink(fifo.c_str());
}

// With a repeated key nlohmann keeps the last value: the file would mean
// something else than it seems to, in silence.
TEST(TopologyLoad, DuplicateKeyIsAnError) {
  for (const std::string text :
       {R"({"cluster":"a","cluster":"b","hosts":[]})",
        R"({"cluster":"c","hosts":[{"name":"n1","name":"n2","gpus":[]}]})"}) {
    TopologyError err;
    EXPECT_FALSE(Topology::load_text(text, "t.json", &err)) << text;
    EXPECT_NE(err.message.find("duplicate key"), std::string::npos) << err.message;
  }
  TopologyError err;
  EXPECT_TRUE(Topology::load_text(
      R"({"cluster":"c","hosts":[{"name":"n1","gpus":[]},{"name":"n2","gpus":[]}]})", "t.json",
      &err))
      << err.message;
}

TEST(TopologyLoad, InvalidUtf8IsAnErrorNotACrash) {
  std::string text = "{\"hosts\": [{\"name\": \"a\xff\"}]}";
  TopologyError err;
  EXPECT_FALSE(Topology::load_text(text, "t.json", &err));
  EXPECT_EQ(err.json_path, "$");
}

// ---- resolver ----

TEST(TopologyResolve, HostExactShortAndIp) {
  auto t = load_fixture();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->resolve_host("node-0017.cluster.local"), "node-0017.cluster.local");
  EXPECT_EQ(t->resolve_host("node-0017"), "node-0017.cluster.local");  // short name
  EXPECT_EQ(t->resolve_host("node-0018.other.domain"), "node-0018");   // short of the query
  EXPECT_EQ(t->resolve_host("10.1.0.18"), "node-0018");                // host ip
  EXPECT_EQ(t->resolve_host("10.2.17.3"), "node-0017.cluster.local");  // NIC ip
  EXPECT_FALSE(t->resolve_host("node-0020"));
  EXPECT_FALSE(t->resolve_host("10.1.0.99"));
  EXPECT_FALSE(t->resolve_host(""));
}

TEST(TopologyResolve, AmbiguousShortNameIsNotGuessed) {
  TopologyError err;
  auto t = Topology::load_text(R"({"hosts": [{"name": "n1.a"}, {"name": "n1.b"}]})", "t", &err);
  ASSERT_TRUE(t) << err.str();
  EXPECT_FALSE(t->resolve_host("n1"));
  EXPECT_EQ(t->resolve_host("n1.b"), "n1.b");
}

TEST(TopologyResolve, DevicesByBdfNameIpIndex) {
  auto t = load_fixture();
  ASSERT_TRUE(t);
  const std::string h = "node-0017.cluster.local";
  EXPECT_EQ(t->device_by_bdf(h, "PCI:0000:9b:00")->id, h + "/gpu3");  // Xid form
  EXPECT_EQ(t->device_by_bdf(h, "9B:00.0")->id, h + "/gpu3");
  EXPECT_EQ(t->device_by_bdf(h, "0000:19:00.0")->id, h + "/mlx5_0");
  EXPECT_EQ(t->device_by_bdf(h, "0000:17:00.0")->id, h + "/pcie/0000:17:00.0");
  EXPECT_EQ(t->device_by_bdf(h, "0000:16:01.0")->id, h + "/pcie/0000:16:01.0");  // root port
  EXPECT_EQ(t->device_by_bdf(h, "00000000:a5:00.0")->id, h + "/nvsw0");          // FM form
  EXPECT_FALSE(t->device_by_bdf(h, "0000:77:00.0"));
  EXPECT_FALSE(t->device_by_bdf("node-0020", "0000:18:00.0"));
  EXPECT_EQ(t->device_by_bdf("node-0018", "0000:18:00.0")->id, "node-0018/gpu0");

  EXPECT_EQ(t->gpu_by_index(h, 3)->id, h + "/gpu3");
  EXPECT_FALSE(t->gpu_by_index(h, 2));
  EXPECT_EQ(t->nic_by_name(h, "mlx5_1")->id, h + "/mlx5_1");
  EXPECT_EQ(t->nic_by_name(h, "ibp156s0")->id, h + "/mlx5_2");  // netdev
  EXPECT_FALSE(t->nic_by_name(h, "mlx5_9"));
  EXPECT_EQ(t->nic_by_ip("10.2.18.2")->id, "node-0018/mlx5_1");
  EXPECT_FALSE(t->nic_by_ip("10.1.0.18"));  // a host ip is not a NIC
  EXPECT_EQ(t->nvswitch_by_id(h, "nvsw1")->id, h + "/nvsw1");
  EXPECT_EQ(t->nvswitch_by_id(h, "0")->id, h + "/nvsw0");
  EXPECT_EQ(t->fabric_switch("spine-02")->id, "fabric/spine-02");
  EXPECT_EQ(t->storage("nfs-03")->id, "storage/nfs-03");
  EXPECT_EQ(t->storage("10.9.0.4")->id, "storage/home");
  EXPECT_FALSE(t->storage("lustre"));
}

TEST(TopologyResolve, RanksExplicitAndCompact) {
  auto t = load_fixture();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->rank("job-42", 2)->id, "job/job-42/rank2");
  EXPECT_EQ(t->rank("job-42", 2)->host, "node-0018");
  // Compact form: rank = host_position * gpus_per_host + gpu index.
  EXPECT_EQ(t->rank("job-7", 3)->host, "node-0017.cluster.local");
  EXPECT_TRUE(t->related(Relation::runs_on, "job/job-7/rank3", "node-0017.cluster.local/gpu1"));
  EXPECT_TRUE(t->related(Relation::runs_on, "job/job-7/rank0", "node-0018/gpu0"));
  EXPECT_FALSE(t->rank("job-7", 4));
  EXPECT_FALSE(t->rank("job-99", 0));
  // "" = the first job listing the rank.
  EXPECT_EQ(t->rank("", 1)->id, "job/job-42/rank1");
  EXPECT_EQ(t->jobs_of_host("node-0018"), (std::vector<std::string>{"job-42", "job-7"}));
  EXPECT_EQ(t->jobs_of_host("node-0019"), (std::vector<std::string>{"job-9"}));
  EXPECT_TRUE(t->jobs_of_host("nope").empty());
}

TEST(TopologyResolve, DevicesOfKindInFileOrder) {
  auto t = load_fixture();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->devices_of_kind(DeviceKind::host), t->host_names());
  auto fab = t->devices_of_kind(DeviceKind::fabric_switch);
  EXPECT_EQ(fab, (std::vector<std::string>{"fabric/leaf-03", "fabric/leaf-04", "fabric/spine-01",
                                           "fabric/spine-02"}));
  EXPECT_EQ(t->devices_of_kind(DeviceKind::gpu).size(), 6u);
  EXPECT_EQ(t->devices_of_kind(DeviceKind::rank).size(), 4u + 4u + 1u);
  auto ports = t->devices_of_kind(DeviceKind::pcie_port);
  EXPECT_TRUE(has(ports, "node-0018/pcie/0000:16:01.0"));
  EXPECT_EQ(ports.size(), 5u + 2u);  // 3 switches + 2 root ports; 1 + 1
}

// The size the engine must handle: 12,500 hosts x 8 GPUs. Checks correctness at
// scale (speed is measured by the benchmarks).
TEST(TopologyScale, TwelveThousandFiveHundredHosts) {
  const int kHosts = 12500;
  std::string s;
  s.reserve(40u << 20);
  s += R"({"cluster": "big", "fabric": [)";
  for (int l = 0; l < 8; ++l)
    s += (l ? "," : "") + std::string(R"({"name": "leaf-)") + std::to_string(l) +
         R"(", "uplinks": ["spine-0"]})";
  s += R"(, {"name": "spine-0"}], "hosts": [)";
  for (int h = 0; h < kHosts; ++h) {
    char name[32];
    snprintf(name, sizeof name, "node-%05d", h);
    s += h ? "," : "";
    s += R"({"name": ")" + std::string(name) + R"(", "ip": "10.)" + std::to_string(h / 250) + "." +
         std::to_string(h % 250) + R"(.1", "nvl_domain": "rack)" + std::to_string(h / 9) +
         R"(", "pcie_switches": [)";
    for (int w = 0; w < 4; ++w)
      s += (w ? "," : "") + std::string(R"({"id": "sw)") + std::to_string(w) +
           R"(", "bdf": "0000:)" + std::to_string(10 + w * 20) + R"(:00.0", "root_port": "0000:)" +
           std::to_string(9 + w * 20) + R"(:01.0"})";
    s += R"(], "nics": [)";
    for (int g = 0; g < 8; ++g)
      s += (g ? "," : "") + std::string(R"({"name": "mlx5_)") + std::to_string(g) +
           R"(", "bdf": "0000:)" + std::to_string(11 + (g / 2) * 20) + ":0" +
           std::to_string(g % 2) + R"(.1", "pcie_switch": "sw)" + std::to_string(g / 2) +
           R"(", "fabric_switch": "leaf-)" + std::to_string(g) + R"("})";
    s += R"(], "gpus": [)";
    for (int g = 0; g < 8; ++g)
      s += (g ? "," : "") + std::string(R"({"index": )") + std::to_string(g) +
           R"(, "bdf": "0000:)" + std::to_string(11 + (g / 2) * 20) + ":0" + std::to_string(g % 2) +
           R"(.0", "pcie_switch": "sw)" + std::to_string(g / 2) + R"(", "nics": ["mlx5_)" +
           std::to_string(g) + R"("]})";
    s += R"(], "nvswitches": [{"id": "nvsw0", "bdf": "0000:a5:00.0"}]})";
  }
  s += R"(], "jobs": [{"id": "big", "ranks": {"hosts": [)";
  for (int h = 0; h < kHosts; ++h) {
    char name[32];
    snprintf(name, sizeof name, "%s\"node-%05d\"", h ? "," : "", h);
    s += name;
  }
  s += R"(], "gpus_per_host": 8}}]})";

  TopologyError err;
  auto t = Topology::load_text(s, "big.json", &err);
  ASSERT_TRUE(t) << err.str();
  EXPECT_EQ(t->host_count(), size_t(kHosts));
  EXPECT_EQ(t->devices_of_kind(DeviceKind::gpu).size(), size_t(kHosts) * 8);
  EXPECT_EQ(t->devices_of_kind(DeviceKind::rank).size(), size_t(kHosts) * 8);
  EXPECT_EQ(t->device_by_bdf("node-12345", "PCI:0000:71:01")->id, "node-12345/gpu7");
  EXPECT_EQ(t->rank("big", 12345 * 8 + 7)->host, "node-12345");
  EXPECT_TRUE(t->related(Relation::runs_on, "job/big/rank98767", "node-12345/gpu7"));
  EXPECT_TRUE(t->related(Relation::below, "node-12345/gpu7", "node-12345/pcie/0000:69:01.0"));
  EXPECT_TRUE(t->related(Relation::uses, "job/big/rank98767", "node-12345/mlx5_7"));
  EXPECT_FALSE(t->related(Relation::uses, "job/big/rank98767", "node-12346/mlx5_7"));
  EXPECT_TRUE(t->related(Relation::nvlink_peer, "node-12345/gpu7", "node-12344/gpu0"));  // rack1371
  EXPECT_FALSE(
      t->related(Relation::nvlink_peer, "node-12345/gpu7", "node-12348/gpu0"));  // rack1372
  EXPECT_EQ(t->resolve_host("10.49.95.1"), "node-12345");
  EXPECT_EQ(t->related_devices(Relation::attached, "fabric/leaf-3", true, DeviceKind::nic).size(),
            size_t(kHosts));
  EXPECT_TRUE(t->notes().empty()) << ::testing::PrintToString(t->notes());
}

// hosts[].bmc: logs that arrive under a host's BMC name or IP are the host's.
TEST(TopologyResolve, HostByItsBmcNameOrIp) {
  TopologyError err;
  auto t = Topology::load_text(
      R"({"hosts": [{"name": "n1", "bmc": "n1-bmc.mgmt"}, {"name": "n2", "bmc": "10.9.0.2"},
                    {"name": "n3"}]})",
      "t", &err);
  ASSERT_TRUE(t) << err.message;
  EXPECT_EQ(t->resolve_host("n1-bmc.mgmt"), "n1");
  EXPECT_EQ(t->resolve_host("n1-bmc"), "n1");  // its short name
  EXPECT_EQ(t->resolve_host("10.9.0.2"), "n2");
  EXPECT_FALSE(t->resolve_host("n3-bmc"));
}

TEST(TopologyResolve, BmcSharedByTwoHostsIsNotGuessedAndAHostNameIsRefused) {
  TopologyError err;
  auto t = Topology::load_text(
      R"({"hosts": [{"name": "n1", "bmc": "bmc-a"}, {"name": "n2", "bmc": "bmc-a"}]})", "t", &err);
  ASSERT_TRUE(t) << err.message;
  EXPECT_FALSE(t->resolve_host("bmc-a"));
  auto bad =
      Topology::load_text(R"({"hosts": [{"name": "n2"}, {"name": "n1", "bmc": "n2"}]})", "t", &err);
  EXPECT_FALSE(bad);
  EXPECT_EQ(err.json_path, "$.hosts[1].bmc");
}

}  // namespace
}  // namespace reflex
