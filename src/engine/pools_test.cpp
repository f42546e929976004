// Pools: steps with `pool: NAME` run only while slots of that pool are free, across
// executions; slots come back however an attempt ends, and after a crash.
#include "support/shared_slots.h"
#include "support/sim_harness.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace baton {
namespace {

using testing::InstanceSlots;
using testing::Outcome;
using testing::SharedSlots;
using testing::SimHarness;

constexpr const char* kTrain = R"(
name: train
steps:
  - {id: a, type: shell, run: a, pool: gpu}
  - {id: b, type: shell, run: b, pool: gpu}
  - {id: c, type: shell, run: c, pool: gpu}
)";

void SetPool(SimHarness& h, const std::string& name, int slots) {
  PoolRecord p;
  p.name = name;
  p.slots = slots;
  h.loop->Post([&] { ASSERT_TRUE(h.engine->SetPool(p).ok()); });
  h.loop->RunReady();
}

TEST(EnginePools, AtMostTheSlotsRunAtOnceAcrossExecutions) {
  SimHarness h(EngineOptions{.parallel = 8});
  SetPool(h, "gpu", 2);
  for (const char* s : {"a", "b", "c"}) h.runner->script[s] = {Outcome(1'000)};
  std::string first = h.StartOnly(kTrain);
  std::string second = h.StartOnly(kTrain);
  h.loop->RunUntilIdle(h.clock.Now() + 10);
  EXPECT_EQ(h.runner->running, 2);
  std::vector<StepWait> why;
  h.loop->Post([&] { why = *h.engine->Why(first); });
  h.loop->RunReady();
  ASSERT_EQ(why.size(), 3u);
  EXPECT_EQ(why[2].kind, "pool");
  EXPECT_EQ(why[2].breaker, "gpu");
  EXPECT_EQ(why[2].limit, 2);
  EXPECT_EQ(why[2].steps.size(), 2u);
  auto pools = h.engine->Pools("");
  ASSERT_EQ(pools.size(), 1u);
  EXPECT_EQ(pools[0].used, 2);
  EXPECT_EQ(pools[0].waiting, 4u);

  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(first).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.Execution(second).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.runner->max_running, 2);
  EXPECT_EQ(h.engine->Pools("")[0].used, 0);
}

TEST(EnginePools, UnknownPoolsAndTooManySlotsFailTheStep) {
  SimHarness h;
  SetPool(h, "gpu", 1);
  std::string id = h.Run(R"(
name: bad
steps:
  - {id: nowhere, type: shell, run: x, pool: tpu}
  - {id: greedy, type: shell, run: x, pool: gpu, pool_slots: 2}
)");
  EXPECT_EQ(h.Step(id, "nowhere").error["code"], errc::kNotFound);
  EXPECT_EQ(h.Step(id, "greedy").error["code"], errc::kValidation);
  EXPECT_NE(h.Step(id, "greedy")
                .error["message"]
                .get<std::string>()
                .find("asks for 2 slots of pool 'gpu', which has 1"),
            std::string::npos);
  EXPECT_EQ(h.runner->calls.size(), 0u);
}

TEST(EnginePools, CancelAndTimeoutGiveTheSlotsBack) {
  SimHarness h(EngineOptions{.parallel = 8});
  SetPool(h, "gpu", 1);
  h.runner->script["a"] = {Outcome(600'000)};
  std::string slow = h.StartOnly(R"(
name: slow
steps: [{id: a, type: shell, run: a, pool: gpu, timeout: 1m}]
)");
  std::string waiting = h.StartOnly(R"(
name: waits
steps: [{id: b, type: shell, run: b, pool: gpu}]
)");
  std::string other = h.StartOnly(R"(
name: other
steps: [{id: c, type: shell, run: c, pool: gpu}]
)");
  h.loop->RunUntilIdle(h.clock.Now() + 10);
  // A waiting step cancelled leaves the queue; the holder timing out frees its slot.
  h.loop->Post([&] { ASSERT_TRUE(h.engine->Cancel(waiting, "no").ok()); });
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Step(slow, "a").status, StepStatus::kTimeout);
  EXPECT_EQ(h.Execution(waiting).status, ExecutionStatus::kCancelled);
  EXPECT_EQ(h.Execution(other).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.runner->CallsFor("b"), 0);
  EXPECT_EQ(h.engine->Pools("")[0].used, 0);
}

TEST(EnginePools, AGrownPoolLetsWaitingStepsIn) {
  SimHarness h(EngineOptions{.parallel = 8});
  SetPool(h, "gpu", 1);
  for (const char* s : {"a", "b", "c"}) h.runner->script[s] = {Outcome(10'000)};
  std::string id = h.StartOnly(kTrain);
  h.loop->RunUntilIdle(h.clock.Now() + 10);
  EXPECT_EQ(h.runner->running, 1);
  SetPool(h, "gpu", 3);
  h.loop->RunUntilIdle(h.clock.Now() + 10);
  EXPECT_EQ(h.runner->running, 3);
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.store->ListPools("")->at(0).slots, 3);  // written with the change
}

TEST(EnginePools, AfterACrashNoSlotIsLeaked) {
  SimHarness h(EngineOptions{.parallel = 8});
  SetPool(h, "gpu", 1);
  for (const char* s : {"a", "b", "c"}) h.runner->script[s] = {Outcome(10'000)};
  std::string id = h.StartOnly(kTrain);
  h.loop->RunUntilIdle(h.clock.Now() + 10);
  h.Crash(EngineOptions{.parallel = 8});  // the pool comes back from the store
  for (const char* s : {"a", "b", "c"}) h.runner->script[s] = {Outcome(1'000)};
  h.loop->Post([&] { ASSERT_TRUE(RecoverExecutions(h.store.get(), h.engine.get()).ok()); });
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.runner->max_running, 1);
  EXPECT_EQ(h.engine->Pools("")[0].used, 0);
}

constexpr const char* kOneGpuStep =
    "name: one\nsteps:\n  - {id: a, type: shell, run: a, pool: gpu}\n";

// With shared pools, a pool bounds the steps of every engine together: one engine's step
// waits while another's holds the last slot, and takes it at its next retry once given
// back.
TEST(EnginePools, SharedSlotsBoundTheStepsOfEveryEngineTogether) {
  SharedSlots slots;
  InstanceSlots mine(&slots, "a"), theirs(&slots, "b");
  SimHarness a(EngineOptions{.parallel = 8, .shared_pools = &mine});
  SimHarness b(EngineOptions{.parallel = 8, .shared_pools = &theirs});
  SetPool(a, "gpu", 1);
  SetPool(b, "gpu", 1);
  a.runner->script["a"] = {Outcome(1'000)};
  b.runner->script["a"] = {Outcome(1'000)};
  const std::string x = a.StartOnly(kOneGpuStep);
  a.loop->RunUntilIdle(a.clock.Now() + 10);
  EXPECT_EQ(a.runner->running, 1);
  const std::string y = b.StartOnly(kOneGpuStep);
  b.loop->RunUntilIdle(b.clock.Now() + 1'000);  // through several retries
  EXPECT_EQ(b.runner->running, 0);
  EXPECT_EQ(b.engine->Pools("")[0].used, 1) << "a's holder counts on b";
  EXPECT_EQ(b.engine->Pools("")[0].waiting, 1u);

  a.loop->RunUntilIdle();
  EXPECT_EQ(a.Execution(x).status, ExecutionStatus::kCompleted);
  EXPECT_TRUE(slots.holds.empty()) << "given back when the attempt ended";
  b.loop->RunUntilIdle(b.clock.Now() + 300);
  EXPECT_EQ(b.runner->running, 1);
  b.loop->RunUntilIdle();
  EXPECT_EQ(b.Execution(y).status, ExecutionStatus::kCompleted);
  EXPECT_TRUE(slots.holds.empty());
}

// Pools as stored by other instances: created, resized (waiting steps let in), and
// removed once the local copy is older than 10 s.
TEST(EnginePools, MergedPoolsAreCreatedResizedAndRemoved) {
  SimHarness h(EngineOptions{.parallel = 8});
  for (const char* s : {"a", "b", "c"}) h.runner->script[s] = {Outcome(10'000)};
  PoolRecord gpu;
  gpu.name = "gpu";
  gpu.slots = 1;
  gpu.updated_at = h.clock.Now();
  auto merge = [&](std::vector<PoolRecord> stored) {
    h.loop->Post([&h, stored]() mutable { h.engine->MergePools(std::move(stored)); });
    h.loop->RunReady();
  };
  merge({gpu});
  ASSERT_EQ(h.engine->Pools("").size(), 1u);
  const std::string id = h.StartOnly(kTrain);
  h.loop->RunUntilIdle(h.clock.Now() + 10);
  EXPECT_EQ(h.runner->running, 1);
  gpu.slots = 3;
  gpu.updated_at += 1;
  merge({gpu});
  h.loop->RunUntilIdle(h.clock.Now() + 10);
  EXPECT_EQ(h.runner->running, 3);
  gpu.slots = 1;  // older than what the engine has: ignored
  gpu.updated_at -= 1;
  merge({gpu});
  EXPECT_EQ(h.engine->Pools("")[0].pool.slots, 3);
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  merge({});
  EXPECT_EQ(h.engine->Pools("").size(), 1u) << "changed here less than 10 s ago";
  h.clock.Advance(Duration(1'000));
  merge({});
  EXPECT_EQ(h.engine->Pools("").size(), 0u) << "removed elsewhere, unchanged here for 10 s";

  // A pool set here in the last 10 s is kept: its row may not be durable yet.
  SetPool(h, "cpu", 2);
  merge({});
  EXPECT_EQ(h.engine->Pools("").size(), 1u);
}

}  // namespace
}  // namespace baton
