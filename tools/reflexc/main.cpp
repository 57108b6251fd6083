// `reflexc`: check, build and graph Reflex knowledge bases (interfaces.md §7).
// Exit codes: 0 clean (warnings allowed), 1 errors, 2 usage or I/O.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "../reflex/did_you_mean.h"
#include "graph_focus.h"
#include "kb_test_runner.h"
#include "reflex/artifact.h"
#include "reflex/compiler.h"
#include "reflex/ingest.h"

namespace {

// The command list is also what a mistyped command is matched against.
const char* const kUsage =
    "usage: reflexc <command> [options] PATH...\n"
    "\n"
    "commands:\n"
    "  check   parse and validate .rfx files/directories (examples and near-misses included)\n"
    "  build   compile to the artifact the runtime loads (-o OUT)\n"
    "  graph   print the causal event graph (--format dot|json; --focus EVENT --depth N,\n"
    "          --family CLASS for a part of it)\n"
    "  test    run the rule tests that live with the rules\n"
    "\n"
    "warning options (check, build, graph):\n"
    "  --Werror             treat warnings as errors\n"
    "  -W NAME, --warn=NAME enable warning NAME\n"
    "  --no-warn NAME       disable warning NAME (in source: `allow NAME`)\n"
    "\n"
    "Run 'reflexc <command> --help' for a command's options.\n";

void usage(FILE* out) {
  std::fputs(kUsage, out);
}

struct WarningFlags {
  bool werror = false;
  std::vector<std::string> enable, disable;
  bool color = false;
};

void add_warning_flags(CLI::App& app, WarningFlags& w) {
  app.add_flag("--Werror", w.werror, "Treat warnings as errors");
  app.add_option("-W,--warn", w.enable, "Enable warning NAME")->type_name("NAME");
  app.add_option("--no-warn", w.disable, "Disable warning NAME")->type_name("NAME");
  app.add_flag("--color", w.color, "Colour the text diagnostics");
}

// Validates warning names; fills options. Returns false (usage error) on an unknown name.
bool apply_warning_flags(const WarningFlags& w, reflex::CompileOptions* o) {
  o->warnings_as_errors = w.werror;
  for (const auto* list : {&w.enable, &w.disable}) {
    for (const auto& n : *list) {
      if (!reflex::is_warning_name(n)) {
        std::string names;
        for (const auto& d : reflex::diagnostic_catalog())
          if (!d.name.empty()) names += (names.empty() ? "" : ", ") + d.name;
        std::fprintf(stderr, "reflexc: error: unknown warning '%s' (warnings: %s)\n", n.c_str(),
                     names.c_str());
        return false;
      }
    }
  }
  o->enabled_warnings.insert(w.enable.begin(), w.enable.end());
  o->disabled_warnings.insert(w.disable.begin(), w.disable.end());
  return true;
}

int exit_code(const reflex::CompileResult& r) {
  if (r.io_error) return 2;
  return r.errors() ? 1 : 0;
}

// Parses with CLI11; returns -1 to continue, or the exit code.
int parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "reflexc %s: error: %s\n", app.get_name().c_str(),
                 reflex::cli::usage_error(app, e).c_str());
    std::fprintf(stderr, "Run 'reflexc %s --help' for usage.\n", app.get_name().c_str());
    return 2;
  }
  return -1;
}

int run_check(int argc, char** argv) {
  CLI::App app{"Parse and validate .rfx files and directories", "check"};
  std::string format = "text";
  std::vector<std::string> paths;
  WarningFlags w;
  app.add_option("--format", format, "text | json | sarif")
      ->check(CLI::IsMember({"text", "json", "sarif"}));
  add_warning_flags(app, w);
  app.add_option("paths", paths, ".rfx files or directories")->required();
  if (int rc = parse(app, argc, argv); rc >= 0) return rc;
  reflex::CompileOptions o;
  if (!apply_warning_flags(w, &o)) return 2;
  reflex::CompileResult r = reflex::compile(paths, o);
  if (format == "text") {
    std::cerr << reflex::render_diagnostics(r, reflex::DiagFormat::text,
                                            w.color && isatty(STDERR_FILENO));
  } else {
    std::cout << reflex::render_diagnostics(
        r, format == "json" ? reflex::DiagFormat::json : reflex::DiagFormat::sarif);
    if (r.io_error) std::cerr << "reflexc: error: " << r.io_message << "\n";
  }
  return exit_code(r);
}

int run_build(int argc, char** argv) {
  CLI::App app{"Compile .rfx sources to a knowledge-base artifact", "build"};
  std::string out;
  std::vector<std::string> paths;
  WarningFlags w;
  app.add_option("-o,--output", out, "Artifact to write")->required();
  add_warning_flags(app, w);
  app.add_option("paths", paths, ".rfx files or directories")->required();
  if (int rc = parse(app, argc, argv); rc >= 0) return rc;
  reflex::CompileOptions o;
  if (!apply_warning_flags(w, &o)) return 2;
  reflex::CompileResult r = reflex::compile(paths, o);
  if (r.io_error || !r.diagnostics.empty() || !r.kb)
    std::cerr << reflex::render_diagnostics(r, reflex::DiagFormat::text,
                                            w.color && isatty(STDERR_FILENO));
  if (!r.kb) return exit_code(r);
  std::string err;
  // The runtime's pattern database rides along (for this CPU and Hyperscan
  // version; elsewhere the runtime compiles it at start, as from sources).
  bool precompiled = reflex::precompile_patterns(&*r.kb, &err);
  if (!precompiled) {
    std::fprintf(stderr, "reflexc: note: no precompiled pattern database: %s\n", err.c_str());
    err.clear();
  }
  if (!reflex::save_artifact(*r.kb, out, &err)) {
    std::fprintf(stderr, "reflexc: error: cannot write '%s': %s\n", out.c_str(), err.c_str());
    return 2;
  }
  std::fprintf(stderr, "reflexc: wrote %s (%zu signatures, %zu latents, %zu rules, %zu tests%s)\n",
               out.c_str(), r.kb->signatures.size(), r.kb->latents.size(), r.kb->rules.size(),
               r.kb->tests.size(), precompiled ? ", precompiled pattern database" : "");
  return 0;
}

int run_graph(int argc, char** argv) {
  CLI::App app{"Print the causal event graph", "graph"};
  std::string format = "dot";
  std::vector<std::string> paths;
  WarningFlags w;
  reflex::cli::GraphFocus focus;
  bool list_families = false;
  app.add_option("--format", format, "dot | json")->check(CLI::IsMember({"dot", "json"}));
  app.add_option("--focus", focus.events, "only the events within --depth rule steps of EVENT")
      ->type_name("EVENT");
  app.add_option("--family", focus.families,
                 "only the events of a standard fault CLASS and those within --depth of them")
      ->type_name("CLASS");
  app.add_option("--depth", focus.depth, "rule steps from --focus/--family (default 1)")
      ->check(CLI::Range(0, 50));
  app.add_flag("--list-families", list_families, "list the fault classes --family accepts");
  add_warning_flags(app, w);
  app.add_option("paths", paths, ".rfx files, directories or a built artifact")->required();
  if (int rc = parse(app, argc, argv); rc >= 0) return rc;
  reflex::CompileOptions o;
  if (!apply_warning_flags(w, &o)) return 2;
  std::optional<reflex::KnowledgeBase> kb;
  if (paths.size() == 1 && reflex::is_artifact_file(paths[0])) {
    std::string err;
    kb = reflex::load_artifact(paths[0], &err);
    if (!kb) {
      std::fprintf(stderr, "reflexc: error: %s\n", err.c_str());
      return 2;
    }
  } else {
    reflex::CompileResult r = reflex::compile(paths, o);
    if (r.io_error || !r.diagnostics.empty() || !r.kb)
      std::cerr << reflex::render_diagnostics(r, reflex::DiagFormat::text,
                                              w.color && isatty(STDERR_FILENO));
    if (!r.kb) return exit_code(r);
    kb = std::move(r.kb);
  }
  if (list_families) {
    std::cout << reflex::cli::graph_families(*kb);
    return 0;
  }
  if (!focus.events.empty() || !focus.families.empty()) {
    std::string out, err;
    if (!reflex::cli::focus_graph(*kb, focus, format, &out, &err)) {
      std::fprintf(stderr, "reflexc graph: error: %s\n", err.c_str());
      return 2;
    }
    std::cout << out;
    return 0;
  }
  std::cout << (format == "dot" ? reflex::causal_graph_dot(*kb) : reflex::causal_graph_json(*kb));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
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
      std::puts("reflexc " REFLEX_VERSION);
      return 0;
    }
    // Subcommands see argv with the command name as argv[0].
    if (cmd == "check") return run_check(argc - 1, argv + 1);
    if (cmd == "build") return run_build(argc - 1, argv + 1);
    if (cmd == "graph") return run_graph(argc - 1, argv + 1);
    if (cmd == "test") return reflex::cli::run_kb_tests(argc - 1, argv + 1);
    std::fprintf(stderr, "reflexc: %s\nRun 'reflexc --help' for the commands.\n",
                 reflex::cli::unknown_command(cmd, kUsage).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reflexc: internal error: %s\n", e.what());
    return 2;
  }
}
