// End-to-end tests of `reflex diagnose` / `reflex watch` with the test KB in
// tests/engine/kb and bundles written by the tests (real-format lines, cited).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

using namespace rt;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const std::string kReflex = REFLEX_BIN;
const std::string kKb = TEST_KB_DIR;

struct Result {
  int rc = -1;
  std::string out, err;
};

std::string slurp_fd(int fd) {
  std::string s;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
  return s;
}

// Environment changes for a child: a value sets the variable, nullopt unsets it.
using Env = std::vector<std::pair<std::string, std::optional<std::string>>>;

// A child process with pipes on stdin/stdout/stderr.
struct Proc {
  pid_t pid = -1;
  int in = -1, out = -1, err = -1;
  explicit Proc(const std::vector<std::string>& args, const Env& env = {}) {
    int pi[2], po[2], pe[2];
    if (pipe(pi) || pipe(po) || pipe(pe)) return;
    pid = fork();
    if (pid == 0) {
      dup2(pi[0], 0);
      dup2(po[1], 1);
      dup2(pe[1], 2);
      for (int fd : {pi[0], pi[1], po[0], po[1], pe[0], pe[1]}) close(fd);
      for (const auto& [name, value] : env)
        value ? setenv(name.c_str(), value->c_str(), 1) : unsetenv(name.c_str());
      std::vector<char*> av;
      for (auto& a : args) av.push_back(const_cast<char*>(a.c_str()));
      av.push_back(nullptr);
      execv(av[0], av.data());
      _exit(127);
    }
    close(pi[0]);
    close(po[1]);
    close(pe[1]);
    in = pi[1];
    out = po[0];
    err = pe[0];
  }
  void write_in(const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::write(in, s.data() + off, s.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
  }
  void close_in() {
    if (in >= 0) close(in);
    in = -1;
  }
  Result wait() {
    close_in();
    Result r;
    // Read both pipes concurrently so neither fills up.
    std::thread t([&] { r.err = slurp_fd(err); });
    r.out = slurp_fd(out);
    t.join();
    int st = 0;
    waitpid(pid, &st, 0);
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    close(out);
    close(err);
    return r;
  }
};

Result run(std::vector<std::string> args, const std::string& stdin_data = "") {
  args.insert(args.begin(), kReflex);
  Proc p(args);
  p.write_in(stdin_data);
  return p.wait();
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag = "") {
    path = fs::temp_directory_path() /
           ("reflex-cli-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + tag);
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    if (std::getenv("REFLEX_TEST_KEEP")) return;  // debugging: keep the bundles
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write(const fs::path& p, const std::string& s) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << s;
}

std::string hex2(int v) {
  char b[8];
  std::snprintf(b, sizeof b, "%02x", v);
  return b;
}

// Raw dmesg seconds since boot; hosts boot at 08:00:00Z (boot_time file).
std::string dmesg(double secs, const std::string& msg) {
  char b[64];
  std::snprintf(b, sizeof b, "[%12.6f] ", secs);
  return b + msg + "\n";
}

// The PyTorch ProcessGroupNCCL watchdog line for rank r at 10:51:02 + dt (glog prefix).
std::string watchdog(int r, double sec = 2.4) {
  char b[512];
  std::snprintf(b, sizeof b,
                "[rank%d]:[E305 10:51:%09.6f ProcessGroupNCCL.cpp:632] [Rank %d] Watchdog caught "
                "collective operation timeout: WorkNCCL(SeqNum=41822, OpType=ALLREDUCE, "
                "NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 "
                "milliseconds before timing out.\n",
                r, sec, r);
  return b;
}

// A PCIe cascade: the switch above GPU g of `bad` host fails at 10:41:02
// (9662 s after boot), the GPU falls off, every rank's watchdog fires.
void cascade_bundle(const fs::path& dir, int hosts, int bad, int g, bool minimal_topology = false,
                    const std::string& job = "job-1") {
  std::vector<int> hs;
  for (int h = 0; h < hosts; ++h) hs.push_back(h);
  write(dir / "topology.json", topo_json(hosts, {{job, hs}}, false, minimal_topology));
  for (int h = 0; h < hosts; ++h) {
    std::string hn = "node-" + std::to_string(h);
    write(dir / "hosts" / hn / "boot_time", "2026-03-05T08:00:00Z\n");
    std::string k = dmesg(12.5, "Linux version 5.15.0-105-generic (test)");
    if (h == bad) {
      std::string sw = "0000:" + hex2(0x10 + g * 0x10) + ":00.0";
      std::string gpu_bdf = "0000:" + hex2(0x11 + g * 0x10) + ":00";
      // source: Linux drivers/pci/pcie/aer.c (format), bus numbers of the test topology
      k +=
          dmesg(9662.301144, "pcieport " + sw + ": AER: Uncorrected (Fatal) error received: " + sw);
      k +=
          dmesg(9662.301150, "pcieport " + sw +
                                 ": PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction "
                                 "Layer, (Requester ID)");
      // source: the NVRM Xid line of NVIDIA's Xid catalog (format)
      k += dmesg(9662.910385, "NVRM: Xid (PCI:" + gpu_bdf +
                                  "): 79, pid=48213, name=python, GPU has fallen off the bus.");
    }
    write(dir / "hosts" / hn / "kern.log", k);
    std::string t = "2026-03-05 10:02:11 [INFO] training started\n";
    for (int gi = 0; gi < 8; ++gi) t += watchdog(h * 8 + gi);
    write(dir / "hosts" / hn / "train.log", t);
  }
}

json diagnose_json(const std::vector<std::string>& extra) {
  std::vector<std::string> a = {"diagnose", "--kb", kKb};
  a.insert(a.end(), extra.begin(), extra.end());
  Result r = run(a);
  EXPECT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

json strip_notes(json j) {
  j.erase("notes");
  if (j.contains("incidents"))
    for (auto& i : j["incidents"]) i.erase("notes");
  return j;
}

}  // namespace

TEST(Cli, CascadeAcrossHostsNamesTheSwitch) {
  TempDir d;
  cascade_bundle(d.path, 2, 1, 5);
  json j = diagnose_json({d.path.string()});
  ASSERT_TRUE(j["trigger"].is_object()) << j.dump(2);
  EXPECT_EQ(j["trigger"]["event"], "t_watchdog");
  ASSERT_FALSE(j["root_causes"].empty()) << j.dump(2);
  EXPECT_EQ(j["root_causes"][0]["device"], pcie(1, 5));
  EXPECT_EQ(j["root_causes"][0]["fault_class"], "pcie");
  EXPECT_EQ(j["root_causes"][0]["action"], "drain node-1; inspect " + pcie(1, 5));
  auto& chain = j["root_causes"][0]["chain"];
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[1]["event"], "t_xid79");
  EXPECT_EQ(chain[1]["ts"], "2026-03-05T10:41:02.910385Z");
  EXPECT_EQ(chain[1]["relation"], "effect below cause");
  EXPECT_NE(chain[1]["rule"].get<std::string>().find("engine_test.rfx:"), std::string::npos);
  EXPECT_EQ(chain[1]["evidence"], "hosts/node-1/kern.log:4");
  EXPECT_EQ(chain[2], j["root_causes"][0]["chain"].back());
  EXPECT_EQ(chain[2]["device"], j["trigger"]["device"]);
  EXPECT_TRUE(j["unexplained"].empty());
}

TEST(Cli, ClockSkewOfAFewSecondsIsTolerated) {
  TempDir d;
  cascade_bundle(d.path, 1, 0, 2);
  // The rank on the lost GPU reports from an application clock running ~3 s
  // behind the kernel's: its line appears *before* the Xid.
  std::string t = "2026-03-05 10:02:11 [INFO] training started\n";
  t += "[rank2]:[E305 10:40:59.900000000 ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught "
       "collective operation timeout: WorkNCCL(SeqNum=41822, OpType=ALLREDUCE, NumelIn=1, "
       "NumelOut=1, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n";
  write(d.path / "hosts/node-0/train.log", t);
  json j = diagnose_json({d.path.string()});
  ASSERT_FALSE(j["root_causes"].empty()) << j.dump(2);
  EXPECT_EQ(j["root_causes"][0]["device"], pcie(0, 2));
  EXPECT_EQ(j["root_causes"][0]["chain"].size(), 3u) << j.dump(2);
}

TEST(Cli, TopologyWithoutOptionalFields) {
  TempDir d;
  cascade_bundle(d.path, 2, 1, 3, /*minimal_topology=*/true);
  json j = diagnose_json({d.path.string()});
  ASSERT_FALSE(j["root_causes"].empty()) << j.dump(2);
  // No BDFs, no PCIe tree: the GPU is known only by the BDF in the Xid line.
  EXPECT_EQ(j["root_causes"][0]["device"], "node-1/gpu@0000:41:00.0") << j.dump(2);
}

TEST(Cli, HostThatDiedSilently) {
  TempDir d;
  write(d.path / "topology.json", topo_json(4, {{"job-1", {0, 1, 2, 3}}}));
  for (int h = 0; h < 4; ++h) {
    std::string hn = "node-" + std::to_string(h);
    write(d.path / "hosts" / hn / "boot_time", "2026-03-05T08:00:00Z\n");
    write(d.path / "hosts" / hn / "kern.log",
          dmesg(12.5, "Linux version 5.15.0-105-generic (test)") +
              dmesg(9000.0,
                    "mlx5_core 0000:12:00.0: mlx5_cmd_out_err:838:(pid 1441871): "
                    "ACCESS_REG(0x805) op_mod(0x1) failed, status bad resource(0x5), "
                    "syndrome (0x305684), err(-22)"));
    if (h == 2) continue;  // node-2 stops logging at 10:30
    std::string t = "2026-03-05 10:40:00 [INFO] step 100\n";
    for (int g = 0; g < 8; ++g)
      // format: NCCL src/transport/net_ib.cc; values of the test topology
      t += "node-" + std::to_string(h) + ":4821" + std::to_string(g) + ":4830" + std::to_string(g) +
           " [" + std::to_string(g) + "] NCCL WARN NET/IB : Got completion from peer 10.2.2." +
           std::to_string(g) + "<41422> with status=12 opcode=0 len=0 vendor err 129 (Send)\n";
    t += "2026-03-05 10:40:30 [INFO] still here\n";
    for (int g = 0; g < 8; ++g) t += watchdog(h * 8 + g);
    write(d.path / "hosts" / hn / "train.log", t);
  }
  json j = diagnose_json({d.path.string()});
  ASSERT_FALSE(j["root_causes"].empty()) << j.dump(2);
  EXPECT_EQ(j["root_causes"][0]["device"], "node-2");
  EXPECT_EQ(j["root_causes"][0]["fault_class"], "host_kernel");
  EXPECT_EQ(j["root_causes"][0]["chain"][0]["evidence"], nullptr);
}

TEST(Cli, TwoConcurrentIncidents) {
  TempDir d;
  cascade_bundle(d.path, 2, 1, 5);
  // A second job on other hosts with its own switch failure.
  TempDir other("-other");
  cascade_bundle(other.path, 2, 0, 6);
  std::string topo = topo_json(4, {{"job-1", {0, 1}}, {"job-2", {2, 3}}});
  write(d.path / "topology.json", topo);
  for (int h = 0; h < 2; ++h) {
    std::string from = "node-" + std::to_string(h), to = "node-" + std::to_string(h + 2);
    fs::create_directories(d.path / "hosts" / to);
    std::string k, t;
    std::ifstream kin(other.path / "hosts" / from / "kern.log");
    k.assign(std::istreambuf_iterator<char>(kin), {});
    std::ifstream tin(other.path / "hosts" / from / "train.log");
    t.assign(std::istreambuf_iterator<char>(tin), {});
    write(d.path / "hosts" / to / "kern.log", k);
    write(d.path / "hosts" / to / "boot_time", "2026-03-05T08:00:00Z\n");
    // job-2's ranks are 0..15 on node-2/3
    write(d.path / "hosts" / to / "train.log", t);
  }
  json j = diagnose_json({d.path.string()});
  ASSERT_TRUE(j.contains("incidents")) << j.dump(2);
  ASSERT_EQ(j["incidents"].size(), 2u);
  std::set<std::string> roots;
  for (auto& inc : j["incidents"]) {
    ASSERT_FALSE(inc["root_causes"].empty());
    roots.insert(inc["root_causes"][0]["device"]);
  }
  EXPECT_EQ(roots, (std::set<std::string>{pcie(1, 5), pcie(2, 6)}));
}

TEST(Cli, EventsInputGivesTheSameDiagnosisAsTheBundle) {
  TempDir d;
  cascade_bundle(d.path, 3, 2, 1);
  Result ev = run({"events", "--kb", kKb, d.path.string()});
  ASSERT_EQ(ev.rc, 0) << ev.err;
  ASSERT_FALSE(ev.out.empty());
  write(d.path.parent_path() / (d.path.filename().string() + ".events.jsonl"), ev.out);
  fs::path evfile = d.path.parent_path() / (d.path.filename().string() + ".events.jsonl");
  json from_bundle = diagnose_json({d.path.string()});
  json from_events = diagnose_json(
      {"--topology", (d.path / "topology.json").string(), "--events", evfile.string()});
  EXPECT_EQ(strip_notes(from_bundle), strip_notes(from_events));
  // And from stdin.
  Result r = run(
      {"diagnose", "--kb", kKb, "--topology", (d.path / "topology.json").string(), "--events", "-"},
      ev.out);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(strip_notes(json::parse(r.out)), strip_notes(from_bundle));
  fs::remove(evfile);
}

TEST(Cli, ShippedKbOnTheDemoBundleSameEitherWay) {
  const std::string kb = std::string(REFLEX_SOURCE_DIR) + "/kb";
  const std::string bundle = std::string(REFLEX_SOURCE_DIR) + "/examples/incident-pcie";
  Result ev = run({"events", "--kb", kb, bundle});
  ASSERT_EQ(ev.rc, 0) << ev.err;
  Result a = run({"diagnose", "--kb", kb, bundle});
  ASSERT_EQ(a.rc, 0) << a.err;
  Result b = run({"diagnose", "--kb", kb, "--topology", bundle + "/topology.json", "--events", "-"},
                 ev.out);
  ASSERT_EQ(b.rc, 0) << b.err;
  json ja = json::parse(a.out), jb = json::parse(b.out);
  EXPECT_EQ(strip_notes(ja), strip_notes(jb));
  ASSERT_FALSE(ja["root_causes"].empty());
  EXPECT_EQ(ja["root_causes"][0]["device"], "node-0018/pcie/0000:5c:00.0");
}

// Inputs as SREs have them, since nobody repacks logs before asking: plain
// files, stdin and a packed bundle give the same root as the bundle directory.
// A .tar.gz of examples/incident-pcie in t, with its directory inside
// (`tar czf b.tgz incident-pcie`); "" when tar fails.
std::string pack_example(const TempDir& t) {
  const std::string tgz = (t.path / "incident.tar.gz").string();
  const std::string cmd =
      "tar -C " + std::string(REFLEX_SOURCE_DIR) + "/examples -czf " + tgz + " incident-pcie";
  return std::system(cmd.c_str()) == 0 ? tgz : "";
}

TEST(Cli, FilesStdinAndTarballAreInputsToo) {
  const std::string kb = std::string(REFLEX_SOURCE_DIR) + "/kb";
  const std::string bundle = std::string(REFLEX_SOURCE_DIR) + "/examples/incident-pcie";
  TempDir t;
  const std::string tgz = pack_example(t);
  ASSERT_FALSE(tgz.empty()) << "tar failed";
  Result a = run({"diagnose", "--kb", kb, tgz});
  ASSERT_EQ(a.rc, 0) << a.err;
  json ja = json::parse(a.out);
  ASSERT_FALSE(ja["root_causes"].empty());
  EXPECT_EQ(ja["root_causes"][0]["device"], "node-0018/pcie/0000:5c:00.0");

  // The switch host's kernel log alone, named by path: the host comes from
  // its directory (kern.log names no host), the evidence keeps the path.
  const std::string kern = bundle + "/hosts/node-0018/kern.log";
  Result f = run({"diagnose", "--kb", kb, "--topology", bundle + "/topology.json", kern});
  ASSERT_EQ(f.rc, 0) << f.err;
  json jf = json::parse(f.out);
  ASSERT_FALSE(jf["root_causes"].empty());
  EXPECT_EQ(jf["root_causes"][0]["device"], "node-0018/pcie/0000:5c:00.0");
  EXPECT_EQ(jf["root_causes"][0]["chain"][0]["evidence"].get<std::string>().rfind(kern + ":", 0),
            0u)
      << jf.dump(2);

  // The same lines on stdin with --host: job output until declared a kernel
  // capture (formats.md, "Who speaks for what"), and the report says so.
  std::ifstream in(kern);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Result undeclared = run(
      {"diagnose", "--kb", kb, "--topology", bundle + "/topology.json", "--host", "node-0018", "-"},
      text);
  ASSERT_EQ(undeclared.rc, 0) << undeclared.err;
  EXPECT_EQ(undeclared.out.find("node-0018/pcie/0000:5c:00.0\", \"fault_class"), std::string::npos);
  EXPECT_NE(undeclared.out.find("refused as evidence"), std::string::npos);
  EXPECT_NE(undeclared.out.find("--kernel-capture - for standard input"), std::string::npos);
  Result p = run({"diagnose", "--kb", kb, "--topology", bundle + "/topology.json", "--host",
                  "node-0018", "--kernel-capture", "-", "-"},
                 text);
  ASSERT_EQ(p.rc, 0) << p.err;
  json jp = json::parse(p.out);
  ASSERT_FALSE(jp["root_causes"].empty());
  EXPECT_EQ(jp["root_causes"][0]["device"], "node-0018/pcie/0000:5c:00.0");
  EXPECT_EQ(jp["root_causes"][0]["chain"][0]["evidence"].get<std::string>().rfind("<stdin>:", 0),
            0u);

  // Bad inputs: a clear error and exit 2, never a crash.
  write(t.path / "junk.tgz", "not an archive");
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{(t.path / "junk.tgz").string()},
                                             {(t.path / "missing.log").string()},
                                             {bundle, kern},
                                             {"-", "-"}}) {
    std::vector<std::string> args{"diagnose", "--kb", kb};
    args.insert(args.end(), bad.begin(), bad.end());
    Result r = run(args);
    EXPECT_EQ(r.rc, 2) << bad.front() << "\n" << r.err;
    EXPECT_NE(r.err.find("reflex diagnose: "), std::string::npos) << r.err;
  }
}

// The HTTP and archive libraries are in modules loaded on first use
// (module_loader.h), so a run that needs neither does not load them; a
// binary without its modules says which one is missing and exits 2.
TEST(Cli, ModulesLoadOnFirstUseAndAMissingOneIsSaid) {
  TempDir t;
  const std::string needed = (t.path / "needed.txt").string();
  ASSERT_EQ(std::system(("readelf -d " + kReflex + " > " + needed).c_str()), 0);
  std::ifstream in(needed);
  const std::string dyn((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_NE(dyn.find("NEEDED"), std::string::npos) << dyn;
  for (const char* lib : {"libarchive", "httplib", "libssl", "libcrypto"})
    EXPECT_EQ(dyn.find(lib), std::string::npos) << lib << " is linked into reflex:\n" << dyn;

  if (fs::exists(std::string(REFLEX_MODULE_DIR_FOR_TESTS) + "/reflex_archive.so"))
    GTEST_SKIP() << "an installed reflex_archive.so would be found";
  const fs::path alone = t.path / "bin" / "reflex";
  fs::create_directories(alone.parent_path());
  fs::copy_file(kReflex, alone);
  const std::string tgz = pack_example(t);
  ASSERT_FALSE(tgz.empty()) << "tar failed";
  Proc p({alone.string(), "events", "--kb", kKb, tgz});
  const Result r = p.wait();
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("cannot read archives: the module reflex_archive.so is not installed"),
            std::string::npos)
      << r.err;
}

// A report says what it read, what it refused and what it did not understand,
// so a quiet report is not taken for a clean one: a kernel Xid line that came
// through an app log is refused for transport; an NVRM error no signature knows
// is "not understood", and with nothing recognized it is the unclassified root
// (low confidence, no eviction) with the driver family's class.
TEST(Cli, ReportSaysWhatItRefusedAndDidNotUnderstand) {
  const std::string kb = std::string(REFLEX_SOURCE_DIR) + "/kb";
  TempDir t;
  // real lines: leptonai/gpud xid fixture (Xid 79 form) and a driver line of
  // NVIDIA/nccl#2241 (tests/realworld/b-nccl-2241) that no signature reads
  write(t.path / "hosts/node-1/train.log",
        "NVRM: Xid (PCI:0000:01:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off "
        "the bus.\n");
  write(t.path / "hosts/node-1/kern.log",
        "[373871.354096] NVRM: GPU1 kbifCacheVFInfo_GB100: Unable to read "
        "NV_PF0_INITIAL_AND_TOTAL_VFS\n");
  Result r = run({"diagnose", "--kb", kb, t.path.string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["root_causes"].size(), 1u) << j.dump(2);
  EXPECT_EQ(j["root_causes"][0]["fault_class"], "gpu_hw") << j.dump(2);
  EXPECT_EQ(j["root_causes"][0]["basis"], "unclassified") << j.dump(2);
  EXPECT_EQ(j["root_causes"][0]["confidence"], "low") << j.dump(2);
  EXPECT_TRUE(j["eviction_set"].empty()) << j.dump(2);
  std::string notes;
  for (const auto& n : j["notes"]) notes += n.get<std::string>() + "\n";
  EXPECT_NE(notes.find("input: 2 line(s) read, 0 event(s) recognised"), std::string::npos) << notes;
  EXPECT_NE(notes.find("refused for transport: 1 line(s)"), std::string::npos) << notes;
  EXPECT_NE(notes.find("hosts/node-1/train.log x1"), std::string::npos) << notes;
  EXPECT_NE(notes.find("not understood: 1 line(s)"), std::string::npos) << notes;
  EXPECT_NE(notes.find("hosts/node-1/kern.log:1"), std::string::npos) << notes;
  // --stats of reflex events says the same in counters
  Result e = run({"events", "--stats", "--kb", kb, t.path.string()});
  ASSERT_EQ(e.rc, 0) << e.err;
  EXPECT_NE(e.err.find("\"unrecognized_lines\": 1"), std::string::npos) << e.err;
  EXPECT_NE(e.err.find("\"suspect_nvidia_driver_error\": 1"), std::string::npos) << e.err;
}

TEST(Cli, TextAndDotFormats) {
  TempDir d;
  cascade_bundle(d.path, 2, 1, 5);
  Result t = run({"diagnose", "--kb", kKb, "--format", "text", d.path.string()});
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("Root cause: " + pcie(1, 5)), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("hosts/node-1/kern.log:2"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("action:"), std::string::npos);
  Result g = run({"diagnose", "--kb", kKb, "--format", "dot", d.path.string()});
  ASSERT_EQ(g.rc, 0) << g.err;
  EXPECT_EQ(g.out.rfind("digraph", 0), 0u);
  EXPECT_NE(g.out.find(pcie(1, 5)), std::string::npos);
}

TEST(Cli, ExitCodes) {
  TempDir d;
  cascade_bundle(d.path, 1, 0, 0);
  EXPECT_EQ(run({"diagnose"}).rc, 2);
  EXPECT_EQ(run({"diagnose", "--help"}).rc, 0);
  EXPECT_EQ(run({"diagnose", "--kb", kKb}).rc, 2);  // no bundle
  EXPECT_EQ(run({"diagnose", "--kb", kKb, (d.path / "nope").string()}).rc, 2);
  EXPECT_EQ(run({"diagnose", "--kb", kKb, "--format", "xml", d.path.string()}).rc, 2);
  EXPECT_EQ(run({"diagnose", "--kb", kKb, "--settle", "soon", d.path.string()}).rc, 2);
  // Bad topology: exit 2 and the error names the file.
  write(d.path / "bad-topology.json", "{\"hosts\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}");
  Result bt = run({"diagnose", "--kb", kKb, "--topology", (d.path / "bad-topology.json").string(),
                   d.path.string()});
  EXPECT_EQ(bt.rc, 2);
  EXPECT_NE(bt.err.find("bad-topology.json"), std::string::npos) << bt.err;
  // KB errors: exit 2 with the compiler's diagnostics.
  write(d.path / "badkb" / "x.rfx", "reflex 1\nsignature {\n");
  Result bk = run({"diagnose", "--kb", (d.path / "badkb").string(), d.path.string()});
  EXPECT_EQ(bk.rc, 2);
  EXPECT_NE(bk.err.find("x.rfx"), std::string::npos) << bk.err;
  // Missing --events file.
  EXPECT_EQ(run({"diagnose", "--kb", kKb, "--events", (d.path / "none.jsonl").string()}).rc, 2);
  // No root cause is still exit 0, with the symptoms unexplained.
  TempDir q("-q");
  write(q.path / "topology.json", topo_json(1, {{"job-1", {0}}}));
  write(q.path / "hosts/node-0/train.log",
        "2026-03-05 10:02:11 [INFO] training started\n" + watchdog(0) + watchdog(1));
  Result nr = run({"diagnose", "--kb", kKb, q.path.string()});
  EXPECT_EQ(nr.rc, 0) << nr.err;
  json j = json::parse(nr.out);
  EXPECT_TRUE(j["root_causes"].empty());
  EXPECT_EQ(j["unexplained"].size(), 2u);
  // Fault evidence without a symptom: trigger null, still diagnosed.
  write(q.path / "hosts/node-0/train.log", "2026-03-05 10:02:11 [INFO] training started\n");
  write(q.path / "hosts/node-0/boot_time", "2026-03-05T08:00:00Z\n");
  write(q.path / "hosts/node-0/kern.log",
        dmesg(9662.9,
              "NVRM: Xid (PCI:0000:41:00): 79, pid=48213, name=python, GPU has fallen off "
              "the bus."));
  Result nt = run({"diagnose", "--kb", kKb, q.path.string()});
  ASSERT_EQ(nt.rc, 0) << nt.err;
  json jt = json::parse(nt.out);
  EXPECT_TRUE(jt["trigger"].is_null());
  ASSERT_FALSE(jt["root_causes"].empty());
  EXPECT_EQ(jt["root_causes"][0]["device"], gpu(0, 3));
}

namespace {
std::string envelope(const std::string& host, const std::string& ts, const std::string& source,
                     const std::string& msg) {
  json j;
  j["host"] = host;
  j["ts"] = ts;
  j["source"] = source;
  j["msg"] = msg;
  return j.dump() + "\n";
}

std::string cascade_envelopes() {
  std::string s;
  // source: Linux drivers/pci/pcie/aer.c and NVIDIA's Xid catalog (formats)
  s += envelope("node-1", "2026-03-05T10:41:02.301144Z", "kernel",
                "pcieport 0000:40:00.0: AER: Uncorrected (Fatal) error received: 0000:40:00.0");
  s += envelope("node-1", "2026-03-05T10:41:02.910385Z", "kernel",
                "NVRM: Xid (PCI:0000:41:00): 79, pid=48213, name=python, GPU has fallen off the "
                "bus.");
  for (int r = 0; r < 16; ++r)
    s += envelope("node-" + std::to_string(r / 8), "2026-03-05T10:51:02.400000Z", "app",
                  watchdog(r).substr(0, watchdog(r).size() - 1));
  return s;
}
}  // namespace

TEST(Cli, WatchPrintsDiagnosesAtEof) {
  TempDir d;
  write(d.path / "topology.json", topo_json(2, {{"job-1", {0, 1}}}));
  std::string in = "not json at all\n{\"host\": \"node-0\"}\n" + cascade_envelopes();
  Result r = run({"watch", "--kb", kKb, "--topology", (d.path / "topology.json").string()}, in);
  ASSERT_EQ(r.rc, 0) << r.err;
  // One JSON document per line.
  std::vector<json> docs;
  size_t pos = 0;
  while (pos < r.out.size()) {
    size_t nl = r.out.find('\n', pos);
    docs.push_back(json::parse(r.out.substr(pos, nl - pos)));
    pos = nl + 1;
  }
  ASSERT_GE(docs.size(), 1u) << r.out;
  EXPECT_EQ(docs.back()["root_causes"][0]["device"], pcie(1, 3));
  EXPECT_NE(r.err.find("skipped 2 bad envelope"), std::string::npos) << r.err;
}

TEST(Cli, WatchSigtermDiagnosesOpenIncidentsAndSighupReloads) {
  TempDir d;
  write(d.path / "topology.json", topo_json(2, {{"job-1", {0, 1}}}));
  // A KB copy we can break for the reload.
  fs::copy(kKb, d.path / "kb", fs::copy_options::recursive);
  Proc p({kReflex, "watch", "--kb", (d.path / "kb").string(), "--topology",
          (d.path / "topology.json").string()});
  p.write_in(cascade_envelopes());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  write(d.path / "kb" / "broken.rfx", "reflex 1\nrule {\n");
  kill(p.pid, SIGHUP);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(p.pid, SIGTERM);
  Result r = p.wait();
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("reload failed"), std::string::npos) << r.err;
  ASSERT_FALSE(r.out.empty()) << r.err;
  json last = json::parse(r.out.substr(r.out.rfind('\n', r.out.size() - 2) == std::string::npos
                                           ? 0
                                           : r.out.rfind('\n', r.out.size() - 2) + 1));
  EXPECT_EQ(last["root_causes"][0]["device"], pcie(1, 3));
}

// Defaults and exit codes (docs/cli.md "Defaults and exit codes").
namespace {
const Env kNoKbEnv = {{"REFLEX_KB", std::nullopt}};

Result run_env(const std::string& exe, std::vector<std::string> args, const Env& env) {
  args.insert(args.begin(), exe);
  return Proc(args, env).wait();
}

// A bundle with two watchdog timeouts and no fault evidence: no root cause.
void symptoms_only_bundle(const fs::path& dir) {
  write(dir / "topology.json", topo_json(1, {{"job-1", {0}}}));
  write(dir / "hosts/node-0/train.log",
        "2026-03-05 10:02:11 [INFO] training started\n" + watchdog(0) + watchdog(1));
}
}  // namespace

TEST(CliDefaults, KbFromTheEnvironment) {
  TempDir d;
  cascade_bundle(d.path, 2, 1, 5);
  Result r = run_env(kReflex, {"diagnose", d.path.string()}, {{"REFLEX_KB", kKb}});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["root_causes"][0]["device"], pcie(1, 5));
  EXPECT_NE(r.err.find("knowledge base " + kKb + " (from REFLEX_KB)"), std::string::npos) << r.err;
  // --kb wins over REFLEX_KB; a REFLEX_KB that names nothing is bad input.
  Result k = run_env(kReflex, {"diagnose", "--kb", kKb, d.path.string()}, {{"REFLEX_KB", "/no"}});
  EXPECT_EQ(k.rc, 0) << k.err;
  EXPECT_EQ(run_env(kReflex, {"events", d.path.string()}, {{"REFLEX_KB", "/no/kb"}}).rc, 2);
}

TEST(CliDefaults, KbOfTheBuildTree) {
  Result r = run_env(kReflex,
                     {"diagnose", "--format", "text", REFLEX_SOURCE_DIR "/examples/incident-pcie"},
                     kNoKbEnv);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("Root cause: node-0018/pcie/0000:5c:00.0"), std::string::npos) << r.out;
  // The build's compiled kb/, or kb/ itself when a source is newer.
  const bool artifact =
      r.err.find("share/reflex/kb.rfxkb (compiled by this build") != std::string::npos;
  const bool sources = r.err.find("knowledge base " REFLEX_SOURCE_DIR "/kb (") != std::string::npos;
  EXPECT_TRUE(artifact || sources) << r.err;
  Result h = run_env(kReflex, {"diagnose", "--help"}, kNoKbEnv);
  EXPECT_NE(h.out.find("default: $REFLEX_KB, else "), std::string::npos) << h.out;
}

TEST(CliDefaults, KbBesideACopiedBinaryOrNone) {
  // A binary outside its build tree looks only at BINDIR/../share/reflex.
  const fs::path root =
      fs::path(kReflex).parent_path() / ("kb-default-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "bin");
  struct Gone {
    fs::path p;
    ~Gone() { fs::remove_all(p); }
  } gone{root};
  const std::string exe = (root / "bin/reflex").string();
  std::error_code ec;
  fs::create_hard_link(kReflex, exe, ec);
  if (ec) fs::copy_file(kReflex, exe);
  TempDir d;
  cascade_bundle(d.path, 2, 1, 5);
  Result none = run_env(exe, {"diagnose", d.path.string()}, kNoKbEnv);
  EXPECT_EQ(none.rc, 2);
  EXPECT_TRUE(none.out.empty());
  EXPECT_NE(none.err.find("no knowledge base"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find((root / "share/reflex/kb.rfxkb").string()), std::string::npos)
      << none.err;
  fs::create_directories(root / "share/reflex");
  fs::copy(kKb, root / "share/reflex/kb", fs::copy_options::recursive);
  Result found = run_env(exe, {"diagnose", d.path.string()}, kNoKbEnv);
  EXPECT_EQ(found.rc, 0) << found.err;
  EXPECT_NE(found.err.find((root / "share/reflex/kb").string()), std::string::npos) << found.err;
}

TEST(CliDefaults, ExitCodeOptIn) {
  TempDir d, q("-q"), e("-e");
  cascade_bundle(d.path, 1, 0, 0);
  symptoms_only_bundle(q.path);
  write(e.path / "hosts/node-0/train.log", "2026-03-05 10:02:11 [INFO] training started\n");
  auto rc = [](std::vector<std::string> a) {
    a.insert(a.begin() + 1, {"--kb", kKb});
    return run(a).rc;
  };
  EXPECT_EQ(rc({"diagnose", "--exit-code", d.path.string()}), 0);  // a root cause
  EXPECT_EQ(rc({"diagnose", "--exit-code", q.path.string()}), 1);  // none
  EXPECT_EQ(rc({"diagnose", q.path.string()}), 0);                 // without the flag: 0
  EXPECT_EQ(rc({"diagnose", "--exit-code", (d.path / "nope").string()}), 2);
  EXPECT_EQ(rc({"events", "--exit-code", d.path.string()}), 0);  // events recognized
  EXPECT_EQ(rc({"events", "--exit-code", e.path.string()}), 1);  // nothing recognized
  EXPECT_EQ(rc({"events", e.path.string()}), 0);
  EXPECT_EQ(rc({"events", "--exit-code", (d.path / "nope").string()}), 2);
}

TEST(CliDefaults, DidYouMean) {
  Result c = run({"diganose"});
  EXPECT_EQ(c.rc, 2);
  EXPECT_NE(c.err.find("unknown command 'diganose'; did you mean 'diagnose'?"), std::string::npos)
      << c.err;
  EXPECT_EQ(c.err.find("commands:"), std::string::npos) << c.err;  // not the whole usage
  Result o = run({"diagnose", "--kb", kKb, "--fromat", "text", "x"});
  EXPECT_EQ(o.rc, 2);
  EXPECT_NE(o.err.find("unknown option '--fromat'; did you mean '--format'?"), std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("run 'reflex diagnose --help'"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("--topology"), std::string::npos) << o.err;  // not the whole help
  Result far = run({"events", "--frobnicate", "x"});
  EXPECT_EQ(far.rc, 2);
  EXPECT_NE(far.err.find("unknown option '--frobnicate'\n"), std::string::npos) << far.err;
  // reflexc, built beside reflex, says the same.
  const std::string rfxc = (fs::path(kReflex).parent_path().parent_path() / "reflexc/reflexc");
  ASSERT_TRUE(fs::exists(rfxc)) << rfxc;
  Result rc = run_env(rfxc, {"chekc", "kb"}, {});
  EXPECT_EQ(rc.rc, 2);
  EXPECT_NE(rc.err.find("did you mean 'check'?"), std::string::npos) << rc.err;
  Result ro = run_env(rfxc, {"build", "--ouptut", "x.rfxkb", "kb"}, {});
  EXPECT_EQ(ro.rc, 2);
  EXPECT_NE(ro.err.find("unknown option '--ouptut'; did you mean '--output'?"), std::string::npos)
      << ro.err;
}
