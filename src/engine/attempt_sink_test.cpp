// A runner's reports reach the step they answer, whatever the form of the execution's id:
// a sink of the usual id keeps none of it (the engine rebuilds the assignment id), one of
// a longer id keeps it whole.
#include "engine/engine_impl.h"
#include "support/sim_harness.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using testing::Outcome;
using testing::SimHarness;

void ExpectReportsArrive(const std::string& execution_id) {
  SimHarness h;
  Outcome slow(100, "", Json{{"done", true}});
  slow.progress_every_ms = 30;
  h.runner->script["a"] = {Outcome(10, "EXIT_NONZERO"), slow};
  h.runner->script["b"] = {slow};
  StartRequest req;
  req.workflow = testing::MustParse(R"(
name: reports
steps:
  - {id: a, type: shell, run: a, retry: {max_attempts: 2, initial_delay: 1s}}
  - {id: b, type: shell, run: b, depends_on: [a]}
)");
  req.execution_id = execution_id;
  std::string id = h.Start(req);
  ASSERT_FALSE(id.empty());
  h.loop->RunUntilIdle();
  ExecutionRecord done = h.Execution(id);
  EXPECT_EQ(done.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(done.id, execution_id.empty() ? done.id : execution_id);
  for (const char* step : {"a", "b"}) {
    std::vector<std::string> types = h.log.TypesFor(step);
    EXPECT_NE(std::find(types.begin(), types.end(), "step.started"), types.end()) << step;
    EXPECT_NE(std::find(types.begin(), types.end(), "step.progress"), types.end()) << step;
    EXPECT_EQ(types.back(), "step.completed") << step;
  }
  EXPECT_EQ(h.Step(id, "a").attempts, 2);  // the failed first attempt's report counted
  EXPECT_EQ(h.Step(id, "b").output, (Json{{"done", true}}));
}

TEST(AttemptSink, ReportsOfAnEngineMadeIdReachTheirStep) {
  ExpectReportsArrive("");
}

TEST(AttemptSink, ReportsOfALongerGivenIdReachTheirStep) {
  ExpectReportsArrive("an-execution-id-longer-than-fifteen-characters");
}

TEST(AttemptSink, ReportsOfAShortGivenIdReachTheirStep) {
  ExpectReportsArrive("short-id");
}

// A step holds its usual assignment id implied, not as a string: what it writes still
// names each attempt's dispatch in full, while it waits and after it ends.
TEST(AttemptSink, TheRecordsOfAnImpliedAssignmentIdNameItInFull) {
  SimHarness h;
  h.runner->script["a"] = {Outcome(10, "EXIT_NONZERO"), Outcome(100)};
  std::string id = h.StartOnly(R"(
name: records
steps:
  - {id: a, type: shell, run: a, retry: {max_attempts: 2, initial_delay: 1s}}
)");
  h.loop->RunUntilIdle(h.clock.Now() + 1'050);  // the second attempt runs
  EXPECT_EQ(h.Step(id, "a").assignment_id, id + "/a/2");
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Step(id, "a").assignment_id, id + "/a/2");
  auto attempts = h.store->GetAttempts(id);
  ASSERT_TRUE(attempts.ok());
  ASSERT_EQ(attempts->size(), 2u);
  EXPECT_EQ((*attempts)[0].assignment_id, id + "/a/1");
  EXPECT_EQ((*attempts)[1].assignment_id, id + "/a/2");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
}

TEST(AttemptSink, AnAssignmentIdIsRecognisedOnlyInItsExactUsualForm) {
  EXPECT_EQ(AssignmentIdFor("ex1", "work", 12), "ex1/work/12");
  EXPECT_TRUE(IsAssignmentIdFor("ex1/work/12", "ex1", "work", 12));
  for (const char* other : {"ex1/work/1", "ex1/work/120", "ex1/work/12#0", "ex1/works/12",
                            "ex1/wor/12", "ex/work/12", "ex1/work", "ex1-work-12", ""}) {
    EXPECT_FALSE(IsAssignmentIdFor(other, "ex1", "work", 12)) << other;
  }
}

}  // namespace
}  // namespace baton
