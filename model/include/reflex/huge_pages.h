// Memory for large, short-lived buffers in whole 2 MiB pages advised as
// huge pages. A fresh 4 KiB page costs a fault when first written, ~10 us
// on a VM (the kernel zeroes it and the hypervisor takes the trap): a 1 MB
// buffer is ~2.5 ms before it holds anything. Where the kernel gives huge
// pages to advised memory (THP "always" or "madvise"), a 2 MiB page is one
// fault; elsewhere the advice changes nothing. Not for many small buffers:
// each takes at least 2 MiB of address space and, once written, of memory.
#pragma once

#include <cstddef>

namespace reflex {

inline constexpr size_t kHugePage = size_t{2} << 20;

// n bytes or more, 2 MiB-aligned, rounded up to whole huge pages (*cap);
// freed by std::free. Null when out of memory.
void* alloc_huge_pages(size_t n, size_t* cap = nullptr);

}  // namespace reflex
