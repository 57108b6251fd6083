// What every `reflex` subcommand does the same way.
#pragma once

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "did_you_mean.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REFLEX_CLI_HAS_ASAN 1
#endif
#endif
#ifndef REFLEX_CLI_HAS_ASAN
#define REFLEX_CLI_HAS_ASAN 0
#endif

namespace reflex::cli {

// Parses argv; returns the exit code when the command must stop now (0 after
// --help, 2 on a usage error — interfaces.md §7; CLI11's own 105/106 never escape).
// A usage error is one line and a hint (an unknown option names the closest
// one), not the whole help.
inline std::optional<int> parse_or_exit(CLI::App& app, int argc, char** argv, const char* name) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s\nrun '%s --help' for its options\n", name,
                 usage_error(app, e).c_str(), name);
    return 2;
  }
  return std::nullopt;
}

// Where the KB comes from without --kb, for --help: $REFLEX_KB, then the
// places this binary looks (kb_default.cpp; docs/cli.md "Defaults and exit codes").
std::string kb_default_help();
// Fills an empty *kb_path with the default KB and says on stderr which one it
// took; false (after an error naming the places looked at: exit 2) when none is found.
bool resolve_kb(std::string* kb_path, const char* name);

// The options several commands share, worded once.
inline void add_kb_option(CLI::App& app, std::string* kb_path) {
  app.add_option("--kb", *kb_path,
                 "knowledge base: .rfx sources (file/dir) or a built artifact (default: " +
                     kb_default_help() + ")");
}
inline void add_strict_transport_flag(CLI::App& app, bool* strict) {
  app.add_flag("--strict-transport", *strict,
               "syslog text tagged 'kernel:' does not count as a kernel line");
}
inline void add_redis_password_option(CLI::App& app, std::string* file) {
  app.add_option("--redis-password-file", *file,
                 "the Redis password, read from this file (mode 600; with systemd: "
                 "LoadCredential= and %d/NAME); else $REFLEX_REDIS_PASSWORD. Never in --redis: "
                 "argv is readable by every user");
}
// Opt-in, as interfaces.md §7 keeps 0 for "ran, found nothing" by default.
inline void add_exit_code_flag(CLI::App& app, bool* exit_code, const char* what) {
  app.add_flag("--exit-code", *exit_code,
               std::string("exit 1 when ") + what + " (0 when found, 2 usage or bad input)");
}

// Memory a one-shot command no longer needs, left for the process exit to
// take back: the kernel drops the pages at once, where freeing the KB, the
// topology, the ingestor's tables and the output one allocation at a time
// took ~1.8 ms after the last line of a ~180 ms `events --threads 2` run.
// Only for objects whose destructor just frees memory (not a store, not a
// temporary directory). Kept reachable, so it is not a leak to a checker;
// under AddressSanitizer it is freed here, so LeakSanitizer still sees
// every allocation's owner let go of it.
template <class T>
void leave_to_exit(std::unique_ptr<T> p) {
#if defined(__SANITIZE_ADDRESS__) || REFLEX_CLI_HAS_ASAN
  p.reset();
#else
  static auto* kept = new std::vector<std::shared_ptr<void> >;
  kept->emplace_back(std::move(p));
#endif
}

}  // namespace reflex::cli
