#include "server/dashboard/activity.h"

#include <gtest/gtest.h>

#include <string>

namespace baton::server {
namespace {

constexpr TimeMs kHour = 3'600'000;
constexpr TimeMs kT0 = 1'800'000'000'000;  // a minute's start (divisible by 60,000)

class Activity : public ::testing::Test {
 protected:
  // `began`: when the attempt a step event ends began, as the engine says (0: unknown).
  void Emit(const std::string& ns, const std::string& execution, const std::string& type, TimeMs at,
            const std::string& step = "", TimeMs began = 0) {
    EventRecord e;
    e.execution_id = execution;
    e.step_id = step;
    e.type = type;
    e.time = at;
    ExecutionProgress p;
    p.ns = ns;
    p.workflow = "wf";
    p.attempt_began = began;
    window_.OnEvent(e, p);
  }
  ActivityWindow window_{/*max_namespaces=*/3, /*max_stalled=*/2};
};

TEST_F(Activity, CountsEachMinuteOfTheLastHourWithStepDurations) {
  Emit("ns", "e1", "execution.started", kT0 + 1'000);
  Emit("ns", "e1", "step.started", kT0 + 1'000, "a");
  Emit("ns", "e1", "step.completed", kT0 + 1'100, "a", kT0 + 1'000);  // 100 ms
  Emit("ns", "e1", "step.started", kT0 + 2'000, "b");
  Emit("ns", "e1", "step.failed", kT0 + 62'000, "b", kT0 + 2'000);  // 60 s, the next minute
  Emit("ns", "e1", "execution.failed", kT0 + 62'000);
  Emit("ns", "e1", "execution.retried", kT0 + 63'000);  // a new run: a start

  const ActivityWindow::View v = window_.Read("ns", kT0 + 61'000);
  ASSERT_EQ(v.minutes.size(), 60u);
  const ActivityWindow::Minute& first = v.minutes[58];
  EXPECT_EQ(first.start, kT0);
  EXPECT_EQ(first.executions_started, 1u);
  EXPECT_EQ(first.steps_completed, 1u);
  // Within 10 %.
  EXPECT_NEAR(static_cast<double>(first.step_p50_ms), 100, 10);
  const ActivityWindow::Minute& second = v.minutes[59];
  EXPECT_EQ(second.steps_failed, 1u);
  EXPECT_EQ(second.executions_failed, 1u);
  EXPECT_NEAR(static_cast<double>(second.step_p99_ms), 60'000, 6'000);
  EXPECT_EQ(v.minutes[0].step_p50_ms, -1);  // nothing finished then
  EXPECT_EQ(v.total.executions_started, 2u);
  EXPECT_EQ(v.total.steps_completed + v.total.steps_failed, 2u);
  EXPECT_NEAR(static_cast<double>(v.total.step_p99_ms), 60'000, 6'000);

  // An hour on, that work has left the window; a minute's slot is reused, not added to.
  Emit("ns", "e2", "execution.started", kT0 + kHour + 5);
  const ActivityWindow::View later = window_.Read("ns", kT0 + kHour + 61'000);
  EXPECT_EQ(later.total.executions_started, 1u);
  EXPECT_EQ(later.total.steps_completed, 0u);
  EXPECT_EQ(later.total.step_p50_ms, -1);
}

// A step's duration is its end's time less when its attempt began, as the engine hands
// it; an end whose beginning is not known (an attempt taken over after a restart) counts
// as finished, with no duration.
TEST_F(Activity, AStepWhoseBeginningIsUnknownCountsButHasNoDuration) {
  Emit("ns", "e1", "step.completed", kT0 + 3'000, "a");
  Emit("ns", "e2", "step.completed", kT0 + 5'000, "a", kT0 + 1'000);  // 4 s
  const ActivityWindow::View v = window_.Read("ns", kT0 + 10'000);
  EXPECT_EQ(v.total.steps_completed, 2u);
  EXPECT_NEAR(static_cast<double>(v.total.step_p50_ms), 4'000, 400);
  EXPECT_NEAR(static_cast<double>(v.total.step_p99_ms), 4'000, 400);
}

TEST_F(Activity, NamespacesSeeOnlyTheirOwnWork) {
  Emit("a", "e1", "execution.started", kT0);
  EXPECT_EQ(window_.Read("a", kT0).total.executions_started, 1u);
  EXPECT_EQ(window_.Read("b", kT0).total.executions_started, 0u);
  // Past the bound (3), a new namespace is not tracked: memory stays bounded.
  Emit("b", "e2", "execution.started", kT0);
  Emit("c", "e3", "execution.started", kT0);
  Emit("d", "e4", "execution.started", kT0);
  EXPECT_EQ(window_.Read("c", kT0).total.executions_started, 1u);
  EXPECT_EQ(window_.Read("d", kT0).total.executions_started, 0u);
}

TEST_F(Activity, AStalledExecutionIsListedUntilItMoves) {
  Emit("ns", "e1", "execution.stalled", kT0 + 10);
  Emit("ns", "e2", "execution.stalled", kT0 + 5);
  Emit("ns", "e3", "execution.stalled", kT0 + 1);  // past the bound of 2: not listed
  auto v = window_.Read("ns", kT0 + 100);
  ASSERT_EQ(v.stalled.size(), 2u);
  EXPECT_EQ(v.stalled[0].execution_id, "e2");  // the longest stalled first
  EXPECT_EQ(v.stalled[0].workflow, "wf");
  EXPECT_EQ(v.stalled[1].execution_id, "e1");

  Emit("ns", "e1", "step.slow", kT0 + 20, "a");  // a warning is not a move
  EXPECT_EQ(window_.Read("ns", kT0 + 100).stalled.size(), 2u);
  Emit("ns", "e2", "step.progress", kT0 + 30, "a");
  v = window_.Read("ns", kT0 + 100);
  ASSERT_EQ(v.stalled.size(), 1u);
  EXPECT_EQ(v.stalled[0].execution_id, "e1");
}

}  // namespace
}  // namespace baton::server
