// Engine::JoinedTurn with the coordinator writing through the engine's joining committer:
// a worker's ack and result in one small body (the transports join bodies of up to 4
// messages) commit the assignment's last state in the same transaction as the step's
// completion. Before, the coordinator's batch went to the
// committer on its own and the completion followed a task later: two transactions, and a
// crash between them stored a completed assignment beside a step still running (the
// command was dispatched again on restart).
#include <baton/engine.h>

#include "support/held_committer.h"
#include "support/sim_harness.h"
#include "workers/coordinator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

namespace baton::workers {
namespace {

constexpr const char* kWorkflow = R"(
name: remote
steps:
  - {id: download, type: command, command: model.download, timeout: 1h}
)";

class Channel final : public WorkerChannel {
 public:
  std::vector<protocol::Command> commands;
  void Send(const protocol::ServerMessage& m) override {
    if (const auto* c = std::get_if<protocol::Command>(&m)) commands.push_back(*c);
  }
  void Close() override {}
};

struct Fixture : baton::testing::HeldEngine {
  std::unique_ptr<Coordinator> coordinator;
  std::shared_ptr<Channel> channel = std::make_shared<Channel>();

  Fixture() {
    coordinator =
        std::make_unique<Coordinator>(&loop, engine.joining_committer(), CoordinatorOptions{});
    engine.SetRunner(StepType::kCommand, coordinator->runner());
    protocol::Register r;
    r.worker_id = "w1";
    r.capacity = 2;
    r.commands = {"model.download"};
    EXPECT_TRUE(coordinator->Register("default", r, channel).ok());
    loop.RunReady();
    ReleaseAll();
  }
  void ReleaseAll() {
    while (committer.held() > 0) {
      committer.ReleaseOne();
      loop.RunReady();
    }
  }
  // Started, dispatched durably and sent to the worker; the assignment id.
  std::string Dispatched() {
    StartRequest req;
    req.workflow = baton::testing::MustParse(kWorkflow);
    loop.Post([&] { EXPECT_TRUE(engine.Start(req).ok()); });
    loop.RunReady();
    ReleaseAll();
    EXPECT_EQ(channel->commands.size(), 1u);
    return channel->commands.empty() ? "" : channel->commands.back().assignment_id;
  }
  // The ack and the result of `assignment` in one body, as the server's transports hand
  // them over (with a JoinedTurn when `joined`).
  void AnswerInOneBody(const std::string& assignment, bool joined) {
    loop.Post([&] {
      std::optional<Engine::JoinedTurn> turn;
      if (joined) turn.emplace(&engine);
      auto group = coordinator->GroupWrites();
      protocol::CommandAck ack;
      ack.assignment_id = assignment;
      ack.status = protocol::AckStatus::kAccepted;
      EXPECT_TRUE(coordinator->OnMessage("w1", ack).ok());
      EXPECT_TRUE(
          coordinator->OnMessage("w1", protocol::CommandResult::Success(assignment, {{"x", 1}}))
              .ok());
    });
    loop.RunReady();
  }
};

bool HasStep(const WriteBatch& b, StepStatus status) {
  return std::any_of(b.steps.begin(), b.steps.end(),
                     [&](const StepRecord& s) { return s.status == status; });
}

TEST(JoinedTurn, AnAckAndAResultCommitWithTheStepsCompletionInOneBatch) {
  Fixture f;
  const std::string assignment = f.Dispatched();
  ASSERT_FALSE(assignment.empty());
  f.AnswerInOneBody(assignment, /*joined=*/true);

  ASSERT_EQ(f.committer.held(), 1u);  // one transaction
  const WriteBatch& b = f.committer.batch(0);
  ASSERT_EQ(b.assignments.size(), 1u);
  EXPECT_EQ(b.assignments[0].dispatch_id, assignment);
  EXPECT_EQ(b.assignments[0].status, "completed");
  EXPECT_TRUE(HasStep(b, StepStatus::kCompleted));
  EXPECT_TRUE(std::any_of(b.events.begin(), b.events.end(),
                          [](const EventRecord& e) { return e.type == "execution.completed"; }));

  f.ReleaseAll();
  EXPECT_EQ(f.store->GetAssignment(assignment)->status, "completed");
  const std::string execution = f.store->GetAssignment(assignment)->execution_id;
  EXPECT_EQ(f.store->GetExecution(execution)->status, ExecutionStatus::kCompleted);
}

TEST(JoinedTurn, WithoutOneTheCoordinatorsBatchGoesAheadOnItsOwn) {
  // What a large body does (the transports join small ones only): the writer starts on
  // the assignments while the engine handles the results.
  Fixture f;
  const std::string assignment = f.Dispatched();
  f.AnswerInOneBody(assignment, /*joined=*/false);
  ASSERT_EQ(f.committer.held(), 2u);
  EXPECT_EQ(f.committer.batch(0).assignments.size(), 1u);
  EXPECT_TRUE(f.committer.batch(0).steps.empty());
  EXPECT_TRUE(HasStep(f.committer.batch(1), StepStatus::kCompleted));
  f.ReleaseAll();
}

std::unique_ptr<WriteBatch> WorkerRow(const std::string& id) {
  auto batch = std::make_unique<WriteBatch>();
  WorkerRecord w;
  w.id = id;
  w.ns = "default";
  w.status = "ONLINE";
  batch->workers.push_back(w);
  return batch;
}

TEST(JoinedTurn, AFailedCommitReachesTheHeldWritersToo) {
  Fixture f;
  const std::string assignment = f.Dispatched();
  Status held_outcome = Status::Ok();
  f.loop.Post([&] {
    Engine::JoinedTurn turn(&f.engine);
    f.engine.joining_committer()->SubmitOwned(WorkerRow("w2"),
                                              [&](const Status& s) { held_outcome = s; });
    protocol::CommandAck ack;
    ack.assignment_id = assignment;
    ack.status = protocol::AckStatus::kAccepted;
    EXPECT_TRUE(f.coordinator->OnMessage("w1", ack).ok());
  });
  f.loop.RunReady();
  ASSERT_EQ(f.committer.held(), 1u);
  EXPECT_EQ(f.committer.batch(0).workers.size(), 1u);
  EXPECT_TRUE(HasStep(f.committer.batch(0), StepStatus::kRunning));
  f.committer.ReleaseOne(Status(errc::kStore, "disk full"));
  f.loop.RunReady();
  EXPECT_EQ(held_outcome.code(), errc::kStore);
  // Nothing of the batch is stored: the assignment is as the dispatch left it.
  EXPECT_EQ(f.store->GetAssignment(assignment)->status, "dispatched");
  auto workers = f.store->ListWorkers("default");
  ASSERT_TRUE(workers.ok());
  EXPECT_TRUE(std::none_of(workers->begin(), workers->end(),
                           [](const WorkerRecord& w) { return w.id == "w2"; }));
}

TEST(JoinedTurn, ABatchWithEventsIsNotHeldAndGoesAfterWhatIs) {
  // The engine's observers take the events of its batch as its own: such a batch goes
  // straight to the committer, after what was held before it.
  Fixture f;
  f.loop.Post([&] {
    Engine::JoinedTurn turn(&f.engine);
    Committer* joining = f.engine.joining_committer();
    joining->SubmitOwned(WorkerRow("w2"), {});
    auto with_event = std::make_unique<WriteBatch>();
    EventRecord e;
    e.execution_id = "elsewhere";
    e.type = "step.stale_result";
    with_event->events.push_back(e);
    joining->SubmitOwned(std::move(with_event), {});
    EXPECT_EQ(f.committer.held(), 2u);
  });
  f.loop.RunReady();
  ASSERT_EQ(f.committer.held(), 2u);
  EXPECT_EQ(f.committer.batch(0).workers.size(), 1u);
  EXPECT_EQ(f.committer.batch(1).events.size(), 1u);
}

TEST(JoinedTurn, AHeldEmptyBatchStillGetsItsCallback) {
  // The turn makes nothing either: its batch is submitted anyway, for the held writer.
  Fixture f;
  bool done = false;
  f.loop.Post([&] {
    Engine::JoinedTurn turn(&f.engine);
    f.engine.joining_committer()->SubmitOwned(std::make_unique<WriteBatch>(),
                                              [&](const Status& s) { done = s.ok(); });
  });
  f.loop.RunReady();
  ASSERT_EQ(f.committer.held(), 1u);
  f.committer.ReleaseOne();
  EXPECT_TRUE(done);
}

TEST(JoinedTurn, AFlushInsideOneSubmitsWhatIsHeld) {
  Fixture f;
  f.loop.Post([&] {
    Engine::JoinedTurn turn(&f.engine);
    Committer* joining = f.engine.joining_committer();
    joining->SubmitOwned(WorkerRow("w2"), {});
    EXPECT_EQ(f.committer.held(), 0u);
    joining->Flush();
    EXPECT_EQ(f.committer.held(), 1u);
  });
  f.loop.RunReady();
  EXPECT_EQ(f.committer.held(), 1u);  // nothing more: the turn had nothing to add
}

TEST(JoinedTurn, NothingSubmittedOutsideOneIsHeld) {
  Fixture f;
  bool done = false;
  f.engine.joining_committer()->SubmitOwned(WorkerRow("w2"),
                                            [&](const Status& s) { done = s.ok(); });
  ASSERT_EQ(f.committer.held(), 1u);
  f.committer.ReleaseOne();
  EXPECT_TRUE(done);
}

}  // namespace
}  // namespace baton::workers
