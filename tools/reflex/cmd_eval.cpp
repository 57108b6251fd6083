// Placeholder until its owner lands it; says so instead of pretending.
#include <cstdio>

#include "commands.h"

namespace reflex::cli {

int run_eval(int, char**) {
  std::fputs("reflex eval: not implemented yet\n", stderr);
  return 2;
}

}  // namespace reflex::cli
