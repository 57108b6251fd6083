// LineArena (reflex events' output lines): what is added is viewed back
// unchanged, with its '\n', across chunks and for lines longer than a chunk.
#include "line_arena.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

using reflex::cli::LineArena;

TEST(LineArena, LinesComeBackWithTheirNewlineAcrossChunks) {
  LineArena arena;
  std::vector<std::pair<LineArena::Ref, std::string>> kept;
  // ~3 chunks of lines of varying length, a few empty.
  size_t bytes = 0;
  for (size_t i = 0; bytes < 3 * LineArena::kChunk; ++i) {
    std::string line(i % 997, static_cast<char>('a' + i % 26));
    bytes += line.size() + 1;
    kept.emplace_back(arena.add(line), line);
  }
  EXPECT_GE(arena.chunk_count(), 3u);
  for (const auto& [ref, line] : kept) ASSERT_EQ(arena.view(ref), line + "\n");
}

TEST(LineArena, ALineLongerThanAChunkGetsItsOwn) {
  LineArena arena;
  const LineArena::Ref small = arena.add("before");
  const std::string big(LineArena::kChunk + 5, 'x');
  const LineArena::Ref huge = arena.add(big);
  const LineArena::Ref after = arena.add("after");
  EXPECT_EQ(arena.view(small), "before\n");
  EXPECT_EQ(arena.view(huge), big + "\n");
  EXPECT_EQ(arena.view(after), "after\n");
  EXPECT_NE(huge.chunk, small.chunk);
}

TEST(LineArena, MovedArenaKeepsItsLines) {
  LineArena a;
  const LineArena::Ref r = a.add("kept");
  LineArena b = std::move(a);
  EXPECT_EQ(b.view(r), "kept\n");
  LineArena c;
  c.add("dropped");
  c = std::move(b);
  EXPECT_EQ(c.view(r), "kept\n");
}
