// Pattern validation with the matcher's own RE2 options and Hyperscan flags.
#include "reflex/pattern.h"

#include <hs/hs.h>

#include "pattern_re2.h"

namespace reflex {

unsigned hyperscan_pattern_flags(bool prefilter) {
  return HS_FLAG_SINGLEMATCH | HS_FLAG_ALLOWEMPTY | (prefilter ? HS_FLAG_PREFILTER : 0u);
}

bool re2_pattern_ok(const std::string& pattern, std::string* error) {
  RE2 re(pattern, re2_pattern_options());
  if (!re.ok()) {
    *error = re.error();
    return false;
  }
  return true;
}

bool hyperscan_pattern_ok(const std::string& pattern, std::string* error) {
  hs_database_t* db = nullptr;
  hs_compile_error_t* err = nullptr;
  if (hs_compile(pattern.c_str(), hyperscan_pattern_flags(true), HS_MODE_BLOCK, nullptr, &db,
                 &err) != HS_SUCCESS) {
    *error = err && err->message ? err->message : "unknown Hyperscan error";
    if (err) hs_free_compile_error(err);
    return false;
  }
  hs_free_database(db);
  return true;
}

std::set<std::string> pattern_capture_names(const std::string& pattern) {
  std::set<std::string> out;
  RE2 re(pattern, re2_pattern_options());
  if (!re.ok()) return out;
  for (const auto& [idx, name] : re.CapturingGroupNames()) out.insert(name);
  return out;
}

}  // namespace reflex
