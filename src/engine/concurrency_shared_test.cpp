// A workflow's `concurrency` over several engines that share their slots (as server
// instances on one PostgreSQL database do, through SharedPools): the limit bounds the
// executions of every engine together, for each policy, and after a crash.
#include "support/shared_slots.h"
#include "support/sim_harness.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using testing::InstanceSlots;
using testing::Outcome;
using testing::SharedSlots;
using testing::SimHarness;

std::string Deploy(const std::string& policy) {
  return "name: deploy\ninputs:\n  customer: {type: string}\n"
         "concurrency: {limit: 1, key: \"{{ inputs.customer }}\", policy: " +
         policy + "}\nsteps:\n  - {id: work, type: shell, run: work}\n";
}

std::string Start(SimHarness& h, const std::string& policy, const std::string& customer) {
  return h.StartOnly(Deploy(policy), {{"customer", customer}});
}

std::vector<StepWait> Why(SimHarness& h, const std::string& id) {
  std::vector<StepWait> why;
  h.loop->Post([&] { why = *h.engine->Why(id); });
  h.loop->RunReady();
  return why;
}

// Two engines, `a` and `b`, that share their slots.
class EngineSharedConcurrency : public ::testing::Test {
 protected:
  static EngineOptions SharingThrough(SharedPools* pools) {
    return EngineOptions{.parallel = 8, .shared_pools = pools};
  }
  SharedSlots slots;
  InstanceSlots mine{&slots, "a"}, theirs{&slots, "b"};
  SimHarness a{SharingThrough(&mine)};
  SimHarness b{SharingThrough(&theirs)};
};

// One engine's execution holds the key's only slot: the other engine's waits queued,
// names the holder in `why`, and runs at its next retry once the slot is given back.
// Another key is not held back.
TEST_F(EngineSharedConcurrency, TheLimitBoundsTheExecutionsOfEveryEngineTogether) {
  a.runner->script["work"] = {Outcome(1'000)};
  b.runner->script["work"] = {Outcome(1'000)};
  const std::string x = Start(a, "queue", "acme");
  a.loop->RunUntilIdle(a.clock.Now() + 10);
  EXPECT_EQ(a.runner->running, 1);
  const std::string y = Start(b, "queue", "acme");
  const std::string other = Start(b, "queue", "globex");
  b.loop->RunUntilIdle(b.clock.Now() + 500);  // through a retry
  EXPECT_EQ(b.Execution(y).status, ExecutionStatus::kQueued);
  EXPECT_EQ(b.Step(y, "work").status, StepStatus::kPending);
  EXPECT_EQ(b.Execution(other).status, ExecutionStatus::kRunning);
  EXPECT_EQ(b.runner->CallsFor("work"), 1) << "globex's only";
  std::vector<StepWait> why = Why(b, y);
  ASSERT_EQ(why.size(), 1u);
  EXPECT_EQ(why[0].kind, "concurrency");
  EXPECT_EQ(why[0].steps, std::vector<std::string>{x}) << "the holder on the other engine";

  a.loop->RunUntilIdle();
  EXPECT_EQ(a.Execution(x).status, ExecutionStatus::kCompleted);
  b.loop->RunUntilIdle(b.clock.Now() + 300);
  EXPECT_EQ(b.Execution(y).status, ExecutionStatus::kRunning);
  b.loop->RunUntilIdle();
  EXPECT_EQ(b.Execution(y).status, ExecutionStatus::kCompleted);
  EXPECT_TRUE(slots.holds.empty()) << "every slot given back";
}

// Queued on one engine, executions keep their order: a later one does not take a slot
// ahead of one queued before it.
TEST_F(EngineSharedConcurrency, QueuedExecutionsKeepTheirOrder) {
  a.runner->script["work"] = {Outcome(1'000)};
  b.runner->script["work"] = {Outcome(1'000)};
  const std::string x = Start(a, "queue", "acme");
  a.loop->RunUntilIdle(a.clock.Now() + 10);
  const std::string first = Start(b, "queue", "acme");
  const std::string second = Start(b, "queue", "acme");
  a.loop->RunUntilIdle();
  b.loop->RunUntilIdle();
  for (const std::string& id : {first, second}) {
    EXPECT_EQ(b.Execution(id).status, ExecutionStatus::kCompleted);
  }
  EXPECT_GE(b.Step(second, "work").started_at, b.Execution(first).completed_at);
}

TEST_F(EngineSharedConcurrency, CancelNewestCancelsTheNewExecutionOnAnyEngine) {
  a.runner->script["work"] = {Outcome(1'000)};
  const std::string x = Start(a, "cancel_newest", "acme");
  a.loop->RunUntilIdle(a.clock.Now() + 10);
  const std::string y = Start(b, "cancel_newest", "acme");
  b.loop->RunUntilIdle();
  ExecutionRecord refused = b.Execution(y);
  EXPECT_EQ(refused.status, ExecutionStatus::kCancelled);
  EXPECT_EQ(refused.error.value("code", ""), errc::kConcurrencyLimit);
  EXPECT_EQ(b.runner->CallsFor("work"), 0);
  a.loop->RunUntilIdle();
  EXPECT_EQ(a.Execution(x).status, ExecutionStatus::kCompleted);
}

// cancel_oldest: the oldest holder runs on the other engine, which is asked to cancel
// it; the new execution runs once that one's slot is given back.
TEST_F(EngineSharedConcurrency, CancelOldestAsksTheEngineThatRunsTheOldestToCancelIt) {
  std::vector<std::pair<std::string, std::string>> asked;
  EngineOptions options = SharingThrough(&theirs);
  options.cancel_elsewhere = [&](const std::string& id, const std::string& reason) {
    asked.emplace_back(id, reason);
  };
  b.Reset(options);
  a.runner->script["work"] = {Outcome(600'000)};
  b.runner->script["work"] = {Outcome(1'000)};
  const std::string x = Start(a, "cancel_oldest", "acme");
  a.loop->RunUntilIdle(a.clock.Now() + 10);
  const std::string y = Start(b, "cancel_oldest", "acme");
  b.loop->RunUntilIdle(b.clock.Now() + 10);
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0].first, x);
  EXPECT_NE(asked[0].second.find("replaced by execution " + y), std::string::npos);
  EXPECT_EQ(b.Execution(y).status, ExecutionStatus::kQueued) << "until the slot is free";
  EXPECT_EQ(b.engine->Stats().concurrency_cancelled, 1u);

  // What the relayed cancel does on a.
  a.loop->Post([&] { ASSERT_TRUE(a.engine->Cancel(x, asked[0].second).ok()); });
  a.loop->RunUntilIdle(a.clock.Now() + 10);
  EXPECT_EQ(a.Execution(x).status, ExecutionStatus::kCancelled);
  b.loop->RunUntilIdle();
  EXPECT_EQ(b.Execution(y).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(asked.size(), 1u) << "asked once";
}

// The oldest runs on the same engine: cancelled here, at once, as without sharing.
TEST_F(EngineSharedConcurrency, CancelOldestOnTheSameEngineCancelsAtOnce) {
  a.runner->script["work"] = {Outcome(600'000), Outcome(1'000)};
  const std::string x = Start(a, "cancel_oldest", "acme");
  a.loop->RunUntilIdle(a.clock.Now() + 10);
  const std::string y = Start(a, "cancel_oldest", "acme");
  a.loop->RunUntilIdle();
  EXPECT_EQ(a.Execution(x).status, ExecutionStatus::kCancelled);
  EXPECT_EQ(a.Execution(y).status, ExecutionStatus::kCompleted);
  EXPECT_TRUE(slots.holds.empty());
}

// After a crash, the running execution takes its slot again (over the limit if need be)
// before the queued one is admitted, and the other engine sees the key held again.
TEST_F(EngineSharedConcurrency, AfterACrashTheRunningExecutionHoldsItsSlotAgain) {
  a.runner->script["work"] = {Outcome(10'000)};
  b.runner->script["work"] = {Outcome(1'000)};
  const std::string x = Start(a, "queue", "acme");
  const std::string y = Start(a, "queue", "acme");
  a.loop->RunUntilIdle(a.clock.Now() + 1'000);
  // kill -9: the holds lapse with the instance's leases.
  slots.holds.clear();
  a.Crash(SharingThrough(&mine));
  a.runner->script["work"] = {Outcome(10'000)};
  a.loop->Post([&] { ASSERT_TRUE(RecoverExecutions(a.store.get(), a.engine.get()).ok()); });
  a.loop->RunUntilIdle(a.clock.Now() + 1'000);
  EXPECT_EQ(a.Execution(x).status, ExecutionStatus::kRunning);
  EXPECT_EQ(a.Execution(y).status, ExecutionStatus::kQueued);
  EXPECT_EQ(slots.holds.size(), 1u) << "x's slot, held again";
  const std::string z = Start(b, "queue", "acme");
  b.loop->RunUntilIdle(b.clock.Now() + 500);
  EXPECT_EQ(b.Execution(z).status, ExecutionStatus::kQueued);

  a.loop->RunUntilIdle();
  b.loop->RunUntilIdle();
  a.loop->RunUntilIdle();
  for (const std::string& id : {x, y})
    EXPECT_EQ(a.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(b.Execution(z).status, ExecutionStatus::kCompleted);
  EXPECT_TRUE(slots.holds.empty());
}

// A hold that could not be given back (a store error) would be renewed with the
// instance's leases for as long as it lives: it is given back at the next retry.
TEST_F(EngineSharedConcurrency, AHoldNotGivenBackIsGivenBackLater) {
  a.runner->script["work"] = {Outcome(1'000)};
  const std::string x = Start(a, "queue", "acme");
  slots.failing_releases = 1;
  a.loop->RunUntilIdle(a.clock.Now() + 1'100);
  EXPECT_EQ(a.Execution(x).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(slots.holds.size(), 1u) << "the failed release";
  a.loop->RunUntilIdle(a.clock.Now() + 300);
  EXPECT_TRUE(slots.holds.empty()) << "given back at the retry";
  // The key is free for another engine.
  b.runner->script["work"] = {Outcome(10)};
  const std::string y = Start(b, "cancel_newest", "acme");
  b.loop->RunUntilIdle();
  EXPECT_EQ(b.Execution(y).status, ExecutionStatus::kCompleted);
}

// The store not answering is not a full key: under cancel_newest the new execution waits
// queued (and runs once the store answers) instead of being cancelled.
TEST_F(EngineSharedConcurrency, AStoreErrorQueuesInsteadOfCancelling) {
  b.runner->script["work"] = {Outcome(10)};
  slots.holds_fail = true;
  const std::string y = Start(b, "cancel_newest", "acme");
  b.loop->RunUntilIdle(b.clock.Now() + 600);
  EXPECT_EQ(b.Execution(y).status, ExecutionStatus::kQueued);
  slots.holds_fail = false;
  b.loop->RunUntilIdle();
  EXPECT_EQ(b.Execution(y).status, ExecutionStatus::kCompleted);
  EXPECT_TRUE(slots.holds.empty());
}

}  // namespace
}  // namespace baton
