// A workflow's `concurrency:` with several instances on one database: the limit bounds
// the executions of every instance together. An execution submitted to one instance
// waits `queued` while another instance runs the key's last slot, and runs once it is
// given back; with `cancel_oldest`, the instance that runs the oldest is asked to cancel
// it.
#include "postgres/instances.h"
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace baton::testing {
namespace {

// One step that notes its start and its end in `dir`/log, and runs until `dir`/go exists.
std::string Deploy(const std::string& policy, const std::string& dir) {
  return "name: deploy\nconcurrency: {limit: 1, policy: " + policy +
         "}\nsteps:\n"
         "  - id: work\n"
         "    type: shell\n"
         "    run: " +
         LogUntilGo(dir) + "\n";
}

Json Execution(const client::ApiClient& api, const std::string& id) {
  auto r = api.Call("GET", "/api/v1/executions/" + id);
  return r.ok() ? *r : Json();
}

TEST(PostgresConcurrency, TheLimitBoundsTheExecutionsOfEveryInstanceTogether) {
  Instances in;
  in.Start(2, "1s");
  const std::string dir = MakeTempDir();
  in.Create(0, Deploy("queue", dir).c_str());

  const std::string first = in.Submit(0, "deploy");
  ASSERT_FALSE(first.empty());
  ASSERT_TRUE(WaitUntil([&] { return StepStatus(in.Api(0), first) == "running"; }, 10'000));
  const std::string second = in.Submit(1, "deploy");
  ASSERT_FALSE(second.empty());
  // i2 holds it queued, and says who holds the slot: i1's execution.
  ASSERT_TRUE(WaitUntil(
      [&] { return Execution(in.Api(1), second).value("status", "") == "queued"; }, 10'000))
      << Execution(in.Api(1), second).dump();
  auto why = in.Api(1).Call("GET", "/api/v1/executions/" + second + "/why");
  ASSERT_TRUE(why.ok()) << why.status().ToString();
  EXPECT_NE(why->dump().find(first), std::string::npos) << why->dump();
  EXPECT_EQ(Lines(dir + "/log"), std::vector<std::string>{"start"});

  std::ofstream(dir + "/go") << "go\n";
  WaitForExecutionStatus(in.Api(0), first, "completed");
  WaitForExecutionStatus(in.Api(1), second, "completed");
  // One at a time: the second started after the first ended.
  EXPECT_EQ(Lines(dir + "/log"), (std::vector<std::string>{"start", "end", "start", "end"}));
}

TEST(PostgresConcurrency, CancelOldestCancelsTheOldestOnTheInstanceThatRunsIt) {
  Instances in;
  in.Start(2, "1s");
  const std::string dir = MakeTempDir();
  in.Create(0, Deploy("cancel_oldest", dir).c_str());

  const std::string oldest = in.Submit(0, "deploy");
  ASSERT_FALSE(oldest.empty());
  ASSERT_TRUE(WaitUntil([&] { return StepStatus(in.Api(0), oldest) == "running"; }, 10'000));
  const std::string newest = in.Submit(1, "deploy");
  ASSERT_FALSE(newest.empty());
  Json replaced = WaitForExecutionStatus(in.Api(0), oldest, "cancelled");
  EXPECT_NE(replaced.dump().find("replaced by execution " + newest), std::string::npos)
      << replaced.dump();
  ASSERT_TRUE(WaitUntil([&] { return StepStatus(in.Api(1), newest) == "running"; }, 10'000))
      << Execution(in.Api(1), newest).dump();
  std::ofstream(dir + "/go") << "go\n";
  WaitForExecutionStatus(in.Api(1), newest, "completed");
}

}  // namespace
}  // namespace baton::testing
