// The in-process local worker in virtual time: shell and http steps go through the
// coordinator's queue, placement and assignments, and its built-in runner does the work.
#include "workers/coordinator_test_util.h"

namespace baton::workers {
namespace {

using testing::CoordinatorFixture;
using testing::WorkerSpec;

// A built-in runner the test drives: it records what it was asked and keeps the
// callbacks until the test reports for it.
class FakeBuiltin final : public Runner {
 public:
  std::map<std::string, RunCallbacks> running;  // by assignment id
  std::vector<std::string> started, cancelled;

  void Start(const RunRequest& request, RunCallbacks callbacks) override {
    started.push_back(request.assignment_id);
    running[request.assignment_id] = std::move(callbacks);
  }
  void Cancel(const std::string& assignment_id) override { cancelled.push_back(assignment_id); }
  void Done(const std::string& id, RunResult r = {}) {
    auto cb = std::move(running.at(id));
    running.erase(id);
    cb.Done(std::move(r));
  }
};

class LocalWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LocalWorkerOptions local;
    local.capacity = 2;
    local.host = "this-host";
    local.runners = {{StepType::kShell, &shell}, {StepType::kHttp, &http}};
    f.coordinator->AddLocalWorker(local);
  }

  // Runner::Start of a local step (`type`) of execution `ex`; returns the dispatch id.
  std::string StartLocal(const std::string& ex, StepType type = StepType::kShell,
                         const std::string& ns = "default") {
    RunRequest req;
    req.execution_id = ex;
    req.step_id = "build";
    req.assignment_id = ex + "/build/1";
    req.type = type;
    req.ns = ns;
    req.spec = MakeSpec({{"run", Json::array({"make"})}});
    f.coordinator->local_runner()->Start(req, f.Callbacks(req.assignment_id));
    f.loop.RunReady();
    return req.assignment_id;
  }
  const WorkerEntry& Local() const { return *f.coordinator->registry().Find("local"); }

  CoordinatorFixture f;
  FakeBuiltin shell, http;
};

TEST_F(LocalWorkerTest, IsAWorkerOfEveryNamespaceThatRunsTheBuiltInStepTypes) {
  const WorkerEntry& w = Local();
  EXPECT_TRUE(w.local);
  EXPECT_EQ(w.state, WorkerState::kOnline);
  EXPECT_EQ(w.capacity, 2);
  EXPECT_EQ(w.host, "this-host");
  EXPECT_EQ(w.commands, (std::vector<std::string>{"http", "shell"}));
  ASSERT_EQ(f.coordinator->registry().List("team-a").size(), 1u);
  EXPECT_EQ(f.coordinator->registry().List("team-a")[0]->id, "local");
  // Not stored: it is part of this process, not a worker that can come back.
  EXPECT_EQ(f.StoredWorkerStatus("local"), "(not stored)");
}

TEST_F(LocalWorkerTest, RunsAStepThroughAnAssignmentItsCallbacksUpdate) {
  const std::string id = StartLocal("ex1");
  ASSERT_EQ(shell.started, (std::vector<std::string>{id}));
  std::vector<AssignmentRecord> active = f.coordinator->Active("default", "local");
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0].id, id);
  EXPECT_EQ(active[0].command, "shell");
  EXPECT_EQ(active[0].status, "accepted");
  EXPECT_EQ(Local().held.size(), 1u);

  shell.running.at(id).Started();
  shell.running.at(id).Progress(40, Json{{"checkpoint", {{"chunk", 4}}}});
  f.loop.RunReady();
  EXPECT_EQ(f.outcomes[id].started, 1);
  ASSERT_EQ(f.outcomes[id].progress.size(), 1u);
  EXPECT_EQ(f.outcomes[id].progress[0].first, 40);
  active = f.coordinator->Active("", "");
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0].status, "running");
  EXPECT_EQ(active[0].progress, 40);
  EXPECT_EQ(active[0].checkpoint, (Json{{"chunk", 4}}));

  RunResult r;
  r.output = "built";
  r.exit_code = 0;
  shell.Done(id, r);
  f.loop.RunReady();
  const RunResult done = f.Done(id);
  EXPECT_TRUE(done.status.ok());
  EXPECT_EQ(done.output, "built");
  EXPECT_EQ(done.exit_code, 0);  // the built-in runner's result, whole
  EXPECT_TRUE(f.coordinator->Active("", "").empty());
  EXPECT_TRUE(Local().held.empty());
  // Never written: local work cannot be re-attached after a restart.
  EXPECT_EQ(f.store->GetAssignment(id).status().code(), errc::kNotFound);
}

TEST_F(LocalWorkerTest, WaitsForAFreeSlotAndSaysWhy) {
  const std::string a = StartLocal("ex1"), b = StartLocal("ex2", StepType::kHttp);
  const std::string c = StartLocal("ex3");
  EXPECT_EQ(shell.started, (std::vector<std::string>{a}));
  EXPECT_EQ(http.started, (std::vector<std::string>{b}));
  EXPECT_EQ(f.coordinator->WaitingCount(), 1u);
  EXPECT_EQ(f.coordinator->WaitingReason("ex3"),
            "step 'build': all 2 slots of the local worker are taken");

  http.Done(b);
  f.loop.RunReady();
  EXPECT_EQ(shell.started, (std::vector<std::string>{a, c}));
  EXPECT_EQ(f.coordinator->WaitingReason("ex3"), "");
}

TEST_F(LocalWorkerTest, ACancelledStepKeepsItsSlotUntilTheRunnerIsDone) {
  const std::string id = StartLocal("ex1");
  f.coordinator->local_runner()->Cancel(id);
  f.loop.RunReady();
  EXPECT_EQ(shell.cancelled, (std::vector<std::string>{id}));
  EXPECT_FALSE(f.IsDone(id));
  EXPECT_EQ(Local().held.size(), 1u);  // the process may still be dying

  RunResult r;
  r.status = Status(errc::kCancelled, "killed");
  shell.Done(id, r);
  f.loop.RunReady();
  EXPECT_EQ(f.Done(id).status.code(), errc::kCancelled);
  EXPECT_TRUE(Local().held.empty());
}

TEST_F(LocalWorkerTest, ACancelledStepThatWaitsEndsAtOnce) {
  StartLocal("ex1");
  StartLocal("ex2");
  const std::string waiting = StartLocal("ex3");
  f.coordinator->local_runner()->Cancel(waiting);
  f.loop.RunReady();
  EXPECT_EQ(f.Done(waiting).status.code(), errc::kCancelled);
  EXPECT_EQ(f.coordinator->WaitingCount(), 0u);
  EXPECT_TRUE(shell.cancelled.empty());
}

TEST_F(LocalWorkerTest, AReportForADispatchThatEndedChangesNothing) {
  const std::string id = StartLocal("ex1");
  RunCallbacks late = shell.running.at(id);  // a copy, as a runner's thread might hold
  shell.Done(id);
  f.loop.RunReady();
  late.Progress(90, nullptr);
  late.Done(RunResult{Status(errc::kExitNonzero, "late"), {}, {}, 1, {}});
  f.loop.RunReady();
  EXPECT_TRUE(f.Done(id).status.ok());
  EXPECT_TRUE(f.outcomes[id].progress.empty());
  EXPECT_TRUE(f.stale.empty());  // not a remote worker's stale message
}

TEST_F(LocalWorkerTest, KeepsLocalAndRemoteWorkApart) {
  // A remote worker advertising "shell" gets no `type: shell` step...
  protocol::Register shell_worker;
  shell_worker.worker_id = "remote-shell";
  shell_worker.capacity = 4;
  shell_worker.commands = {"shell"};
  auto ch = std::make_shared<testing::TestChannel>();
  ASSERT_TRUE(f.coordinator->Register("default", shell_worker, ch).ok());
  f.loop.RunReady();
  StartLocal("ex1");
  StartLocal("ex2");
  StartLocal("ex3");
  EXPECT_TRUE(ch->Commands().empty());
  EXPECT_EQ(f.coordinator->WaitingCount(), 1u);
  // ...and the local worker no `type: command` one.
  f.Start("ex4");
  EXPECT_TRUE(Local().held.count("ex4/download/1") == 0);
  EXPECT_EQ(f.coordinator->WaitingReason("ex4"),
            "step 'download': no ONLINE worker handles model.download");
}

TEST_F(LocalWorkerTest, CannotBeImpersonatedOrDrained) {
  auto ch = std::make_shared<testing::TestChannel>();
  Result<protocol::Registered> r = f.Register("local", WorkerSpec{}, ch);
  EXPECT_EQ(r.status().code(), errc::kConflict);
  EXPECT_NE(r.status().message().find("reserved"), std::string::npos) << r.status().message();
  EXPECT_TRUE(Local().local);

  Status drain = f.coordinator->Drain("default", "local");
  EXPECT_EQ(drain.code(), errc::kConflict);
  EXPECT_EQ(Local().state, WorkerState::kOnline);
}

TEST_F(LocalWorkerTest, AStepTypeWithoutABuiltInRunnerFailsUnsupported) {
  const std::string id = StartLocal("ex1", StepType::kWait);
  EXPECT_EQ(f.Done(id).status.code(), errc::kUnsupportedStepType);
  EXPECT_TRUE(f.coordinator->Active("", "").empty());
}

TEST_F(LocalWorkerTest, LocalStepsDoNotMakeABacklogOfCommandsBeScannedAgain) {
  // Regression: the local worker's free slots counted as room for every waiting command,
  // so each local step asked the registry about the whole backlog (a 5,000 backlog drained
  // at 722/s instead of ~3,900/s in bench/).
  f.Connect("a", WorkerSpec{.capacity = 1});
  for (int i = 0; i < 100; ++i) f.Start("cmd" + std::to_string(i));
  ASSERT_EQ(f.coordinator->WaitingCount(), 99u);
  const uint64_t before = f.coordinator->registry().selects();
  for (int i = 0; i < 10; ++i) {
    const std::string id = StartLocal("local" + std::to_string(i));
    shell.Done(id);
    f.loop.RunReady();
  }
  EXPECT_LE(f.coordinator->registry().selects() - before, 20u);
  EXPECT_EQ(f.coordinator->WaitingCount(), 99u);
}

}  // namespace
}  // namespace baton::workers
