// Placeholder until its owner lands it; says so instead of pretending.
#include <cstdio>

#include "commands.h"

namespace reflex::cli {

int run_diagnose(int, char**) {
  std::fputs("reflex diagnose: not implemented yet\n", stderr);
  return 2;
}

}  // namespace reflex::cli
