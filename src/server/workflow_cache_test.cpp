#include "server/workflow_cache.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace baton::server
