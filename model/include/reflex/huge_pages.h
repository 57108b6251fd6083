// Memory for large, short-lived buffers in whole 2 MiB pages advised as
// huge pages. A fresh 4 KiB page costs a fault when first written, ~10 us
// on a VM (the kernel zeroes it and the hypervisor takes the trap): a 1 MB
// buffer is ~2.5 ms before it holds anything. Where the kernel gives huge
// pages to advised memory (THP "always" or "madvise"), a 2 MiB page is one
// fault; elsewhere the advice changes nothing. Not for many small buffers:
// each takes at least 2 MiB of address space and, once written, of memory.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>

namespace reflex {

inline constexpr size_t kHugePage = size_t{2} << 20;

// n bytes or more, 2 MiB-aligned, rounded up to whole huge pages (*cap);
// freed by std::free. Null when out of memory. Inline, like the allocator
// below: kb.h (installed) holds a vector of it, and an embedder that copies a
// KnowledgeBase must not need a symbol libreflex.so keeps local.
inline void* alloc_huge_pages(size_t n, size_t* cap = nullptr) {
  const size_t size = n == 0 ? kHugePage : (n + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, size);
  if (!p) return nullptr;
  (void)madvise(p, size, MADV_HUGEPAGE);  // advice only: ignored where not offered
  if (cap) *cap = size;
  return p;
}

// A standard allocator over alloc_huge_pages, for one large buffer that is
// filled once (the artifact's matcher database: 1.9 MB, ~460 faults in 4 KiB
// pages, one in a huge page).
template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (void* p = alloc_huge_pages(n * sizeof(T))) return static_cast<T*>(p);
    throw std::bad_alloc();
  }
  void deallocate(T* p, size_t) noexcept { std::free(p); }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace reflex
