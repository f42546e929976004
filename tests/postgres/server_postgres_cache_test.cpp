// The result cache with several instances on one database: a result one instance cached
// is found by the others within a lease keeper's turn (a quarter lease), so the step does
// not run again there; an entry cleared through one instance is gone from the others
// too, and the step runs again.
#include "postgres/instances.h"
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <string>

namespace baton::testing {
namespace {

// `embed` appends a line to `runs` each time it really runs; its result is cached.
std::string Embed(const std::string& dir) {
  return "name: embed\nsteps:\n"
         "  - id: embed\n"
         "    type: shell\n"
         "    run: ['sh', '-c', 'echo run >> \"$0/runs\"; echo vector-42', '" +
         dir +
         "']\n"
         "    cache: {ttl: 1h}\n";
}

// How many cache entries instance `api` holds (-1 when it does not answer).
int Entries(const client::ApiClient& api) {
  auto list = api.Call("GET", "/api/v1/cache");
  if (!list.ok()) return -1;
  return static_cast<int>((*list)["entries"].size());
}

TEST(PostgresCache, AResultOneInstanceCachedIsFoundByTheOthersAndAClearReachesThem) {
  Instances in;
  in.Start(2, "1s");
  const std::string dir = MakeTempDir();
  auto created = in.Api(0).Send("POST", "/api/v1/workflows", Embed(dir), "application/yaml");
  ASSERT_TRUE(created.ok() && created->status == 201);

  const std::string first = in.Submit(0, "embed");
  ASSERT_FALSE(first.empty());
  WaitForExecutionStatus(in.Api(0), first, "completed");
  ASSERT_EQ(Runs(dir), 1);
  ASSERT_EQ(Entries(in.Api(0)), 1);
  // i2 never ran the step; it learns of the result from the database.
  EXPECT_TRUE(WaitUntil([&] { return Entries(in.Api(1)) == 1; }, 10'000))
      << "i2 holds " << Entries(in.Api(1)) << " cache entries";
  const std::string second = in.Submit(1, "embed");
  ASSERT_FALSE(second.empty());
  WaitForExecutionStatus(in.Api(1), second, "completed");
  EXPECT_EQ(Runs(dir), 1);  // served from the cache: the shell never ran
  EXPECT_EQ(StepStatus(in.Api(1), second), "cached");

  // Cleared through i1: gone there at once, and from i2 within a turn; then it runs again.
  auto cleared = in.Api(0).Send("DELETE", "/api/v1/cache?workflow=embed", "");
  ASSERT_TRUE(cleared.ok());
  ASSERT_EQ(cleared->status, 200) << cleared->body;
  EXPECT_EQ(Entries(in.Api(0)), 0);
  EXPECT_TRUE(WaitUntil([&] { return Entries(in.Api(1)) == 0; }, 10'000))
      << "i2 still holds " << Entries(in.Api(1)) << " cache entries";
  const std::string third = in.Submit(1, "embed");
  ASSERT_FALSE(third.empty());
  WaitForExecutionStatus(in.Api(1), third, "completed");
  EXPECT_EQ(Runs(dir), 2);
  EXPECT_EQ(StepStatus(in.Api(1), third), "completed");
  // And i1 finds the result i2 cached this time.
  EXPECT_TRUE(WaitUntil([&] { return Entries(in.Api(0)) == 1; }, 10'000))
      << "i1 holds " << Entries(in.Api(0)) << " cache entries";
  const std::string fourth = in.Submit(0, "embed");
  WaitForExecutionStatus(in.Api(0), fourth, "completed");
  EXPECT_EQ(Runs(dir), 2);
  EXPECT_EQ(StepStatus(in.Api(0), fourth), "cached");
}

}  // namespace
}  // namespace baton::testing
