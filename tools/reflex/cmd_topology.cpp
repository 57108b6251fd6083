// `reflex topology`: topology.json (docs/interfaces.md §1) from what was
// collected on each host (scripts/collect-topology.sh, or the same outputs
// saved by hand) and, optionally, a job's host list. The runtime's own loader
// judges the result before it is written; what could not be determined goes
// to stderr as notes (docs/cli.md).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "reflex/discover.h"
#include "reflex/topology.h"

namespace reflex::cli {

namespace {

bool read_small(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  text->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad() && text->size() < (size_t(16) << 20);
}

int fail(const std::string& msg) {
  std::fprintf(stderr, "reflex topology: %s\n", msg.c_str());
  return 2;
}

}  // namespace

int run_topology(int argc, char** argv) {
  CLI::App app{
      "Build topology.json from hosts' collected outputs (lspci -tv, nvidia-smi -q or "
      "--query-gpu CSV, nvidia-smi topo -m, nvidia-smi nvlink -s, ibdev2netdev, ibstat, "
      "hostname)"};
  std::vector<std::string> dirs;
  std::string out_path, hostfile, job_id = "job", cluster;
  int slots = 8;
  app.add_option("DIR", dirs, "a host's directory of outputs, or a directory of such directories")
      ->required();
  app.add_option("-o,--output", out_path, "write here instead of stdout");
  app.add_option(
      "--hostfile", hostfile,
      "the job's hosts: scontrol show hostnames output, or an MPI hostfile (host slots=N)");
  app.add_option("--job", job_id, "the job's id (with --hostfile)")->capture_default_str();
  app.add_option("--slots", slots, "ranks a host when the host list gives none")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--cluster", cluster, "the cluster's name");
  if (auto rc = parse_or_exit(app, argc, argv, "reflex topology")) return *rc;

  discover::BuildOptions opts;
  opts.cluster = cluster;
  if (!hostfile.empty()) {
    std::string text;
    if (!read_small(hostfile, &text))
      return fail(hostfile + ": cannot read (or larger than 16 MiB)");
    discover::ParseError pe;
    auto hosts = discover::parse_hostlist(text, &pe);
    if (!hosts)
      return fail(hostfile + (pe.line ? ":" + std::to_string(pe.line) : std::string()) + ": " +
                  pe.message);
    opts.job = discover::JobSpec{job_id, std::move(*hosts), slots};
  }
  std::vector<std::string> notes;
  std::vector<discover::HostOutputs> hosts;
  for (const std::string& d : dirs) {
    std::string error;
    std::vector<std::string> host_dirs = discover::host_dirs_of(d, &error);
    if (!error.empty()) return fail(error);
    for (const std::string& hd : host_dirs) {
      discover::HostOutputs h;
      if (!discover::read_host_dir(hd, &h, &notes, &error)) return fail(error);
      hosts.push_back(std::move(h));
    }
  }
  std::string json, error;
  if (!discover::build_topology(hosts, opts, &json, &notes, &error)) return fail(error);
  TopologyError terr;
  auto topo = Topology::load_text(json, out_path.empty() ? "topology.json" : out_path, &terr);
  if (!topo) return fail("the outputs make a topology the loader rejects: " + terr.str());
  for (const std::string& n : topo->notes()) notes.push_back(n);
  for (const std::string& n : notes) std::fprintf(stderr, "reflex topology: note: %s\n", n.c_str());
  if (out_path.empty()) {
    std::fwrite(json.data(), 1, json.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : fail("cannot write stdout");
  }
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  out << json;
  out.close();
  if (!out) return fail(out_path + ": cannot write");
  std::fprintf(stderr, "reflex topology: wrote %s: %zu host(s)\n", out_path.c_str(),
               topo->host_count());
  return 0;
}

}  // namespace reflex::cli
