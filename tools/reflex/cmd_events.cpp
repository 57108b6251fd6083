// Placeholder until its owner lands it; says so instead of pretending.
#include <cstdio>

#include "commands.h"

namespace reflex::cli {

int run_events(int, char**) {
  std::fputs("reflex events: not implemented yet\n", stderr);
  return 2;
}

}  // namespace reflex::cli
