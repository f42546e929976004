// EngineOptions::write_step_rows = false (`baton run --ephemeral` without --json): the
// engine writes no step or attempt records, and runs, retries and reports exactly as it
// does with them.
#include <baton/engine.h>

#include "support/sim_harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace baton {
namespace {

using testing::Outcome;
using testing::SimHarness;

constexpr const char* kWorkflow = R"(
name: w
steps:
  - {id: first, type: noop}
  - id: flaky
    type: shell
    run: "true"
    depends_on: [first]
    retry: {max_attempts: 3, initial_delay: 1s}
  - {id: last, type: noop, depends_on: [flaky]}
)";

struct RunOutcome {
  ExecutionRecord execution;
  size_t step_rows = 0;
  size_t attempt_rows = 0;
  std::vector<std::string> event_types;
  std::vector<int> percents;
  std::vector<TimeMs> attempt_began;
};

RunOutcome RunWith(bool write_step_rows) {
  EngineOptions options;
  options.write_step_rows = write_step_rows;
  SimHarness h(options);
  h.runner->script["flaky"] = {Outcome(10, "EXIT_NONZERO"), Outcome(10, "", {{"ok", true}})};
  const std::string id = h.Run(kWorkflow);
  RunOutcome out;
  out.execution = h.Execution(id);
  out.step_rows = h.store->GetSteps(id)->size();
  out.attempt_rows = h.store->GetAttempts(id)->size();
  for (size_t i = 0; i < h.log.events.size(); ++i) {
    out.event_types.push_back(h.log.events[i].type + " " + h.log.events[i].step_id);
    out.percents.push_back(h.log.progress[i].percent);
    out.attempt_began.push_back(h.log.progress[i].attempt_began);
  }
  return out;
}

TEST(StepRows, LeftOutTheRunIsTheSameWithoutStepOrAttemptRecords) {
  const RunOutcome with = RunWith(true);
  const RunOutcome without = RunWith(false);

  EXPECT_EQ(with.execution.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(with.step_rows, 3u);
  EXPECT_EQ(with.attempt_rows, 4u);  // first, flaky twice, last

  EXPECT_EQ(without.execution.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(without.execution.completed_at, with.execution.completed_at);
  EXPECT_EQ(without.step_rows, 0u);
  EXPECT_EQ(without.attempt_rows, 0u);
  // The same events, with the same progress and the same attempt starts.
  EXPECT_EQ(without.event_types, with.event_types);
  EXPECT_EQ(without.percents, with.percents);
  EXPECT_EQ(without.attempt_began, with.attempt_began);
  EXPECT_NE(std::find(with.event_types.begin(), with.event_types.end(), "step.retrying flaky"),
            with.event_types.end());
}

}  // namespace
}  // namespace baton
