#include "line_arena.h"

#include "reflex/huge_pages.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace reflex::cli {

LineArena::~LineArena() {
  release();
}

LineArena::LineArena(LineArena&& o) noexcept : chunks_(std::exchange(o.chunks_, {})) {}

LineArena& LineArena::operator=(LineArena&& o) noexcept {
  if (this != &o) {
    release();
    chunks_ = std::exchange(o.chunks_, {});
  }
  return *this;
}

void LineArena::release() {
  for (Chunk& c : chunks_) std::free(c.data);
  chunks_.clear();
}

LineArena::Ref LineArena::add(std::string_view line) {
  const size_t need = line.size() + 1;
  if (chunks_.empty() || chunks_.back().cap - chunks_.back().used < need) {
    size_t cap = 0;
    void* p = alloc_huge_pages(std::max(need, kChunk), &cap);
    if (!p) throw std::bad_alloc();
    chunks_.push_back({static_cast<char*>(p), cap, 0});
  }
  Chunk& c = chunks_.back();
  const Ref r{static_cast<uint32_t>(chunks_.size() - 1), static_cast<uint32_t>(c.used),
              static_cast<uint32_t>(need)};
  std::memcpy(c.data + c.used, line.data(), line.size());
  c.data[c.used + line.size()] = '\n';
  c.used += need;
  return r;
}

}  // namespace reflex::cli
