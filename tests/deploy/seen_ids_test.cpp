// The diagnoser's redelivery memory (reflex/deploy/seen_ids.h): ids seen are
// recognised until `capacity` newer ones pushed them out, in arrival order,
// through table growth and the backward-shift deletions of a full ring.
#include "reflex/deploy/seen_ids.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <set>
#include <string>

using reflex::deploy::SeenIds;

namespace {
std::string hex_id(std::mt19937_64& rng) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                static_cast<unsigned long long>(rng()));
  return buf;
}
}  // namespace

TEST(SeenIds, RemembersTheLastCapacityIdsInArrivalOrder) {
  std::mt19937_64 rng(7);
  const size_t cap = 3000;
  SeenIds seen(cap);
  std::vector<std::string> ids;
  for (int i = 0; i < 20000; ++i) ids.push_back(hex_id(rng));
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_FALSE(seen.contains(ids[i])) << i;
    seen.insert(ids[i]);
    seen.insert(ids[i]);  // a redelivery changes nothing
    ASSERT_TRUE(seen.contains(ids[i])) << i;
    if (i % 997 == 0 || i + 1 == ids.size()) {
      // Exactly the last `cap` are held (the ring has turned over many times).
      for (size_t k = 0; k <= i; ++k)
        ASSERT_EQ(seen.contains(ids[k]), k + cap > i) << "id " << k << " after " << i;
    }
  }
  EXPECT_EQ(seen.size(), cap);
}

TEST(SeenIds, OtherIdsAreHeldAsText) {
  SeenIds seen(2);
  // Not 32 lowercase hex digits: uppercase, short, anything else.
  seen.insert("0123456789ABCDEF0123456789ABCDEF");
  seen.insert("1700000000000-1");
  EXPECT_TRUE(seen.contains("0123456789ABCDEF0123456789ABCDEF"));
  EXPECT_FALSE(seen.contains("0123456789abcdef0123456789abcdef"));  // a different id
  EXPECT_TRUE(seen.contains("1700000000000-1"));
  seen.insert("x");
  EXPECT_FALSE(seen.contains("0123456789ABCDEF0123456789ABCDEF"));  // pushed out
  EXPECT_TRUE(seen.contains("x"));
  seen.insert("0123456789abcdef0123456789abcdef");
  EXPECT_TRUE(seen.contains("0123456789abcdef0123456789abcdef"));
}
