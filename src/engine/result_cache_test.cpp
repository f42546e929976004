// ResultCache: bounds in count and bytes, the three eviction policies, expiry.
#include "engine/result_cache.h"

#include <gtest/gtest.h>

namespace baton::engine {
namespace {

CacheEntryRecord Entry(const std::string& key, TimeMs at, int64_t bytes = 10, TimeMs expires = 0) {
  CacheEntryRecord e;
  e.ns = "default";
  e.key = key;
  e.workflow = "w";
  e.step_id = "s";
  e.bytes = bytes;
  e.created_at = at;
  e.expires_at = expires;
  return e;
}

std::vector<std::string> Keys(const std::vector<CacheKey>& keys) {
  std::vector<std::string> out;
  for (const CacheKey& k : keys) out.push_back(k.key);
  return out;
}

TEST(ResultCache, LruEvictsTheLeastRecentlyUsed) {
  ResultCache cache({.max_entries = 2, .max_bytes = 1000, .eviction = CacheEviction::kLru});
  std::vector<CacheKey> removed;
  ASSERT_TRUE(cache.Insert(Entry("a", 1), 1, &removed));
  ASSERT_TRUE(cache.Insert(Entry("b", 2), 2, &removed));
  ASSERT_NE(cache.Find("default", "a", 3, &removed), nullptr);
  cache.Hit("default", "a", 3);  // a is now the most recent
  ASSERT_TRUE(cache.Insert(Entry("c", 4), 4, &removed));
  EXPECT_EQ(Keys(removed), std::vector<std::string>{"b"});
  EXPECT_EQ(cache.size(), 2u);
}

TEST(ResultCache, LfuEvictsTheLeastOftenUsed) {
  ResultCache cache({.max_entries = 2, .max_bytes = 1000, .eviction = CacheEviction::kLfu});
  std::vector<CacheKey> removed;
  cache.Insert(Entry("a", 1), 1, &removed);
  cache.Insert(Entry("b", 2), 2, &removed);
  cache.Hit("default", "a", 3);
  cache.Hit("default", "a", 4);
  cache.Hit("default", "b", 5);  // b more recent, a more often
  cache.Insert(Entry("c", 6), 6, &removed);
  // c (no hits) and b (one) rank below a; c is newer than b, so b goes.
  EXPECT_EQ(Keys(removed), std::vector<std::string>{"b"});
}

TEST(ResultCache, TtlEvictsTheSoonestToExpireAndExpiredEntriesFirst) {
  ResultCache cache({.max_entries = 2, .max_bytes = 1000, .eviction = CacheEviction::kTtl});
  std::vector<CacheKey> removed;
  cache.Insert(Entry("forever", 1), 1, &removed);
  cache.Insert(Entry("soon", 2, 10, 100), 2, &removed);
  cache.Insert(Entry("later", 3, 10, 500), 3, &removed);
  EXPECT_EQ(Keys(removed), std::vector<std::string>{"soon"});
  removed.clear();
  EXPECT_EQ(cache.Find("default", "later", 500, &removed), nullptr);  // expired at 500
  EXPECT_EQ(Keys(removed), std::vector<std::string>{"later"});
  EXPECT_EQ(cache.size(), 1u);
}

TEST(ResultCache, BytesAreBoundedAndAnOversizedEntryIsRefused) {
  ResultCache cache({.max_entries = 100, .max_bytes = 25, .eviction = CacheEviction::kLru});
  std::vector<CacheKey> removed;
  cache.Insert(Entry("a", 1, 10), 1, &removed);
  cache.Insert(Entry("b", 2, 10), 2, &removed);
  cache.Insert(Entry("c", 3, 10), 3, &removed);
  EXPECT_EQ(Keys(removed), std::vector<std::string>{"a"});
  EXPECT_EQ(cache.bytes(), 20);
  EXPECT_FALSE(cache.Insert(Entry("huge", 4, 26), 4, &removed));
  EXPECT_EQ(cache.size(), 2u);
  // Replacing an entry is not an eviction and keeps the byte count right.
  removed.clear();
  cache.Insert(Entry("b", 5, 5), 5, &removed);
  EXPECT_TRUE(removed.empty());
  EXPECT_EQ(cache.bytes(), 15);
}

TEST(ResultCache, LoadDropsWhatNoLongerFits) {
  ResultCache cache({.max_entries = 1, .max_bytes = 1000, .eviction = CacheEviction::kLru});
  std::vector<CacheKey> removed;
  cache.Load({Entry("old", 1), Entry("new", 2), Entry("gone", 3, 10, 5)}, 10, &removed);
  EXPECT_EQ(Keys(removed), (std::vector<std::string>{"gone", "old"}));
  ASSERT_EQ(cache.List("", "", "").size(), 1u);
  EXPECT_EQ(cache.List("", "", "")[0]->key, "new");
}

}  // namespace
}  // namespace baton::engine
