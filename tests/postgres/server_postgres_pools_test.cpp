// Pools with several instances on one database: a pool created through one instance is
// known to the others within a lease keeper's turn, and its slots bound the steps of
// every instance together: a step on one instance waits while a step on another holds
// the last slot, and runs once that one gives it back.
#include "postgres/instances.h"
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace baton::testing {
namespace {

// One step of pool `gpu` that notes its start and its end in `dir`/log, and runs until
// the file `dir`/go exists.
std::string Train(const std::string& dir) {
  return "name: train\nsteps:\n"
         "  - id: fit\n"
         "    type: shell\n"
         "    pool: gpu\n"
         "    run: " +
         LogUntilGo(dir) + "\n";
}

// The pool `gpu` as instance `api` sees it (null when it knows none).
Json Gpu(const client::ApiClient& api) {
  auto r = api.Call("GET", "/api/v1/pools");
  if (!r.ok()) return nullptr;
  for (const Json& p : (*r)["pools"]) {
    if (p["name"] == "gpu") return p;
  }
  return nullptr;
}

TEST(PostgresPools, APoolBoundsTheStepsOfEveryInstanceTogether) {
  Instances in;
  in.Start(2, "1s");
  const std::string dir = MakeTempDir();
  auto created = in.Api(0).Send("POST", "/api/v1/workflows", Train(dir), "application/yaml");
  ASSERT_TRUE(created.ok() && created->status == 201);
  auto pool = in.Api(0).Send("POST", "/api/v1/pools", R"({"name":"gpu","slots":1})");
  ASSERT_TRUE(pool.ok());
  ASSERT_EQ(pool->status, 201) << pool->body;
  // i2 learns of the pool from the database.
  ASSERT_TRUE(WaitUntil([&] { return !Gpu(in.Api(1)).is_null(); }, 10'000))
      << "i2 never learned of pool gpu";

  const std::string first = in.Submit(0, "train");
  ASSERT_FALSE(first.empty());
  ASSERT_TRUE(WaitUntil([&] { return StepStatus(in.Api(0), first) == "running"; }, 10'000));
  const std::string second = in.Submit(1, "train");
  ASSERT_FALSE(second.empty());
  // i2's step waits for the slot i1's holds (its retries, on the simulated clock, are
  // EnginePools.SharedSlotsBoundTheStepsOfEveryEngineTogether); the log below shows it
  // never ran beside i1's.
  ASSERT_TRUE(WaitUntil([&] { return Gpu(in.Api(1)).value("waiting", 0) == 1; }, 10'000))
      << Gpu(in.Api(1)).dump();
  EXPECT_EQ(StepStatus(in.Api(1), second), "ready");
  EXPECT_EQ(Lines(dir + "/log"), std::vector<std::string>{"start"});
  // Either instance counts the slot the other holds.
  EXPECT_EQ(Gpu(in.Api(1)).value("used", -1), 1) << Gpu(in.Api(1)).dump();
  EXPECT_EQ(Gpu(in.Api(0)).value("used", -1), 1) << Gpu(in.Api(0)).dump();

  std::ofstream(dir + "/go") << "go\n";
  WaitForExecutionStatus(in.Api(0), first, "completed");
  WaitForExecutionStatus(in.Api(1), second, "completed");
  // One at a time: the second started after the first ended.
  EXPECT_EQ(Lines(dir + "/log"), (std::vector<std::string>{"start", "end", "start", "end"}));
  EXPECT_TRUE(WaitUntil([&] { return Gpu(in.Api(0)).value("used", -1) == 0; }, 10'000))
      << Gpu(in.Api(0)).dump();
}

}  // namespace
}  // namespace baton::testing
