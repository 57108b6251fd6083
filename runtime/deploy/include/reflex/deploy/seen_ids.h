// The redelivery memory of a diagnoser's shard (docs/deployment.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_set>
#include <vector>

namespace reflex::deploy {

// The ids of the last `capacity` events a shard was fed, so a redelivery is
// dropped. The agents' ids are 32 lowercase hex digits (a SHA-256 prefix):
// held as 128 bits in a ring, found through an open-addressing table of ring
// positions — ~24 bytes an id, where a node set and a deque of the ids took
// ~80, a tenth of a diagnoser's memory per event held. Any other id is held
// as its text (its own ring of the same capacity).
class SeenIds {
 public:
  explicit SeenIds(size_t capacity);
  bool contains(const std::string& id) const;
  void insert(const std::string& id);
  size_t size() const { return count_ + text_order_.size(); }

 private:
  struct Bits {
    uint64_t hi = 0, lo = 0;
    bool operator==(const Bits&) const = default;
  };
  static bool parse(const std::string& id, Bits* out);
  static uint64_t hash(const Bits& b) { return (b.hi ^ (b.lo * 0x9E3779B97F4A7C15ull)) >> 7; }
  // The table slot holding ring position of `b`, or the empty slot where it would go.
  size_t find_slot(const Bits& b) const;
  void erase_slot(size_t slot);
  void grow();

  static constexpr uint32_t kEmpty = UINT32_MAX;
  size_t capacity_;
  std::vector<Bits> ring_;       // ids in arrival order, circular once full
  size_t head_ = 0, count_ = 0;  // oldest entry, entries held
  std::vector<uint32_t> slots_;  // ring positions; kEmpty = free; size a power of two
  std::unordered_set<std::string> text_;
  std::deque<const std::string*> text_order_;
};

}  // namespace reflex::deploy
