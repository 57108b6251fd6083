// Golden test driver: compiles one .rfx file (run from its directory so the
// paths in the output are stable) and compares the text diagnostics with the
// expected .err file. REFLEX_UPDATE_GOLDEN=1 rewrites the expectation.
// A first line `# golden-options: key=value ...` adjusts CompileOptions.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "reflex/compiler.h"

namespace {

std::string read(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  *ok = static_cast<bool>(in);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void apply_options(const std::string& text, reflex::CompileOptions* o) {
  const std::string tag = "# golden-options:";
  if (text.rfind(tag, 0) != 0) return;
  std::istringstream line(text.substr(tag.size(), text.find('\n') - tag.size()));
  std::string kv;
  while (line >> kv) {
    auto eq = kv.find('=');
    std::string k = kv.substr(0, eq), v = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (k == "max_file_bytes") o->max_file_bytes = std::stoul(v);
    if (k == "max_errors_per_file") o->max_errors_per_file = std::stoi(v);
    if (k == "max_nesting_depth") o->max_nesting_depth = std::stoi(v);
    if (k == "Werror") o->warnings_as_errors = true;
    if (k == "no-warn") o->disabled_warnings.insert(v);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: golden_check NAME.rfx NAME.err\n");
    return 2;
  }
  bool ok = false;
  std::string src = read(argv[1], &ok);
  if (!ok) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  reflex::CompileOptions o;
  apply_options(src, &o);
  reflex::CompileResult r = reflex::compile({argv[1]}, o);
  std::string got = reflex::render_diagnostics(r, reflex::DiagFormat::text);
  const char* update = std::getenv("REFLEX_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(argv[2], std::ios::binary) << got;
    std::printf("updated %s\n", argv[2]);
    return 0;
  }
  std::string want = read(argv[2], &ok);
  if (!ok) {
    std::fprintf(stderr, "missing %s (run with REFLEX_UPDATE_GOLDEN=1)\n", argv[2]);
    return 1;
  }
  if (got != want) {
    std::cerr << "--- expected (" << argv[2] << ")\n" << want << "--- got\n" << got;
    return 1;
  }
  return 0;
}
