// One parse's tokens and parse-tree contexts, allocated from a bump arena
// that the parse owns and frees at its end. Each of them was its own heap
// allocation (0.86 M tokens and 0.7 M contexts over the .rfx fuzz corpus,
// heaptrack: a quarter of the front end's allocations), and under ASan an
// allocation is a stack unwind, a stack-depot lookup and a quarantine entry.
//
// What ASan still sees: a node freed inside the arena's life is poisoned and
// never reused, so a use after it is reported (use-after-poison); after the
// arena, its chunks are freed to ASan (heap-use-after-free). Each node is
// followed by a poisoned gap, so an overflow off its end is reported too.
// A node made while no arena is current (no NodeArena::Scope on this thread)
// comes from the heap as before.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REFLEX_ARENA_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define REFLEX_ARENA_ASAN 1
#endif
#ifdef REFLEX_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace rfxgen {

class NodeArena {
 public:
  NodeArena() = default;
  NodeArena(const NodeArena&) = delete;
  NodeArena& operator=(const NodeArena&) = delete;
  ~NodeArena() {
    for (auto& c : chunks_) {
      unpoison(c.base, c.size);
      ::operator delete(c.base);
    }
  }

  // Makes `arena` this thread's current one for the scope's life.
  class Scope {
   public:
    explicit Scope(NodeArena& arena) : saved_(current_) { current_ = &arena; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope() { current_ = saved_; }

   private:
    NodeArena* saved_;
  };

  // For a class's operator new/delete.
  static void* allocate(std::size_t n) {
    NodeArena* a = current_;
    Header* h;
    if (a) {
      h = static_cast<Header*>(a->bump(sizeof(Header) + round_up(n) + kGap));
      unpoison(h, sizeof(Header) + n);
    } else {
      h = static_cast<Header*>(::operator new(sizeof(Header) + n));
    }
    h->arena = a;
    return h + 1;
  }
  // The arena a node (a pointer allocate() returned) came from; null: the heap.
  static const NodeArena* arena_of(const void* node) {
    return (static_cast<const Header*>(node) - 1)->arena;
  }
  static void release(void* p, std::size_t n) noexcept {
    if (!p) return;
    Header* h = static_cast<Header*>(p) - 1;
    if (h->arena)
      poison(h, sizeof(Header) + n);  // never reused: see the top of the file
    else
      ::operator delete(h);
  }

 private:
  // Keeps every node 16-byte aligned, as operator new's are.
  struct alignas(16) Header {
    NodeArena* arena;
  };
  static constexpr std::size_t kGap = 16;                // poisoned after each node
  static constexpr std::size_t kFirstChunk = 16 * 1024;  // a small file's nodes
  static constexpr std::size_t kMaxChunk = 1024 * 1024;

  struct Chunk {
    std::byte* base;
    std::size_t size;
  };

  static std::size_t round_up(std::size_t n) { return (n + 15) & ~std::size_t{15}; }

  void* bump(std::size_t n) {
    if (static_cast<std::size_t>(end_ - next_) < n) grow(n);
    void* p = next_;
    next_ += n;
    return p;
  }
  void grow(std::size_t n) {
    std::size_t size = chunks_.empty() ? kFirstChunk : chunks_.back().size * 2;
    if (size > kMaxChunk) size = kMaxChunk;
    if (size < n) size = n;
    auto* base = static_cast<std::byte*>(::operator new(size));
    chunks_.push_back({base, size});
    poison(base, size);  // unpoisoned node by node
    next_ = base;
    end_ = base + size;
  }

  static void poison([[maybe_unused]] const void* p, [[maybe_unused]] std::size_t n) {
#ifdef REFLEX_ARENA_ASAN
    ASAN_POISON_MEMORY_REGION(p, n);
#endif
  }
  static void unpoison([[maybe_unused]] const void* p, [[maybe_unused]] std::size_t n) {
#ifdef REFLEX_ARENA_ASAN
    ASAN_UNPOISON_MEMORY_REGION(p, n);
#endif
  }

  static inline thread_local NodeArena* current_ = nullptr;
  std::vector<Chunk> chunks_;
  std::byte* next_ = nullptr;
  std::byte* end_ = nullptr;
};

}  // namespace rfxgen
