#include "server/workflow_cache.h"

#include <baton/memory_store.h>

#include <gtest/gtest.h>

#include <functional>

namespace baton::server {
namespace {

WorkflowRecord Record(const std::string& name, int version, TimeMs created_at,
                      const std::string& step = "a") {
  WorkflowRecord r;
  r.ns = "team";
  r.name = name;
  r.version = version;
  r.created_at = created_at;
  r.definition = {{"name", name}, {"steps", {{{"id", step}, {"type", "noop"}}}}};
  return r;
}

TEST(WorkflowCache, ParsesEachVersionOnce) {
  WorkflowCache cache;
  auto first = cache.Get(Record("deploy", 1, 100));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto again = cache.Get(Record("deploy", 1, 100));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(first->get(), again->get());  // the same shared definition
  EXPECT_EQ((*again)->version, 1);
  EXPECT_EQ(cache.parses(), 1u);
  ASSERT_TRUE(cache.Get(Record("deploy", 2, 200)).ok());
  EXPECT_EQ(cache.parses(), 2u);
}

TEST(WorkflowCache, AWorkflowCreatedAgainIsParsedAgain) {
  WorkflowCache cache;
  ASSERT_TRUE(cache.Get(Record("deploy", 1, 100, "old")).ok());
  auto recreated = cache.Get(Record("deploy", 1, 300, "new"));
  ASSERT_TRUE(recreated.ok());
  EXPECT_EQ((*recreated)->steps[0].id, "new");
  cache.Forget("team", "deploy");
  EXPECT_EQ(cache.size(), 0u);
  ASSERT_TRUE(cache.Get(Record("deploy", 1, 300, "new")).ok());
  EXPECT_EQ(cache.parses(), 3u);
}

TEST(WorkflowCache, StaysWithinItsCapacityAndCachesNoError) {
  WorkflowCache cache(4);
  for (int v = 1; v <= 10; ++v) ASSERT_TRUE(cache.Get(Record("w", v, v)).ok());
  EXPECT_LE(cache.size(), 4u);
  WorkflowRecord broken = Record("w", 11, 11);
  broken.definition["steps"][0]["type"] = "no-such-type";
  EXPECT_FALSE(cache.Get(broken).ok());
  EXPECT_FALSE(cache.Get(broken).ok());
}

// Counts the catalog's reads; `during_read` runs inside one, as a concurrent change would.
class CountingStore final : public StoreWrapper {
 public:
  explicit CountingStore(std::unique_ptr<Store> target)
      : StoreWrapper(target.get()), own_(std::move(target)) {}
  Result<WorkflowRecord> GetWorkflow(const std::string& ns, const std::string& name,
                                     int version) override {
    ++reads;
    auto r = StoreWrapper::GetWorkflow(ns, name, version);
    if (during_read) std::exchange(during_read, nullptr)();
    return r;
  }
  int reads = 0;
  std::function<void()> during_read;

 private:
  std::unique_ptr<Store> own_;
};

void Put(Store& store, const WorkflowRecord& r) {
  WriteBatch b;
  b.workflows.push_back(r);
  ASSERT_TRUE(store.Commit(b).ok());
}

// A cache that remembers records, over a store holding `deploy` version 1.
class RememberingCache : public ::testing::Test {
 protected:
  void SetUp() override {
    Put(store, Record("deploy", 1, 100));
    cache.RememberVersions(true);
  }
  CountingStore store{NewMemoryStore()};
  WorkflowCache cache;
};

TEST(WorkflowCache, RemembersVersionsOnlyWhenAsked) {
  CountingStore store(NewMemoryStore());
  Put(store, Record("deploy", 1, 100));
  WorkflowCache cache;
  ASSERT_TRUE(cache.Load(store, "team", "deploy", 0).ok());
  ASSERT_TRUE(cache.Load(store, "team", "deploy", 0).ok());
  EXPECT_EQ(store.reads, 2);
  cache.RememberVersions(true);
  auto latest = cache.Load(store, "team", "deploy", 0);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ((*latest)->version, 1);
  EXPECT_EQ(cache.parses(), 1u);  // the parse the first two loads made, found again
  ASSERT_TRUE(cache.Load(store, "team", "deploy", 0).ok());
  ASSERT_TRUE(cache.Load(store, "team", "deploy", 1).ok());
  ASSERT_TRUE(cache.Load(store, "team", "deploy", 1).ok());
  EXPECT_EQ(store.reads, 4);  // once for the latest, once for version 1
  // What is not there is read each time.
  EXPECT_EQ(cache.Load(store, "team", "nope", 0).status().code(), errc::kNotFound);
  EXPECT_EQ(cache.Load(store, "team", "nope", 0).status().code(), errc::kNotFound);
  EXPECT_EQ(store.reads, 6);
}

TEST_F(RememberingCache, ANewVersionIsSeenOnceForgetIsCalled) {
  ASSERT_EQ((*cache.Load(store, "team", "deploy", 0))->version, 1);
  Put(store, Record("deploy", 2, 200, "b"));
  cache.Forget("team", "deploy");  // what the workflows API does after each change
  auto latest = cache.Load(store, "team", "deploy", 0);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ((*latest)->version, 2);
  EXPECT_EQ((*latest)->steps[0].id, "b");
}

// Only a version's identity is remembered, not its definition: once the parse is gone
// (the cache started over at its capacity) the store is read again.
TEST_F(RememberingCache, AParseDroppedAtCapacityIsReadAgain) {
  Put(store, Record("other", 1, 100));
  WorkflowCache small(1);
  small.RememberVersions(true);
  ASSERT_TRUE(small.Load(store, "team", "deploy", 0).ok());
  ASSERT_TRUE(small.Load(store, "team", "other", 0).ok());  // the cache starts over
  auto again = small.Load(store, "team", "deploy", 0);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->name, "deploy");
  EXPECT_EQ(store.reads, 3);
}

// A read that a change overtook (Forget() came while it ran) is answered but not kept:
// it may hold the version before the change.
TEST_F(RememberingCache, AReadOvertakenByAChangeIsNotKept) {
  store.during_read = [&] {
    Put(store, Record("deploy", 2, 200));
    cache.Forget("team", "deploy");
  };
  auto stale = cache.Load(store, "team", "deploy", 0);
  ASSERT_TRUE(stale.ok());
  EXPECT_EQ((*stale)->version, 1);
  auto fresh = cache.Load(store, "team", "deploy", 0);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ((*fresh)->version, 2);
  EXPECT_EQ(store.reads, 2);
}

}  // namespace
}  // namespace baton::server
