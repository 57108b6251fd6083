// `reflexc test`: runs the `test` blocks of a knowledge base against the
// runtime. Implemented by the runtime owner once the engine exists.
#pragma once

namespace reflex::cli {

// argv[0] is "test"; returns the process exit code (0 all pass, 1 failures, 2 usage).
int run_kb_tests(int argc, char** argv);

}  // namespace reflex::cli
