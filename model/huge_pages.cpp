#include "reflex/huge_pages.h"

#include <sys/mman.h>

#include <cstdlib>

namespace reflex {

void* alloc_huge_pages(size_t n, size_t* cap) {
  const size_t size = n == 0 ? kHugePage : (n + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, size);
  if (!p) return nullptr;
  (void)madvise(p, size, MADV_HUGEPAGE);  // advice only: ignored where not offered
  if (cap) *cap = size;
  return p;
}

}  // namespace reflex
