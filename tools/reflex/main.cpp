// `reflex`: the runtime's command line. Dispatches to one subcommand.
#include <cstdio>
#include <cstring>
#include <string>

#include "commands.h"
#include "did_you_mean.h"

namespace {

// The command list is also what a mistyped command is matched against.
const char* const kUsage =
    "usage: reflex <command> [options]\n"
    "\n"
    "commands:\n"
    "  diagnose   diagnose an incident bundle (or recognized events) and print the root causes\n"
    "  watch      read event envelopes on stdin, print diagnoses as JSONL\n"
    "  events     print what Reflex recognized in a bundle, one JSON object a line\n"
    "  eval       diagnose simulated bundles and score them against truth.json\n"
    "  agent      follow this host's logs and publish recognized events (deployment)\n"
    "  topology   build topology.json from outputs collected on each host (lspci, nvidia-smi)\n"
    "  key        make the keys that bind events to their host (deployment)\n"
    "\n"
    "Run 'reflex <command> --help' for a command's options.\n";

void usage(FILE* out) {
  std::fputs(kUsage, out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    usage(stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::puts("reflex " REFLEX_VERSION);
    return 0;
  }
  // Subcommands see argv with the command name as argv[0].
  if (cmd == "events") return reflex::cli::run_events(argc - 1, argv + 1);
  if (cmd == "diagnose") return reflex::cli::run_diagnose(argc - 1, argv + 1);
  if (cmd == "watch") return reflex::cli::run_watch(argc - 1, argv + 1);
  if (cmd == "eval") return reflex::cli::run_eval(argc - 1, argv + 1);
  if (cmd == "agent") return reflex::cli::run_agent(argc - 1, argv + 1);
  if (cmd == "topology") return reflex::cli::run_topology(argc - 1, argv + 1);
  if (cmd == "key") return reflex::cli::run_key(argc - 1, argv + 1);
  std::fprintf(stderr, "reflex: %s\nrun 'reflex --help' for the commands\n",
               reflex::cli::unknown_command(cmd, kUsage).c_str());
  return 2;
}
