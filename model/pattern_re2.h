// RE2 options of the language (model-private: only the model compiles RE2).
#pragma once

#include <re2/re2.h>

namespace reflex {

// Latin-1: byte semantics, like Hyperscan's. Errors are returned, not logged.
inline RE2::Options re2_pattern_options() {
  RE2::Options o;
  o.set_encoding(RE2::Options::EncodingLatin1);
  o.set_log_errors(false);
  return o;
}

}  // namespace reflex
