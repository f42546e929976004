// Conformance of cache entries: upserted by namespace and key, touched by hits, deleted.
// Every Store implementation must pass these (the fixture is in conformance_test_util.h).
#include <baton/store.h>

#include "store/conformance_test_util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton {
namespace {

using testing::Factories;
using testing::RichJson;
using testing::StoreConformance;
using testing::StoreFactory;

class CacheConformance : public StoreConformance {};

CacheEntryRecord Entry(const std::string& ns, const std::string& key) {
  CacheEntryRecord r;
  r.ns = ns;
  r.key = key;
  r.workflow = "etl";
  r.step_id = "extract";
  r.execution_id = "ex-1";
  r.output = Json{{"rows", 3}};
  r.bytes = 10;
  r.created_at = 1000;
  r.expires_at = 61'000;
  r.last_hit_at = 0;
  r.hits = 0;
  return r;
}

Json AsJson(const CacheEntryRecord& r) {
  return {{"ns", r.ns},
          {"key", r.key},
          {"workflow", r.workflow},
          {"step_id", r.step_id},
          {"execution_id", r.execution_id},
          {"output", r.output},
          {"bytes", r.bytes},
          {"created_at", r.created_at},
          {"expires_at", r.expires_at},
          {"last_hit_at", r.last_hit_at},
          {"hits", r.hits}};
}

Json AsJson(const std::vector<CacheEntryRecord>& rows) {
  Json out = Json::array();
  for (const CacheEntryRecord& r : rows) out.push_back(AsJson(r));
  return out;
}

TEST_P(CacheConformance, EntriesListByNamespaceThenKeyWithEveryField) {
  WriteBatch b;
  b.cache_entries = {Entry("team-b", "aa"), Entry("team-a", "bb"), Entry("team-a", "aa")};
  b.cache_entries[1].output = RichJson();
  b.cache_entries[2].output = nullptr;
  Commit(b);
  auto a = store_->ListCacheEntries("team-a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(AsJson(*a),
            AsJson(std::vector<CacheEntryRecord>{b.cache_entries[2], b.cache_entries[1]}));
  EXPECT_EQ(store_->ListCacheEntries("")->size(), 3u);
  EXPECT_TRUE(store_->ListCacheEntries("team")->empty());
}

TEST_P(CacheConformance, TouchesUpdateUseCountsAndDeletesRemoveAfterUpserts) {
  WriteBatch b;
  b.cache_entries = {Entry("team-a", "aa"), Entry("team-a", "bb")};
  Commit(b);
  WriteBatch next;
  next.cache_touches = {{"team-a", "aa", 5000, 2}, {"team-a", "absent", 5000, 1}};
  CacheEntryRecord again = Entry("team-a", "bb");
  next.cache_entries = {again};
  next.cache_deletes = {{"team-a", "bb"}, {"team-a", "absent"}};
  Commit(next);
  auto rows = store_->ListCacheEntries("team-a");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].key, "aa");
  EXPECT_EQ((*rows)[0].last_hit_at, 5000);
  EXPECT_EQ((*rows)[0].hits, 2);
  EXPECT_EQ((*rows)[0].output, Json({{"rows", 3}}));
}

INSTANTIATE_TEST_SUITE_P(AllStores, CacheConformance, ::testing::ValuesIn(Factories()),
                         [](const ::testing::TestParamInfo<StoreFactory>& p) {
                           return p.param.name;
                         });

}  // namespace
}  // namespace baton
