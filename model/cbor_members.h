// The top-level members of a CBOR map, found without decoding them (RFC 8949
// §3): the artifact loader decodes only the members a caller needs, and
// takes the matcher database's bytes in place, where nlohmann's reader
// copies a byte string one byte at a time (1.9 MB in the shipped KB).
// Every item is bounds- and depth-checked: a damaged or hostile artifact is
// refused (false), never read past its end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace reflex {

struct CborMember {
  std::string_view key;            // a text-string key
  const uint8_t* value = nullptr;  // the value's encoded bytes
  size_t value_size = 0;
};

// The members of the map that is all of [p, p + n), in order; false when it
// is not one well-formed map with text-string keys.
bool cbor_map_members(const uint8_t* p, size_t n, std::vector<CborMember>* out);

// A definite byte (major 2) or text (major 3) string that is all of
// [p, p + n): its bytes; false otherwise.
bool cbor_string(const uint8_t* p, size_t n, int major, const uint8_t** data, size_t* size);

}  // namespace reflex
