#include "reflex/modules/module_loader.h"

#include <dlfcn.h>

#include <filesystem>
#include <vector>

#include "reflex/modules/archive_api.h"
#include "reflex/modules/http_api.h"

#ifndef REFLEX_MODULE_RELDIR
#define REFLEX_MODULE_RELDIR ""
#endif
#ifndef REFLEX_MODULE_DIR
#define REFLEX_MODULE_DIR ""
#endif

namespace reflex {

namespace {
namespace fs = std::filesystem;

std::vector<fs::path> candidates(const char* module) {
  std::vector<fs::path> out;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    out.push_back(exe.parent_path() / module);
    if (*REFLEX_MODULE_RELDIR)
      out.push_back((exe.parent_path() / REFLEX_MODULE_RELDIR / module).lexically_normal());
  }
  if (*REFLEX_MODULE_DIR) out.push_back(fs::path(REFLEX_MODULE_DIR) / module);
  return out;
}

// One module's entry, looked up once (thread-safe: a function-local static).
template <class Api>
const Api* api_of(const char* module, const char* entry, std::string* err) {
  struct Loaded {
    const Api* api = nullptr;
    std::string why;
  };
  static const Loaded loaded = [&] {
    Loaded l;
    using Entry = const Api* (*)();
    if (void* f = module_entry(module, entry, &l.why)) l.api = reinterpret_cast<Entry>(f)();
    return l;
  }();
  if (!loaded.api && err) *err = loaded.why;
  return loaded.api;
}
}  // namespace

void* module_entry(const char* module, const char* entry, std::string* err) {
  std::string tried;
  for (const fs::path& p : candidates(module)) {
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      tried += (tried.empty() ? "" : ", ") + p.string();
      continue;
    }
    void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      *err = "cannot load " + p.string() + ": " + dlerror();
      return nullptr;
    }
    void* f = dlsym(h, entry);
    if (!f) *err = p.string() + " has no " + entry + " (not this version's module)";
    return f;
  }
  *err = std::string("the module ") + module + " is not installed (looked for " + tried + ")";
  return nullptr;
}

const HttpApi* http_api(std::string* err) {
  return api_of<HttpApi>("reflex_http.so", "reflex_http_api_v1", err);
}

const ArchiveApi* archive_api(std::string* err) {
  return api_of<ArchiveApi>("reflex_archive.so", "reflex_archive_api_v2", err);
}

}  // namespace reflex
