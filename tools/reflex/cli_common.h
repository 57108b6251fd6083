// What every `reflex` subcommand does the same way.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace reflex::cli {

// Parses argv; returns the exit code when the command must stop now (0 after
// --help, 2 on a usage error — interfaces.md §7; CLI11's own 105/106 never escape).
inline std::optional<int> parse_or_exit(CLI::App& app, int argc, char** argv, const char* name) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s\n%s", name, e.what(), app.help().c_str());
    return 2;
  }
  return std::nullopt;
}

// The options several commands share, worded once.
inline void add_kb_option(CLI::App& app, std::string* kb_path) {
  app.add_option("--kb", *kb_path, "knowledge base: .rfx sources (file/dir) or a built artifact")
      ->required();
}
inline void add_strict_transport_flag(CLI::App& app, bool* strict) {
  app.add_flag("--strict-transport", *strict,
               "syslog text tagged 'kernel:' does not count as a kernel line");
}

}  // namespace reflex::cli
