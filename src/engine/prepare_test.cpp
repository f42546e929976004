// Runner::Prepare: what a runner records about a dispatch commits in the same batch as the
// step's dispatched state; Start follows that commit, or Cancel when the attempt ended
// first or the commit failed.
#include <baton/engine.h>
#include <baton/event_loop.h>

#include "support/held_committer.h"
#include "support/sim_harness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace baton {
namespace {

using testing::MustParse;

// Records an assignment for every dispatch it prepares; holds what it starts.
class PreparingRunner final : public Runner {
 public:
  std::vector<std::string> prepared, started, cancelled;
  std::map<std::string, RunCallbacks> live;

  void Prepare(const RunRequest& req, WriteBatch& batch) override {
    prepared.push_back(req.assignment_id);
    AssignmentRecord r;
    r.dispatch_id = r.id = req.assignment_id;
    r.ns = req.ns;
    r.execution_id = req.execution_id;
    r.step_id = req.step_id;
    r.attempt = req.attempt;
    r.worker_id = "w1";
    r.status = "dispatched";
    batch.assignments.push_back(std::move(r));
  }
  void Start(const RunRequest& req, RunCallbacks cb) override {
    started.push_back(req.assignment_id);
    live[req.assignment_id] = std::move(cb);
  }
  void Cancel(const std::string& id) override {
    cancelled.push_back(id);
    auto it = live.find(id);
    if (it == live.end()) return;  // prepared only: nothing to report
    auto done = std::move(it->second);
    live.erase(it);
    RunResult r;
    r.status = Status(errc::kCancelled, "cancelled");
    done.Done(std::move(r));
  }
};

constexpr const char* kWorkflow = R"(
name: remote
steps:
  - {id: download, type: command, command: model.download, timeout: 1h}
)";

struct Fixture : testing::HeldEngine {
  PreparingRunner runner;

  Fixture() { engine.SetRunner(StepType::kCommand, &runner); }
  std::string StartExecution() {
    StartRequest req;
    req.workflow = MustParse(kWorkflow);
    std::string id;
    loop.Post([&] { id = *engine.Start(req); });
    loop.RunReady();
    return id;
  }
  void ReleaseAll(Status outcome = Status::Ok()) {
    while (committer.held() > 0) {
      committer.ReleaseOne(outcome);
      loop.RunReady();
    }
  }
};

TEST(RunnerPrepare, ItsRecordsCommitInTheBatchThatDispatchesTheStep) {
  Fixture f;
  const std::string id = f.StartExecution();
  ASSERT_EQ(f.runner.prepared.size(), 1u);
  const std::string assignment = f.runner.prepared[0];
  EXPECT_EQ(assignment, id + "/download/1");
  EXPECT_TRUE(f.runner.started.empty());  // not before the commit

  // One held batch has both the step dispatched and the runner's assignment.
  size_t with_assignment = 0;
  for (size_t i = 0; i < f.committer.held(); ++i) {
    const WriteBatch& b = f.committer.batch(i);
    if (b.assignments.empty()) continue;
    ++with_assignment;
    ASSERT_EQ(b.assignments.size(), 1u);
    EXPECT_EQ(b.assignments[0].dispatch_id, assignment);
    EXPECT_TRUE(std::any_of(b.steps.begin(), b.steps.end(), [&](const StepRecord& s) {
      return s.step_id == "download" && s.status == StepStatus::kDispatched &&
             s.assignment_id == assignment;
    }));
  }
  EXPECT_EQ(with_assignment, 1u);

  f.ReleaseAll();
  EXPECT_EQ(f.runner.started, (std::vector<std::string>{assignment}));
  EXPECT_TRUE(f.runner.cancelled.empty());
  EXPECT_EQ(f.store->GetAssignment(assignment)->worker_id, "w1");
}

TEST(RunnerPrepare, AnAttemptCancelledBeforeItsStartIsCancelledNotStarted) {
  Fixture f;
  const std::string id = f.StartExecution();
  ASSERT_EQ(f.runner.prepared.size(), 1u);
  const std::string assignment = f.runner.prepared[0];
  // Cancelled while the dispatch's batch is still being committed.
  f.loop.Post([&] { ASSERT_TRUE(f.engine.Cancel(id, "changed my mind").ok()); });
  f.loop.RunReady();
  f.ReleaseAll();
  EXPECT_TRUE(f.runner.started.empty());
  ASSERT_FALSE(f.runner.cancelled.empty());
  // The skipped Start cancels it; the step's own cancel may follow (ignored by runners).
  for (const std::string& c : f.runner.cancelled) EXPECT_EQ(c, assignment);
  EXPECT_EQ(f.store->GetExecution(id)->status, ExecutionStatus::kCancelled);
}

TEST(RunnerPrepare, ADispatchWhoseBatchFailsIsCancelledNotStarted) {
  Fixture f;
  f.StartExecution();
  ASSERT_EQ(f.runner.prepared.size(), 1u);
  f.ReleaseAll(Status(errc::kStore, "disk full"));
  EXPECT_TRUE(f.runner.started.empty());
  EXPECT_EQ(f.runner.cancelled, f.runner.prepared);
}

// A worker's ack and result often arrive together (one frame): the engine handles the
// reports that reached it before its loop did in one turn, so the step is written once,
// completed, in one batch, instead of a batch for `running` and another for `completed`.
TEST(RunnerReports, ThoseThatArriveTogetherCommitInOneBatch) {
  Fixture f;
  const std::string id = f.StartExecution();
  f.ReleaseAll();
  ASSERT_EQ(f.runner.started.size(), 1u);
  RunCallbacks& cb = f.runner.live.begin()->second;
  cb.Started();
  cb.Progress(50, Json{{"part", 1}});
  RunResult done;
  done.output = Json{{"path", "/m"}};
  cb.Done(std::move(done));
  f.loop.RunReady();
  ASSERT_EQ(f.committer.held(), 1u);
  const WriteBatch& batch = f.committer.batch(0);
  ASSERT_EQ(batch.steps.size(), 1u);
  EXPECT_EQ(batch.steps[0].status, StepStatus::kCompleted);
  std::vector<std::string> events;
  for (const EventRecord& e : batch.events) events.push_back(e.type);
  EXPECT_EQ(events, (std::vector<std::string>{"step.started", "step.progress", "step.completed",
                                              "execution.completed"}));
  f.ReleaseAll();
  EXPECT_EQ(f.store->GetExecution(id)->status, ExecutionStatus::kCompleted);
}

}  // namespace
}  // namespace baton
