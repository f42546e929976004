// Stalled executions on the simulated clock: `execution.stalled` once per stretch of
// silence past EngineOptions::stall_after, never for waiting by design.
#include "support/sim_harness.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using testing::Outcome;
using testing::SimHarness;

std::vector<EventRecord> Stalls(SimHarness& h, const std::string& id) {
  std::vector<EventRecord> out;
  for (const EventRecord& e : *h.store->GetEvents(id, 0, 0)) {
    if (e.type == "execution.stalled") out.push_back(e);
  }
  return out;
}

EngineOptions StallAfter(int64_t ms) {
  EngineOptions o;
  o.stall_after = Duration(ms);
  return o;
}

TEST(Stalls, EachStretchOfSilenceIsReportedOnce) {
  SimHarness h(StallAfter(60'000));
  // Two steps silent for 5 minutes each: the first one's completion is activity.
  h.runner->script["train"] = {{300'000}};
  h.runner->script["eval"] = {{300'000}};
  std::string id = h.Run(R"(
name: train
steps:
  - {id: prep, type: noop}
  - {id: train, type: shell, run: train, depends_on: [prep]}
  - {id: eval, type: shell, run: eval, depends_on: [train]}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);  // stalled is not failed
  auto stalls = Stalls(h, id);
  ASSERT_EQ(stalls.size(), 2u);  // once per stretch, not at every sweep
  EXPECT_EQ(stalls[1].data["waiting"][0]["step_id"], "eval");
  EXPECT_GE(stalls[0].data["idle_ms"].get<int64_t>(), 60'000);
  EXPECT_LE(stalls[0].data["idle_ms"].get<int64_t>(), 75'000);  // a quarter late at most
  EXPECT_EQ(stalls[0].data["stall_after_ms"], 60'000);
  EXPECT_EQ(stalls[0].data["waiting"][0]["step_id"], "train");
  EXPECT_EQ(stalls[0].data["waiting"][0]["kind"], "running");
  EXPECT_EQ(h.engine->Stats().executions_stalled, 2u);
}

TEST(Stalls, ProgressIsActivity) {
  SimHarness h(StallAfter(60'000));
  Outcome busy{300'000};
  busy.progress_every_ms = 20'000;
  h.runner->script["train"] = {busy};
  std::string id = h.Run(R"(
name: train
steps:
  - {id: train, type: shell, run: train}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_TRUE(Stalls(h, id).empty());
}

TEST(Stalls, WaitingForASignalATimerOrARetryIsNotAStall) {
  SimHarness h(StallAfter(60'000));
  h.runner->script["flaky"] = {{10, "EXIT_NONZERO"}, {10}};
  std::string id = h.Run(R"(
name: waits
steps:
  - {id: nap, type: wait, duration: 10m}
  - {id: flaky, type: shell, run: flaky, depends_on: [nap],
     retry: {max_attempts: 2, initial_delay: 10m}}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_TRUE(Stalls(h, id).empty());
}

TEST(Stalls, OffByDefault) {
  SimHarness h;
  h.runner->script["train"] = {{10'000'000}};
  std::string id = h.Run(R"(
name: train
steps:
  - {id: train, type: shell, run: train}
)");
  EXPECT_TRUE(Stalls(h, id).empty());
}

}  // namespace
}  // namespace baton
