// The engine holds a running execution's record in parts (ExecState: the fields, its
// definition, its origin); every record it writes must still be the whole of it.
#include "support/sim_harness.h"

#include <gtest/gtest.h>

#include <optional>

namespace baton {
namespace {

using testing::Outcome;
using testing::SimHarness;

constexpr const char* kTwoSteps = R"(
name: two
version: 3
steps:
  - {id: a, type: shell, run: a, with: {sim_ms: 10}}
  - {id: b, type: shell, run: b, depends_on: [a], with: {sim_ms: 25}}
)";

std::string StartChildWithKey(SimHarness& h) {
  StartRequest req;
  req.workflow = testing::MustParse(kTwoSteps);
  req.input = Json{{"x", 1}};
  req.parent_id = "parent-1";
  req.parent_step = "deploy";
  req.parent_attempt = 2;
  req.idempotency_key = "order-42";
  return h.Start(req);
}

void ExpectWhole(const ExecutionRecord& r, const std::string& workflow, int version) {
  EXPECT_EQ(r.workflow, workflow);
  EXPECT_EQ(r.version, version);
  ASSERT_NE(r.definition, nullptr);
  EXPECT_NE(r.definition->find("\"sim_ms\""), std::string::npos) << *r.definition;
  EXPECT_EQ(r.input, (Json{{"x", 1}}));
  EXPECT_EQ(r.parent_id, "parent-1");
  EXPECT_EQ(r.parent_step, "deploy");
  EXPECT_EQ(r.parent_attempt, 2);
  EXPECT_EQ(r.idempotency_key, "order-42");
}

TEST(ExecutionRecord, EveryWriteKeepsItsDefinitionAndOrigin) {
  SimHarness h;
  std::string id = StartChildWithKey(h);
  ExpectWhole(h.Execution(id), "two", 3);
  // The engine's own view (Engine::Record, no store read) says the same.
  std::optional<ExecutionRecord> held;
  h.loop->Post([&] { held = h.engine->Record(id); });
  h.loop->RunReady();
  ASSERT_TRUE(held.has_value());
  ExpectWhole(*held, "two", 3);
  // Its record was written again by the turns that ran and finished it.
  h.loop->RunUntilIdle();
  ExecutionRecord done = h.Execution(id);
  ASSERT_EQ(done.status, ExecutionStatus::kCompleted);
  ExpectWhole(done, "two", 3);
}

// What the finish hook is handed is the whole record, lent rather than copied: the
// record written with the finish still has its input and output.
TEST(ExecutionRecord, TheFinishHookSeesTheWholeRecordAndTheStoreStillGetsIt) {
  struct Hook final : FinishHook {
    std::vector<ExecutionRecord> seen;
    std::function<void()> OnFinish(const ExecutionRecord& execution, const WorkflowDef&,
                                   WriteBatch&) override {
      seen.push_back(execution);
      return nullptr;
    }
  } hook;
  EngineOptions options;
  options.finish_hook = &hook;
  SimHarness h(options);
  StartRequest req;
  req.workflow = testing::MustParse(R"(
name: two
version: 3
output: {answer: "{{ steps.a.output.v }}"}
steps:
  - {id: a, type: shell, run: a, with: {sim_ms: 10}}
  - {id: b, type: shell, run: b, depends_on: [a], with: {sim_ms: 25}}
)");
  h.runner->script["a"] = {{10, "", Json{{"v", "forty-two"}}}};
  req.input = Json{{"x", 1}};
  req.parent_id = "parent-1";
  req.parent_step = "deploy";
  req.parent_attempt = 2;
  req.idempotency_key = "order-42";
  std::string id = h.Start(req);
  h.loop->RunUntilIdle();

  ASSERT_EQ(hook.seen.size(), 1u);
  ExpectWhole(hook.seen[0], "two", 3);
  EXPECT_EQ(hook.seen[0].status, ExecutionStatus::kCompleted);
  EXPECT_EQ(hook.seen[0].output, (Json{{"answer", "forty-two"}}));
  ExecutionRecord stored = h.Execution(id);
  ExpectWhole(stored, "two", 3);
  EXPECT_EQ(stored.output, (Json{{"answer", "forty-two"}}));
}

TEST(ExecutionRecord, ARecoveredExecutionKeepsWhatItsRecordSaid) {
  SimHarness h;
  std::string id = StartChildWithKey(h);
  h.loop->RunUntilIdle(h.clock.Now() + 20);  // a is done, b runs
  ASSERT_EQ(h.Step(id, "b").status, StepStatus::kRunning);
  h.Crash();
  // A record whose name and version differ from its snapshot's text (a workflow stored
  // under another name, or renumbered): the record is the truth.
  ExecutionRecord stored = h.Execution(id);
  stored.workflow = "renamed";
  stored.version = 7;
  WriteBatch batch;
  batch.executions.push_back(stored);
  const WriteBatch* batches[] = {&batch};
  ASSERT_TRUE(h.store->Commit(batches).ok());

  h.loop->Post([&] { ASSERT_TRUE(RecoverExecutions(h.store.get(), h.engine.get()).ok()); });
  h.loop->RunUntilIdle();
  ExecutionRecord done = h.Execution(id);
  ASSERT_EQ(done.status, ExecutionStatus::kCompleted);
  ExpectWhole(done, "renamed", 7);
}

// An execution submitted without input holds none in memory (ExecState::Input): what it
// writes, what its templates and its started event see, and what a restart recovers are
// still the empty object, never null.
TEST(ExecutionRecord, AnExecutionWithoutInputKeepsAnEmptyObjectInputEverywhere) {
  SimHarness h;
  const char* yaml = R"(
name: bare
steps:
  - {id: a, type: shell, run: a, with: {seen: "{{ inputs }}", sim_ms: 100}}
  - {id: b, type: shell, run: b, depends_on: [a], with: {seen: "{{ inputs }}"}}
)";
  std::string id = h.StartOnly(yaml);
  h.loop->RunUntilIdle(h.clock.Now() + 10);
  EXPECT_EQ(h.Execution(id).input, Json::object());
  std::optional<ExecutionRecord> held;
  h.loop->Post([&] { held = h.engine->Record(id); });
  h.loop->RunReady();
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->input, Json::object());
  auto events = h.store->GetEvents(id, 0, 100);
  ASSERT_TRUE(events.ok());
  ASSERT_FALSE(events->empty());
  EXPECT_EQ((*events)[0].type, "execution.started");
  EXPECT_EQ((*events)[0].data["input"], Json::object()) << (*events)[0].data.dump();

  h.Crash();
  h.loop->Post([&] { ASSERT_TRUE(RecoverExecutions(h.store.get(), h.engine.get()).ok()); });
  h.loop->RunReady();
  h.loop->RunUntilIdle();
  ExecutionRecord done = h.Execution(id);
  ASSERT_EQ(done.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(done.input, Json::object());
  ASSERT_GE(h.runner->calls.size(), 2u);
  for (const auto& call : h.runner->calls) {
    EXPECT_EQ(call.spec["with"]["seen"], Json::object()) << call.spec.dump();
  }
}

// The engine holds what a record says only at the end or rarely (output, error, end
// time, variables) apart from the rest (HeldRecord): every record it writes, before and
// after a restart, still says all of it.
TEST(ExecutionRecord, ItsLateFieldsAndScalarsSurviveEveryWriteAndARestart) {
  SimHarness h;
  h.runner->script["pick"] = {Outcome(10, "", Json{{"region", "eu"}})};
  h.runner->script["work"] = {Outcome(500, "EXIT_NONZERO")};
  StartRequest req;
  req.workflow = testing::MustParse(R"(
name: late
timeout: 1h
steps:
  - id: pick
    type: shell
    run: pick
    set_vars: {region: "{{ steps.pick.output.region }}"}
  - {id: work, type: shell, run: work, depends_on: [pick]}
)");
  req.input = Json{{"n", 1}};
  req.priority = Priority::kCritical;
  const TimeMs start = h.clock.Now();
  std::string id = h.Start(req);
  h.loop->RunUntilIdle(start + 100);  // pick done, work running
  auto expect_running = [&](const ExecutionRecord& r) {
    EXPECT_EQ(r.status, ExecutionStatus::kRunning);
    EXPECT_EQ(r.priority, 3);
    EXPECT_EQ(r.created_at, start);
    EXPECT_EQ(r.started_at, start);
    EXPECT_EQ(r.deadline, start + 3'600'000);
    EXPECT_EQ(r.vars, (Json{{"region", "eu"}}));
    EXPECT_EQ(r.input, (Json{{"n", 1}}));
    EXPECT_TRUE(r.output.is_null());
    EXPECT_TRUE(r.error.is_null());
    EXPECT_EQ(r.completed_at, 0);
  };
  expect_running(h.Execution(id));
  std::optional<ExecutionRecord> held;
  h.loop->Post([&] { held = h.engine->Record(id); });
  h.loop->RunReady();
  ASSERT_TRUE(held.has_value());
  expect_running(*held);

  h.Crash();
  h.runner->script["work"] = {Outcome(500, "EXIT_NONZERO")};
  h.loop->Post([&] { ASSERT_TRUE(RecoverExecutions(h.store.get(), h.engine.get()).ok()); });
  h.loop->RunReady();
  held.reset();
  h.loop->Post([&] { held = h.engine->Record(id); });
  h.loop->RunReady();
  ASSERT_TRUE(held.has_value());
  expect_running(*held);

  h.loop->RunUntilIdle();
  ExecutionRecord done = h.Execution(id);
  EXPECT_EQ(done.status, ExecutionStatus::kFailed);
  ASSERT_TRUE(done.error.is_object()) << done.error.dump();
  EXPECT_EQ(done.error.value("step", ""), "work") << done.error.dump();
  EXPECT_GT(done.completed_at, start);
  EXPECT_EQ(done.vars, (Json{{"region", "eu"}}));
  EXPECT_EQ(done.priority, 3);
  EXPECT_EQ(done.deadline, start + 3'600'000);
}

}  // namespace
}  // namespace baton
