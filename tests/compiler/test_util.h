// Helpers for the compiler tests.
#pragma once

#include <string>
#include <vector>

#include "reflex/compiler.h"

namespace reflex::testing {

inline CompileResult check_text(const std::string& text, CompileOptions o = {}) {
  o.allow_imports = false;
  return compile_text("snippet.rfx", text, o);
}

inline std::vector<std::string> codes(const CompileResult& r) {
  std::vector<std::string> out;
  for (const auto& d : r.diagnostics) out.push_back(d.code);
  return out;
}

inline bool has_code(const CompileResult& r, const std::string& code) {
  for (const auto& d : r.diagnostics)
    if (d.code == code) return true;
  return false;
}

inline std::string dump(const CompileResult& r) {
  return render_diagnostics(r, DiagFormat::text);
}

}  // namespace reflex::testing
