// Wall-clock steps while timers are armed (issue 11, defect 6): waiting is measured on
// the monotonic clock, so a jump forward fires no timeout early and a jump back delays
// no retry.
#include "support/sim_harness.h"

#include <gtest/gtest.h>

namespace baton::testing {
namespace {

constexpr int64_t kHour = 3'600'000;

// Regression: a +3 h step (NTP, an operator) made every armed timeout fire at once.
TEST(ClockJump, AJumpForwardFiresNoTimeoutEarly) {
  SimHarness h;
  h.runner->script["a"] = {Outcome(10'000)};
  const std::string id = h.StartOnly(R"(
name: j
timeout: 1m
steps:
  - {id: a, type: shell, run: "true", timeout: 30s}
)");
  h.loop->RunReady();
  ASSERT_EQ(h.runner->running, 1);
  h.clock.JumpWall(Duration(3 * kHour));
  h.loop->RunReady();
  EXPECT_EQ(h.runner->running, 1);  // neither the step's nor the execution's timeout
  EXPECT_TRUE(h.runner->cancelled.empty());
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "a").attempts, 1);
}

// Regression: a -2 h step delayed every retry by two hours.
TEST(ClockJump, AJumpBackDelaysNoRetry) {
  SimHarness h;
  h.runner->script["a"] = {Outcome(10, "EXIT_NONZERO"), Outcome(10)};
  const std::string id = h.StartOnly(R"(
name: j
steps:
  - {id: a, type: shell, run: "true", retry: {max_attempts: 2, initial_delay: 30s}}
)");
  h.loop->RunUntilIdle(h.clock.Now() + 100);  // the first attempt failed; the retry waits
  ASSERT_EQ(h.runner->CallsFor("a"), 1);
  const int64_t mono = h.clock.MonotonicMs();
  h.clock.JumpWall(Duration(-2 * kHour));
  h.loop->RunUntilIdle(h.clock.Now() + 31'000);
  EXPECT_EQ(h.runner->CallsFor("a"), 2);
  EXPECT_LE(h.clock.MonotonicMs() - mono, 31'000);
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
}

// Regression (the engine's deadline heap, 168b463): a +3 h step while two attempt
// timeouts were armed made the earlier one's firing take the later one with it, 59
// minutes early.
TEST(ClockJump, AJumpForwardFiresNoOtherTimeoutEarly) {
  SimHarness h;
  h.runner->script["a"] = {Outcome(10 * 60'000)};  // 10 min: times out at 30 s
  h.runner->script["b"] = {Outcome(20 * 60'000)};  // 20 min, timeout 1 h: completes
  const std::string id = h.StartOnly(R"(
name: j
steps:
  - {id: a, type: shell, run: "true", timeout: 30s}
  - {id: b, type: shell, run: "true", timeout: 1h}
)");
  h.loop->RunReady();
  ASSERT_EQ(h.runner->running, 2);
  h.clock.JumpWall(Duration(3 * kHour));
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Step(id, "a").status, StepStatus::kTimeout);
  EXPECT_EQ(h.Step(id, "b").status, StepStatus::kCompleted);
}

// Regression (168b463): a -2 h step delayed an armed attempt timeout by two hours.
TEST(ClockJump, AJumpBackDelaysNoTimeout) {
  SimHarness h;
  h.runner->script["a"] = {Outcome(10 * 60'000)};  // 10 min, timeout 30 s
  const std::string id = h.StartOnly(R"(
name: j
steps:
  - {id: a, type: shell, run: "true", timeout: 30s}
)");
  h.loop->RunReady();
  ASSERT_EQ(h.runner->running, 1);
  const int64_t mono = h.clock.MonotonicMs();
  h.clock.JumpWall(Duration(-2 * kHour));
  h.loop->RunUntilIdle(h.clock.Now() + 31'000);
  EXPECT_EQ(h.Step(id, "a").status, StepStatus::kTimeout);
  EXPECT_LE(h.clock.MonotonicMs() - mono, 31'000);
}

}  // namespace
}  // namespace baton::testing
