// See cbor_members.h. Item structure only: no value is decoded.
#include "cbor_members.h"

namespace reflex {

namespace {
constexpr int kMaxDepth = 64;  // as the DOM reader's limit (artifact.cpp)

// The head at p[*at]: major type, argument (or ~0 for indefinite length).
bool read_head(const uint8_t* p, size_t n, size_t* at, int* major, uint64_t* arg) {
  if (*at >= n) return false;
  const uint8_t ib = p[(*at)++];
  *major = ib >> 5;
  const int ai = ib & 31;
  if (ai < 24) {
    *arg = static_cast<uint64_t>(ai);
    return true;
  }
  if (ai == 31) {
    *arg = ~uint64_t{0};
    return *major >= 2 && *major != 6;  // indefinite strings/arrays/maps, or a break
  }
  if (ai > 27) return false;
  const size_t len = size_t{1} << (ai - 24);
  if (n - *at < len) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < len; ++i) v = v << 8 | p[*at + i];
  *at += len;
  *arg = v;
  return true;
}

// Past the item at p[*at]; false if it is malformed or runs past n.
bool skip_item(const uint8_t* p, size_t n, size_t* at, int depth) {
  if (depth > kMaxDepth) return false;
  int major = 0;
  uint64_t arg = 0;
  if (!read_head(p, n, at, &major, &arg)) return false;
  const bool indefinite = arg == ~uint64_t{0};
  switch (major) {
    case 0:
    case 1:
      return true;
    case 2:
    case 3:
      if (indefinite) {  // definite chunks of the same major type, then a break
        while (*at < n && p[*at] != 0xff) {
          if ((p[*at] >> 5) != major || (p[*at] & 31) == 31) return false;
          if (!skip_item(p, n, at, depth + 1)) return false;
        }
        if (*at >= n) return false;
        ++*at;
        return true;
      }
      if (n - *at < arg) return false;
      *at += static_cast<size_t>(arg);
      return true;
    case 4:
    case 5: {
      if (indefinite) {
        uint64_t items = 0;
        for (; *at < n && p[*at] != 0xff; ++items)
          if (!skip_item(p, n, at, depth + 1)) return false;
        if (*at >= n || (major == 5 && items % 2)) return false;
        ++*at;
        return true;
      }
      // Each item takes at least one byte: a count beyond the bytes left is a lie.
      const uint64_t items = major == 5 ? arg * 2 : arg;
      if ((major == 5 && arg > (n - *at) / 2) || items > n - *at) return false;
      for (uint64_t i = 0; i < items; ++i)
        if (!skip_item(p, n, at, depth + 1)) return false;
      return true;
    }
    case 6:
      return skip_item(p, n, at, depth + 1);
    default:  // 7: simple values and floats (their bytes are the argument); a lone break
      return !indefinite;
  }
}
}  // namespace

bool cbor_map_members(const uint8_t* p, size_t n, std::vector<CborMember>* out) {
  out->clear();
  size_t at = 0;
  int major = 0;
  uint64_t count = 0;
  if (!read_head(p, n, &at, &major, &count) || major != 5) return false;
  const bool indefinite = count == ~uint64_t{0};
  if (!indefinite && count > (n - at) / 2) return false;
  for (uint64_t i = 0; indefinite || i < count; ++i) {
    if (indefinite) {
      if (at >= n) return false;
      if (p[at] == 0xff) {
        ++at;
        break;
      }
    }
    uint64_t klen = 0;
    if (!read_head(p, n, &at, &major, &klen) || major != 3 || klen == ~uint64_t{0} || n - at < klen)
      return false;
    CborMember m;
    m.key = std::string_view(reinterpret_cast<const char*>(p + at), static_cast<size_t>(klen));
    at += static_cast<size_t>(klen);
    const size_t vb = at;
    if (!skip_item(p, n, &at, 1)) return false;
    m.value = p + vb;
    m.value_size = at - vb;
    out->push_back(m);
  }
  return at == n;
}

bool cbor_string(const uint8_t* p, size_t n, int want, const uint8_t** data, size_t* size) {
  size_t at = 0;
  int major = 0;
  uint64_t len = 0;
  if (!read_head(p, n, &at, &major, &len) || major != want || len == ~uint64_t{0} || n - at != len)
    return false;
  *data = p + at;
  *size = static_cast<size_t>(len);
  return true;
}

}  // namespace reflex
