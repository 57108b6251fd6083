// A counting replacement of the global allocation functions, for tests and
// benchmarks that assert "no allocation for a line that matches nothing".
// Include it in exactly ONE translation unit of a binary. Every form of
// new/delete is replaced (nothrow and array ones too) so memory allocated by
// one form and released by another — Hyperscan uses nothrow new — always goes
// through the same malloc/free pair (ASan checks the pairing).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

inline std::atomic<uint64_t> g_allocs{0};

inline void* reflex_counted_alloc(std::size_t n) noexcept {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}

void* operator new(std::size_t n) {
  if (void* p = reflex_counted_alloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  if (void* p = reflex_counted_alloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return reflex_counted_alloc(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return reflex_counted_alloc(n);
}
// GCC 12 at -O2 misreads the replaced pairs as mismatched (a known false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop
