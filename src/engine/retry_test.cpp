// Engine::Retry: a failed execution runs again, keeping what completed.
#include "support/sim_harness.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using testing::SimHarness;

constexpr const char* kFlaky = R"(
name: flaky
steps:
  - {id: a, type: shell, run: a}
  - {id: b, type: shell, run: b, depends_on: [a], retry: {max_attempts: 2, initial_delay: 1s}}
  - {id: c, type: shell, run: c, depends_on: [b]}
)";

// Loads the stored execution and asks the engine to retry it, on the loop.
Status RetryFromStore(SimHarness& h, const std::string& id, const std::string& from = "") {
  Status out;
  h.loop->Post([&] {
    auto events = *h.store->GetEvents(id, 0, 0);
    out = h.engine->Retry(h.Execution(id), *h.store->GetSteps(id), *h.store->GetAttempts(id),
                          events.empty() ? 0 : events.back().seq, {}, from);
  });
  h.loop->RunReady();
  return out;
}

TEST(EngineRetry, KeepsCompletedStepsAndGivesTheRestAFreshBudget) {
  SimHarness h;
  // b fails twice (its whole budget), then succeeds on the third attempt overall.
  h.runner->script["b"] = {{10, "EXIT_NONZERO"}, {10, "EXIT_NONZERO"}, {10}};
  std::string id = h.Run(kFlaky);
  ASSERT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);
  EXPECT_EQ(h.Step(id, "c").status, StepStatus::kSkipped);

  ASSERT_TRUE(RetryFromStore(h, id).ok());
  h.loop->RunUntilIdle();
  ExecutionRecord e = h.Execution(id);
  EXPECT_EQ(e.status, ExecutionStatus::kCompleted);
  EXPECT_TRUE(e.error.is_null());
  EXPECT_EQ(h.runner->CallsFor("a"), 1);  // kept, not run again
  EXPECT_EQ(h.runner->CallsFor("b"), 3);
  EXPECT_EQ(h.Step(id, "b").attempts, 3);  // numbers continue
  EXPECT_EQ(h.Step(id, "c").status, StepStatus::kCompleted);
  auto events = *h.store->GetEvents(id, 0, 0);
  int retried = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].seq, static_cast<int64_t>(i + 1));  // gap-free across the retry
    retried += events[i].type == "execution.retried";
  }
  EXPECT_EQ(retried, 1);
}

TEST(EngineRetry, RefusesExecutionsThatDidNotFail) {
  SimHarness h;
  std::string id = h.Run(kFlaky);
  ASSERT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(RetryFromStore(h, id).code(), errc::kConflict);
}

TEST(EngineRetry, ACrashRightAfterTheRetryRecoversTheRetriedState) {
  SimHarness h;
  h.runner->script["b"] = {{10, "EXIT_NONZERO"}, {10, "EXIT_NONZERO"}, {1000}};
  std::string id = h.Run(kFlaky);
  ASSERT_TRUE(RetryFromStore(h, id).ok());
  h.loop->RunUntilIdle(h.clock.Now() + 500);  // b's third attempt is running
  h.Crash();
  h.runner->script["b"] = {{10}};
  h.loop->Post([&] { ASSERT_TRUE(RecoverExecutions(h.store.get(), h.engine.get()).ok()); });
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "c").status, StepStatus::kCompleted);
}

// a -> b -> c, and d beside them: from b reruns b and c, keeps a and d.
constexpr const char* kDiamond = R"(
name: diamond
steps:
  - {id: a, type: shell, run: a}
  - {id: b, type: shell, run: b, depends_on: [a]}
  - {id: c, type: shell, run: c, depends_on: [b]}
  - {id: d, type: shell, run: d, depends_on: [a]}
)";

TEST(EngineRetry, FromAStepRerunsItAndEverythingDownstreamOfACompletedExecution) {
  SimHarness h;
  h.runner->script["b"] = {{10, "", Json("first")}, {10, "", Json("second")}};
  std::string id = h.Run(kDiamond);
  ASSERT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  ASSERT_TRUE(RetryFromStore(h, id, "b").ok());
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.runner->CallsFor("a"), 1);
  EXPECT_EQ(h.runner->CallsFor("b"), 2);
  EXPECT_EQ(h.runner->CallsFor("c"), 2);
  EXPECT_EQ(h.runner->CallsFor("d"), 1);
  EXPECT_EQ(h.Step(id, "b").output, Json("second"));
  EXPECT_EQ(h.Step(id, "b").attempts, 2);  // numbers continue
  auto events = *h.store->GetEvents(id, 0, 0);
  Json reset;
  for (const auto& e : events) {
    if (e.type == "execution.retried") reset = e.data["steps_reset"];
  }
  EXPECT_EQ(reset, Json({"b", "c"}));
}

TEST(EngineRetry, FromAStepAlsoResetsWhatFailedElsewhere) {
  SimHarness h;
  h.runner->script["d"] = {{10, "EXIT_NONZERO"}, {10}};
  std::string id = h.Run(kDiamond);
  ASSERT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);
  ASSERT_TRUE(RetryFromStore(h, id, "c").ok());
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.runner->CallsFor("b"), 1);
  EXPECT_EQ(h.runner->CallsFor("c"), 2);
  EXPECT_EQ(h.runner->CallsFor("d"), 2);
}

TEST(EngineRetry, FromAnUnknownStepIsRefusedAndChangesNothing) {
  SimHarness h;
  std::string id = h.Run(kDiamond);
  Status st = RetryFromStore(h, id, "nope");
  EXPECT_EQ(st.code(), errc::kValidation);
  EXPECT_EQ(st.message(), "workflow 'diamond' has no step 'nope' to run again from");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(RetryFromStore(h, id).code(), errc::kConflict);  // completed: only with a step
}

}  // namespace
}  // namespace baton
