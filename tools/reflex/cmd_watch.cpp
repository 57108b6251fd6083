// Placeholder until its owner lands it; says so instead of pretending.
#include <cstdio>

#include "commands.h"

namespace reflex::cli {

int run_watch(int, char**) {
  std::fputs("reflex watch: not implemented yet\n", stderr);
  return 2;
}

}  // namespace reflex::cli
