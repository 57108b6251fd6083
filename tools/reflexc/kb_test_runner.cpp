// Placeholder until the runtime exists (see kb_test_runner.h).
#include "kb_test_runner.h"

#include <cstdio>

namespace reflex::cli {

int run_kb_tests(int /*argc*/, char** /*argv*/) {
  std::fputs("reflexc test: incident tests need the runtime; not implemented yet\n", stderr);
  return 2;
}

}  // namespace reflex::cli
