// Signals: a `wait` step on a signal completes with the payload of the signal that
// reaches it, whether the signal came before or after the step began to wait, and
// across a crash.
#include "support/sim_harness.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using testing::SimHarness;

constexpr const char* kApproval = R"(
name: release
steps:
  - {id: build, type: shell, run: build}
  - id: approve
    type: wait
    signal: approve
    timeout: 1h
    depends_on: [build]
    schema: {type: object, required: [by], properties: {by: {type: string}}}
  - {id: ship, type: shell, run: "ship {{ steps.approve.output.by }}", depends_on: [approve]}
)";

Result<SignalRecord> Send(SimHarness& h, const std::string& id, const std::string& name,
                          Json payload) {
  Result<SignalRecord> out = Status(errc::kConflict, "not run");
  h.loop->Post([&] { out = h.engine->Signal(id, name, std::move(payload)); });
  h.loop->RunReady();
  return out;
}

int Count(const std::vector<std::string>& types, const std::string& type) {
  return static_cast<int>(std::count(types.begin(), types.end(), type));
}

TEST(EngineSignal, ASignalCompletesTheWaitingStepWithItsPayload) {
  SimHarness h;
  std::string id = h.StartOnly(kApproval);
  h.loop->RunUntilIdle(h.clock.Now() + 60'000);
  ASSERT_EQ(h.Step(id, "approve").status, StepStatus::kRunning);
  EXPECT_EQ(Count(h.log.TypesFor("approve"), "step.waiting"), 1);
  EXPECT_EQ(h.runner->CallsFor("ship"), 0);

  auto sent = Send(h, id, "approve", {{"by", "ana"}});
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  EXPECT_EQ(sent->seq, 1);
  EXPECT_EQ(sent->consumed_by, "approve");  // taken at once: the step was waiting
  h.loop->RunUntilIdle();

  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "approve").output, Json({{"by", "ana"}}));
  ASSERT_EQ(h.runner->CallsFor("ship"), 1);
  EXPECT_EQ(h.runner->calls.back().spec["args"][0], Json("ana"));
  auto stored = *h.store->ListSignals(id);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].consumed_by, "approve");
  EXPECT_EQ(stored[0].payload, Json({{"by", "ana"}}));
  EXPECT_GT(stored[0].consumed_at, 0);
}

TEST(EngineSignal, ASignalSentBeforeTheStepWaitsIsKeptForIt) {
  SimHarness h;
  h.runner->script["build"] = {{600'000}};  // ten minutes of build first
  std::string id = h.StartOnly(kApproval);
  auto sent = Send(h, id, "approve", {{"by", "early"}});
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  EXPECT_TRUE(sent->consumed_by.empty());
  EXPECT_EQ((*h.store->ListSignals(id))[0].consumed_by, "");  // durable before it is used
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "approve").output, Json({{"by", "early"}}));
  EXPECT_EQ(Count(h.log.TypesFor("approve"), "step.waiting"), 0);
}

TEST(EngineSignal, RefusesWhatNoStepWillTake) {
  SimHarness h;
  std::string id = h.StartOnly(kApproval);
  h.loop->RunUntilIdle(h.clock.Now() + 100);

  auto typo = Send(h, id, "aprove", {{"by", "x"}});
  EXPECT_EQ(typo.status().code(), errc::kValidation);
  EXPECT_EQ(typo.status().message(),
            "workflow 'release' has no step waiting for signal 'aprove' (it waits for: approve)");
  auto wrong = Send(h, id, "approve", {{"by", 7}});
  EXPECT_EQ(wrong.status().code(), errc::kValidation);
  EXPECT_NE(wrong.status().message().find("does not match the schema of step 'approve'"),
            std::string::npos)
      << wrong.status().message();
  EXPECT_EQ(Send(h, "nope", "approve", nullptr).status().code(), errc::kNotFound);
  EXPECT_TRUE(h.store->ListSignals(id)->empty());  // nothing refused was kept

  ASSERT_TRUE(Send(h, id, "approve", {{"by", "ana"}}).ok());
  h.loop->RunUntilIdle();
  ASSERT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(Send(h, id, "approve", {{"by", "ana"}}).status().code(), errc::kNotFound);
}

TEST(EngineSignal, AStepThatWaitsTooLongTimesOut) {
  SimHarness h;
  const TimeMs start = h.clock.Now();
  std::string id = h.Run(kApproval);
  ExecutionRecord e = h.Execution(id);
  EXPECT_EQ(e.status, ExecutionStatus::kFailed);
  StepRecord approve = h.Step(id, "approve");
  EXPECT_EQ(approve.status, StepStatus::kTimeout);
  EXPECT_GE(approve.completed_at - start, 3'600'000);
  EXPECT_LT(approve.completed_at - start, 3'700'000);
  EXPECT_EQ(h.runner->CallsFor("ship"), 0);
}

TEST(EngineSignal, BoundsTheSignalsNoStepHasTaken) {
  SimHarness h;
  h.runner->script["build"] = {{600'000}};
  std::string id = h.StartOnly(kApproval);
  for (size_t i = 0; i < Engine::kMaxPendingSignals; ++i) {
    ASSERT_TRUE(Send(h, id, "approve", {{"by", std::to_string(i)}}).ok()) << i;
  }
  auto over = Send(h, id, "approve", {{"by", "one too many"}});
  EXPECT_EQ(over.status().code(), errc::kTooManySignals);
  h.loop->RunUntilIdle();
  // The first one sent is the one taken.
  EXPECT_EQ(h.Step(id, "approve").output, Json({{"by", "0"}}));
}

TEST(EngineSignal, AWaitingStepWaitsAgainAfterACrashAndTakesTheSignalOnce) {
  SimHarness h;
  std::string id = h.StartOnly(kApproval);
  h.loop->RunUntilIdle(h.clock.Now() + 60'000);
  ASSERT_EQ(h.Step(id, "approve").status, StepStatus::kRunning);

  h.Crash();
  h.loop->Post([&] { ASSERT_TRUE(RecoverExecutions(h.store.get(), h.engine.get()).ok()); });
  h.loop->RunReady();
  EXPECT_EQ(Count(h.log.TypesFor("approve"), "step.reattached"), 1);
  ASSERT_TRUE(Send(h, id, "approve", {{"by", "after"}}).ok());
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "approve").output, Json({{"by", "after"}}));
  EXPECT_EQ(h.Step(id, "approve").attempts, 1);  // the same attempt, not a new one
  EXPECT_EQ(h.runner->CallsFor("ship"), 1);
}

TEST(EngineSignal, APendingSignalSurvivesACrash) {
  SimHarness h;
  h.runner->script["build"] = {{600'000}};
  std::string id = h.StartOnly(kApproval);
  ASSERT_TRUE(Send(h, id, "approve", {{"by", "kept"}}).ok());

  h.Crash();  // build was running: it restarts; the signal waits in the store
  h.loop->Post([&] { ASSERT_TRUE(RecoverExecutions(h.store.get(), h.engine.get()).ok()); });
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "approve").output, Json({{"by", "kept"}}));
  auto stored = *h.store->ListSignals(id);
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].consumed_by, "approve");
}

TEST(EngineSignal, AFailedWaitTakesASignalSentLaterOnRetry) {
  SimHarness h;
  std::string id = h.Run(kApproval);  // times out
  ASSERT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);
  Status retried;
  h.loop->Post([&] {
    auto events = *h.store->GetEvents(id, 0, 0);
    retried = h.engine->Retry(h.Execution(id), *h.store->GetSteps(id), *h.store->GetAttempts(id),
                              events.back().seq, *h.store->ListSignals(id));
  });
  h.loop->RunReady();
  ASSERT_TRUE(retried.ok()) << retried.ToString();
  h.loop->RunUntilIdle(h.clock.Now() + 1000);
  ASSERT_TRUE(Send(h, id, "approve", {{"by", "second try"}}).ok());
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.runner->CallsFor("build"), 1);
}

}  // namespace
}  // namespace baton
