// The engine's compressed line store (runtime/engine/line_store.h): every line
// comes back byte for byte, in any order of reads, across sealed (deflated or
// incompressible) blocks, the open block and lines longer than a block.
#include "line_store.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

using reflex::engine::LineStore;

TEST(LineStore, EveryLineComesBackInAnyOrder) {
  std::mt19937_64 rng(11);
  LineStore store;
  std::vector<std::string> lines;
  std::vector<uint64_t> at;
  size_t raw = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    switch (i % 50) {
      case 0:  // incompressible bytes, any value
        for (int k = 0; k < 300; ++k) s += static_cast<char>(rng() & 0xff);
        break;
      case 1:
        s = "";
        break;
      case 2:
        if (i % 1000 == 2) s.assign(40000 + i % 7, static_cast<char>('a' + i % 26));  // > a block
        break;
      default:
        s = "[rank" + std::to_string(i) + "]: Watchdog caught collective operation timeout: " +
            "WorkNCCL(SeqNum=" + std::to_string(rng() % 1000000) + ", OpType=ALLREDUCE)";
    }
    raw += s.size();
    at.push_back(store.add(s));
    lines.push_back(std::move(s));
    if (i % 3 == 0) {  // reads between appends: the open block and older ones
      size_t k = rng() % lines.size();
      ASSERT_EQ(store.get(at[k], static_cast<uint32_t>(lines[k].size())), lines[k]) << k;
    }
  }
  for (int pass = 0; pass < 2; ++pass)
    for (size_t n = 0; n < lines.size(); ++n) {
      size_t k = pass == 0 ? n : rng() % lines.size();
      ASSERT_EQ(store.get(at[k], static_cast<uint32_t>(lines[k].size())), lines[k]) << k;
    }
  // Mostly repetitive text: held in well under half its size.
  EXPECT_LT(store.bytes_held(), raw / 2);
}
