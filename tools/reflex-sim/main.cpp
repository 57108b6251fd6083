// reflex-sim: writes K synthetic incident bundles (interfaces.md §3) with truth.json.
// Same seed and options -> same bytes (interfaces.md §7).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <sstream>
#include <string>

#include "sim/sim.h"

int main(int argc, char** argv) {
  reflex::sim::SimOptions o;
  std::string scen, pairing = "1:1", mix = "stratified";
  bool list = false, quiet = false, hard = false;
  CLI::App app{"reflex-sim: synthetic GPU-cluster incident bundles with ground truth",
               "reflex-sim"};
  app.add_option("--seed", o.seed, "PRNG seed (same seed, same bytes)");
  app.add_option("--count", o.count, "number of incident bundles")->check(CLI::PositiveNumber);
  app.add_option("--hosts", o.hosts, "hosts in the cluster (2..100000)");
  app.add_option("--gpus-per-host", o.gpus_per_host, "GPUs (and NICs) per host (1..8)");
  app.add_option("--pairing", pairing, "GPU-NIC pairing under PCIe switches: 1:1 or 2:2")
      ->check(CLI::IsMember({"1:1", "2:2"}));
  app.add_option("--scenario", scen, "comma-separated scenario names (default: the domain mix)");
  app.add_option("--mix", mix, "stratified (counts follow the mix) or random (i.i.d. draws)")
      ->check(CLI::IsMember({"stratified", "random"}));
  app.add_option("--noise-lines-per-host", o.noise_lines_per_host, "background lines per host");
  app.add_option("--first-index", o.first_index, "number of the first bundle (incident-NNNN)");
  app.add_option("--out", o.out, "output directory");
  app.add_flag("--hard", hard,
               "hard mode: base rates, prior faults, common mode, odd one out, two-wave host "
               "loss, snippets; each incident on its own cluster of up to --hosts (default 64) "
               "hosts");
  app.add_option("--families", o.families,
                 "with --hard: default (the set its floors hold), new (the families added "
                 "after it: NCCL segfault, duplicate GPU, one NVLink GPU, NIC firmware, NIC "
                 "PCIe, BER escalation, one rank's exception, thin evidence) or all")
      ->check(CLI::IsMember({"default", "new", "all"}));
  app.add_flag("--list-scenarios", list,
               "print the scenarios (with --hard: the hard ones) and exit");
  app.add_flag("-q,--quiet", quiet, "no progress on stderr");
  app.set_version_flag("--version", "reflex-sim " REFLEX_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    std::puts("reflex-sim " REFLEX_VERSION);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "reflex-sim: %s\n", e.what());
    return 2;
  }
  if (list) {
    std::printf("%-24s %-20s %-10s %6s  %-18s %s\n", "scenario", "fault_class", "device", "share",
                "source", "summary");
    for (const auto& s : hard ? reflex::sim::hard_scenarios(o.families) : reflex::sim::scenarios())
      std::printf("%-24s %-20s %-10s %5.1f%%  %-18s %s\n", s.name.c_str(),
                  s.fault_class.empty()
                      ? (s.device_kind == "mixed" ? "(varies)" : "(not localizable)")
                      : s.fault_class.c_str(),
                  s.device_kind.c_str(), s.weight, s.source.c_str(), s.summary.c_str());
    return 0;
  }
  if (o.out.empty()) {
    std::fputs("reflex-sim: --out DIR is required\n", stderr);
    return 2;
  }
  o.hard = hard;
  if (hard && !app.count("--hosts")) o.hosts = 64;
  o.pairing_2_2 = pairing == "2:2";
  o.stratified = mix == "stratified";
  std::stringstream ss(scen);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) o.scenarios.push_back(item);
  std::string err;
  if (!reflex::sim::plan_scenarios(o, &err).size() && !err.empty()) {
    std::fprintf(stderr, "reflex-sim: %s\n", err.c_str());
    return 2;
  }
  const bool tty = !quiet && isatty(2);
  auto progress = [&](int done, int total) {
    if (tty) std::fprintf(stderr, "\rreflex-sim: %d/%d bundles", done, total);
  };
  if (!reflex::sim::generate(o, &err, progress)) {
    if (tty) std::fputc('\n', stderr);
    std::fprintf(stderr, "reflex-sim: %s\n", err.c_str());
    // Bad options are usage errors; I/O failures too (interfaces.md §7 lists 0 and 2).
    return 2;
  }
  if (tty) std::fputc('\n', stderr);
  return 0;
}
