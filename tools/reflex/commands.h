// Subcommands of `reflex`. Each lives in its own cmd_*.cpp and parses its own
// options; every one returns the process exit code (interfaces.md §7: 2 = usage / bad input).
#pragma once

namespace reflex::cli {

int run_events(int argc, char** argv);
int run_diagnose(int argc, char** argv);
int run_watch(int argc, char** argv);
int run_eval(int argc, char** argv);
int run_agent(int argc, char** argv);
int run_topology(int argc, char** argv);
int run_key(int argc, char** argv);

}  // namespace reflex::cli
