// Runtime variables (a step's set_vars): rendered when the step completes, read by the
// steps after it, committed with the completion, and kept across a crash.
#include "support/sim_harness.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using testing::SimHarness;

constexpr const char* kPick = R"(
name: pick
vars: {region: us-east}
steps:
  - id: pick
    type: shell
    run: pick
    set_vars: {region: "{{ steps.pick.output.region }}", tries: "{{ steps.pick.attempts }}"}
  - {id: wait, type: shell, run: wait, depends_on: [pick]}
  - {id: deploy, type: shell, run: "deploy {{ vars.region }}", depends_on: [wait]}
)";

TEST(EngineVars, AStepSetsVariablesTheStepsAfterItRead) {
  SimHarness h;
  h.runner->script["pick"] = {{10, "", Json{{"region", "eu-west"}}}};
  std::string id = h.Run(kPick);
  ASSERT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.Execution(id).vars, Json({{"region", "eu-west"}, {"tries", 1}}));
  EXPECT_EQ(h.runner->calls.back().spec["args"][0], Json("eu-west"));
  int set = 0;
  for (const EventRecord& e : *h.store->GetEvents(id, 0, 0)) {
    if (e.type != "vars.set") continue;
    ++set;
    EXPECT_EQ(e.step_id, "pick");
  }
  EXPECT_EQ(set, 2);  // one event per variable that changed
}

TEST(EngineVars, VariablesSurviveACrash) {
  SimHarness h;
  h.runner->script["pick"] = {{10, "", Json{{"region", "ap-south"}}}};
  h.runner->script["wait"] = {{60'000}};
  std::string id = h.StartOnly(kPick);
  h.loop->RunUntilIdle(h.clock.Now() + 1000);  // pick done, wait running
  ASSERT_EQ(h.Step(id, "pick").status, StepStatus::kCompleted);
  h.Crash();
  h.loop->Post([&] { ASSERT_TRUE(RecoverExecutions(h.store.get(), h.engine.get()).ok()); });
  h.loop->RunUntilIdle();
  ASSERT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.runner->calls.back().step_id, "deploy");
  EXPECT_EQ(h.runner->calls.back().spec["args"][0], Json("ap-south"));
}

TEST(EngineVars, AVariableThatCannotBeRenderedFailsTheStep) {
  SimHarness h;
  h.runner->script["pick"] = {{10, "", Json{{"zone", "a"}}}};  // no region
  std::string id = h.Run(kPick);
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);
  StepRecord pick = h.Step(id, "pick");
  EXPECT_EQ(pick.status, StepStatus::kFailed);
  EXPECT_NE(pick.error["message"].get<std::string>().find("set_vars of step 'pick'"),
            std::string::npos)
      << pick.error;
  EXPECT_TRUE(h.Execution(id).vars.is_null());
  EXPECT_EQ(h.runner->CallsFor("deploy"), 0);
}

}  // namespace
}  // namespace baton
