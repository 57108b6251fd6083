// `reflex key new` / `reflex key derive --master FILE --host NAME`: the keys
// that bind events to their host (docs/deployment.md, "Threat model"). The
// master key stays with the diagnosers (--verify-key); each agent gets only
// its host's derived key (--signing-key). Keys go to stdout as 64 hex
// digits, for a file of mode 600.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "cli_common.h"
#include "commands.h"
#include "reflex/deploy/keys.h"

namespace reflex::cli {

int run_key(int argc, char** argv) {
  CLI::App app{"Make the keys that bind events to the host that sent them", "reflex key"};
  app.require_subcommand(1);
  CLI::App* fresh = app.add_subcommand("new", "print a new random master key (for --verify-key)");
  CLI::App* derive =
      app.add_subcommand("derive", "print a host's key (for that host's agent, --signing-key)");
  std::string master_file, host;
  derive->add_option("--master", master_file, "the master key file")->required();
  derive->add_option("--host", host, "the host, as its agent's --host names it")->required();
  if (auto rc = parse_or_exit(app, argc, argv, "reflex key")) return *rc;
  std::string err;
  if (fresh->parsed()) {
    deploy::Key k = deploy::new_master_key(&err);
    if (k.empty()) {
      std::fprintf(stderr, "reflex key new: %s\n", err.c_str());
      return 2;
    }
    std::printf("%s\n", deploy::key_hex(k).c_str());
    return 0;
  }
  auto master = deploy::read_key_file(master_file, &err);
  if (!master) {
    std::fprintf(stderr, "reflex key derive: %s\n", err.c_str());
    return 2;
  }
  if (host.empty() || host.find_first_of(" \t\r\n/") != std::string::npos) {
    std::fprintf(stderr, "reflex key derive: --host: a host name, without spaces or '/'\n");
    return 2;
  }
  std::printf("%s\n", deploy::key_hex(deploy::derive_host_key(*master, host)).c_str());
  return 0;
}

}  // namespace reflex::cli
