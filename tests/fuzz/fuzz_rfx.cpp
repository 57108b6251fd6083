// libFuzzer entry point over the whole front end: pre-checks, parser, every
// semantic pass and the renderers. Imports are disabled (no file access).
#include <cstddef>
#include <cstdint>
#include <string>

#include "reflex/compiler.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  reflex::CompileOptions o;
  o.allow_imports = false;
  o.max_file_bytes = 1 << 20;
  std::string text(reinterpret_cast<const char*>(data), size);
  reflex::CompileResult r = reflex::compile_text("fuzz.rfx", text, o);
  // The renderers walk every diagnostic and the source lines.
  (void)reflex::render_diagnostics(r, reflex::DiagFormat::text);
  (void)reflex::render_diagnostics(r, reflex::DiagFormat::sarif);
  if (r.kb) (void)reflex::causal_graph_dot(*r.kb);
  return 0;
}
