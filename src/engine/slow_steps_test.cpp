// Stuck-work detection on the simulated clock: step.slow past expected_duration, or past
// three times the p95 of the step's recent successful attempts.
#include "support/sim_harness.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using testing::SimHarness;

std::vector<EventRecord> SlowEvents(SimHarness& h, const std::string& id) {
  std::vector<EventRecord> out;
  for (const EventRecord& e : *h.store->GetEvents(id, 0, 0)) {
    if (e.type == "step.slow") out.push_back(e);
  }
  return out;
}

TEST(SlowSteps, AnAttemptPastItsExpectedDurationIsReportedOnceAndGoesOn) {
  SimHarness h;
  h.runner->script["train"] = {{60'000}};
  std::string id = h.Run(R"(
name: train
steps:
  - {id: train, type: shell, run: train, expected_duration: 10s}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);  // slow is not failed
  auto slow = SlowEvents(h, id);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].step_id, "train");
  EXPECT_EQ(slow[0].data["expected_duration_ms"], 10'000);
  EXPECT_EQ(slow[0].data["running_ms"], 10'000);
  EXPECT_EQ(h.engine->Stats().steps_slow, 1u);
}

TEST(SlowSteps, WithoutExpectedDurationTheStepsHistorySetsTheBar) {
  constexpr const char* kEtl = R"(
name: etl
steps:
  - {id: load, type: shell, run: load}
)";
  SimHarness h;
  h.runner->script["load"] = {{2'000}};
  // Too few runs to know what is usual: nothing is reported, however long.
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(SlowEvents(h, h.Run(kEtl)).empty());
  h.runner->script["load"] = {{100'000}};
  EXPECT_TRUE(SlowEvents(h, h.Run(kEtl)).empty());  // the fifth sample

  // Now the p95 of {2s x4, 100s} is 100 s: 250 s is not slow (under 3 x 100 s). Then
  // the p95 of {2s x4, 100s, 250s} is 250 s: 800 s is slow (over 3 x 250 s).
  h.runner->script["load"] = {{250'000}};
  EXPECT_TRUE(SlowEvents(h, h.Run(kEtl)).empty());
  h.runner->script["load"] = {{800'000}};
  std::string id = h.Run(kEtl);
  auto slow = SlowEvents(h, id);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].data["p95_ms"], 250'000);
  EXPECT_EQ(slow[0].data["threshold_ms"], 750'000);
}

TEST(SlowSteps, AFailedAttemptTeachesNothing) {
  constexpr const char* kFlaky = R"(
name: flaky
steps:
  - {id: call, type: shell, run: call, expected_duration: 1h}
)";
  SimHarness h;
  h.runner->script["call"] = {{5, "EXIT_NONZERO"}};
  std::string id = h.Run(kFlaky);
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);
  EXPECT_TRUE(SlowEvents(h, id).empty());  // its watch ended with the attempt
}

}  // namespace
}  // namespace baton
