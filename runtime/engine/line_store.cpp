#include "line_store.h"

#include <zlib.h>

#include <cstring>
#include <stdexcept>

namespace reflex::engine {

uint64_t LineStore::add(std::string_view s) {
  if (!open_.empty() && open_.size() + s.size() > kBlock) seal();
  uint64_t at = static_cast<uint64_t>(sealed_.size()) << 32 | open_.size();
  open_.append(s);
  if (open_.size() >= kBlock) seal();  // a long line is a block of its own
  return at;
}

void LineStore::seal() {
  if (sealed_.size() >= UINT32_MAX - 1) throw std::length_error("line store full");
  Sealed b;
  b.raw = static_cast<uint32_t>(open_.size());
  uLongf cap = compressBound(static_cast<uLong>(open_.size()));
  auto buf = std::make_unique<char[]>(cap);
  if (compress2(reinterpret_cast<Bytef*>(buf.get()), &cap,
                reinterpret_cast<const Bytef*>(open_.data()), static_cast<uLong>(open_.size()),
                1) == Z_OK &&
      cap < open_.size()) {
    b.deflated = true;
    b.size = static_cast<uint32_t>(cap);
  } else {  // incompressible (or zlib failed): kept as it is
    b.size = b.raw;
  }
  b.data = std::make_unique<char[]>(b.size);
  std::memcpy(b.data.get(), b.deflated ? buf.get() : open_.data(), b.size);
  sealed_.push_back(std::move(b));
  open_.clear();
  if (open_.capacity() > 2 * kBlock) open_.shrink_to_fit();  // after a long line
}

const std::string& LineStore::inflated(uint32_t block, size_t need) const {
  Cached* victim = &cache_[0];
  for (Cached& c : cache_) {
    if (c.block == block && c.text.size() >= need) {
      c.used = ++clock_;
      return c.text;
    }
    if (c.block == block) {  // inflated less far than this line: again, further
      victim = &c;
      break;
    }
    if (c.used < victim->used) victim = &c;
  }
  const Sealed& b = sealed_[block];
  victim->block = UINT32_MAX;
  victim->text.resize(need);
  z_stream z{};
  if (inflateInit(&z) != Z_OK) throw std::bad_alloc();
  z.next_in = reinterpret_cast<Bytef*>(b.data.get());
  z.avail_in = b.size;
  z.next_out = reinterpret_cast<Bytef*>(victim->text.data());
  z.avail_out = static_cast<uInt>(need);
  const int rc = inflate(&z, Z_NO_FLUSH);  // stops when `need` bytes are out
  const bool ok = (rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR) && z.avail_out == 0;
  inflateEnd(&z);
  if (!ok) throw std::logic_error("line store: a block does not inflate");  // our own bytes
  victim->block = block;
  victim->used = ++clock_;
  return victim->text;
}

std::string_view LineStore::get(uint64_t at, uint32_t len) const {
  uint32_t block = static_cast<uint32_t>(at >> 32);
  size_t off = at & 0xffffffffu;
  if (block == sealed_.size()) return std::string_view(open_).substr(off, len);
  const Sealed& b = sealed_[block];
  if (!b.deflated) return std::string_view(b.data.get() + off, len);
  return std::string_view(inflated(block, off + len)).substr(off, len);
}

size_t LineStore::bytes_held() const {
  size_t n = open_.capacity();
  for (const Sealed& b : sealed_) n += b.size;
  for (const Cached& c : cache_) n += c.text.capacity();
  return n;
}

}  // namespace reflex::engine
