// The coordinator's dispatch side in virtual time, over a memory store: the assignment is
// persisted before the command goes out; acks, progress and results reach the runner's
// callbacks and the store; fencing; selection; rejection; reconnection; cancel; latency.
// Failure detection, drain and restarts: coordinator_health_test.cpp.
#include "workers/coordinator_test_util.h"

namespace baton::workers {
namespace {

using testing::CoordinatorFixture;
using testing::DispatchSpec;
using testing::kCommand;
using testing::kStart;
using testing::WorkerSpec;

std::vector<std::string> AssignmentIds(const testing::TestChannel& ch) {
  std::vector<std::string> out;
  for (const protocol::Command& c : ch.Commands()) out.push_back(c.assignment_id);
  return out;
}

// ---- persisted first ----

TEST(Coordinator, SendsTheCommandOnlyOnceItsAssignmentIsDurable) {
  CoordinatorFixture f({}, /*hold_commits=*/true);
  auto a = f.Connect("a");
  const std::string id = f.Start("ex1");
  // Placed on a, but not committed yet: nothing goes out, nothing is stored.
  ASSERT_EQ(f.coordinator->Active("", "a").size(), 1u);
  EXPECT_EQ(f.coordinator->Active("", "a")[0].status, "dispatched");
  EXPECT_TRUE(a->Commands().empty());
  EXPECT_EQ(f.store->GetAssignment(id).status().code(), errc::kNotFound);

  f.holding_committer->Release();
  f.loop.RunReady();
  ASSERT_EQ(a->Commands().size(), 1u);
  const protocol::Command c = a->Commands()[0];
  EXPECT_EQ(c.assignment_id, id);
  EXPECT_EQ(c.command, kCommand);
  EXPECT_EQ(c.resource, "llama-3-8b");
  EXPECT_EQ(c.data, (Json{{"url", "u"}}));
  EXPECT_EQ(c.execution, (protocol::CommandExecution{"ex1", "download", 2, 1}));
  EXPECT_TRUE(c.checkpoint.is_null());
  EXPECT_EQ(c.timeout_seconds, 600);
  EXPECT_EQ(c.metadata.correlation_id, "ex1/download/1");
  EXPECT_EQ(c.metadata.priority, "normal");

  const AssignmentRecord stored = f.Stored(id);
  EXPECT_EQ(stored.dispatch_id, id);
  EXPECT_EQ(stored.id, id);
  EXPECT_EQ(stored.status, "dispatched");
  EXPECT_EQ(stored.worker_id, "a");
  EXPECT_EQ(stored.execution_id, "ex1");
  EXPECT_EQ(stored.step_id, "download");
  EXPECT_EQ(stored.command, kCommand);
  EXPECT_EQ(f.coordinator->stats().dispatched, 1u);
}

// A dispatch keeps its execution's id as the start of its own id; one whose id does not
// begin so (another version's, re-attached) keeps the execution's id apart.
TEST(Coordinator, ADispatchWhoseIdDoesNotBeginWithItsExecutionIdKeepsThatId) {
  CoordinatorFixture f;
  auto a = f.Connect("a", {.capacity = 1});
  const std::string first = f.Start("ex1");
  RunRequest req = f.Request("ex2");
  req.assignment_id = "legacy-7";
  f.coordinator->runner()->Start(req, f.Callbacks(req.assignment_id));
  f.loop.RunReady();
  EXPECT_EQ(f.coordinator->WaitingReason("ex2"),
            "step 'download': the only ONLINE worker for model.download is at capacity");
  const std::vector<AssignmentRecord> active = f.coordinator->Active("default", "");
  ASSERT_EQ(active.size(), 2u);
  EXPECT_EQ(active[1].execution_id, "ex2");
  ASSERT_TRUE(f.Succeed("a", first).ok());
  f.loop.RunReady();
  ASSERT_EQ(a->Commands().size(), 2u);
  const protocol::Command c = a->Commands()[1];
  EXPECT_EQ(c.assignment_id, "legacy-7");
  EXPECT_EQ(c.execution, (protocol::CommandExecution{"ex2", "download", 2, 1}));
  EXPECT_EQ(c.metadata.correlation_id, "ex2/download/1");
  EXPECT_EQ(f.Stored("legacy-7").execution_id, "ex2");
  ASSERT_TRUE(f.Succeed("a", "legacy-7").ok());
  EXPECT_TRUE(f.Done("legacy-7").status.ok());
}

// A dispatch keeps its step id out of the assignment id only when the id spells it
// ("<execution>/<step>/..."): whatever else the id says, the worker and the records get
// the step id the engine gave.
TEST(Coordinator, ADispatchWhoseIdDoesNotSpellItsStepIdKeepsThatStepId) {
  for (const std::string id : {"ex2/download/1", "ex2/downloads/1", "ex2/down/1", "ex2/download",
                               "ex2/other/1", "ex2-download-1", "ex2//1"}) {
    SCOPED_TRACE(id);
    CoordinatorFixture f;
    auto a = f.Connect("a", {.capacity = 1});
    RunRequest req = f.Request("ex2");
    req.assignment_id = id;
    f.coordinator->runner()->Start(req, f.Callbacks(req.assignment_id));
    f.loop.RunReady();
    const std::vector<AssignmentRecord> active = f.coordinator->Active("default", "");
    ASSERT_EQ(active.size(), 1u);
    EXPECT_EQ(active[0].step_id, "download");
    ASSERT_EQ(a->Commands().size(), 1u);
    const protocol::Command c = a->Commands()[0];
    EXPECT_EQ(c.assignment_id, id);
    EXPECT_EQ(c.execution, (protocol::CommandExecution{"ex2", "download", 2, 1}));
    EXPECT_EQ(c.metadata.correlation_id, "ex2/download/1");
    EXPECT_EQ(f.Stored(id).step_id, "download");
    ASSERT_TRUE(f.Succeed("a", id).ok());
    EXPECT_TRUE(f.Done(id).status.ok());
  }
}

TEST(Coordinator, AnAssignmentThatCannotBeStoredFailsWithStoreErrorAndSendsNothing) {
  CoordinatorFixture f({}, /*hold_commits=*/true);
  auto a = f.Connect("a");
  const std::string id = f.Start("ex1");
  f.holding_committer->Release(Status(errc::kStore, "disk full"));
  f.loop.RunReady();
  EXPECT_TRUE(a->sent.empty());
  const RunResult r = f.Done(id);
  EXPECT_EQ(r.status.code(), errc::kStore);
  EXPECT_NE(r.status.message().find("disk full"), std::string::npos) << r.status.message();
  EXPECT_TRUE(f.coordinator->Active("", "").empty());
  EXPECT_TRUE(f.coordinator->registry().Find("a")->held.empty());
  // Its end is written as well, once the store takes writes again.
  f.holding_committer->Release();
  EXPECT_EQ(f.Stored(id).status, "failed");
}

// ---- acks, progress, results ----

TEST(Coordinator, AnAcceptedAckStartsTheStepOnce) {
  CoordinatorFixture f;
  f.Connect("a");
  const std::string id = f.Start("ex1");
  EXPECT_EQ(f.outcomes[id].started, 0);
  ASSERT_TRUE(f.Ack("a", id).ok());
  EXPECT_EQ(f.outcomes[id].started, 1);
  EXPECT_EQ(f.Stored(id).status, "accepted");
  ASSERT_TRUE(f.Ack("a", id).ok());  // repeated: changes nothing
  EXPECT_EQ(f.outcomes[id].started, 1);
  EXPECT_FALSE(f.IsDone(id));
}

TEST(Coordinator, AnAcceptedAckCountsOneDispatchLatency) {
  CoordinatorFixture f;
  f.Connect("a");
  const std::string id = f.Start("ex1");
  EXPECT_EQ(f.coordinator->stats().latency_total, 0u);
  ASSERT_TRUE(f.Ack("a", id).ok());
  ASSERT_TRUE(f.Ack("a", id).ok());
  const CoordinatorStats& s = f.coordinator->stats();
  EXPECT_EQ(s.latency_total, 1u);
  uint64_t counted = 0;
  for (uint64_t n : s.latency_counts) counted += n;
  EXPECT_EQ(counted, 1u);
}

TEST(Coordinator, ProgressGivesTheCheckpointInItsDataAndStoresBoth) {
  CoordinatorFixture f;
  f.Connect("a");
  const std::string id = f.StartAccepted("ex1");
  ASSERT_TRUE(f.Progress("a", id, 45, {{"bytes", 1024}}, {{"phase", "download"}}).ok());
  ASSERT_EQ(f.outcomes[id].progress.size(), 1u);
  EXPECT_EQ(f.outcomes[id].progress[0].first, 45);
  EXPECT_EQ(f.outcomes[id].progress[0].second,
            (Json{{"phase", "download"}, {"checkpoint", {{"bytes", 1024}}}}));
  AssignmentRecord stored = f.Stored(id);
  EXPECT_EQ(stored.status, "running");
  EXPECT_EQ(stored.progress, 45);
  EXPECT_EQ(stored.checkpoint, (Json{{"bytes", 1024}}));

  // Without a checkpoint: the data as it is; the last checkpoint is kept.
  ASSERT_TRUE(f.Progress("a", id, 60).ok());
  ASSERT_EQ(f.outcomes[id].progress.size(), 2u);
  EXPECT_EQ(f.outcomes[id].progress[1].first, 60);
  EXPECT_TRUE(f.outcomes[id].progress[1].second.is_null());
  stored = f.Stored(id);
  EXPECT_EQ(stored.progress, 60);
  EXPECT_EQ(stored.checkpoint, (Json{{"bytes", 1024}}));
  EXPECT_EQ(f.outcomes[id].started, 1);
}

TEST(Coordinator, ProgressWithoutAnAckStartsTheStep) {
  CoordinatorFixture f;
  f.Connect("a");
  const std::string id = f.Start("ex1");
  ASSERT_TRUE(f.Progress("a", id, 10, {{"bytes", 1}}).ok());
  EXPECT_EQ(f.outcomes[id].started, 1);
  EXPECT_EQ(f.Stored(id).status, "running");
}

TEST(Coordinator, ASuccessfulResultCompletesWithItsOutput) {
  CoordinatorFixture f;
  f.Connect("a");
  const std::string id = f.StartAccepted("ex1");
  ASSERT_TRUE(f.Succeed("a", id, {{"path", "/models/x"}}).ok());
  const RunResult r = f.Done(id);
  EXPECT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output, (Json{{"path", "/models/x"}}));
  const AssignmentRecord stored = f.Stored(id);
  EXPECT_EQ(stored.status, "completed");
  EXPECT_EQ(stored.worker_id, "a");
  EXPECT_TRUE(f.coordinator->Active("", "").empty());
  EXPECT_TRUE(f.coordinator->registry().Find("a")->held.empty());
}

// A result that comes without an ack stands for it (docs/worker-protocol.md): the step
// starts, once, before it completes, and the answer counts as the dispatch's latency.
TEST(Coordinator, AResultWithoutAnAckStartsTheStepBeforeCompletingIt) {
  CoordinatorFixture f;
  f.Connect("a");
  const std::string id = f.Start("ex1");
  ASSERT_TRUE(f.Succeed("a", id, {{"ok", true}}).ok());
  EXPECT_EQ(f.outcomes[id].started, 1);
  const RunResult r = f.Done(id);
  EXPECT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output, (Json{{"ok", true}}));
  EXPECT_EQ(f.Stored(id).status, "completed");
  EXPECT_EQ(f.coordinator->stats().latency_total, 1u);
}

// After an ack the result starts nothing again.
TEST(Coordinator, AResultAfterAnAckStartsTheStepOnlyOnce) {
  CoordinatorFixture f;
  f.Connect("a");
  const std::string id = f.StartAccepted("ex1");
  ASSERT_TRUE(f.Succeed("a", id, {}).ok());
  EXPECT_EQ(f.outcomes[id].started, 1);
  EXPECT_EQ(f.coordinator->stats().latency_total, 1u);
  EXPECT_TRUE(f.Done(id).status.ok());
}

// One frame carrying the ack, progress and result of a command: one batch, in which the
// assignment is written once, in its last state.
TEST(Coordinator, AGroupOfMessagesWritesEachAssignmentOnceInOneBatch) {
  CoordinatorFixture f({}, /*hold_commits=*/true);
  f.Connect("a");
  const std::string id = f.Start("ex1");
  f.holding_committer->Release();
  f.loop.RunReady();
  ASSERT_EQ(f.holding_committer->held(), 0u);
  {
    auto group = f.coordinator->GroupWrites();
    ASSERT_TRUE(f.Ack("a", id).ok());
    ASSERT_TRUE(f.Progress("a", id, 50, {{"bytes", 7}}).ok());
    ASSERT_TRUE(f.Succeed("a", id, {{"path", "/m"}}).ok());
    EXPECT_EQ(f.holding_committer->held(), 0u);  // nothing before the group ends
  }
  ASSERT_EQ(f.holding_committer->held(), 1u);
  const WriteBatch& batch = f.holding_committer->batch(0);
  ASSERT_EQ(batch.assignments.size(), 1u);
  EXPECT_EQ(batch.assignments[0].status, "completed");
  EXPECT_EQ(batch.assignments[0].checkpoint, (Json{{"bytes", 7}}));
  f.holding_committer->Release();
  EXPECT_EQ(f.Stored(id).status, "completed");
  EXPECT_TRUE(f.Done(id).status.ok());
}

TEST(Coordinator, AFailedResultCarriesItsCodeMessageDetailsAndRetryable) {
  CoordinatorFixture f;
  f.Connect("a");
  const std::string retry = f.Start("ex1");
  const std::string final = f.Start("ex2");
  ASSERT_TRUE(
      f.Fail("a", retry, {"DOWNLOAD_FAILED", "HTTP 503 from hub", {{"url", "u"}}, true}).ok());
  ASSERT_TRUE(f.Fail("a", final, {"NO_SUCH_MODEL", "llama-9 does not exist", {}, false}).ok());

  const RunResult r1 = f.Done(retry);
  EXPECT_EQ(r1.status.code(), "DOWNLOAD_FAILED");
  EXPECT_EQ(r1.status.message(), "HTTP 503 from hub");
  EXPECT_EQ(r1.error_details, (Json{{"url", "u"}}));  // retryable: nothing added

  const RunResult r2 = f.Done(final);
  EXPECT_EQ(r2.status.code(), "NO_SUCH_MODEL");
  EXPECT_EQ(r2.status.message(), "llama-9 does not exist");
  ASSERT_TRUE(r2.error_details.is_object());
  EXPECT_EQ(r2.error_details.value("retryable", true), false);

  EXPECT_EQ(f.Stored(retry).status, "failed");
  EXPECT_EQ(f.Stored(final).status, "failed");
}

TEST(Coordinator, ASecondResultIsStaleAndReportedWithItsExecutionAndStep) {
  CoordinatorFixture f;
  f.Connect("a");
  const std::string id = f.Start("ex1");
  ASSERT_TRUE(f.Succeed("a", id).ok());
  EXPECT_EQ(f.Succeed("a", id).code(), errc::kStaleAssignment);
  EXPECT_EQ(f.Ack("a", id).code(), errc::kStaleAssignment);
  EXPECT_EQ(f.Progress("a", id, 50).code(), errc::kStaleAssignment);
  EXPECT_EQ(f.coordinator->stats().stale, 3u);
  using Where = std::pair<std::string, std::string>;
  EXPECT_EQ(f.stale,
            (std::vector<Where>{{"ex1", "download"}, {"ex1", "download"}, {"ex1", "download"}}));
  EXPECT_EQ(f.outcomes[id].done.size(), 1u);
  EXPECT_EQ(f.Stored(id).status, "completed");
}

// ---- fencing ----

TEST(Coordinator, MessagesFromAWorkerThatDoesNotHoldTheAssignmentAreStaleAndChangeNothing) {
  CoordinatorFixture f;
  f.Connect("a");
  f.Connect("b");
  const std::string id = f.Start("ex1");
  ASSERT_EQ(f.Stored(id).worker_id, "a");
  ASSERT_TRUE(f.Ack("a", id).ok());
  ASSERT_TRUE(f.Progress("a", id, 10, {{"bytes", 10}}).ok());

  EXPECT_EQ(f.Ack("b", id).code(), errc::kStaleAssignment);
  EXPECT_EQ(f.Progress("b", id, 90, {{"bytes", 90}}).code(), errc::kStaleAssignment);
  EXPECT_EQ(f.Succeed("b", id).code(), errc::kStaleAssignment);
  EXPECT_EQ(f.Succeed("b", id + ".r1").code(), errc::kStaleAssignment);
  EXPECT_EQ(f.coordinator->stats().stale, 4u);
  ASSERT_EQ(f.stale.size(), 4u);
  EXPECT_EQ(f.stale.back(), (std::pair<std::string, std::string>{"ex1", "download"}));

  EXPECT_EQ(f.outcomes[id].started, 1);
  EXPECT_EQ(f.outcomes[id].progress.size(), 1u);
  EXPECT_FALSE(f.IsDone(id));
  const AssignmentRecord stored = f.Stored(id);
  EXPECT_EQ(stored.worker_id, "a");
  EXPECT_EQ(stored.status, "running");
  EXPECT_EQ(stored.progress, 10);
  EXPECT_EQ(stored.checkpoint, (Json{{"bytes", 10}}));
  // The holder's result still counts.
  ASSERT_TRUE(f.Succeed("a", id).ok());
  EXPECT_TRUE(f.Done(id).status.ok());
}

TEST(Coordinator, AnUnknownWorkerIsNotFound) {
  CoordinatorFixture f;
  f.Connect("a");
  const std::string id = f.Start("ex1");
  EXPECT_EQ(f.Heartbeat("ghost").code(), errc::kNotFound);
  EXPECT_EQ(f.Ack("ghost", id).code(), errc::kNotFound);
  EXPECT_EQ(f.Succeed("ghost", id).code(), errc::kNotFound);
  EXPECT_EQ(f.coordinator->stats().stale, 0u);
  EXPECT_FALSE(f.IsDone(id));
}

// ---- selection ----

TEST(Coordinator, PlacesOnTheLowestLoadRatio) {
  CoordinatorFixture f;
  auto a = f.Connect("a", {.capacity = 2});
  auto b = f.Connect("b", {.capacity = 4});
  for (const char* ex : {"ex1", "ex2", "ex3", "ex4", "ex5"}) f.Start(ex);
  // ex1: 0 = 0, a first; ex2: b (0 < 1/2); ex3: b (1/4 < 1/2); ex4: 1/2 = 1/2, round-robin
  // after b wraps to a; ex5: a is full.
  EXPECT_EQ(AssignmentIds(*a), (std::vector<std::string>{"ex1/download/1", "ex4/download/1"}));
  EXPECT_EQ(AssignmentIds(*b),
            (std::vector<std::string>{"ex2/download/1", "ex3/download/1", "ex5/download/1"}));
}

TEST(Coordinator, TakesEqualWorkersInTurn) {
  CoordinatorFixture f;
  auto a = f.Connect("a");
  auto b = f.Connect("b");
  auto c = f.Connect("c");
  std::vector<std::string> holders;
  for (const char* ex : {"ex1", "ex2", "ex3", "ex4"}) {
    const std::string id = f.Start(ex);
    const std::string holder = f.Stored(id).worker_id;
    holders.push_back(holder);
    ASSERT_TRUE(f.Succeed(holder, id).ok());
  }
  EXPECT_EQ(holders, (std::vector<std::string>{"a", "b", "c", "a"}));
}

TEST(Coordinator, TargetNodePinsTheStepToThatNode) {
  CoordinatorFixture f;
  auto a = f.Connect("a", {.node = "n1"});
  auto b = f.Connect("b", {.capacity = 4, .node = "n2"});
  f.Start("ex1", {.target = {{"node", "n2"}}});
  f.Start("ex2", {.target = {{"node", "n2"}}});  // b although a is idle
  EXPECT_TRUE(a->Commands().empty());
  EXPECT_EQ(AssignmentIds(*b), (std::vector<std::string>{"ex1/download/1", "ex2/download/1"}));
  f.Start("ex3", {.target = {{"node", "n9"}}});
  EXPECT_EQ(f.coordinator->WaitingReason("ex3"),
            "step 'download': no ONLINE worker handles model.download on node n9");
}

TEST(Coordinator, TargetTagsNeedEveryTag) {
  CoordinatorFixture f;
  auto a = f.Connect("a", {.tags = {"gpu"}});
  auto b = f.Connect("b", {.capacity = 1, .tags = {"a100", "gpu"}});
  f.Start("ex1", {.target = {{"tags", {"gpu", "a100"}}}});
  f.Start("ex2", {.target = {{"tags", {"gpu", "a100"}}}});  // b is full; a lacks a100
  f.Start("ex3", {.target = {{"tags", {"tpu"}}}});
  f.Start("ex4", {.target = {{"tags", {"gpu"}}}});
  EXPECT_EQ(AssignmentIds(*a), (std::vector<std::string>{"ex4/download/1"}));
  EXPECT_EQ(AssignmentIds(*b), (std::vector<std::string>{"ex1/download/1"}));
  EXPECT_EQ(f.coordinator->WaitingReason("ex2"),
            "step 'download': the only ONLINE worker for model.download with tags gpu, a100 is at "
            "capacity");
  EXPECT_EQ(f.coordinator->WaitingReason("ex3"),
            "step 'download': no ONLINE worker handles model.download with tags tpu");
}

TEST(Coordinator, AFullWorkerLeavesTheDispatchWaitingWithAReason) {
  CoordinatorFixture f;
  auto a = f.Connect("a", {.capacity = 1});
  const std::string first = f.Start("ex1");
  const std::string second = f.Start("ex2");
  EXPECT_EQ(AssignmentIds(*a), (std::vector<std::string>{first}));
  const std::vector<AssignmentRecord> active = f.coordinator->Active("default", "");
  ASSERT_EQ(active.size(), 2u);
  EXPECT_EQ(active[1].dispatch_id, second);
  EXPECT_EQ(active[1].status, "waiting");
  EXPECT_EQ(active[1].worker_id, "");
  EXPECT_EQ(f.coordinator->WaitingReason("ex1"), "");
  EXPECT_EQ(f.coordinator->WaitingReason("ex2"),
            "step 'download': the only ONLINE worker for model.download is at capacity");
  // Capacity frees: the waiting one goes out.
  ASSERT_TRUE(f.Succeed("a", first).ok());
  EXPECT_EQ(AssignmentIds(*a), (std::vector<std::string>{first, second}));
  EXPECT_EQ(f.coordinator->WaitingReason("ex2"), "");
}

TEST(Coordinator, PlacesTheHighestPriorityWaitingDispatchFirstThenInArrivalOrder) {
  CoordinatorFixture f;
  auto a = f.Connect("a", {.capacity = 1});
  std::string running = f.Start("ex1");
  f.Start("ex2", {.priority = 1});
  f.Start("ex3", {.priority = 3});
  f.Start("ex4", {.priority = 0});
  f.Start("ex5", {.priority = 3});
  f.Start("ex6", {.priority = 2});
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(f.Succeed("a", running).ok());
    running = a->Commands().back().assignment_id;
  }
  EXPECT_EQ(AssignmentIds(*a),
            (std::vector<std::string>{"ex1/download/1", "ex3/download/1", "ex5/download/1",
                                      "ex6/download/1", "ex2/download/1", "ex4/download/1"}));
  EXPECT_EQ(a->Commands()[1].metadata.priority, "critical");
  EXPECT_EQ(a->Commands()[5].metadata.priority, "low");
}

// ---- rejection ----

TEST(Coordinator, ARejectedCommandGoesToAnotherWorkerNeverBackToTheOneThatRejectedIt) {
  CoordinatorFixture f;
  auto a = f.Connect("a");
  const std::string id = f.Start("ex1");
  ASSERT_TRUE(f.Ack("a", id, /*accepted=*/false).ok());
  // a has room but refused it: the dispatch waits, stored as waiting.
  EXPECT_EQ(a->Commands().size(), 1u);
  EXPECT_EQ(f.outcomes[id].started, 0);
  EXPECT_FALSE(f.IsDone(id));
  AssignmentRecord stored = f.Stored(id);
  EXPECT_EQ(stored.status, "waiting");
  EXPECT_EQ(stored.worker_id, "");
  EXPECT_EQ(f.coordinator->WaitingReason("ex1"),
            "step 'download': the only ONLINE worker for model.download is at capacity or "
            "refused it");

  auto b = f.Connect("b");
  ASSERT_EQ(AssignmentIds(*b), (std::vector<std::string>{id}));
  stored = f.Stored(id);
  EXPECT_EQ(stored.status, "dispatched");
  EXPECT_EQ(stored.worker_id, "b");
  EXPECT_EQ(f.Succeed("a", id).code(), errc::kStaleAssignment);
  ASSERT_TRUE(f.Ack("b", id).ok());
  EXPECT_EQ(f.outcomes[id].started, 1);
  // A rejection is not a reassignment.
  EXPECT_EQ(f.coordinator->stats().reassigned, 0u);
  EXPECT_TRUE(f.Moves(id).empty());
}

// ---- registering again ----

TEST(Coordinator, RegisteringAgainReplacesTheChannelAndKeepsTheAssignments) {
  CoordinatorFixture f;
  auto old = f.Connect("a");
  const std::string id = f.StartAccepted("ex1");
  auto fresh = f.Connect("a");
  EXPECT_TRUE(old->closed);
  EXPECT_FALSE(fresh->closed);
  EXPECT_EQ(f.coordinator->Active("", "a").size(), 1u);
  EXPECT_TRUE(fresh->Commands().empty());  // accepted: it has it
  ASSERT_TRUE(f.Progress("a", id, 50).ok());
  // The old connection's end, reported late, does not drop the new one.
  f.coordinator->Disconnected("a", old.get());
  f.coordinator->runner()->Cancel(id);
  EXPECT_EQ(fresh->Cancels().size(), 1u);
  EXPECT_TRUE(old->Cancels().empty());
}

TEST(Coordinator, AReconnectedWorkerGetsACommandItNeverAcknowledgedAgain) {
  CoordinatorFixture f;
  auto old = f.Connect("a");
  const std::string id = f.Start("ex1");
  ASSERT_EQ(AssignmentIds(*old), (std::vector<std::string>{id}));
  auto fresh = f.Connect("a");
  EXPECT_EQ(AssignmentIds(*fresh), (std::vector<std::string>{id}));
  EXPECT_EQ(f.Stored(id).status, "dispatched");
  ASSERT_TRUE(f.Ack("a", id).ok());
  EXPECT_EQ(f.outcomes[id].started, 1);
  EXPECT_EQ(f.coordinator->stats().dispatched, 1u);
}

TEST(Coordinator, ARegistrationInAnotherNamespaceConflicts) {
  CoordinatorFixture f;
  auto a = f.Connect("a");
  auto other = std::make_shared<testing::TestChannel>();
  EXPECT_EQ(f.Register("a", {.ns = "team-b"}, other).status().code(), errc::kConflict);
  EXPECT_FALSE(a->closed);
  EXPECT_EQ(f.coordinator->registry().Find("a")->ns, "default");
  // Still a's: work goes to its first connection.
  f.Start("ex1");
  EXPECT_EQ(a->Commands().size(), 1u);
  EXPECT_TRUE(other->sent.empty());
}

// ---- cancel ----

TEST(Coordinator, CancelTellsTheHolderAndFinishesAtOnce) {
  CoordinatorFixture f;
  auto a = f.Connect("a");
  const std::string id = f.StartAccepted("ex1");
  f.coordinator->runner()->Cancel(id);
  EXPECT_EQ(f.Done(id).status.code(), errc::kCancelled);  // without running the loop
  ASSERT_EQ(a->Cancels().size(), 1u);
  EXPECT_EQ(a->Cancels()[0].assignment_id, id);
  f.loop.RunReady();
  EXPECT_EQ(f.Stored(id).status, "cancelled");
  EXPECT_TRUE(f.coordinator->registry().Find("a")->held.empty());
  // What the holder still sends for it is stale.
  EXPECT_EQ(f.Succeed("a", id).code(), errc::kStaleAssignment);
  EXPECT_EQ(f.outcomes[id].done.size(), 1u);
}

TEST(Coordinator, CancelOfAWaitingDispatchSendsNothing) {
  CoordinatorFixture f;
  const std::string id = f.Start("ex1");
  f.coordinator->runner()->Cancel(id);
  EXPECT_EQ(f.Done(id).status.code(), errc::kCancelled);
  EXPECT_EQ(f.coordinator->WaitingReason("ex1"), "");
  auto a = f.Connect("a");
  EXPECT_TRUE(a->sent.empty());
}

}  // namespace
}  // namespace baton::workers
