// The coordinator's health side in virtual time, over a memory store: seed 003's detection
// timeline with the default options, the reassignment grace, max_reassignments, drain,
// deregistration, and a restart that re-attaches running work.
#include "workers/coordinator_test_util.h"

namespace baton::workers {
namespace {

using testing::CoordinatorFixture;
using testing::kCommand;
using testing::kStart;

CoordinatorOptions WithGrace(int64_t ms) {
  CoordinatorOptions options;
  options.reassignment_grace = Duration(ms);
  return options;
}

// Workers a and b; ex1's download placed on a (the first in turn) and accepted there.
struct AcceptedOnA {
  std::shared_ptr<testing::TestChannel> a, b;
  std::string id;
};
AcceptedOnA StartOnA(CoordinatorFixture& f) {
  AcceptedOnA s{f.Connect("a"), f.Connect("b"), ""};
  s.id = f.StartAccepted("ex1");
  EXPECT_EQ(f.Stored(s.id).worker_id, "a");
  return s;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- seed 003: detection and reassignment with the defaults ----

TEST(CoordinatorHealth, Seed003ASilentWorkerIsUnhealthyAtItsTimeoutAndItsWorkMovesOnce) {
  CoordinatorFixture f;  // heartbeat 30 s, timeout 60 s, grace 0, max_reassignments 3
  auto [a, b, id] = StartOnA(f);

  // Both report at t0; then a goes silent while b keeps its heartbeats.
  f.RunUntil(kStart + 30'000);
  const TimeMs t0 = f.now();
  ASSERT_TRUE(f.Heartbeat("a").ok());
  ASSERT_TRUE(f.Progress("a", id, 40, {{"bytes", 400}}).ok());
  f.HeartbeatsUntil({"b"}, t0 + 59'999);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kOnline);
  EXPECT_EQ(f.coordinator->stats().heartbeat_misses, 0u);
  EXPECT_TRUE(b->Commands().empty());

  f.RunUntil(t0 + 60'000);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kUnhealthy);
  EXPECT_EQ(f.StateOf("b"), WorkerState::kOnline);
  EXPECT_EQ(f.coordinator->stats().heartbeat_misses, 1u);
  EXPECT_EQ(f.StoredWorkerStatus("a"), "UNHEALTHY");
  EXPECT_EQ(f.StoredWorkerStatus("b"), "ONLINE");

  // Grace 0: moved at once, with the last checkpoint, under a new worker-facing id.
  ASSERT_EQ(b->Commands().size(), 1u);
  const protocol::Command moved = b->Commands()[0];
  EXPECT_EQ(moved.assignment_id, id + ".r1");
  EXPECT_EQ(moved.checkpoint, (Json{{"bytes", 400}}));
  EXPECT_EQ(moved.execution.attempt, 1);
  EXPECT_EQ(f.coordinator->stats().reassigned, 1u);
  AssignmentRecord stored = f.Stored(id);
  EXPECT_EQ(stored.id, id + ".r1");
  EXPECT_EQ(stored.worker_id, "b");
  EXPECT_EQ(stored.status, "dispatched");
  EXPECT_EQ(stored.reassignments, 1);
  EXPECT_EQ(stored.checkpoint, (Json{{"bytes", 400}}));
  const std::vector<ReassignmentRecord> moves = f.Moves(id);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].from_worker, "a");
  EXPECT_EQ(moves[0].to_worker, "b");
  EXPECT_EQ(moves[0].assignment_id, id + ".r1");
  EXPECT_EQ(moves[0].execution_id, "ex1");
  EXPECT_EQ(moves[0].checkpoint, (Json{{"bytes", 400}}));
  EXPECT_EQ(moves[0].at, t0 + 60'000);
  EXPECT_TRUE(Contains(moves[0].reason, "heartbeat")) << moves[0].reason;

  // a's late messages are stale (and say where they belonged); b's result counts once.
  EXPECT_EQ(f.Succeed("a", id).code(), errc::kStaleAssignment);
  EXPECT_EQ(f.Progress("a", id + ".r1", 50).code(), errc::kStaleAssignment);
  using Where = std::pair<std::string, std::string>;
  EXPECT_EQ(f.stale, (std::vector<Where>{{"ex1", "download"}, {"ex1", "download"}}));
  EXPECT_FALSE(f.IsDone(id));
  ASSERT_TRUE(f.Ack("b", id + ".r1").ok());
  ASSERT_TRUE(f.Succeed("b", id + ".r1", {{"path", "/models/x"}}).ok());
  EXPECT_EQ(f.Succeed("b", id + ".r1").code(), errc::kStaleAssignment);
  const RunResult r = f.Done(id);
  EXPECT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output, (Json{{"path", "/models/x"}}));
  stored = f.Stored(id);
  EXPECT_EQ(stored.status, "completed");
  EXPECT_EQ(stored.worker_id, "b");
}

TEST(CoordinatorHealth, AWorkerHeardFromWithinTheGraceIsOnlineAgainAndKeepsItsWork) {
  CoordinatorFixture f(WithGrace(30'000));
  auto [a, b, id] = StartOnA(f);
  f.HeartbeatsUntil({"b"}, kStart + 60'000);
  ASSERT_EQ(f.StateOf("a"), WorkerState::kUnhealthy);

  f.HeartbeatsUntil({"b"}, kStart + 89'999);
  ASSERT_TRUE(f.Heartbeat("a").ok());
  EXPECT_EQ(f.StateOf("a"), WorkerState::kOnline);
  EXPECT_EQ(f.StoredWorkerStatus("a"), "ONLINE");
  f.HeartbeatsUntil({"a", "b"}, kStart + 300'000);
  EXPECT_TRUE(b->Commands().empty());
  EXPECT_EQ(f.coordinator->stats().reassigned, 0u);
  EXPECT_EQ(f.Stored(id).worker_id, "a");
  ASSERT_TRUE(f.Succeed("a", id).ok());
  EXPECT_TRUE(f.Done(id).status.ok());
}

// A wall-clock step (NTP, a VM resume) moves no heartbeat deadline (clock.h): a worker
// last heard from 15 s before a 40 s step forward stays online, and is unhealthy once it
// has been silent for the timeout as the monotonic clock counts it. (Regression: a
// deadline timer armed once and checked against the wall clock took the step for 40 s of
// silence and marked a live worker unhealthy, moving its work.)
TEST(CoordinatorHealth, AWallClockStepMovesNoHeartbeatDeadline) {
  CoordinatorFixture f;  // heartbeat 30 s, timeout 60 s, grace 0
  auto [a, b, id] = StartOnA(f);
  f.RunUntil(kStart + 30'000);
  ASSERT_TRUE(f.Heartbeat("a").ok());
  ASSERT_TRUE(f.Heartbeat("b").ok());
  f.RunUntil(kStart + 45'000);
  f.clock.JumpWall(Duration(40'000));
  f.RunUntil(f.now() + 44'999);  // 59.999 s after the heartbeats, as time passed
  EXPECT_EQ(f.StateOf("a"), WorkerState::kOnline);
  EXPECT_EQ(f.coordinator->stats().heartbeat_misses, 0u);
  EXPECT_TRUE(b->Commands().empty());
  ASSERT_TRUE(f.Heartbeat("b").ok());
  f.RunUntil(f.now() + 1);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kUnhealthy);
  EXPECT_EQ(f.StateOf("b"), WorkerState::kOnline);
  EXPECT_EQ(f.coordinator->stats().heartbeat_misses, 1u);
}

// Each message pushes the worker's deadline back without a timer of its own: the one
// armed timer, when it comes due, arms itself for the rest. The deadline is where it was:
// the timeout after the last message. (Regression: every ack, result and heartbeat
// cancelled the worker's timer and scheduled another.)
TEST(CoordinatorHealth, MessagesMoveTheDeadlineWithoutATimerEach) {
  CoordinatorFixture f;  // heartbeat 30 s, timeout 60 s, grace 0
  auto [a, b, id] = StartOnA(f);
  const uint64_t timers_before = f.loop.TimersScheduled();
  for (int i = 0; i < 1000; ++i) {
    f.RunUntil(f.now() + 100);
    ASSERT_TRUE(f.Heartbeat("a").ok());
    ASSERT_TRUE(f.Heartbeat("b").ok());
  }
  const TimeMs last = f.now();
  // Each worker's timer came due once in those 100 s and armed itself again once.
  EXPECT_LE(f.loop.TimersScheduled() - timers_before, 4u);
  f.HeartbeatsUntil({"b"}, last + 59'999);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kOnline);
  EXPECT_EQ(f.coordinator->stats().heartbeat_misses, 0u);
  f.RunUntil(last + 60'000);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kUnhealthy);
  EXPECT_EQ(f.StateOf("b"), WorkerState::kOnline);
  EXPECT_EQ(f.coordinator->stats().heartbeat_misses, 1u);
}

TEST(CoordinatorHealth, AWorkerSilentThroughTheGraceLosesItsWorkAtItsEnd) {
  CoordinatorFixture f(WithGrace(30'000));
  auto [a, b, id] = StartOnA(f);
  f.HeartbeatsUntil({"b"}, kStart + 89'999);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kUnhealthy);
  EXPECT_TRUE(b->Commands().empty());
  EXPECT_EQ(f.Stored(id).worker_id, "a");

  f.RunUntil(kStart + 90'000);
  ASSERT_EQ(b->Commands().size(), 1u);
  EXPECT_EQ(b->Commands()[0].assignment_id, id + ".r1");
  ASSERT_EQ(f.Moves(id).size(), 1u);
  EXPECT_EQ(f.Moves(id)[0].at, kStart + 90'000);
}

TEST(CoordinatorHealth, TheGraceCountsFromTheLatestTimeTheWorkerWentUnhealthy) {
  CoordinatorFixture f(WithGrace(90'000));  // longer than the heartbeat timeout
  auto [a, b, id] = StartOnA(f);
  f.HeartbeatsUntil({"b"}, kStart + 60'000);
  ASSERT_EQ(f.StateOf("a"), WorkerState::kUnhealthy);  // first grace would end at 150 s
  f.RunUntil(kStart + 61'000);
  ASSERT_TRUE(f.Heartbeat("a").ok());  // back; then silent again
  f.HeartbeatsUntil({"b"}, kStart + 121'000);
  ASSERT_EQ(f.StateOf("a"), WorkerState::kUnhealthy);  // this grace ends at 211 s
  f.HeartbeatsUntil({"b"}, kStart + 210'999);
  EXPECT_TRUE(b->Commands().empty());
  EXPECT_EQ(f.Stored(id).worker_id, "a");
  f.RunUntil(kStart + 211'000);
  ASSERT_EQ(b->Commands().size(), 1u);
  EXPECT_EQ(b->Commands()[0].assignment_id, id + ".r1");
}

TEST(CoordinatorHealth, AnUnacknowledgedCommandOfASilentWorkerIsPlacedAgain) {
  CoordinatorFixture f;
  auto a = f.Connect("a");
  auto b = f.Connect("b");
  const std::string id = f.Start("ex1");
  ASSERT_EQ(a->Commands().size(), 1u);  // never acknowledged
  f.HeartbeatsUntil({"b"}, kStart + 60'000);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kUnhealthy);
  ASSERT_EQ(b->Commands().size(), 1u);
  EXPECT_EQ(b->Commands()[0].assignment_id, id + ".r1");
  EXPECT_TRUE(b->Commands()[0].checkpoint.is_null());
  const std::vector<ReassignmentRecord> moves = f.Moves(id);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].from_worker, "a");
  EXPECT_EQ(moves[0].to_worker, "b");
  EXPECT_EQ(f.Ack("a", id).code(), errc::kStaleAssignment);
}

TEST(CoordinatorHealth, MovedWorkNoWorkerCanTakeWaitsAndIsStoredAsWaiting) {
  CoordinatorFixture f;
  f.Connect("a");
  const std::string id = f.Start("ex1");
  ASSERT_TRUE(f.Progress("a", id, 30, {{"bytes", 300}}).ok());
  f.RunUntil(kStart + 60'000);
  EXPECT_EQ(f.coordinator->stats().reassigned, 1u);
  EXPECT_EQ(f.coordinator->WaitingReason("ex1"),
            "step 'download': no ONLINE worker handles model.download (1 UNHEALTHY)");
  // The store no longer says a holds it (a restart would give it back to a).
  AssignmentRecord stored = f.Stored(id);
  EXPECT_EQ(stored.status, "waiting");
  EXPECT_EQ(stored.worker_id, "");
  EXPECT_EQ(stored.reassignments, 1);
  EXPECT_EQ(stored.checkpoint, (Json{{"bytes", 300}}));

  auto b = f.Connect("b");
  ASSERT_EQ(b->Commands().size(), 1u);
  EXPECT_EQ(b->Commands()[0].assignment_id, id + ".r1");
  EXPECT_EQ(b->Commands()[0].checkpoint, (Json{{"bytes", 300}}));
  const std::vector<ReassignmentRecord> moves = f.Moves(id);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].from_worker, "a");
  EXPECT_EQ(moves[0].to_worker, "b");
  stored = f.Stored(id);
  EXPECT_EQ(stored.status, "dispatched");
  EXPECT_EQ(stored.worker_id, "b");
}

TEST(CoordinatorHealth, AfterMaxReassignmentsTheNextLossFailsTheAttemptWorkerLost) {
  CoordinatorFixture f;  // max_reassignments 3
  std::vector<std::string> alive = {"a", "b", "c", "d"};
  for (const std::string& w : alive) f.Connect(w);
  const std::string id = f.Start("ex1");
  std::string holder = "a", current = id;
  for (int move = 1; move <= 3; ++move) {
    ASSERT_TRUE(f.Ack(holder, current).ok());
    ASSERT_TRUE(f.Progress(holder, current, 10 * move, {{"part", move}}).ok());
    std::erase(alive, holder);
    f.HeartbeatsUntil(alive, f.now() + 60'000);
    const AssignmentRecord stored = f.Stored(id);
    ASSERT_EQ(stored.reassignments, move);
    ASSERT_EQ(stored.id, id + ".r" + std::to_string(move));
    ASSERT_NE(stored.worker_id, holder);
    holder = stored.worker_id;
    current = stored.id;
  }
  EXPECT_EQ(holder, "d");
  EXPECT_FALSE(f.IsDone(id));

  ASSERT_TRUE(f.Ack("d", current).ok());
  f.RunUntil(f.now() + 60'000);
  const RunResult r = f.Done(id);
  EXPECT_EQ(r.status.code(), errc::kWorkerLost);
  EXPECT_TRUE(Contains(r.status.message(), "max_reassignments")) << r.status.message();
  EXPECT_EQ(f.coordinator->stats().lost, 1u);
  EXPECT_EQ(f.coordinator->stats().reassigned, 3u);
  const AssignmentRecord stored = f.Stored(id);
  EXPECT_EQ(stored.status, "lost");
  EXPECT_EQ(stored.worker_id, "d");
  const std::vector<ReassignmentRecord> moves = f.Moves(id);
  ASSERT_EQ(moves.size(), 4u);
  const std::vector<std::pair<std::string, std::string>> hops = {
      {"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", ""}};
  for (size_t i = 0; i < hops.size(); ++i) {
    EXPECT_EQ(moves[i].from_worker, hops[i].first) << i;
    EXPECT_EQ(moves[i].to_worker, hops[i].second) << i;
  }
  EXPECT_EQ(moves[3].checkpoint, (Json{{"part", 3}}));
  EXPECT_EQ(f.Succeed("d", current).code(), errc::kStaleAssignment);
}

// ---- drain and deregistration ----

TEST(CoordinatorHealth, ADrainingWorkerGetsNoNewWorkAndFinishesWhatItRuns) {
  CoordinatorFixture f;
  auto a = f.Connect("a");
  const std::string running = f.StartAccepted("ex1");
  ASSERT_TRUE(f.coordinator->Drain("default", "a").ok());
  EXPECT_EQ(f.StateOf("a"), WorkerState::kDraining);
  EXPECT_EQ(f.StoredWorkerStatus("a"), "DRAINING");
  EXPECT_EQ(f.coordinator->Drain("team-b", "a").code(), errc::kNotFound);
  EXPECT_EQ(f.coordinator->Drain("default", "ghost").code(), errc::kNotFound);

  f.Start("ex2");
  EXPECT_EQ(f.coordinator->WaitingReason("ex2"),
            "step 'download': no ONLINE worker handles model.download (1 DRAINING)");
  ASSERT_TRUE(f.Progress("a", running, 50).ok());
  ASSERT_TRUE(f.Succeed("a", running).ok());
  EXPECT_TRUE(f.Done(running).status.ok());
  EXPECT_EQ(a->Commands().size(), 1u);  // ex2 still waits
  EXPECT_EQ(f.StateOf("a"), WorkerState::kDraining);
}

TEST(CoordinatorHealth, AHeartbeatSayingDrainingDrainsTheWorker) {
  CoordinatorFixture f;
  auto a = f.Connect("a");
  ASSERT_TRUE(f.Heartbeat("a", /*draining=*/true).ok());
  EXPECT_EQ(f.StateOf("a"), WorkerState::kDraining);
  EXPECT_EQ(f.StoredWorkerStatus("a"), "DRAINING");
  ASSERT_TRUE(f.Heartbeat("a").ok());  // ONLINE in a heartbeat does not undo it
  EXPECT_EQ(f.StateOf("a"), WorkerState::kDraining);
  f.Start("ex1");
  EXPECT_TRUE(a->Commands().empty());
}

TEST(CoordinatorHealth, AfterTheDrainTimeoutWhatIsLeftMovesAndTheWorkerGoesOffline) {
  CoordinatorFixture f;  // drain_timeout 300 s
  auto [a, b, id] = StartOnA(f);
  ASSERT_TRUE(f.Progress("a", id, 20, {{"bytes", 200}}).ok());
  ASSERT_TRUE(f.coordinator->Drain("default", "a").ok());
  f.HeartbeatsUntil({"a", "b"}, kStart + 299'999);
  EXPECT_TRUE(b->Commands().empty());
  EXPECT_EQ(f.Stored(id).worker_id, "a");

  f.RunUntil(kStart + 300'000);
  ASSERT_EQ(b->Commands().size(), 1u);
  EXPECT_EQ(b->Commands()[0].assignment_id, id + ".r1");
  EXPECT_EQ(b->Commands()[0].checkpoint, (Json{{"bytes", 200}}));
  const std::vector<ReassignmentRecord> moves = f.Moves(id);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_TRUE(Contains(moves[0].reason, "drain")) << moves[0].reason;
  EXPECT_EQ(f.Succeed("a", id).code(), errc::kStaleAssignment);

  // Nothing left: OFFLINE at its deadline (its last message, that stale result, was at
  // 300 s).
  f.HeartbeatsUntil({"b"}, kStart + 359'999);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kDraining);
  f.RunUntil(kStart + 360'000);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kOffline);
  EXPECT_EQ(f.StoredWorkerStatus("a"), "OFFLINE");
  EXPECT_EQ(f.coordinator->stats().heartbeat_misses, 0u);
}

TEST(CoordinatorHealth, AnEndedDrainDoesNotCutALaterOneShort) {
  CoordinatorFixture f;  // drain_timeout 300 s
  auto [a, b, id] = StartOnA(f);
  ASSERT_TRUE(f.coordinator->Drain("default", "a").ok());
  f.HeartbeatsUntil({"a", "b"}, kStart + 100'000);
  f.Connect("a");  // it registers again: ONLINE, still holding its work
  EXPECT_EQ(f.StateOf("a"), WorkerState::kOnline);
  f.HeartbeatsUntil({"a", "b"}, kStart + 200'000);
  ASSERT_TRUE(f.coordinator->Drain("default", "a").ok());
  // The first drain's timeout (300 s) passes: the second one has until 500 s.
  f.HeartbeatsUntil({"a", "b"}, kStart + 499'999);
  EXPECT_TRUE(b->Commands().empty());
  EXPECT_EQ(f.Stored(id).worker_id, "a");
  f.RunUntil(kStart + 500'000);
  EXPECT_EQ(b->Commands().size(), 1u);
}

TEST(CoordinatorHealth, ADrainedWorkerWithNothingLeftGoesOfflineAtItsDeadline) {
  CoordinatorFixture f;
  f.Connect("a");
  const std::string id = f.Start("ex1");
  f.RunUntil(kStart + 10'000);
  ASSERT_TRUE(f.Heartbeat("a", /*draining=*/true).ok());
  ASSERT_TRUE(f.Succeed("a", id).ok());
  f.RunUntil(kStart + 69'999);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kDraining);
  f.RunUntil(kStart + 70'000);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kOffline);
  EXPECT_EQ(f.StoredWorkerStatus("a"), "OFFLINE");
  EXPECT_EQ(f.coordinator->stats().heartbeat_misses, 0u);
  EXPECT_TRUE(f.Done(id).status.ok());
}

TEST(CoordinatorHealth, ADeregisteredWorkerIsOfflineAndItsWorkMovesAtOnce) {
  CoordinatorFixture f;
  auto [a, b, id] = StartOnA(f);
  ASSERT_TRUE(f.Progress("a", id, 70, {{"bytes", 700}}).ok());
  ASSERT_TRUE(f.coordinator->Deregister("a").ok());
  f.loop.RunReady();
  EXPECT_EQ(f.StateOf("a"), WorkerState::kOffline);
  EXPECT_EQ(f.StoredWorkerStatus("a"), "OFFLINE");
  ASSERT_EQ(b->Commands().size(), 1u);
  EXPECT_EQ(b->Commands()[0].assignment_id, id + ".r1");
  EXPECT_EQ(b->Commands()[0].checkpoint, (Json{{"bytes", 700}}));
  const std::vector<ReassignmentRecord> moves = f.Moves(id);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_TRUE(Contains(moves[0].reason, "deregistered")) << moves[0].reason;

  EXPECT_EQ(f.Heartbeat("a").code(), errc::kNotFound);
  EXPECT_EQ(f.Succeed("a", id).code(), errc::kNotFound);
  EXPECT_EQ(f.coordinator->Deregister("ghost").code(), errc::kNotFound);
  // No deadline left to fire: it stays OFFLINE, not UNHEALTHY.
  f.HeartbeatsUntil({"b"}, kStart + 200'000);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kOffline);
  EXPECT_EQ(f.coordinator->stats().heartbeat_misses, 0u);
  EXPECT_FALSE(f.IsDone(id));
}

// ---- a restart of the server ----

// What a previous process left in the store: worker a holding ex1's download, moved once
// already, with a checkpoint; then the coordinator of the new process, loaded.
void SeedAndRestart(CoordinatorFixture& f, const std::string& status = "running") {
  WriteBatch batch;
  WorkerRecord w;
  w.id = w.node = "a";
  w.session = "process-1";
  w.capacity = 2;
  w.commands = {kCommand};
  w.status = "ONLINE";
  w.registered_at = kStart - 3'600'000;
  w.last_heartbeat = w.updated_at = kStart - 10'000;
  batch.workers.push_back(w);
  AssignmentRecord a;
  a.dispatch_id = CoordinatorFixture::DispatchId("ex1");
  a.id = a.dispatch_id + ".r1";
  a.execution_id = "ex1";
  a.step_id = "download";
  a.command = kCommand;
  a.worker_id = "a";
  a.status = status;
  a.progress = 70;
  a.checkpoint = {{"bytes", 700}};
  a.reassignments = 1;
  a.created_at = kStart - 600'000;
  a.updated_at = kStart - 10'000;
  batch.assignments.push_back(a);
  ASSERT_TRUE(f.store->Commit(batch).ok());
  f.Restart();
}

TEST(CoordinatorRestart, AHolderThatRegistersAgainReportsItsResultOnce) {
  CoordinatorFixture f;
  SeedAndRestart(f);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kOffline);
  const std::string id = f.Reattach("ex1");
  const std::vector<AssignmentRecord> active = f.coordinator->Active("", "a");
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0].id, id + ".r1");
  EXPECT_EQ(active[0].status, "running");

  f.RunUntil(kStart + 59'999);
  auto a = f.Connect("a");
  EXPECT_EQ(f.StateOf("a"), WorkerState::kOnline);
  EXPECT_TRUE(a->Commands().empty());  // it was running it
  ASSERT_TRUE(f.Progress("a", id + ".r1", 90).ok());
  ASSERT_TRUE(f.Succeed("a", id + ".r1", {{"path", "/models/x"}}).ok());
  EXPECT_EQ(f.Succeed("a", id + ".r1").code(), errc::kStaleAssignment);
  const RunResult r = f.Done(id);
  EXPECT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output, (Json{{"path", "/models/x"}}));
  EXPECT_EQ(f.Stored(id).status, "completed");
  EXPECT_EQ(f.coordinator->stats().heartbeat_misses, 0u);
  EXPECT_EQ(f.coordinator->stats().reassigned, 0u);
}

TEST(CoordinatorRestart, AHolderThatNeverComesBackLosesItsWorkAtTheHeartbeatTimeout) {
  CoordinatorFixture f;
  SeedAndRestart(f);
  const std::string id = f.Reattach("ex1");
  auto b = f.Connect("b");
  f.HeartbeatsUntil({"b"}, kStart + 59'999);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kOffline);
  EXPECT_TRUE(b->Commands().empty());

  f.RunUntil(kStart + 60'000);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kUnhealthy);
  EXPECT_EQ(f.StoredWorkerStatus("a"), "UNHEALTHY");
  EXPECT_EQ(f.coordinator->stats().heartbeat_misses, 1u);
  ASSERT_EQ(b->Commands().size(), 1u);
  EXPECT_EQ(b->Commands()[0].assignment_id, id + ".r2");
  EXPECT_EQ(b->Commands()[0].checkpoint, (Json{{"bytes", 700}}));
  const AssignmentRecord stored = f.Stored(id);
  EXPECT_EQ(stored.id, id + ".r2");
  EXPECT_EQ(stored.worker_id, "b");
  EXPECT_EQ(stored.reassignments, 2);
  const std::vector<ReassignmentRecord> moves = f.Moves(id);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].from_worker, "a");
  EXPECT_EQ(moves[0].to_worker, "b");
  EXPECT_EQ(moves[0].checkpoint, (Json{{"bytes", 700}}));

  ASSERT_TRUE(f.Succeed("b", id + ".r2").ok());
  EXPECT_TRUE(f.Done(id).status.ok());
}

TEST(CoordinatorRestart, AHolderThatHadNotAcknowledgedGetsTheCommandAgainWhenItRegisters) {
  CoordinatorFixture f;
  SeedAndRestart(f, "dispatched");
  const std::string id = f.Reattach("ex1");
  auto a = f.Connect("a");
  ASSERT_EQ(a->Commands().size(), 1u);
  EXPECT_EQ(a->Commands()[0].assignment_id, id + ".r1");
  EXPECT_EQ(a->Commands()[0].checkpoint, (Json{{"bytes", 700}}));
  ASSERT_TRUE(f.Ack("a", id + ".r1").ok());
  EXPECT_EQ(f.outcomes[id].started, 1);
  EXPECT_EQ(f.Stored(id).status, "accepted");
}

TEST(CoordinatorRestart, AHolderThatRegisteredBeforeTheReattachGetsItsUnacknowledgedCommand) {
  CoordinatorFixture f;
  SeedAndRestart(f, "dispatched");
  auto a = f.Connect("a");  // before the engine's recovery re-attaches the step
  const std::string id = f.Reattach("ex1");
  ASSERT_EQ(a->Commands().size(), 1u);
  EXPECT_EQ(a->Commands()[0].assignment_id, id + ".r1");
  ASSERT_TRUE(f.Succeed("a", id + ".r1").ok());
  EXPECT_TRUE(f.Done(id).status.ok());
}

// Regression (CI, 2026-11-25): a new process of the holder registered before the engine's
// recovery re-attached its step, so the step went back to the new process as if it were
// still running there, and waited out the heartbeat timeout.
TEST(CoordinatorRestart, ANewProcessOfTheHolderRegisteredBeforeTheReattachGetsTheWorkAgain) {
  CoordinatorFixture f;
  SeedAndRestart(f);
  auto a = f.Connect("a", {.session = "process-2"});
  const std::string id = f.Reattach("ex1");
  ASSERT_EQ(a->Commands().size(), 1u);
  EXPECT_EQ(a->Commands()[0].assignment_id, id + ".r2");
  EXPECT_EQ(a->Commands()[0].checkpoint, (Json{{"bytes", 700}}));
  EXPECT_EQ(f.coordinator->stats().reassigned, 1u);
  ASSERT_TRUE(f.Succeed("a", id + ".r2").ok());
  EXPECT_TRUE(f.Done(id).status.ok());
}

// Regression (review, 2026-11-29): with no reassignment left, moving the step off the
// holder's old process fails it WORKER_LOST, which ends the dispatch; the re-attach went
// on to touch the ended dispatch (a use after free under ASan).
TEST(CoordinatorRestart, ANewProcessOfTheHolderWithNoMoveLeftFailsTheStepWorkerLost) {
  CoordinatorOptions options;
  options.max_reassignments = 1;  // the seeded assignment was moved once already
  CoordinatorFixture f(options);
  SeedAndRestart(f);
  auto a = f.Connect("a", {.session = "process-2"});
  const std::string id = f.Reattach("ex1");
  EXPECT_TRUE(a->Commands().empty());
  EXPECT_EQ(f.Done(id).status.code(), errc::kWorkerLost);
  EXPECT_EQ(f.coordinator->stats().lost, 1u);
  EXPECT_TRUE(f.coordinator->Active("", "").empty());
}

TEST(CoordinatorRestart, TheSameProcessRegisteredBeforeTheReattachKeepsItsRunningWork) {
  CoordinatorFixture f;
  SeedAndRestart(f);
  auto a = f.Connect("a", {.session = "process-1"});
  const std::string id = f.Reattach("ex1");
  EXPECT_TRUE(a->Commands().empty());
  ASSERT_TRUE(f.Succeed("a", id + ".r1").ok());
  EXPECT_TRUE(f.Done(id).status.ok());
  EXPECT_EQ(f.coordinator->stats().reassigned, 0u);
}

TEST(CoordinatorRestart, ADispatchWithNoStoredRecordIsPlacedLikeANewOne) {
  CoordinatorFixture f;
  SeedAndRestart(f);
  auto b = f.Connect("b");
  const std::string id = f.Reattach("ex2");
  ASSERT_EQ(b->Commands().size(), 1u);
  EXPECT_EQ(b->Commands()[0].assignment_id, id);
  EXPECT_TRUE(b->Commands()[0].checkpoint.is_null());
  const AssignmentRecord stored = f.Stored(id);
  EXPECT_EQ(stored.status, "dispatched");
  EXPECT_EQ(stored.worker_id, "b");
  EXPECT_EQ(stored.reassignments, 0);
}

}  // namespace
}  // namespace baton::workers
