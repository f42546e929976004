// Child workflows (`type: workflow`): the child is an execution of its own, its output is
// the step's, its failure is CHILD_FAILED under the step's retry policy, and cancel,
// pause, resume, timeouts and a crash all reach it.
#include "support/sim_harness.h"

#include <gtest/gtest.h>

#include <map>

namespace baton {
namespace {

using testing::Outcome;
using testing::SimHarness;

constexpr const char* kParent = R"(
name: pipeline
steps:
  - {id: prepare, type: shell, run: prepare}
  - id: train
    type: workflow
    workflow: training
    input: {model: "{{ inputs.model }}"}
    retry: {max_attempts: 2, initial_delay: 1s}
    depends_on: [prepare]
  - {id: publish, type: shell, run: "publish {{ steps.train.output.path }}", depends_on: [train]}
inputs:
  model: {type: string, default: m1}
)";

constexpr const char* kTraining = R"(
name: training
inputs:
  model: {type: string}
steps:
  - {id: fit, type: shell, run: "fit {{ inputs.model }}"}
  - {id: evaluate, type: shell, run: evaluate, depends_on: [fit]}
output: {path: "/models/{{ inputs.model }}"}
)";

// A catalog of workflows by name, as a server's or `baton run`'s directory would be.
struct Catalog {
  std::map<std::string, std::string> yaml;
  ChildWorkflowResolver Resolver() {
    return [this](const std::string&, const std::string& name,
                  int) -> Result<std::shared_ptr<const WorkflowDef>> {
      auto it = yaml.find(name);
      if (it == yaml.end()) return Status(errc::kNotFound, "no workflow '" + name + "'");
      return testing::MustParse(it->second);
    };
  }
};

EngineOptions WithCatalog(Catalog& c) {
  EngineOptions o;
  o.child_workflows = c.Resolver();
  return o;
}

std::vector<ExecutionRecord> ChildrenOf(SimHarness& h, const std::string& id) {
  ExecutionFilter f;
  f.parent_id = id;
  f.limit = 0;
  return *h.store->ListExecutions(f);
}

TEST(EngineChildren, TheChildRunsAsItsOwnExecutionAndItsOutputIsTheSteps) {
  Catalog c{{{"training", kTraining}}};
  SimHarness h(WithCatalog(c));
  std::string id = h.Run(kParent, {{"model", "llama"}});
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  std::vector<ExecutionRecord> children = ChildrenOf(h, id);
  ASSERT_EQ(children.size(), 1u);
  const ExecutionRecord& child = children[0];
  EXPECT_EQ(child.workflow, "training");
  EXPECT_EQ(child.parent_step, "train");
  EXPECT_EQ(child.parent_attempt, 1);
  EXPECT_EQ(child.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(child.input, Json({{"model", "llama"}}));
  EXPECT_EQ(h.Step(id, "train").output, Json({{"path", "/models/llama"}}));
  ASSERT_EQ(h.runner->CallsFor("publish"), 1);
  EXPECT_EQ(h.runner->calls.back().spec["args"][0], Json("/models/llama"));
  // The child's progress showed in the parent's step.
  std::vector<std::string> types = h.log.TypesFor("train");
  EXPECT_NE(std::find(types.begin(), types.end(), "step.progress"), types.end());
  EXPECT_EQ(h.runner->CallsFor("fit"), 1);
}

TEST(EngineChildren, AFailedChildFailsTheStepChildFailedAndARetryStartsANewChild) {
  Catalog c{{{"training", kTraining}}};
  SimHarness h(WithCatalog(c));
  // The first child's fit fails; the second child's (a new execution, its own attempt 1)
  // succeeds.
  h.runner->script["fit"] = {Outcome(10, errc::kExitNonzero)};
  std::string id = h.StartOnly(kParent);
  h.loop->RunUntilIdle(h.clock.Now() + 500);
  ASSERT_EQ(h.Step(id, "train").status, StepStatus::kWaitingRetry);
  h.runner->script["fit"] = {Outcome(10)};
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  std::vector<ExecutionRecord> children = ChildrenOf(h, id);
  ASSERT_EQ(children.size(), 2u);
  int failed = 0;
  for (const auto& child : children) failed += child.status == ExecutionStatus::kFailed;
  EXPECT_EQ(failed, 1);
  auto attempts = *h.store->GetAttempts(id);
  bool saw_child_failed = false;
  for (const auto& a : attempts) {
    if (a.step_id != "train" || a.error.is_null()) continue;
    EXPECT_EQ(a.error["code"], errc::kChildFailed);
    EXPECT_EQ(a.error["details"]["status"], "failed");
    EXPECT_EQ(a.error["details"]["workflow"], "training");
    EXPECT_FALSE(a.error["details"]["child_id"].get<std::string>().empty());
    saw_child_failed = true;
  }
  EXPECT_TRUE(saw_child_failed);
}

TEST(EngineChildren, ChildFailuresBeyondTheRetriesFailTheParent) {
  Catalog c{{{"training", kTraining}}};
  SimHarness h(WithCatalog(c));
  h.runner->script["fit"] = {Outcome(10, errc::kExitNonzero)};
  std::string id = h.Run(kParent);
  ExecutionRecord parent = h.Execution(id);
  EXPECT_EQ(parent.status, ExecutionStatus::kFailed);
  EXPECT_EQ(parent.error["code"], errc::kChildFailed);
  EXPECT_EQ(ChildrenOf(h, id).size(), 2u);
  EXPECT_EQ(h.runner->CallsFor("publish"), 0);
}

TEST(EngineChildren, CancelPauseAndResumeOfTheParentReachTheChild) {
  Catalog c{{{"training", kTraining}}};
  SimHarness h(WithCatalog(c));
  h.runner->script["fit"] = {Outcome(60'000)};
  std::string id = h.StartOnly(kParent);
  h.loop->RunUntilIdle(h.clock.Now() + 1'000);
  ASSERT_EQ(ChildrenOf(h, id).size(), 1u);
  const std::string child = ChildrenOf(h, id)[0].id;

  h.loop->Post([&] { ASSERT_TRUE(h.engine->Pause(id).ok()); });
  h.loop->RunReady();
  EXPECT_EQ(h.Execution(child).status, ExecutionStatus::kPaused);
  h.loop->Post([&] { ASSERT_TRUE(h.engine->Resume(id).ok()); });
  h.loop->RunReady();
  EXPECT_EQ(h.Execution(child).status, ExecutionStatus::kRunning);

  h.loop->Post([&] { ASSERT_TRUE(h.engine->Cancel(id, "operator").ok()); });
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCancelled);
  EXPECT_EQ(h.Execution(child).status, ExecutionStatus::kCancelled);
  EXPECT_EQ(h.Step(child, "fit").status, StepStatus::kCancelled);
  EXPECT_EQ(h.engine->ActiveCount(), 0u);
}

TEST(EngineChildren, AStepTimeoutCancelsTheChild) {
  Catalog c{{{"training", kTraining}}};
  SimHarness h(WithCatalog(c));
  h.runner->script["fit"] = {Outcome(600'000)};
  std::string id = h.Run(R"(
name: quick
steps:
  - {id: train, type: workflow, workflow: training, input: {model: m}, timeout: 1m}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);
  EXPECT_EQ(h.Step(id, "train").status, StepStatus::kTimeout);
  std::vector<ExecutionRecord> children = ChildrenOf(h, id);
  ASSERT_EQ(children.size(), 1u);
  EXPECT_EQ(children[0].status, ExecutionStatus::kCancelled);
}

TEST(EngineChildren, AfterACrashTheParentWaitsForTheSameChild) {
  Catalog c{{{"training", kTraining}}};
  SimHarness h(WithCatalog(c));
  h.runner->script["fit"] = {Outcome(60'000)};
  std::string id = h.StartOnly(kParent);
  h.loop->RunUntilIdle(h.clock.Now() + 1'000);
  ASSERT_EQ(ChildrenOf(h, id).size(), 1u);
  const std::string child = ChildrenOf(h, id)[0].id;

  h.Crash(WithCatalog(c));
  h.loop->Post([&] { ASSERT_TRUE(RecoverExecutions(h.store.get(), h.engine.get()).ok()); });
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  std::vector<ExecutionRecord> children = ChildrenOf(h, id);
  ASSERT_EQ(children.size(), 1u);  // no second child
  EXPECT_EQ(children[0].id, child);
  EXPECT_EQ(children[0].status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "train").attempts, 1);
  EXPECT_EQ(h.Step(id, "train").output, Json({{"path", "/models/m1"}}));
}

TEST(EngineChildren, ResumingOnlyTheParentBringsItsRunningChildBack) {
  Catalog c{{{"training", kTraining}}};
  SimHarness h(WithCatalog(c));
  h.runner->script["fit"] = {Outcome(60'000)};
  std::string id = h.StartOnly(kParent);
  h.loop->RunUntilIdle(h.clock.Now() + 1'000);
  h.Crash(WithCatalog(c));
  std::vector<std::string> ids;
  h.loop->Post([&] { ids = *RecoverExecutions(h.store.get(), h.engine.get(), id); });
  h.loop->RunUntilIdle();
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
}

TEST(EngineChildren, CyclesDepthAndUnknownNamesFailTheStep) {
  Catalog c{{{"ping", R"(
name: ping
steps: [{id: call, type: workflow, workflow: pong}]
)"},
             {"pong", R"(
name: pong
steps: [{id: call, type: workflow, workflow: ping}]
)"},
             {"d1", "name: d1\nsteps: [{id: s, type: workflow, workflow: d2}]\n"},
             {"d2", "name: d2\nsteps: [{id: s, type: workflow, workflow: d3}]\n"},
             {"d3", "name: d3\nsteps: [{id: s, type: noop}]\n"}}};
  EngineOptions o = WithCatalog(c);
  o.max_child_depth = 2;
  SimHarness h(o);
  std::string ping = h.Run(c.yaml["ping"]);
  EXPECT_EQ(h.Execution(ping).status, ExecutionStatus::kFailed);
  const ExecutionRecord pong = ChildrenOf(h, ping).at(0);
  const StepRecord call = h.Step(pong.id, "call");
  EXPECT_EQ(call.error["code"], errc::kValidation);
  EXPECT_NE(call.error["message"].get<std::string>().find("cycle: ping -> pong -> ping"),
            std::string::npos)
      << call.error.dump();

  std::string deep = h.Run(c.yaml["d1"]);
  EXPECT_EQ(h.Execution(deep).status, ExecutionStatus::kFailed);
  const ExecutionRecord d2 = ChildrenOf(h, deep).at(0);
  EXPECT_NE(h.Step(d2.id, "s").error["message"].get<std::string>().find("nest deeper than 2"),
            std::string::npos);
  EXPECT_TRUE(ChildrenOf(h, d2.id).empty());

  std::string unknown = h.Run("name: u\nsteps: [{id: s, type: workflow, workflow: nope}]\n");
  EXPECT_EQ(h.Step(unknown, "s").error["code"], errc::kNotFound);
}

TEST(EngineChildren, ACachedWorkflowStepStartsNoSecondChild) {
  Catalog c{{{"training", kTraining}}};
  SimHarness h(WithCatalog(c));
  constexpr const char* kCached = R"(
name: cached
steps:
  - {id: train, type: workflow, workflow: training, input: {model: m}, cache: {ttl: 1h}}
)";
  std::string first = h.Run(kCached);
  std::string second = h.Run(kCached);
  EXPECT_EQ(h.Step(first, "train").status, StepStatus::kCompleted);
  EXPECT_EQ(h.Step(second, "train").status, StepStatus::kCached);
  EXPECT_EQ(h.Step(second, "train").output, Json({{"path", "/models/m"}}));
  EXPECT_EQ(ChildrenOf(h, first).size(), 1u);
  EXPECT_TRUE(ChildrenOf(h, second).empty());
}

TEST(EngineChildren, WithoutACatalogTheStepFailsUnsupported) {
  SimHarness h;
  std::string id = h.Run("name: u\nsteps: [{id: s, type: workflow, workflow: x}]\n");
  EXPECT_EQ(h.Step(id, "s").error["code"], errc::kUnsupportedStepType);
}

}  // namespace
}  // namespace baton
