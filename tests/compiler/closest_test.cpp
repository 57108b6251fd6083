// closest() (did-you-mean) against its plain definition: every candidate
// scored with a textbook edit-distance table, the squashed-prefix rule, the
// limit; and the bit-vector distance (64 characters a block) against that
// table, on both sides of each block boundary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <random>
#include <string>
#include <vector>

#include "diagnostics.h"

namespace {

using reflex::compiler::closest;
using reflex::compiler::edit_distance;

// The textbook table, whole: what the bit-vector one must agree with.
size_t plain_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j)
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
  return d[a.size()][b.size()];
}

std::string reference_closest(const std::string& word, const std::vector<std::string>& cands) {
  auto squash = [](const std::string& s) {
    std::string o;
    for (char ch : s)
      if (ch != '_' && ch != '-')
        o += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return o;
  };
  std::string best;
  size_t best_d = std::string::npos;
  const std::string w = squash(word);
  for (const auto& c : cands) {
    size_t d = plain_distance(word, c);
    const std::string sc = squash(c);
    if (w.size() >= 3 && sc.size() > w.size() && sc.compare(0, w.size(), w) == 0)
      d = std::min<size_t>(d, 1);
    if (d < best_d || (d == best_d && c < best)) {
      best_d = d;
      best = c;
    }
  }
  size_t limit = std::max<size_t>(2, (word.size() + 2) / 3);
  if (best.empty() || best_d > limit || best == word) return "";
  return best;
}

// The distance itself, by hand.
TEST(Closest, EditDistanceByHand) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("xid_line", "xid_line"), 0u);
  EXPECT_EQ(edit_distance("ab", "ba"), 2u);  // no transpositions
}

TEST(Closest, KnownSuggestions) {
  const std::vector<std::string> names = {"xid79_fallen_off_bus", "xid_line", "ambiguous-match",
                                          "pcie_fatal", "nccl_timeout"};
  EXPECT_EQ(closest("xid_lne", names), "xid_line");
  EXPECT_EQ(closest("xid_79", names), "xid79_fallen_off_bus");
  EXPECT_EQ(closest("ambiguous-mach", names), "ambiguous-match");
  EXPECT_EQ(closest("xid_line", names), "");  // the word itself: nothing to suggest
  EXPECT_EQ(closest("storage", names), "");   // too far from all
  EXPECT_EQ(closest("x", {}), "");
}

// Random words over a small alphabet (so near misses are common) against
// random candidate lists, including duplicates, the word itself, prefixes
// with separators and empty strings.
TEST(Closest, SameAnswerAsScoringEveryCandidate) {
  std::mt19937 rng(15);
  const std::string alphabet = "abcX_-";
  auto word = [&](size_t max_len) {
    std::string s(rng() % (max_len + 1), ' ');
    for (char& ch : s) ch = alphabet[rng() % alphabet.size()];
    return s;
  };
  int suggestions = 0;
  for (int round = 0; round < 4000; ++round) {
    const std::string w = word(9);
    std::vector<std::string> cands;
    const size_t n = rng() % 12;
    for (size_t i = 0; i < n; ++i) {
      switch (rng() % 4) {
        case 0:
          cands.push_back(w + word(4));
          break;  // longer, same start
        case 1:
          cands.push_back(w);
          break;  // the word itself
        default:
          cands.push_back(word(12));
          break;
      }
    }
    const std::string want = reference_closest(w, cands);
    suggestions += !want.empty();
    ASSERT_EQ(closest(w, cands), want) << "word '" << w << "', round " << round;
  }
  EXPECT_GT(suggestions, 200);  // the comparison saw many suggestions, not only ""
}

// A length for a test string: mostly short, every tenth up to 200 (four
// blocks), every tenth near a block boundary (63-65, 127-129).
size_t test_length(int round, std::mt19937& rng) {
  if (round % 10 == 0) return rng() % 201;
  if (round % 10 == 5) return (round % 20 == 5 ? 63 : 127) + rng() % 3;
  return rng() % 14;
}

// Long words and candidates (several blocks), as fuzzed files make them:
// mutated copies of one another, so many are within the limit.
TEST(Closest, SameAnswerForLongWords) {
  std::mt19937 rng(64);
  const std::string alphabet = "ab]\\_";
  int suggestions = 0;
  for (int round = 0; round < 300; ++round) {
    std::string base(40 + rng() % 120, ' ');
    for (char& ch : base) ch = alphabet[rng() % alphabet.size()];
    auto mutated = [&] {
      std::string s = base;
      for (size_t e = rng() % 40; e > 0 && !s.empty(); --e)
        s[rng() % s.size()] = alphabet[rng() % alphabet.size()];
      if (rng() % 2) s.resize(s.size() - rng() % (s.size() / 4 + 1));
      return s;
    };
    const std::string w = mutated();
    std::vector<std::string> cands;
    for (size_t i = rng() % 30; i > 0; --i) cands.push_back(mutated());
    const std::string want = reference_closest(w, cands);
    suggestions += !want.empty();
    ASSERT_EQ(closest(w, cands), want) << "word '" << w << "', round " << round;
  }
  EXPECT_GT(suggestions, 50);
}

// The bit-vector distance against the whole table: short and long pairs,
// equal and very different lengths, near and far (edits applied to a copy).
TEST(Closest, BitVectorDistanceIsTheDistance) {
  std::mt19937 rng(79);
  const std::string alphabet = "abcdX_";
  for (int round = 0; round < 3000; ++round) {
    std::string a(test_length(round, rng), ' ');
    for (char& ch : a) ch = alphabet[rng() % alphabet.size()];
    std::string b = a;
    for (size_t e = rng() % 6; e > 0; --e) {
      const size_t at = b.empty() ? 0 : rng() % b.size();
      switch (rng() % 3) {
        case 0:
          b.insert(b.begin() + static_cast<long>(at), alphabet[rng() % alphabet.size()]);
          break;
        case 1:
          if (!b.empty()) b.erase(b.begin() + static_cast<long>(at));
          break;
        default:
          if (!b.empty()) b[at] = alphabet[rng() % alphabet.size()];
          break;
      }
    }
    if (round % 3 == 0) {  // an unrelated string
      b.resize(round % 2 ? rng() % 20 : test_length(round / 3, rng));
      for (char& ch : b) ch = alphabet[rng() % alphabet.size()];
    }
    ASSERT_EQ(edit_distance(a, b), plain_distance(a, b)) << "'" << a << "' / '" << b << "'";
    ASSERT_EQ(edit_distance(b, a), plain_distance(a, b)) << "'" << b << "' / '" << a << "'";
  }
}

}  // namespace
