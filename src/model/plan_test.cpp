#include "model/test_util.h"

#include "expr/condition.h"

#include <baton/plan.h>

namespace baton {
namespace {

using testing_model::MustParse;

std::vector<int> Span(std::span<const int> s) {
  return {s.begin(), s.end()};
}

TEST(Plan, ParsingCompilesThePlanOnce) {
  WorkflowDef wf = MustParse(
      "name: x\nsteps:\n"
      "  - {id: a, type: noop}\n"
      "  - {id: b, type: shell, run: [echo, '{{ steps.a.output }}'], depends_on: a}\n"
      "  - {id: c, type: noop, depends_on: a, when: 'steps.a.output == 1'}\n"
      "  - {id: d, type: noop, depends_on: [c, b]}\n");
  ASSERT_NE(wf.plan, nullptr);
  const WorkflowPlan& plan = *wf.plan;
  EXPECT_EQ(plan.graph.size(), 4u);
  EXPECT_EQ(Span(plan.graph.Upstream(3)), (std::vector<int>{2, 1}));
  EXPECT_EQ(Span(plan.graph.Downstream(0)), (std::vector<int>{1, 2}));
  EXPECT_EQ(plan.layer_of, (std::vector<int>{0, 1, 1, 2}));
  EXPECT_EQ(plan.layer_size, (std::vector<int>{1, 2, 1}));
  EXPECT_EQ(plan.layers, 3);
  ASSERT_EQ(plan.conditions.size(), 4u);
  EXPECT_EQ(plan.conditions[0], nullptr);
  ASSERT_NE(plan.conditions[2], nullptr);
  EXPECT_EQ(plan.conditions[2]->source(), "steps.a.output == 1");
  EXPECT_EQ(plan.spec_has_templates, (std::vector<char>{0, 1, 0, 0}));
  // A copy of the definition shares the plan instead of compiling another.
  WorkflowDef copy = wf;
  EXPECT_EQ(copy.plan.get(), wf.plan.get());
  // Rebuilt from its snapshot, a definition gets the same plan.
  Result<WorkflowDef> again = WorkflowFromSnapshot(wf.source, "x");
  ASSERT_TRUE(again.ok()) << again.status().message();
  ASSERT_NE(again->plan, nullptr);
  EXPECT_EQ(again->plan->layer_of, plan.layer_of);
  EXPECT_EQ(again->plan->graph.up, plan.graph.up);
}

TEST(Plan, AnalyzeReadsTheCompiledGraph) {
  WorkflowDef wf = MustParse(
      "name: x\nsteps:\n"
      "  - {id: a, type: noop}\n"
      "  - {id: b, type: noop, depends_on: a}\n");
  // Editing the steps without compiling again leaves a plan that no longer fits: analyze
  // links the graph itself rather than read a stale one.
  wf.steps.push_back(wf.steps[1]);
  wf.steps[2].id = "c";
  wf.steps[2].depends_on = {"b"};
  EXPECT_EQ(AnalyzeDag(wf).layer_of, (std::vector<int>{0, 1, 2}));
  ASSERT_TRUE(AttachPlan(wf).ok());
  EXPECT_EQ(wf.plan->layer_of, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(AnalyzeDag(wf).layer_of, wf.plan->layer_of);
}

WorkflowDef Built(std::vector<std::pair<std::string, std::vector<std::string>>> steps) {
  WorkflowDef wf;
  wf.name = "built";
  for (auto& [id, deps] : steps) {
    StepDef s;
    s.id = id;
    s.depends_on = deps;
    wf.steps.push_back(std::move(s));
  }
  return wf;
}

TEST(Plan, CompilingADefinitionBuiltInCodeRefusesWhatParsingWould) {
  WorkflowDef unknown = Built({{"a", {"zz"}}});
  Status st = AttachPlan(unknown);
  EXPECT_EQ(st.code(), errc::kValidation);
  EXPECT_NE(st.message().find("step 'a' depends on an unknown step 'zz'"), std::string::npos)
      << st.message();
  EXPECT_EQ(unknown.plan, nullptr);

  WorkflowDef self = Built({{"a", {"a"}}});
  EXPECT_NE(AttachPlan(self).message().find("depends on itself"), std::string::npos);

  WorkflowDef cycle = Built({{"a", {"b"}}, {"b", {"a"}}, {"c", {}}});
  EXPECT_NE(AttachPlan(cycle).message().find("cycle"), std::string::npos);

  WorkflowDef bad_when = Built({{"a", {}}});
  bad_when.steps[0].when = "steps.a.output ==";
  st = AttachPlan(bad_when);
  EXPECT_EQ(st.code(), errc::kValidation);
  EXPECT_NE(st.message().find("step 'a': when:"), std::string::npos) << st.message();

  WorkflowDef fine = Built({{"a", {}}, {"b", {"a"}}, {"c", {"a"}}});
  ASSERT_TRUE(AttachPlan(fine).ok());
  EXPECT_EQ(fine.plan->layer_size, (std::vector<int>{1, 2}));
}

TEST(Plan, LinkingLeavesOutAndCountsWhatDoesNotResolve) {
  WorkflowDef wf = Built({{"a", {}}, {"b", {"a", "nope", "b"}}, {"a", {}}});
  size_t unresolved = 0;
  StepGraph g = LinkStepGraph(wf, &unresolved);
  EXPECT_EQ(unresolved, 2u);
  EXPECT_EQ(Span(g.Upstream(1)), std::vector<int>{0});  // the first 'a' wins
  EXPECT_EQ(Span(g.Downstream(0)), std::vector<int>{1});
  EXPECT_TRUE(g.Downstream(2).empty());
}

}  // namespace
}  // namespace baton
