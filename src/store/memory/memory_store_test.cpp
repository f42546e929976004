// The memory store's own options (what every store does is in the conformance suites).
#include <baton/memory_store.h>
#include <baton/store.h>

#include "store/store_test_util.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using testing::Event;

// `baton run --ephemeral` keeps no event log: its live view sees the events as they are
// committed, and the log was most of the run's memory.
TEST(MemoryStore, WithoutEventsKeepsEverythingElseAndNoEvent) {
  auto store = NewMemoryStore({.keep_events = false});
  WriteBatch b;
  ExecutionRecord ex;
  ex.id = "e";
  ex.workflow = "w";
  ex.status = ExecutionStatus::kRunning;
  b.executions.push_back(ex);
  StepRecord step;
  step.execution_id = "e";
  step.step_id = "a";
  step.status = StepStatus::kCompleted;
  b.steps.push_back(step);
  b.events.push_back(Event("e", 1));
  b.events.push_back(Event("e", 1));  // a repeat is not refused: nothing is kept to compare
  ASSERT_TRUE(store->Commit(b).ok());
  EXPECT_EQ(store->GetExecution("e")->status, ExecutionStatus::kRunning);
  ASSERT_EQ(store->GetSteps("e")->size(), 1u);
  EXPECT_EQ((*store->GetSteps("e"))[0].status, StepStatus::kCompleted);
  EXPECT_TRUE(store->GetEvents("e", 0, 0)->empty());

  // The default keeps the log and refuses a repeated seq.
  auto keeping = NewMemoryStore();
  ASSERT_FALSE(keeping->Commit(b).ok());
  b.events.pop_back();
  ASSERT_TRUE(keeping->Commit(b).ok());
  EXPECT_EQ(keeping->GetEvents("e", 0, 0)->size(), 1u);
}

// Without --json, `baton run --ephemeral` reads no step back: the engine schedules from
// its own state, so the store keeps the execution's record alone.
TEST(MemoryStore, WithoutStepsKeepsTheExecutionAndNoStepOrAttempt) {
  auto store = NewMemoryStore({.keep_events = false, .keep_steps = false});
  WriteBatch b;
  ExecutionRecord ex;
  ex.id = "e";
  ex.status = ExecutionStatus::kCompleted;
  b.executions.push_back(ex);
  StepRecord step;
  step.execution_id = "e";
  step.step_id = "a";
  b.steps.push_back(step);
  AttemptRecord attempt;
  attempt.execution_id = "e";
  attempt.step_id = "a";
  attempt.attempt = 1;
  b.attempts.push_back(attempt);
  ASSERT_TRUE(store->Commit(b).ok());
  EXPECT_EQ(store->GetExecution("e")->status, ExecutionStatus::kCompleted);
  EXPECT_TRUE(store->GetSteps("e")->empty());
  EXPECT_TRUE(store->GetAttempts("e")->empty());

  auto keeping = NewMemoryStore({.keep_events = false});
  ASSERT_TRUE(keeping->Commit(b).ok());
  EXPECT_EQ(keeping->GetSteps("e")->size(), 1u);
  EXPECT_EQ(keeping->GetAttempts("e")->size(), 1u);
}

}  // namespace
}  // namespace baton
