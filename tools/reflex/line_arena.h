// Output lines kept until they can be written in order (`reflex events`).
#pragma once

#include "reflex/huge_pages.h"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace reflex::cli {

// Lines appended in large chunks that never move; each line is viewed by a
// Ref. A std::string that doubles copies its bytes again at each growth and
// touches about twice the pages it ends with, and a fresh page is a fault:
// ~10 us each on a VM, ~25 ms for the 4 MB of events of a 256 MB bundle.
// Chunks are huge pages (reflex/huge_pages.h): one fault each, not 512.
class LineArena {
 public:
  struct Ref {
    uint32_t chunk = 0, off = 0, len = 0;
  };
  static constexpr size_t kChunk = kHugePage;

  LineArena() = default;
  ~LineArena();
  LineArena(const LineArena&) = delete;
  LineArena& operator=(const LineArena&) = delete;
  LineArena(LineArena&& o) noexcept;
  LineArena& operator=(LineArena&& o) noexcept;

  // Keeps `line` followed by '\n'; the Ref views both. A line longer than a
  // chunk gets a chunk of its own.
  Ref add(std::string_view line);
  std::string_view view(Ref r) const { return {chunks_[r.chunk].data + r.off, r.len}; }
  size_t chunk_count() const { return chunks_.size(); }

 private:
  struct Chunk {
    char* data = nullptr;
    size_t cap = 0, used = 0;
  };
  void release();
  std::vector<Chunk> chunks_;
};

}  // namespace reflex::cli
