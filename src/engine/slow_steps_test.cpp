// Stuck-work detection on the simulated clock: step.slow past expected_duration, or past
// three times the p95 of the step's recent successful attempts.
#include "support/sim_harness.h"

#include <gtest/gtest.h>

#include <deque>

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

// A runner whose attempts first wait (for a worker, say) and then run: Started() comes
// when the work begins, as the coordinator's runners report a worker's ack.
class QueuedRunner final : public Runner {
 public:
  explicit QueuedRunner(EventLoop* loop) : loop_(loop) {}
  int64_t wait_ms = 0;
  int64_t run_ms = 0;
  bool ReportsStart() const override { return true; }
  void Start(const RunRequest&, RunCallbacks cb) override {
    loop_->ScheduleAfter(Duration(wait_ms), [this, cb] {
      cb.Started();
      loop_->ScheduleAfter(Duration(run_ms), [cb] { cb.Done(RunResult{}); });
    });
  }
  void Cancel(const std::string&) override {}

 private:
  EventLoop* loop_;
};

// The simulated engine with its command steps run by a QueuedRunner.
struct QueuedHarness {
  SimHarness h;
  QueuedRunner queued{h.loop.get()};
  QueuedHarness() { h.engine->SetRunner(StepType::kCommand, &queued); }
};

// Regression: a command step that waited in a backlog for a worker was reported slow
// while it waited (the watch ran from the dispatch): in a bench of 40,000 jobs through
// one worker, 21,251 step.slow events for steps that ran a millisecond each.
TEST(SlowSteps, WaitingForAWorkerIsNotRunningSlowly) {
  QueuedHarness q;
  auto& [h, queued] = q;
  constexpr const char* kDeploy = R"(
name: deploy
steps:
  - {id: push, type: command, command: deploy.push, expected_duration: 10s}
)";
  queued.wait_ms = 60'000;  // a minute in the queue, then 5 s of work
  queued.run_ms = 5'000;
  std::string id = h.Run(kDeploy);
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_TRUE(SlowEvents(h, id).empty());

  queued.run_ms = 30'000;  // the work itself overruns: reported 10 s after it began
  id = h.Run(kDeploy);
  auto slow = SlowEvents(h, id);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].data["running_ms"], 10'000);
  TimeMs started_at = -1;  // (a copy: the events read are gone after the loop)
  for (const EventRecord& e : *h.store->GetEvents(id, 0, 0)) {
    if (e.type == "step.started") started_at = e.time;
  }
  ASSERT_GE(started_at, 0);
  EXPECT_EQ(slow[0].time, started_at + 10'000);
}

// The step's usual duration is its work, not its wait: five quick runs behind a long
// queue make a 3 s run of the same step usual, and a 10 s run slow.
TEST(SlowSteps, TheHistoryOfAStepThatWaitsForAWorkerIsItsWork) {
  QueuedHarness q;
  auto& [h, queued] = q;
  constexpr const char* kEtl = R"(
name: etl
steps:
  - {id: load, type: command, command: etl.load}
)";
  queued.wait_ms = 100'000;
  queued.run_ms = 2'000;
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(SlowEvents(h, h.Run(kEtl)).empty());
  // p95 2 s: past 6 s of work is slow, however long the wait before it.
  queued.run_ms = 3'000;
  EXPECT_TRUE(SlowEvents(h, h.Run(kEtl)).empty());
  queued.run_ms = 10'000;
  auto slow = SlowEvents(h, h.Run(kEtl));
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].data["p95_ms"], 3'000);
  EXPECT_EQ(slow[0].data["threshold_ms"], 9'000);
}

// A runner whose attempts take the next of `durations` each (first in, first out).
class ListedRunner final : public Runner {
 public:
  explicit ListedRunner(EventLoop* loop) : loop_(loop) {}
  std::deque<int64_t> durations;
  void Start(const RunRequest&, RunCallbacks cb) override {
    const int64_t ms = durations.empty() ? 1 : durations.front();
    if (!durations.empty()) durations.pop_front();
    cb.Started();
    loop_->ScheduleAfter(Duration(ms), [cb] { cb.Done(RunResult{}); });
  }
  void Cancel(const std::string&) override {}

 private:
  EventLoop* loop_;
};

// The bar is what the step's history says when the watch comes due, not when it was armed:
// ten 5 s runs that end while a long one runs raise the p95 from 2 s to 5 s, so the long
// run is not slow at 6 s (the old bar) but at 15 s, and the event says why.
TEST(SlowSteps, AWatchComingDueAfterTheHistoryGrewSlowerMovesToTheNewBar) {
  SimHarness h;
  ListedRunner listed(h.loop.get());
  h.engine->SetRunner(StepType::kCommand, &listed);  // (no local capacity: all run at once)
  constexpr const char* kEtl = R"(
name: etl
steps:
  - {id: load, type: command, command: etl.load}
)";
  for (int i = 0; i < 5; ++i) {
    listed.durations = {2'000};
    EXPECT_TRUE(SlowEvents(h, h.Run(kEtl)).empty());
  }
  listed.durations = {20'000};
  const TimeMs began = h.clock.Now();
  const std::string long_run = h.StartOnly(kEtl);
  for (int i = 0; i < 10; ++i) listed.durations.push_back(5'000);
  for (int i = 0; i < 10; ++i) h.StartOnly(kEtl);
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(long_run).status, ExecutionStatus::kCompleted);
  auto slow = SlowEvents(h, long_run);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0].data["p95_ms"], 5'000);
  EXPECT_EQ(slow[0].data["samples"], 15);
  EXPECT_EQ(slow[0].data["threshold_ms"], 15'000);
  EXPECT_EQ(slow[0].data["running_ms"], 15'000);
  EXPECT_EQ(slow[0].time, began + 15'000);
  EXPECT_EQ(h.engine->Stats().steps_slow, 1u);
}

// Many attempts watched at once, each from its own start, through one deadline heap: the
// slow ones are reported at their own bar, the others not at all.
TEST(SlowSteps, ManyWatchedAttemptsEachFireAtTheirOwnTime) {
  SimHarness h;
  ListedRunner listed(h.loop.get());
  h.engine->SetRunner(StepType::kCommand, &listed);
  constexpr const char* kJob = R"(
name: job
steps:
  - {id: work, type: command, command: job.work, expected_duration: 10s}
)";
  std::vector<std::string> ids;
  std::vector<TimeMs> began;
  for (int i = 0; i < 200; ++i) {
    listed.durations = {i % 2 ? 12'000 : 9'000};  // odd ones overrun their 10 s
    began.push_back(h.clock.Now());
    ids.push_back(h.StartOnly(kJob));
    const TimeMs next = h.clock.Now() + 37;  // the next one starts 37 ms later
    h.loop->RunUntilIdle(next);
    h.clock.Advance(Duration(next - h.clock.Now()));
  }
  h.loop->RunUntilIdle();
  for (size_t i = 0; i < ids.size(); ++i) {
    auto slow = SlowEvents(h, ids[i]);
    if (i % 2 == 0) {
      EXPECT_TRUE(slow.empty()) << i;
      continue;
    }
    ASSERT_EQ(slow.size(), 1u) << i;
    EXPECT_EQ(slow[0].time, began[i] + 10'000) << i;
    EXPECT_EQ(slow[0].data["running_ms"], 10'000) << i;
  }
  EXPECT_EQ(h.engine->Stats().steps_slow, 100u);
}

// Regression (a review of the move to the deadline heap): the watch measured the run on
// the wall clock when it came due, so a wall clock set back 2 h one second into a run
// re-armed it 2 h later (never reported: the run ends at 60 s), and one set forward
// reported "running 2 h". The run is timed on the monotonic clock, as timeouts are.
TEST(SlowSteps, AStepOfTheWallClockNeitherDelaysNorHastensTheReport) {
  for (const Duration jump : {Duration(-2 * 3'600'000), Duration(2 * 3'600'000)}) {
    SimHarness h;
    h.runner->script["train"] = {{60'000}};
    const TimeMs began = h.clock.Now();
    const std::string id = h.StartOnly(R"(
name: train
steps:
  - {id: train, type: shell, run: train, expected_duration: 10s}
)");
    h.loop->RunUntilIdle(began + 1'000);
    h.clock.Advance(Duration(began + 1'000 - h.clock.Now()));
    h.clock.JumpWall(jump);
    h.loop->RunUntilIdle();
    EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
    auto slow = SlowEvents(h, id);
    ASSERT_EQ(slow.size(), 1u) << jump.count();
    EXPECT_EQ(slow[0].data["running_ms"], 10'000) << jump.count();
    EXPECT_EQ(slow[0].time, began + 10'000 + jump.count()) << jump.count();
  }
}

}  // namespace
}  // namespace baton
