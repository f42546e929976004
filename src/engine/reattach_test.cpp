// Recovery of attempts whose work lives outside the process (remote workers): the engine
// re-attaches them to a runner that CanReattach() instead of failing them ENGINE_RESTART.
#include "support/sim_harness.h"

namespace baton {
namespace {

using testing::SimHarness;

// Holds every attempt until the test finishes it; can take attempts over after a restart.
class HeldRunner final : public Runner {
 public:
  std::vector<RunRequest> started, reattached;
  std::map<std::string, RunCallbacks> live;  // by assignment id

  void Start(const RunRequest& req, RunCallbacks cb) override {
    started.push_back(req);
    live[req.assignment_id] = std::move(cb);
  }
  void Cancel(const std::string& id) override {
    auto it = live.find(id);
    if (it == live.end()) return;
    auto done = std::move(it->second);
    live.erase(it);
    RunResult r;
    r.status = Status(errc::kCancelled, "cancelled");
    done.Done(std::move(r));
  }
  bool CanReattach() const override { return true; }
  void Reattach(const RunRequest& req, RunCallbacks cb) override {
    reattached.push_back(req);
    live[req.assignment_id] = std::move(cb);
  }
  void Finish(const std::string& id, Json output) {
    auto done = std::move(live.at(id));
    live.erase(id);
    RunResult r;
    r.output = std::move(output);
    done.Done(std::move(r));
  }
};

constexpr const char* kWorkflow = R"(
name: remote
inputs: {model: {type: string, required: true}}
steps:
  - {id: prep, type: shell, run: "true"}
  - id: download
    type: command
    command: model.download
    data: {model: "{{ inputs.model }}"}
    timeout: 1h
    depends_on: [prep]
)";

struct Fixture {
  SimHarness h;
  std::unique_ptr<HeldRunner> remote = std::make_unique<HeldRunner>();

  Fixture() { h.engine->SetRunner(StepType::kCommand, remote.get()); }
  void CrashAndRecover() {
    h.Crash();
    remote = std::make_unique<HeldRunner>();
    h.engine->SetRunner(StepType::kCommand, remote.get());
    h.loop->Post([&] {
      auto ids = RecoverExecutions(h.store.get(), h.engine.get());
      ASSERT_TRUE(ids.ok()) << ids.status().ToString();
    });
    h.loop->RunReady();
  }
};

TEST(Reattach, ARunningRemoteAttemptIsTakenOverNotRestarted) {
  Fixture f;
  std::string id = f.h.StartOnly(kWorkflow, {{"model", "llama"}});
  f.h.loop->RunUntilIdle(f.h.clock.Now() + 100);
  ASSERT_EQ(f.remote->started.size(), 1u);
  const std::string assignment = f.remote->started[0].assignment_id;
  f.CrashAndRecover();
  ASSERT_EQ(f.remote->reattached.size(), 1u);
  const RunRequest& again = f.remote->reattached[0];
  EXPECT_EQ(again.assignment_id, assignment);  // the same dispatch: its result still counts
  EXPECT_EQ(again.attempt, 1);
  EXPECT_EQ((*again.spec)["data"]["model"], "llama");  // rendered again, identically
  EXPECT_EQ((*again.spec)["command"], "model.download");
  f.remote->Finish(assignment, Json{{"path", "/m"}});
  f.h.loop->RunUntilIdle();
  EXPECT_EQ(f.h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(f.h.Step(id, "download").output["path"], "/m");
  EXPECT_EQ(f.h.Step(id, "download").attempts, 1);
  for (const auto& a : *f.h.store->GetAttempts(id)) {
    EXPECT_TRUE(a.error.is_null()) << a.error.dump();  // no ENGINE_RESTART attempt
  }
  auto types = f.h.log.TypesFor("download");
  EXPECT_NE(std::find(types.begin(), types.end(), "step.reattached"), types.end());
}

// The callbacks find their execution from the assignment id's first characters (every
// id the engine makes begins with the execution's): one stored in another form, as a
// store written by another version may hold, is reported against its execution too.
TEST(Reattach, AnAttemptStoredUnderAnIdOfAnotherFormIsTakenOver) {
  Fixture f;
  std::string id = f.h.StartOnly(kWorkflow, {{"model", "llama"}});
  f.h.loop->RunUntilIdle(f.h.clock.Now() + 100);
  ASSERT_EQ(f.remote->started.size(), 1u);
  f.h.Crash();
  StepRecord step = f.h.Step(id, "download");
  step.assignment_id = "legacy-download-1";
  WriteBatch batch;
  batch.steps.push_back(step);
  const WriteBatch* batches[] = {&batch};
  ASSERT_TRUE(f.h.store->Commit(batches).ok());
  f.remote = std::make_unique<HeldRunner>();
  f.h.engine->SetRunner(StepType::kCommand, f.remote.get());
  f.h.loop->Post([&] { ASSERT_TRUE(RecoverExecutions(f.h.store.get(), f.h.engine.get()).ok()); });
  f.h.loop->RunReady();

  ASSERT_EQ(f.remote->reattached.size(), 1u);
  EXPECT_EQ(f.remote->reattached[0].assignment_id, "legacy-download-1");
  f.remote->Finish("legacy-download-1", Json{{"path", "/m"}});
  f.h.loop->RunUntilIdle();
  EXPECT_EQ(f.h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(f.h.Step(id, "download").output["path"], "/m");
}

TEST(Reattach, TheStepTimeoutStillCountsFromTheFirstDispatch) {
  Fixture f;
  std::string id = f.h.StartOnly(kWorkflow, {{"model", "llama"}});
  f.h.loop->RunUntilIdle(f.h.clock.Now() + 100);
  const TimeMs dispatched = f.h.Step(id, "download").started_at;
  f.h.clock.Advance(Duration(30 * 60'000));  // down for half an hour
  f.CrashAndRecover();
  f.h.loop->RunUntilIdle();  // the worker never answers
  StepRecord s = f.h.Step(id, "download");
  EXPECT_EQ(s.status, StepStatus::kTimeout);
  EXPECT_EQ(s.completed_at - dispatched, 3'600'000);
}

TEST(Reattach, ARunnerThatCannotFindTheWorkLosesTheAttemptAsBefore) {
  Fixture f;
  std::string id = f.h.StartOnly(kWorkflow, {{"model", "llama"}});
  f.h.loop->RunUntilIdle(f.h.clock.Now() + 100);
  f.CrashAndRecover();
  // The default Reattach: ENGINE_RESTART, and the attempt runs again.
  f.h.engine->SetRunner(StepType::kCommand, f.h.runner.get());
  auto& held = *f.remote;
  ASSERT_EQ(held.reattached.size(), 1u);
  RunResult lost;
  lost.status = Status(errc::kEngineRestart, "gone");
  auto done = std::move(held.live.begin()->second);
  held.live.clear();
  done.Done(std::move(lost));
  f.h.loop->RunUntilIdle();
  EXPECT_EQ(f.h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(f.h.Step(id, "download").attempts, 2);
}

// Memory per running execution: executions of one workflow version share one definition
// document, when started and after a recovery (which once parsed a copy per execution).
TEST(Reattach, ExecutionsOfOneWorkflowShareOneDefinitionBeforeAndAfterRecovery) {
  Fixture f;
  std::shared_ptr<const WorkflowDef> def = testing::MustParse(kWorkflow);
  ASSERT_NE(def, nullptr);
  std::vector<std::string> ids;
  for (const char* model : {"llama", "mistral"}) {  // as the server starts them: one def
    StartRequest req;
    req.workflow = def;
    req.input = Json{{"model", model}};
    f.h.loop->Post([&] { ids.push_back(*f.h.engine->Start(req)); });
    f.h.loop->RunReady();
  }
  ASSERT_EQ(ids.size(), 2u);
  const std::string a = ids[0], b = ids[1];
  def.reset();  // the executions hold it now
  f.h.loop->RunUntilIdle(f.h.clock.Now() + 100);
  ASSERT_EQ(f.remote->started.size(), 2u);
  ASSERT_NE(f.h.Execution(a).definition, nullptr);
  EXPECT_EQ(f.h.Execution(a).definition.get(), f.h.Execution(b).definition.get());
  EXPECT_EQ(Json::parse(*f.h.Execution(a).definition)["name"], "remote");

  f.CrashAndRecover();
  ASSERT_EQ(f.remote->reattached.size(), 2u);
  for (const RunRequest& r : std::vector<RunRequest>(f.remote->reattached)) {
    f.remote->Finish(r.assignment_id, Json::object());
  }
  f.h.loop->RunUntilIdle();
  ExecutionRecord done_a = f.h.Execution(a), done_b = f.h.Execution(b);
  EXPECT_EQ(done_a.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(done_b.status, ExecutionStatus::kCompleted);
  ASSERT_NE(done_a.definition, nullptr);
  EXPECT_EQ(done_a.definition.get(), done_b.definition.get());
  EXPECT_EQ(Json::parse(*done_a.definition)["name"], "remote");
}

// A waiting remote attempt holds its spec shared, not copied: without templates it points
// into the definition (every execution's attempt at the same object), and a rendered one
// is one copy that the engine (for the dead-letter record) and the runner both hold.
TEST(Reattach, AWaitingAttemptSharesItsSpecInsteadOfCopyingIt) {
  Fixture f;
  auto def = testing::MustParse(R"(
name: shared
inputs: {model: {type: string, required: true}}
steps:
  - {id: plain, type: command, command: bench.wait, data: {n: 1}}
  - {id: rendered, type: command, command: model.download, data: {model: "{{ inputs.model }}"}}
)");
  ASSERT_NE(def, nullptr);
  const Json* plain_spec = &def->steps[0].spec;
  for (const char* model : {"llama", "mistral"}) {
    StartRequest req;
    req.workflow = def;
    req.input = Json{{"model", model}};
    f.h.loop->Post([&] { ASSERT_TRUE(f.h.engine->Start(req).ok()); });
    f.h.loop->RunReady();
  }
  f.h.loop->RunUntilIdle(f.h.clock.Now() + 100);
  ASSERT_EQ(f.remote->started.size(), 4u);
  std::vector<std::string> models;
  for (const RunRequest& r : f.remote->started) {
    if (r.step_id == "plain") {
      EXPECT_EQ(r.spec.get(), plain_spec);  // the definition's own: no copy
      EXPECT_EQ((*r.spec)["data"]["n"], 1);
    } else {
      EXPECT_NE(r.spec.get(), &def->steps[1].spec);
      models.push_back((*r.spec)["data"]["model"]);
      EXPECT_GE(r.spec.use_count(), 2);  // the runner's and the engine's: one copy
    }
  }
  EXPECT_EQ(models, (std::vector<std::string>{"llama", "mistral"}));

  // The dead-letter record still gets the spec as rendered for the failed attempt.
  const RunRequest failed =
      f.remote->started[1].step_id == "rendered" ? f.remote->started[1] : f.remote->started[0];
  auto done = std::move(f.remote->live.at(failed.assignment_id));
  f.remote->live.erase(failed.assignment_id);
  RunResult r;
  r.status = Status("EXIT_NONZERO", "download failed");
  done.Done(std::move(r));
  f.h.loop->RunUntilIdle();
  auto letters = f.h.store->ListDeadLetters(DeadLetterFilter{});
  ASSERT_TRUE(letters.ok()) << letters.status().ToString();
  ASSERT_EQ(letters->size(), 1u);
  EXPECT_EQ((*letters)[0].step_id, "rendered");
  EXPECT_EQ((*letters)[0].input["data"]["model"], (*failed.spec)["data"]["model"]);
}

// The event that ends an attempt carries when that attempt began
// (ExecutionProgress::attempt_began): observers time steps with it instead of keeping
// every start themselves. A local step began when it started; each retry begins afresh;
// a remote command began at its worker's ack (its dispatch until then); an attempt taken
// over after a restart, whose beginning this engine did not see, carries none.
TEST(Reattach, TheEventThatEndsAnAttemptSaysWhenItBegan) {
  constexpr const char* kTimed = R"(
name: timed
steps:
  - {id: prep, type: shell, run: "true", retry: {max_attempts: 2, initial_delay: 1s}}
  - {id: download, type: command, command: model.download, depends_on: [prep]}
)";
  Fixture f;
  f.h.runner->script["prep"] = {testing::Outcome(30, "EXIT_NONZERO"), testing::Outcome(20)};
  const TimeMs t0 = f.h.clock.Now();
  std::string id = f.h.StartOnly(kTimed);
  f.h.loop->RunUntilIdle(t0 + 10'000);
  ASSERT_EQ(f.remote->started.size(), 1u);
  const TimeMs dispatched = f.h.clock.Now();
  f.h.clock.Advance(Duration(50));
  const TimeMs acked = f.h.clock.Now();
  const std::string assignment = f.remote->started[0].assignment_id;
  f.remote->live.at(assignment).Started();
  f.h.loop->RunUntilIdle();
  f.h.clock.Advance(Duration(200));
  f.remote->Finish(assignment, Json::object());
  f.h.loop->RunUntilIdle();
  ASSERT_EQ(f.h.Execution(id).status, ExecutionStatus::kCompleted);

  auto began = [&](const std::string& step, const std::string& type) {
    std::vector<TimeMs> out;
    for (size_t i = 0; i < f.h.log.events.size(); ++i) {
      const EventRecord& e = f.h.log.events[i];
      if (e.step_id == step && e.type == type) out.push_back(f.h.log.progress[i].attempt_began);
    }
    return out;
  };
  EXPECT_EQ(began("prep", "step.retrying"), std::vector<TimeMs>{t0});
  EXPECT_EQ(began("prep", "step.completed"), std::vector<TimeMs>{t0 + 30 + 1'000});
  EXPECT_GT(acked, dispatched);
  EXPECT_EQ(began("download", "step.completed"), std::vector<TimeMs>{acked});
  // Events that end no attempt carry nothing.
  for (size_t i = 0; i < f.h.log.events.size(); ++i) {
    const std::string& type = f.h.log.events[i].type;
    if (type != "step.completed" && type != "step.retrying") {
      EXPECT_EQ(f.h.log.progress[i].attempt_began, 0) << type;
    }
  }

  // Dispatched, never acked, taken over after a restart: no beginning known.
  std::string other = f.h.StartOnly(kTimed);
  f.h.loop->RunUntilIdle(f.h.clock.Now() + 10'000);
  ASSERT_EQ(f.remote->started.size(), 2u);
  const std::string second = f.remote->started[1].assignment_id;
  f.CrashAndRecover();
  ASSERT_EQ(f.remote->reattached.size(), 1u);
  f.h.log.events.clear();
  f.h.log.progress.clear();
  f.remote->Finish(second, Json::object());
  f.h.loop->RunUntilIdle();
  ASSERT_EQ(f.h.Execution(other).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(began("download", "step.completed"), std::vector<TimeMs>{0});
}

// The attempt timeout that passed while the engine was down fails the attempt as soon as
// the engine is back (armed again, in the past, at recovery).
TEST(Reattach, AnAttemptWhoseTimeoutPassedWhileDownTimesOutAtOnce) {
  Fixture f;
  std::string id = f.h.StartOnly(kWorkflow, {{"model", "llama"}});
  f.h.loop->RunUntilIdle(f.h.clock.Now() + 100);
  ASSERT_EQ(f.remote->started.size(), 1u);
  f.h.clock.Advance(Duration(2 * 3'600'000));  // down past the deadline
  f.CrashAndRecover();
  f.h.loop->RunUntilIdle(f.h.clock.Now() + 10);
  EXPECT_EQ(f.h.Step(id, "download").status, StepStatus::kTimeout);
  EXPECT_EQ(f.h.Execution(id).status, ExecutionStatus::kFailed);
}

// An attempt that ended before its timeout leaves no deadline behind: nothing fires for
// it later, also once its execution has left memory (the deadlines point at executions:
// under ASan a dangling one would be a use after free here).
TEST(Reattach, AnAttemptThatEndedBeforeItsTimeoutLeavesNoDeadlineBehind) {
  Fixture f;
  std::string id = f.h.StartOnly(kWorkflow, {{"model", "llama"}});
  f.h.loop->RunUntilIdle(f.h.clock.Now() + 100);
  ASSERT_EQ(f.remote->started.size(), 1u);
  f.remote->Finish(f.remote->started[0].assignment_id, Json{{"path", "/m"}});
  f.h.loop->RunUntilIdle(f.h.clock.Now() + 3 * 3'600'000);
  EXPECT_EQ(f.h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(f.h.Step(id, "download").status, StepStatus::kCompleted);
  EXPECT_EQ(f.h.Step(id, "download").attempts, 1);
}

}  // namespace
}  // namespace baton
