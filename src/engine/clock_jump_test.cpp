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

}  // namespace
}  // namespace baton::testing
