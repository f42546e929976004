#include "model/test_util.h"

namespace baton {
namespace {

using testing_model::MustParse;

TEST(Dag, Diamond) {
  WorkflowDef wf = MustParse(
      "name: x\nsteps:\n"
      "  - {id: a, type: noop}\n"
      "  - {id: b, type: wait, duration: 10s, depends_on: a}\n"
      "  - {id: c, type: wait, duration: 3s, depends_on: a}\n"
      "  - {id: d, type: noop, depends_on: [c, b]}\n");
  DagAnalysis dag = AnalyzeDag(wf);
  ASSERT_EQ(dag.layers.size(), 3u);
  EXPECT_EQ(dag.layers[0], std::vector<int>{0});
  EXPECT_EQ(dag.layers[1], (std::vector<int>{1, 2}));
  EXPECT_EQ(dag.layers[2], std::vector<int>{3});
  EXPECT_EQ(dag.layer_of, (std::vector<int>{0, 1, 1, 2}));
  EXPECT_EQ(dag.critical_path, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(dag.critical_path_estimate, Duration{12'000});  // 1s + 10s + 1s
  EXPECT_EQ(dag.sequential_estimate, Duration{15'000});
  EXPECT_EQ(dag.max_parallelism, 2u);
  EXPECT_DOUBLE_EQ(dag.estimated_speedup, 15.0 / 12.0);
}

TEST(Dag, Chain) {
  WorkflowDef wf = MustParse(
      "name: x\nsteps:\n"
      "  - {id: c, type: noop, depends_on: b}\n"
      "  - {id: b, type: noop, depends_on: a, timeout: 20s}\n"
      "  - {id: a, type: noop}\n");
  DagAnalysis dag = AnalyzeDag(wf);
  ASSERT_EQ(dag.layers.size(), 3u);
  EXPECT_EQ(dag.layers[0], std::vector<int>{2});
  EXPECT_EQ(dag.layers[1], std::vector<int>{1});
  EXPECT_EQ(dag.layers[2], std::vector<int>{0});
  EXPECT_EQ(dag.critical_path, (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(dag.critical_path_estimate, Duration{4000});  // 1s + 20s/10 + 1s
  EXPECT_EQ(dag.sequential_estimate, Duration{4000});
  EXPECT_EQ(dag.max_parallelism, 1u);
  EXPECT_DOUBLE_EQ(dag.estimated_speedup, 1.0);
}

TEST(Dag, IndependentStepsAndTemplatedWait) {
  WorkflowDef wf = MustParse(
      "name: x\nsteps:\n"
      "  - {id: a, type: wait, duration: '{{ inputs.d }}'}\n"
      "  - {id: b, type: wait, until: '2030-01-01T00:00:00Z'}\n"
      "  - {id: c, type: noop}\n"
      "  - {id: d, type: noop, depends_on: c}\n");
  DagAnalysis dag = AnalyzeDag(wf);
  ASSERT_EQ(dag.layers.size(), 2u);
  EXPECT_EQ(dag.layers[0], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(dag.max_parallelism, 3u);
  EXPECT_EQ(dag.critical_path, (std::vector<int>{2, 3}));
  EXPECT_EQ(dag.critical_path_estimate, Duration{2000});
  EXPECT_EQ(dag.sequential_estimate, Duration{4000});
  EXPECT_DOUBLE_EQ(dag.estimated_speedup, 2.0);
}

TEST(Dag, EmptyWorkflow) {
  DagAnalysis dag = AnalyzeDag(WorkflowDef{});
  EXPECT_TRUE(dag.layers.empty());
  EXPECT_TRUE(dag.critical_path.empty());
  EXPECT_DOUBLE_EQ(dag.estimated_speedup, 1.0);
}

TEST(Dag, LargeFanOutParsesAndAnalyzesQuickly) {
  std::string text = "name: x\nsteps:\n  - {id: root, type: noop}\n";
  for (int i = 0; i < 2000; ++i) {
    text += "  - {id: s" + std::to_string(i) +
            ", type: noop, depends_on: root, with: " + "'{{ steps.root.output }}'}\n";
  }
  text += "  - id: join\n    type: noop\n    depends_on: [";
  for (int i = 0; i < 2000; ++i) text += (i ? ", s" : "s") + std::to_string(i);
  text += "]\n    with: '{{ steps.root.output }}'\n";
  WorkflowDef wf = MustParse(text);
  DagAnalysis dag = AnalyzeDag(wf);
  ASSERT_EQ(dag.layers.size(), 3u);
  EXPECT_EQ(dag.max_parallelism, 2000u);
  EXPECT_EQ(dag.critical_path.size(), 3u);
}

}  // namespace
}  // namespace baton
