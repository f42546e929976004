// Concurrency limits: a workflow's `concurrency` (queue, cancel_newest, cancel_oldest)
// and max_running_executions. Executions over a limit wait `queued` in priority, then
// FIFO order; slots come back on completion, cancel, timeout and after a crash.
#include "support/sim_harness.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using testing::Outcome;
using testing::SimHarness;

std::string Deploy(const std::string& policy, const std::string& extra = "") {
  return R"(
name: deploy
inputs:
  customer: {type: string}
concurrency: {limit: 1, key: "{{ inputs.customer }}", policy: )" +
         policy + "}\n" + extra + R"(
steps:
  - {id: work, type: shell, run: work}
)";
}

std::string Start(SimHarness& h, const std::string& yaml, const std::string& customer,
                  std::optional<Priority> priority = std::nullopt) {
  StartRequest req;
  req.workflow = testing::MustParse(yaml);
  req.input = {{"customer", customer}};
  req.priority = priority;
  return h.Start(req);
}

ExecutionStatus StatusOf(SimHarness& h, const std::string& id) {
  return h.Execution(id).status;
}

TEST(EngineConcurrency, OverTheLimitAnExecutionWaitsQueuedUntilASlotFrees) {
  SimHarness h;
  h.runner->script["work"] = {Outcome(10'000)};
  const std::string yaml = Deploy("queue");
  std::string a = Start(h, yaml, "acme");
  std::string b = Start(h, yaml, "acme");
  std::string other = Start(h, yaml, "globex");  // another key: not limited by acme's
  h.loop->RunUntilIdle(h.clock.Now() + 1'000);
  EXPECT_EQ(StatusOf(h, a), ExecutionStatus::kRunning);
  EXPECT_EQ(StatusOf(h, b), ExecutionStatus::kQueued);
  EXPECT_EQ(StatusOf(h, other), ExecutionStatus::kRunning);
  EXPECT_EQ(h.Step(b, "work").status, StepStatus::kPending);
  EXPECT_EQ(h.engine->Stats().executions_queued, 1u);

  // Why: the key and who holds it.
  std::vector<StepWait> why;
  h.loop->Post([&] { why = *h.engine->Why(b); });
  h.loop->RunReady();
  ASSERT_EQ(why.size(), 1u);
  EXPECT_EQ(why[0].kind, "concurrency");
  EXPECT_EQ(why[0].breaker, "acme");
  EXPECT_EQ(why[0].steps, std::vector<std::string>{a});

  h.loop->RunUntilIdle();
  EXPECT_EQ(StatusOf(h, a), ExecutionStatus::kCompleted);
  EXPECT_EQ(StatusOf(h, b), ExecutionStatus::kCompleted);
  EXPECT_GE(h.Step(b, "work").started_at, h.Execution(a).completed_at);
  EXPECT_EQ(h.engine->Stats().executions_queued, 0u);
  std::vector<std::string> types;
  for (const auto& e : h.log.events)
    if (e.execution_id == b) types.push_back(e.type);
  EXPECT_NE(std::find(types.begin(), types.end(), "execution.queued"), types.end());
  EXPECT_NE(std::find(types.begin(), types.end(), "execution.dequeued"), types.end());
}

TEST(EngineConcurrency, QueuedExecutionsStartByPriorityThenInOrder) {
  SimHarness h;
  h.runner->script["work"] = {Outcome(1'000)};
  const std::string yaml = Deploy("queue");
  std::string first = Start(h, yaml, "acme");
  std::string low = Start(h, yaml, "acme", Priority::kLow);
  std::string normal1 = Start(h, yaml, "acme");
  std::string normal2 = Start(h, yaml, "acme");
  std::string critical = Start(h, yaml, "acme", Priority::kCritical);
  h.loop->RunUntilIdle();
  std::vector<std::pair<TimeMs, std::string>> order;
  for (const std::string& id : {first, low, normal1, normal2, critical}) {
    order.emplace_back(h.Step(id, "work").started_at, id);
  }
  std::sort(order.begin(), order.end());
  std::vector<std::string> ids;
  for (auto& [t, id] : order) ids.push_back(id);
  EXPECT_EQ(ids, (std::vector<std::string>{first, critical, normal1, normal2, low}));
}

TEST(EngineConcurrency, CancelNewestRefusesTheNewExecution) {
  SimHarness h;
  h.runner->script["work"] = {Outcome(10'000)};
  std::string a = Start(h, Deploy("cancel_newest"), "acme");
  std::string b = Start(h, Deploy("cancel_newest"), "acme");
  h.loop->RunUntilIdle();
  EXPECT_EQ(StatusOf(h, a), ExecutionStatus::kCompleted);
  ExecutionRecord refused = h.Execution(b);
  EXPECT_EQ(refused.status, ExecutionStatus::kCancelled);
  EXPECT_EQ(refused.error["code"], errc::kConcurrencyLimit);
  EXPECT_EQ(h.runner->CallsFor("work"), 1);
}

TEST(EngineConcurrency, CancelOldestCancelsTheRunningOneAndStartsTheNew) {
  SimHarness h;
  h.runner->script["work"] = {Outcome(10'000)};
  std::string a = Start(h, Deploy("cancel_oldest"), "acme");
  h.loop->RunUntilIdle(h.clock.Now() + 1'000);
  std::string b = Start(h, Deploy("cancel_oldest"), "acme");
  h.loop->RunUntilIdle();
  ExecutionRecord old = h.Execution(a);
  EXPECT_EQ(old.status, ExecutionStatus::kCancelled);
  EXPECT_NE(old.error["message"].get<std::string>().find("replaced by execution " + b),
            std::string::npos);
  EXPECT_EQ(StatusOf(h, b), ExecutionStatus::kCompleted);
}

TEST(EngineConcurrency, CancelAndTimeoutReturnTheSlot) {
  SimHarness h;
  h.runner->script["work"] = {Outcome(600'000)};
  const std::string yaml = Deploy("queue", "timeout: 1m");
  std::string a = Start(h, yaml, "acme");
  std::string b = Start(h, yaml, "acme");
  std::string c = Start(h, yaml, "acme");
  // Cancelling a queued one frees nothing but its place.
  h.loop->Post([&] { ASSERT_TRUE(h.engine->Cancel(b, "not needed").ok()); });
  h.loop->RunReady();
  EXPECT_EQ(StatusOf(h, b), ExecutionStatus::kCancelled);
  EXPECT_EQ(StatusOf(h, c), ExecutionStatus::kQueued);
  // a times out after a minute: c gets the slot, and its own minute starts then.
  h.loop->RunUntilIdle(h.clock.Now() + 61'000);
  EXPECT_EQ(StatusOf(h, a), ExecutionStatus::kTimeout);
  EXPECT_EQ(StatusOf(h, c), ExecutionStatus::kRunning);
  h.loop->RunUntilIdle();
  EXPECT_EQ(StatusOf(h, c), ExecutionStatus::kTimeout);
  EXPECT_EQ(h.engine->Stats().executions_queued, 0u);
  EXPECT_EQ(h.runner->CallsFor("work"), 2);
}

TEST(EngineConcurrency, AfterACrashTheQueueIsTheSameAndNoSlotLeaks) {
  SimHarness h;
  h.runner->script["work"] = {Outcome(10'000)};
  const std::string yaml = Deploy("queue");
  std::string a = Start(h, yaml, "acme");
  std::string b = Start(h, yaml, "acme");
  std::string c = Start(h, yaml, "acme");
  h.loop->RunUntilIdle(h.clock.Now() + 1'000);
  h.Crash();
  h.runner->script["work"] = {Outcome(10'000)};
  h.loop->Post([&] { ASSERT_TRUE(RecoverExecutions(h.store.get(), h.engine.get()).ok()); });
  h.loop->RunUntilIdle(h.clock.Now() + 1'000);
  // a lost its attempt and runs it again; b and c still wait, in order.
  EXPECT_EQ(StatusOf(h, a), ExecutionStatus::kRunning);
  EXPECT_EQ(StatusOf(h, b), ExecutionStatus::kQueued);
  EXPECT_EQ(StatusOf(h, c), ExecutionStatus::kQueued);
  h.loop->RunUntilIdle();
  for (const std::string& id : {a, b, c}) EXPECT_EQ(StatusOf(h, id), ExecutionStatus::kCompleted);
  EXPECT_LT(h.Step(b, "work").started_at, h.Step(c, "work").started_at);
  EXPECT_GE(h.Step(c, "work").started_at, h.Execution(b).completed_at);
}

TEST(EngineConcurrency, MaxRunningExecutionsQueuesTopLevelExecutionsOnly) {
  EngineOptions o;
  o.max_running_executions = 1;
  o.child_workflows = [](const std::string&, const std::string& name,
                         int) -> Result<std::shared_ptr<const WorkflowDef>> {
    if (name != "leaf") return Status(errc::kNotFound, "no " + name);
    return testing::MustParse("name: leaf\nsteps: [{id: work, type: shell, run: leaf}]\n");
  };
  SimHarness h(o);
  h.runner->script["work"] = {Outcome(1'000)};
  const std::string parent = "name: parent\nsteps: [{id: child, type: workflow, workflow: leaf}]\n";
  std::string a = h.StartOnly(parent);
  std::string b = h.StartOnly(parent);
  h.loop->RunUntilIdle(h.clock.Now() + 100);
  EXPECT_EQ(StatusOf(h, a), ExecutionStatus::kRunning);  // and its child runs too
  EXPECT_EQ(StatusOf(h, b), ExecutionStatus::kQueued);
  std::vector<StepWait> why;
  h.loop->Post([&] { why = *h.engine->Why(b); });
  h.loop->RunReady();
  ASSERT_EQ(why.size(), 1u);
  EXPECT_EQ(why[0].kind, "max_running");
  h.loop->RunUntilIdle();
  EXPECT_EQ(StatusOf(h, a), ExecutionStatus::kCompleted);
  EXPECT_EQ(StatusOf(h, b), ExecutionStatus::kCompleted);
}

// The engine counts its live executions by status as they change (the server's
// baton_executions gauge reads the counts, and keeps nothing per execution).
TEST(EngineConcurrency, LiveCountsFollowRunningQueuedPausedAndFinished) {
  SimHarness h;
  h.runner->script["work"] = {Outcome(10'000)};
  const std::string yaml = Deploy("queue");
  auto live = [&] {
    const LiveExecutions n = h.engine->LiveCounts();
    return std::vector<int64_t>{n.running, n.queued, n.paused};
  };
  EXPECT_EQ(live(), (std::vector<int64_t>{0, 0, 0}));
  Start(h, yaml, "acme");
  Start(h, yaml, "acme");  // queued behind the first
  std::string other = Start(h, yaml, "globex");
  h.loop->RunUntilIdle(h.clock.Now() + 1'000);
  EXPECT_EQ(live(), (std::vector<int64_t>{2, 1, 0}));  // running, queued, paused

  Status s;
  h.loop->Post([&] { s = h.engine->Pause(other); });
  h.loop->RunReady();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(live(), (std::vector<int64_t>{1, 1, 1}));
  h.loop->Post([&] { s = h.engine->Resume(other); });
  h.loop->RunReady();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(live(), (std::vector<int64_t>{2, 1, 0}));

  h.loop->RunUntilIdle();  // the first finishes, the queued one runs, then all finish
  EXPECT_EQ(live(), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(h.engine->ActiveCount(), 0u);
}

TEST(EngineConcurrency, AQueuedExecutionCannotBePaused) {
  SimHarness h;
  h.runner->script["work"] = {Outcome(10'000)};
  Start(h, Deploy("queue"), "acme");
  std::string b = Start(h, Deploy("queue"), "acme");
  Status paused;
  h.loop->Post([&] { paused = h.engine->Pause(b); });
  h.loop->RunReady();
  EXPECT_EQ(paused.code(), errc::kConflict);
}

}  // namespace
}  // namespace baton
