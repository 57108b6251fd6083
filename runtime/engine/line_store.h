#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace reflex::engine {

// The events' raw lines, kept compressed. A line is read back only for a
// diagnosis's evidence (a dozen per incident), but a streaming engine holds
// every line of its window: a 100k-GPU job's NCCL wave is ~290,000 lines of
// ~270 bytes each, most of a diagnoser's memory. Lines are appended to an open
// block; a full block (4 KiB) is deflated (zlib level 1: ~6x on such lines,
// where 16 KiB gave ~10x but cost 9% of a diagnosis's instructions in
// inflating the evidence lines, scattered over the blocks). A few inflated
// blocks are cached, and the open block is read in place.
class LineStore {
 public:
  LineStore() = default;
  LineStore(const LineStore&) = delete;
  LineStore& operator=(const LineStore&) = delete;

  uint64_t add(std::string_view s);  // the line's address
  // The line at `at` of `len` bytes. Valid until the next add() or get().
  std::string_view get(uint64_t at, uint32_t len) const;
  // Bytes held (compressed blocks, the open block and the cache), for tests.
  size_t bytes_held() const;

 private:
  static constexpr size_t kBlock = 4 * 1024;
  static constexpr size_t kCache = 8;
  struct Sealed {
    std::unique_ptr<char[]> data;
    uint32_t size = 0;  // bytes in data
    uint32_t raw = 0;   // bytes of the block inflated
    bool deflated = false;
  };
  struct Cached {
    uint32_t block = UINT32_MAX;
    uint64_t used = 0;
    std::string text;  // the block's first text.size() bytes
  };
  void seal();
  // The block inflated at least up to byte `need`: inflating stops there (a
  // diagnosis reads a dozen lines from as many blocks, on average half way
  // into each).
  const std::string& inflated(uint32_t block, size_t need) const;

  std::vector<Sealed> sealed_;
  std::string open_;  // block sealed_.size(), not yet deflated
  mutable Cached cache_[kCache];
  mutable uint64_t clock_ = 0;
};

}  // namespace reflex::engine
