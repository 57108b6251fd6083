// reflex-sim: determinism, structure of every bundle (interfaces.md §1-§3), scenario and
// fault-class coverage of a 200-incident suite.
#include <gtest/gtest.h>

#include <zlib.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "sim/rng.h"
#include "sim/sim.h"
#include "sim/timefmt.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using reflex::sim::SimOptions;

namespace {

fs::path temp_dir(const std::string& name) {
  fs::path p =
      fs::temp_directory_path() / ("reflex-sim-test-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(p);
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Relative path -> bytes, for every file under root.
std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> m;
  for (auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) m[fs::relative(e.path(), root).string()] = slurp(e.path());
  return m;
}

SimOptions opts(uint64_t seed, int count, int hosts, const fs::path& out) {
  SimOptions o;
  o.seed = seed;
  o.count = count;
  o.hosts = hosts;
  o.noise_lines_per_host = 20;
  o.out = out.string();
  return o;
}

// Every interfaces.md §2 id the topology defines.
std::set<std::string> topology_ids(const json& t) {
  std::set<std::string> ids;
  for (const auto& h : t["hosts"]) {
    const std::string hn = h["name"];
    ids.insert(hn);
    for (const auto& g : h["gpus"]) ids.insert(hn + "/gpu" + std::to_string(g["index"].get<int>()));
    for (const auto& n : h["nics"]) ids.insert(hn + "/" + n["name"].get<std::string>());
    for (const auto& s : h["pcie_switches"])
      ids.insert(hn + "/pcie/" + s["bdf"].get<std::string>());
    for (const auto& s : h["nvswitches"]) ids.insert(hn + "/" + s["id"].get<std::string>());
  }
  for (const auto& f : t["fabric"]) ids.insert("fabric/" + f["name"].get<std::string>());
  for (const auto& s : t["storage"]) ids.insert("storage/" + s["name"].get<std::string>());
  for (const auto& j : t["jobs"]) {
    const std::string jid = j["id"];
    ids.insert("job/" + jid);
    const json& r = j["ranks"];
    if (r.is_array()) {
      for (const auto& x : r)
        ids.insert("job/" + jid + "/rank" + std::to_string(x["rank"].get<int>()));
    } else {
      int n = static_cast<int>(r["hosts"].size()) * r["gpus_per_host"].get<int>();
      for (int k = 0; k < n; ++k) ids.insert("job/" + jid + "/rank" + std::to_string(k));
    }
  }
  return ids;
}

// Structural check of one bundle; returns the truth.
json check_bundle(const fs::path& b) {
  SCOPED_TRACE(b.string());
  json topo = json::parse(slurp(b / "topology.json"), nullptr, false);
  EXPECT_FALSE(topo.is_discarded()) << "topology.json does not parse";
  json truth = json::parse(slurp(b / "truth.json"), nullptr, false);
  EXPECT_FALSE(truth.is_discarded()) << "truth.json does not parse";
  if (topo.is_discarded() || truth.is_discarded()) return json();
  std::set<std::string> hosts;
  for (const auto& h : topo["hosts"])
    EXPECT_TRUE(hosts.insert(h["name"].get<std::string>()).second) << "duplicate host";
  // Every GPU names a switch that exists, and NICs it lists exist.
  for (const auto& h : topo["hosts"]) {
    std::set<std::string> sws, nics;
    for (const auto& s : h["pcie_switches"]) sws.insert(s["id"]);
    for (const auto& n : h["nics"]) {
      nics.insert(n["name"]);
      EXPECT_TRUE(sws.count(n["pcie_switch"])) << n.dump();
    }
    for (const auto& g : h["gpus"]) {
      EXPECT_TRUE(sws.count(g["pcie_switch"])) << g.dump();
      for (const auto& n : g["nics"]) EXPECT_TRUE(nics.count(n)) << g.dump();
    }
  }
  const std::set<std::string> ids = topology_ids(topo);
  EXPECT_TRUE(truth.contains("root_cause"));
  EXPECT_TRUE(truth["localizable"].is_boolean());
  EXPECT_TRUE(truth["scenario"].is_string());
  EXPECT_TRUE(truth["t0"].is_string());
  EXPECT_TRUE(truth["eviction_set"].is_array());
  const std::string dev = truth["root_cause"]["device"];
  if (truth.value("false_alarm", false)) {  // nothing faulty: no device, nothing to evict
    EXPECT_TRUE(dev.empty() && truth["eviction_set"].empty() && !truth["localizable"].get<bool>());
  } else {
    EXPECT_TRUE(ids.count(dev)) << "truth device '" << dev << "' is not in the topology";
  }
  for (const auto& e : truth["eviction_set"]) EXPECT_TRUE(ids.count(e.get<std::string>())) << e;
  for (const auto& l : truth["latent"]) EXPECT_TRUE(ids.count(l["device"].get<std::string>())) << l;
  if (truth["localizable"].get<bool>()) {
    EXPECT_TRUE(truth["root_cause"]["fault_class"].is_string());
  }
  // Logs: every file non-empty; host directories are topology hosts (or the SM host).
  size_t files = 0;
  for (auto& hd : fs::directory_iterator(b / "hosts")) {
    const std::string hn = hd.path().filename().string();
    // Outside the topology: the subnet manager, and (hard mode) a host's BMC.
    const bool bmc = hn.size() > 4 && hn.compare(hn.size() - 4, 4, "-bmc") == 0 &&
                     hosts.count(hn.substr(0, hn.size() - 4));
    EXPECT_TRUE(hosts.count(hn) || hn == "sm-01" || bmc) << hn;
    for (auto& f : fs::directory_iterator(hd.path())) {
      ++files;
      EXPECT_GT(fs::file_size(f.path()), 0u) << f.path();
      if (f.path().filename() == "boot_time") {
        std::string s = slurp(f.path());
        EXPECT_EQ(s.size(), 28u) << s;  // 2026-03-05T10:11:12.345678Z\n
      }
    }
  }
  EXPECT_GT(files, 0u);
  return truth;
}

}  // namespace

TEST(SimRng, DistributionsAreInRangeAndPortable) {
  reflex::sim::Rng r(42);
  double sum = 0;
  for (int i = 0; i < 20000; ++i) {
    double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    long long k = r.range(-3, 3);
    ASSERT_GE(k, -3);
    ASSERT_LE(k, 3);
  }
  EXPECT_NEAR(sum / 20000, 0.5, 0.02);
  // mt19937_64's 10000th output for the default seed is fixed by the standard;
  // our streams rest on it, so check the engine is that one.
  std::mt19937_64 e;
  e.discard(9999);
  EXPECT_EQ(e(), 9981545732273789042ULL);
}

TEST(SimTime, CivilRoundTrip) {
  using namespace reflex::sim;
  Us t = to_us(2026, 3, 5, 10, 11, 12) + 345678;
  EXPECT_EQ(iso_us(t), "2026-03-05T10:11:12.345678Z");
  Civil c = civil(t);
  EXPECT_EQ(c.weekday, 4);  // Thursday
  std::string s;
  append_dmesg_T(s, t);
  EXPECT_EQ(s, "[Thu Mar  5 10:11:12 2026]");
}

TEST(SimDeterminism, SameSeedSameBytesDifferentSeedDifferent) {
  fs::path a = temp_dir("a"), b = temp_dir("b"), c = temp_dir("c");
  std::string err;
  ASSERT_TRUE(reflex::sim::generate(opts(11, 12, 6, a), &err)) << err;
  ASSERT_TRUE(reflex::sim::generate(opts(11, 12, 6, b), &err)) << err;
  ASSERT_TRUE(reflex::sim::generate(opts(12, 12, 6, c), &err)) << err;
  auto ta = tree(a), tb = tree(b), tc = tree(c);
  ASSERT_FALSE(ta.empty());
  EXPECT_EQ(ta.size(), tb.size());
  for (auto& [k, v] : ta) {
    auto it = tb.find(k);
    ASSERT_NE(it, tb.end()) << k;
    EXPECT_TRUE(it->second == v) << k << " differs between two runs with the same seed";
  }
  size_t same = 0;
  for (auto& [k, v] : ta) {
    auto it = tc.find(k);
    if (it != tc.end() && it->second == v) ++same;
  }
  EXPECT_LT(same, ta.size() / 4) << "a different seed should change almost every file";
  fs::remove_all(a);
  fs::remove_all(b);
  fs::remove_all(c);
}

TEST(SimStructure, EveryScenarioBundleIsWellFormed) {
  for (const auto& s : reflex::sim::scenarios()) {
    SCOPED_TRACE(s.name);
    fs::path d = temp_dir("sc-" + s.name);
    SimOptions o = opts(5, 2, 12, d);
    o.scenarios = {s.name};
    std::string err;
    ASSERT_TRUE(reflex::sim::generate(o, &err)) << err;
    for (int i = 1; i <= 2; ++i) {
      char n[32];
      std::snprintf(n, sizeof n, "incident-%04d", i);
      json t = check_bundle(d / n);
      ASSERT_FALSE(t.is_null());
      EXPECT_EQ(t["scenario"], s.name);
      if (s.fault_class.empty()) {
        EXPECT_FALSE(t["localizable"].get<bool>());
      } else {
        EXPECT_EQ(t["root_cause"]["fault_class"], s.fault_class);
      }
    }
    fs::remove_all(d);
  }
}

TEST(SimStructure, PairingAndCompactRanks) {
  fs::path d = temp_dir("pair");
  SimOptions o = opts(3, 3, 300, d);
  o.pairing_2_2 = true;
  o.noise_lines_per_host = 0;
  std::string err;
  ASSERT_TRUE(reflex::sim::generate(o, &err)) << err;
  json topo = json::parse(slurp(d / "incident-0001" / "topology.json"));
  EXPECT_EQ(topo["hosts"].size(), 300u);
  const json& h = topo["hosts"][0];
  EXPECT_EQ(h["pcie_switches"].size(), 4u);    // 2 GPUs + 2 NICs per switch
  EXPECT_EQ(h["gpus"][0]["nics"].size(), 2u);  // own NIC first, then the sibling
  EXPECT_EQ(h["gpus"][0]["nics"][0], "mlx5_0");
  EXPECT_TRUE(topo["jobs"][0]["ranks"].is_object());  // compact form at >= 256 hosts
  // Rail-optimized: NIC i of hosts 1 and 2 (same 32-host unit) share a leaf; host 33 does not.
  EXPECT_EQ(topo["hosts"][0]["nics"][3]["fabric_switch"],
            topo["hosts"][1]["nics"][3]["fabric_switch"]);
  EXPECT_NE(topo["hosts"][0]["nics"][3]["fabric_switch"],
            topo["hosts"][32]["nics"][3]["fabric_switch"]);
  EXPECT_NE(topo["hosts"][0]["nics"][3]["fabric_switch"],
            topo["hosts"][0]["nics"][4]["fabric_switch"]);
  for (int i = 1; i <= 3; ++i) {
    char n[32];
    std::snprintf(n, sizeof n, "incident-%04d", i);
    check_bundle(d / n);
  }
  fs::remove_all(d);
}

TEST(SimCoverage, SuiteOf200CoversEveryScenarioAndFaultClass) {
  SimOptions o;
  o.seed = 2026;
  o.count = 200;
  std::string err;
  auto plan = reflex::sim::plan_scenarios(o, &err);
  ASSERT_EQ(plan.size(), 200u) << err;
  std::set<std::string> seen(plan.begin(), plan.end());
  for (const auto& s : reflex::sim::scenarios()) EXPECT_TRUE(seen.count(s.name)) << s.name;
  // The 13 standard classes of interfaces.md §6, each labelled by at least one scenario in the
  // plan.
  const std::set<std::string> classes = {
      "gpu_hw", "gpu_memory", "gpu_fallen_off_bus", "nvlink",      "nvswitch",      "pcie",
      "nic",    "ib_fabric",  "nccl_software",      "host_kernel", "thermal_power", "user_code",
      "storage"};
  std::set<std::string> covered;
  for (const auto& name : plan)
    for (const auto& s : reflex::sim::scenarios())
      if (s.name == name && !s.fault_class.empty()) covered.insert(s.fault_class);
  EXPECT_EQ(covered, classes);
  // And the generated bundles carry those labels (small cluster to stay fast).
  fs::path d = temp_dir("cov");
  o.hosts = 4;
  o.noise_lines_per_host = 5;
  o.out = d.string();
  ASSERT_TRUE(reflex::sim::generate(o, &err)) << err;
  std::set<std::string> labelled;
  size_t unloc = 0;
  for (int i = 1; i <= 200; ++i) {
    char n[32];
    std::snprintf(n, sizeof n, "incident-%04d", i);
    json t = json::parse(slurp(d / n / "truth.json"));
    if (t["root_cause"]["fault_class"].is_string()) labelled.insert(t["root_cause"]["fault_class"]);
    if (!t["localizable"].get<bool>()) ++unloc;
    EXPECT_EQ(t["scenario"], plan[static_cast<size_t>(i - 1)]);
  }
  EXPECT_EQ(labelled, classes);
  EXPECT_GT(unloc, 0u);
  fs::remove_all(d);
}

TEST(SimOptionsCheck, BadOptionsAreErrors) {
  std::string err;
  SimOptions o = opts(1, 1, 1, temp_dir("bad"));
  EXPECT_FALSE(reflex::sim::generate(o, &err));
  EXPECT_NE(err.find("--hosts"), std::string::npos);
  o = opts(1, 1, 4, temp_dir("bad"));
  o.scenarios = {"no_such_scenario"};
  EXPECT_FALSE(reflex::sim::generate(o, &err));
  EXPECT_NE(err.find("no_such_scenario"), std::string::npos);
  o = opts(1, 1, 4, temp_dir("bad"));
  o.gpus_per_host = 3;
  o.pairing_2_2 = true;
  EXPECT_FALSE(reflex::sim::generate(o, &err));
}

// Gzip'd kernel logs must be valid gzip (the sim writes them with a fixed header).
TEST(SimFiles, GzipFilesInflate) {
  fs::path d = temp_dir("gz");
  std::string err;
  ASSERT_TRUE(reflex::sim::generate(opts(99, 6, 16, d), &err)) << err;
  size_t gz = 0;
  for (auto& e : fs::recursive_directory_iterator(d)) {
    if (e.path().extension() != ".gz") continue;
    ++gz;
    gzFile f = gzopen(e.path().c_str(), "rb");
    ASSERT_NE(f, nullptr);
    char buf[4096];
    int n = gzread(f, buf, sizeof buf);
    EXPECT_GT(n, 0) << e.path();
    gzclose(f);
  }
  EXPECT_GT(gz, 0u) << "expected some gzip-compressed kernel logs in 96 hosts";
  fs::remove_all(d);
}

// Hard mode: every family's bundles are well formed, say what the
// family says, and the same seed writes the same bytes.
namespace {
SimOptions hard_opts(uint64_t seed, int count, const fs::path& out) {
  SimOptions o = opts(seed, count, 16, out);
  o.hard = true;
  return o;
}
}  // namespace

TEST(SimHard, EveryFamilyBundleIsWellFormed) {
  for (const auto& s : reflex::sim::hard_scenarios()) {
    SCOPED_TRACE(s.name);
    fs::path d = temp_dir("hard-" + s.name);
    SimOptions o = hard_opts(9, 3, d);
    o.scenarios = {s.name};
    std::string err;
    ASSERT_TRUE(reflex::sim::generate(o, &err)) << err;
    for (int i = 1; i <= 3; ++i) {
      char n[32];
      std::snprintf(n, sizeof n, "incident-%04d", i);
      json t = check_bundle(d / n);
      ASSERT_FALSE(t.is_null());
      EXPECT_EQ(t["scenario"], s.name);
      if (!s.fault_class.empty()) {
        EXPECT_EQ(t["root_cause"]["fault_class"], s.fault_class);
      }
      json topo = json::parse(slurp(d / n / "topology.json"));
      const std::string dev = t["root_cause"]["device"];
      if (s.device_kind == "host") {
        EXPECT_EQ(dev.find('/'), std::string::npos) << dev;
      }
      if (s.name == "odd_one_out.nccl_version") {
        EXPECT_TRUE(t["eviction_set"].empty());
      }
      if (s.name == "snippet.one_host") {
        EXPECT_EQ(topo["hosts"].size(), 1u);
        EXPECT_TRUE(topo["jobs"].empty());
      } else {
        EXPECT_GE(topo["hosts"].size(), 2u);
        EXPECT_LE(topo["hosts"].size(), 64u);
      }
    }
    fs::remove_all(d);
  }
}

TEST(SimHard, SameSeedSameBytesEveryFamilyOnce) {
  fs::path a = temp_dir("hard-a"), b = temp_dir("hard-b");
  std::string err;
  const int n = static_cast<int>(reflex::sim::hard_scenarios().size());
  ASSERT_TRUE(reflex::sim::generate(hard_opts(20261201, n, a), &err)) << err;
  ASSERT_TRUE(reflex::sim::generate(hard_opts(20261201, n, b), &err)) << err;
  auto ta = tree(a), tb = tree(b);
  ASSERT_FALSE(ta.empty());
  EXPECT_EQ(ta.size(), tb.size());
  for (auto& [k, v] : ta) {
    auto it = tb.find(k);
    ASSERT_NE(it, tb.end()) << k;
    EXPECT_TRUE(it->second == v) << k << " differs between two runs with the same seed";
  }
  std::set<std::string> seen;
  std::set<size_t> sizes;
  for (int i = 1; i <= n; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "incident-%04d", i);
    json t = check_bundle(a / name);
    seen.insert(t["scenario"].get<std::string>());
    sizes.insert(json::parse(slurp(a / name / "topology.json"))["hosts"].size());
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(n)) << "stratified: every family once";
  EXPECT_GE(sizes.size(), 3u) << "host counts are drawn per incident";
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST(SimHard, UnknownHardScenarioIsAnError) {
  std::string err;
  SimOptions o = hard_opts(1, 1, temp_dir("hard-bad"));
  o.scenarios = {"hbm_dbe"};  // a standard scenario, not a hard one
  EXPECT_FALSE(reflex::sim::generate(o, &err));
  EXPECT_NE(err.find("hard-mode"), std::string::npos) << err;
}

// The families added after the default hard set (--families new): each is
// generated, says what its table says, and the same seed writes the same
// bytes; the default plan does not draw them.
TEST(SimHard, NewFamiliesWellFormedAndDeterministic) {
  const auto fams = reflex::sim::hard_scenarios("new");
  ASSERT_GE(fams.size(), 11u);
  for (const auto& s : fams)
    for (const auto& d : reflex::sim::hard_scenarios())
      EXPECT_NE(s.name, d.name) << "a new family in the default set";
  fs::path a = temp_dir("hard-new-a"), b = temp_dir("hard-new-b");
  std::string err;
  SimOptions o = hard_opts(20261207, static_cast<int>(fams.size()) * 2, a);
  o.families = "new";
  ASSERT_TRUE(reflex::sim::generate(o, &err)) << err;
  o.out = b.string();
  ASSERT_TRUE(reflex::sim::generate(o, &err)) << err;
  auto ta = tree(a), tb = tree(b);
  ASSERT_FALSE(ta.empty());
  EXPECT_EQ(ta.size(), tb.size());
  for (auto& [k, v] : ta) {
    auto it = tb.find(k);
    ASSERT_NE(it, tb.end()) << k;
    EXPECT_TRUE(it->second == v) << k << " differs between two runs with the same seed";
  }
  std::set<std::string> seen;
  for (int i = 1; i <= o.count; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "incident-%04d", i);
    json t = json::parse(slurp(a / name / "truth.json"));
    const std::string scen = t["scenario"];
    seen.insert(scen);
    SCOPED_TRACE(scen);
    EXPECT_TRUE(fs::is_directory(a / name / "hosts"));
    const bool topo = fs::exists(a / name / "topology.json");
    EXPECT_EQ(topo, scen != "thin.paste" && scen != "thin.no_topology");
    for (const auto& s : fams) {
      if (s.name == scen && !s.fault_class.empty()) {
        EXPECT_EQ(t["root_cause"]["fault_class"], s.fault_class);
      }
    }
    if (scen == "thin.one_host") {
      EXPECT_EQ(json::parse(slurp(a / name / "topology.json"))["hosts"].size(), 1u);
    }
    if (scen == "thin.paste") {
      size_t lines = 0, files = 0;
      for (auto& e : fs::recursive_directory_iterator(a / name / "hosts"))
        if (e.is_regular_file() && e.path().filename() != "boot_time") {
          ++files;
          const std::string d = slurp(e.path());
          lines += static_cast<size_t>(std::count(d.begin(), d.end(), '\n'));
        }
      EXPECT_GE(files, 1u);  // one kernel capture (a rotated syslog: two)
      EXPECT_LE(files, 2u);
      EXPECT_GE(lines, 1u);
      EXPECT_LE(lines, 16u);
    }
    const std::string dev = t["root_cause"]["device"];
    if (scen == "user_code.one_rank_exception") {
      EXPECT_NE(dev.find("/rank"), std::string::npos) << dev;
    }
  }
  EXPECT_EQ(seen.size(), fams.size()) << "stratified: every new family drawn";
  fs::remove_all(a);
  fs::remove_all(b);
}
