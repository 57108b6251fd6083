// A shard's redelivery memory: ring and open-addressing table (seen_ids.h).
#include "reflex/deploy/seen_ids.h"

namespace reflex::deploy {

SeenIds::SeenIds(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {
  if (capacity_ >= kEmpty) capacity_ = kEmpty - 1;
}

bool SeenIds::parse(const std::string& id, Bits* out) {
  if (id.size() != 32) return false;
  uint64_t v[2] = {0, 0};
  for (size_t i = 0; i < 32; ++i) {
    char c = id[i];
    unsigned d;
    if (c >= '0' && c <= '9')
      d = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = static_cast<unsigned>(c - 'a' + 10);
    else
      return false;  // uppercase too: a different id as text
    v[i / 16] = v[i / 16] << 4 | d;
  }
  *out = {v[0], v[1]};
  return true;
}

size_t SeenIds::find_slot(const Bits& b) const {
  size_t mask = slots_.size() - 1;
  for (size_t i = hash(b) & mask;; i = (i + 1) & mask)
    if (slots_[i] == kEmpty || ring_[slots_[i]] == b) return i;
}

bool SeenIds::contains(const std::string& id) const {
  Bits b;
  if (!parse(id, &b)) return text_.count(id) != 0;
  return !slots_.empty() && slots_[find_slot(b)] != kEmpty;
}

// Backward-shift deletion: the entries after the hole that probed past it
// move up, so no tombstones accumulate in a table that turns over forever.
void SeenIds::erase_slot(size_t hole) {
  size_t mask = slots_.size() - 1;
  slots_[hole] = kEmpty;
  for (size_t i = (hole + 1) & mask; slots_[i] != kEmpty; i = (i + 1) & mask) {
    size_t home = hash(ring_[slots_[i]]) & mask;
    // Moves when its home is not in (hole, i] cyclically.
    bool stays = hole < i ? (home > hole && home <= i) : (home > hole || home <= i);
    if (stays) continue;
    slots_[hole] = slots_[i];
    slots_[i] = kEmpty;
    hole = i;
  }
}

void SeenIds::grow() {
  size_t n = slots_.empty() ? 1024 : slots_.size() * 2;
  slots_.assign(n, kEmpty);
  for (size_t k = 0; k < count_; ++k) {
    uint32_t pos = static_cast<uint32_t>((head_ + k) % ring_.size());
    slots_[find_slot(ring_[pos])] = pos;
  }
}

void SeenIds::insert(const std::string& id) {
  Bits b;
  if (!parse(id, &b)) {
    auto [it, fresh] = text_.insert(id);
    if (!fresh) return;
    text_order_.push_back(&*it);  // set nodes do not move
    if (text_order_.size() > capacity_) {
      text_.erase(*text_order_.front());
      text_order_.pop_front();
    }
    return;
  }
  if (!slots_.empty() && slots_[find_slot(b)] != kEmpty) return;
  uint32_t pos;
  if (count_ == capacity_) {  // full: the oldest id goes, its ring entry is reused
    pos = static_cast<uint32_t>(head_);
    erase_slot(find_slot(ring_[pos]));
    ring_[pos] = b;
    head_ = (head_ + 1) % ring_.size();
  } else {  // the ring grows until it holds `capacity` ids (head_ stays 0)
    pos = static_cast<uint32_t>(ring_.size());
    ring_.push_back(b);
    ++count_;
  }
  if ((count_ + 1) * 2 > slots_.size())
    grow();  // load at most 1/2
  else
    slots_[find_slot(b)] = pos;
}

}  // namespace reflex::deploy
