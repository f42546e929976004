// Runner::Prepare on the coordinator, in virtual time over a memory store: a dispatch
// placed in the engine's turn is recorded in the engine's batch (no write of its own) and
// goes out only at Start(); Cancel() before Start() frees the slot; with no room it falls
// back to the queue; a worker lost or gone between Prepare() and Start().
#include "workers/coordinator_test_util.h"
#include "workers/nearest_rank.h"

#include <chrono>
#include <thread>

namespace baton::workers {
namespace {

using testing::CoordinatorFixture;
using testing::kStart;
using testing::WorkerSpec;

// Connected, with its worker record written: the committer holds nothing after it.
std::shared_ptr<testing::TestChannel> ConnectDurable(CoordinatorFixture& f, const std::string& id) {
  auto ch = f.Connect(id);
  f.holding_committer->Release();
  f.loop.RunReady();
  return ch;
}

TEST(CoordinatorPrepare, APlacementCommitsWithTheEnginesBatchAndGoesOutOnlyAtStart) {
  CoordinatorFixture f({}, /*hold_commits=*/true);
  auto a = ConnectDurable(f, "a");
  WriteBatch batch;
  const std::string id = f.Prepare("ex1", batch);
  ASSERT_EQ(batch.assignments.size(), 1u);
  const AssignmentRecord& r = batch.assignments[0];
  EXPECT_EQ(r.dispatch_id, id);
  EXPECT_EQ(r.id, id);
  EXPECT_EQ(r.worker_id, "a");
  EXPECT_EQ(r.status, "dispatched");
  EXPECT_EQ(r.execution_id, "ex1");
  EXPECT_EQ(f.holding_committer->held(), 0u);  // no write of its own
  EXPECT_TRUE(a->sent.empty());                // not durable yet
  EXPECT_EQ(f.coordinator->registry().Find("a")->held.size(), 1u);

  f.CommitEngine(batch);
  // The second latency counts from Prepare(): at least this much more than the first.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  f.Start("ex1");
  EXPECT_EQ(f.holding_committer->held(), 0u);  // Start only sends
  ASSERT_EQ(a->Commands().size(), 1u);
  EXPECT_EQ(a->Commands()[0].assignment_id, id);
  EXPECT_EQ(f.Stored(id).worker_id, "a");
  EXPECT_EQ(f.coordinator->stats().dispatched, 1u);
  EXPECT_EQ(f.coordinator->stats().placed_at_prepare, 1u);

  ASSERT_TRUE(f.Ack("a", id).ok());
  EXPECT_EQ(f.outcomes[id].started, 1);
  EXPECT_EQ(f.coordinator->stats().latency_total, 1u);
  EXPECT_EQ(f.coordinator->stats().prepared_latency_total, 1u);
  EXPECT_GE(f.coordinator->stats().prepared_latency_sum_us,
            f.coordinator->stats().latency_sum_us + 2000);
  ASSERT_TRUE(f.Succeed("a", id).ok());
  EXPECT_TRUE(f.Done(id).status.ok());
  f.holding_committer->Release();
  EXPECT_EQ(f.Stored(id).status, "completed");
}

TEST(CoordinatorPrepare, CancelBeforeStartFreesTheSlotAndSendsNothing) {
  CoordinatorFixture f;
  auto a = f.Connect("a", WorkerSpec{.capacity = 1});
  WriteBatch batch;
  const std::string id = f.Prepare("ex1", batch);
  ASSERT_EQ(batch.assignments.size(), 1u);
  f.CommitEngine(batch);
  f.Cancel(id);                  // the attempt ended before its Start
  EXPECT_TRUE(a->sent.empty());  // it never had the command: no command.cancel either
  EXPECT_FALSE(f.IsDone(id));    // no callbacks to call
  EXPECT_TRUE(f.coordinator->Active("", "").empty());
  EXPECT_TRUE(f.coordinator->registry().Find("a")->held.empty());
  EXPECT_EQ(f.Stored(id).status, "cancelled");
  f.Cancel(id);  // the step's own cancel, again: nothing
  EXPECT_TRUE(a->sent.empty());

  WriteBatch next;
  f.Prepare("ex2", next);
  ASSERT_EQ(next.assignments.size(), 1u);
  EXPECT_EQ(next.assignments[0].worker_id, "a");
}

TEST(CoordinatorPrepare, WithNoRoomNothingIsRecordedAndStartQueuesIt) {
  CoordinatorFixture f;
  auto a = f.Connect("a", WorkerSpec{.capacity = 1});
  const std::string busy = f.Start("ex0");
  WriteBatch batch;
  const std::string id = f.Prepare("ex1", batch);
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(f.coordinator->WaitingCount(), 0u);
  EXPECT_EQ(f.store->GetAssignment(id).status().code(), errc::kNotFound);

  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  f.Start("ex1");
  EXPECT_EQ(f.coordinator->WaitingCount(), 1u);
  ASSERT_TRUE(f.Succeed("a", busy).ok());  // the slot frees: placed with a write of its own
  ASSERT_EQ(a->Commands().size(), 2u);
  EXPECT_EQ(a->Commands()[1].assignment_id, id);
  EXPECT_EQ(f.Stored(id).worker_id, "a");
  const uint64_t before = f.coordinator->stats().latency_sum_us;
  ASSERT_TRUE(f.Ack("a", id).ok());
  const CoordinatorStats s = f.coordinator->stats();
  EXPECT_EQ(s.placed_at_prepare, 0u);
  EXPECT_EQ(s.latency_total, 2u);           // ex0's result stood for its ack
  EXPECT_EQ(s.prepared_latency_total, 1u);  // from ex1's Prepare
  EXPECT_GE(s.prepared_latency_sum_us, s.latency_sum_us - before + 2000);
}

TEST(CoordinatorPrepare, WithNoWorkerAPreparedDispatchCancelledLeavesNothing) {
  CoordinatorFixture f;
  WriteBatch batch;
  const std::string id = f.Prepare("ex1", batch);
  EXPECT_TRUE(batch.empty());
  f.Cancel(id);
  auto a = f.Connect("a");
  EXPECT_TRUE(a->sent.empty());
  EXPECT_TRUE(f.coordinator->Active("", "").empty());
}

TEST(CoordinatorPrepare, AWorkerLostBeforeStartHasItsDispatchMovedAndSentAtStart) {
  CoordinatorFixture f;
  auto a = f.Connect("a");
  WriteBatch batch;
  const std::string id = f.Prepare("ex1", batch);
  ASSERT_EQ(batch.assignments.size(), 1u);
  f.CommitEngine(batch);
  auto b = f.Connect("b");
  ASSERT_TRUE(f.coordinator->Deregister("a").ok());
  f.loop.RunReady();
  // Moved to b and recorded there, but nothing goes out before Start.
  EXPECT_EQ(f.Stored(id).worker_id, "b");
  EXPECT_EQ(f.Stored(id).id, id + ".r1");
  EXPECT_TRUE(b->sent.empty());

  f.Start("ex1");
  ASSERT_EQ(b->Commands().size(), 1u);
  EXPECT_EQ(b->Commands()[0].assignment_id, id + ".r1");
  EXPECT_TRUE(a->sent.empty());  // never had it: neither the command nor a cancel
  ASSERT_TRUE(f.Ack("b", id + ".r1").ok());
  ASSERT_TRUE(f.Succeed("b", id + ".r1").ok());
  EXPECT_TRUE(f.Done(id).status.ok());
}

TEST(CoordinatorPrepare, AWorkerUnhealthyBeforeStartLeavesItWaitingUntilAnotherComes) {
  CoordinatorFixture f;  // heartbeat timeout 60 s, grace 0
  auto a = f.Connect("a");
  WriteBatch batch;
  const std::string id = f.Prepare("ex1", batch);
  f.CommitEngine(batch);
  f.RunUntil(kStart + 60'000);
  EXPECT_EQ(f.StateOf("a"), WorkerState::kUnhealthy);
  EXPECT_EQ(f.coordinator->WaitingCount(), 1u);
  EXPECT_EQ(f.Stored(id).status, "waiting");

  f.Start("ex1");
  EXPECT_EQ(f.coordinator->WaitingCount(), 1u);
  auto b = f.Connect("b");
  ASSERT_EQ(b->Commands().size(), 1u);
  EXPECT_EQ(b->Commands()[0].assignment_id, id + ".r1");
  EXPECT_TRUE(a->sent.empty());
}

TEST(CoordinatorPrepare, AWorkerThatReconnectsAroundStartGetsTheCommandOnce) {
  CoordinatorFixture f;
  // Gone before Start, back after it: sent when it registers again.
  auto a = f.Connect("a");
  WriteBatch batch;
  const std::string id = f.Prepare("ex1", batch);
  f.CommitEngine(batch);
  f.coordinator->Disconnected("a", a.get());
  f.Start("ex1");
  EXPECT_TRUE(a->sent.empty());
  auto a2 = f.Connect("a");
  ASSERT_EQ(a2->Commands().size(), 1u);
  EXPECT_EQ(a2->Commands()[0].assignment_id, id);

  // Gone and back, both before Start: sent at Start, not when it registers.
  auto b = f.Connect("b");
  WriteBatch batch2;
  const std::string id2 = f.Prepare("ex2", batch2);
  ASSERT_EQ(batch2.assignments.size(), 1u);
  const std::string holder = batch2.assignments[0].worker_id;
  ASSERT_EQ(holder, "b");  // the least loaded
  f.CommitEngine(batch2);
  f.coordinator->Disconnected("b", b.get());
  auto b2 = f.Connect("b");
  EXPECT_TRUE(b2->sent.empty());
  f.Start("ex2");
  ASSERT_EQ(b2->Commands().size(), 1u);
  EXPECT_EQ(b2->Commands()[0].assignment_id, id2);
}

TEST(CoordinatorPrepare, AnAttemptLostBeforeStartGetsItsResultAtStart) {
  CoordinatorOptions options;
  options.max_reassignments = 0;
  CoordinatorFixture f(options);
  f.Connect("a");
  WriteBatch batch;
  const std::string id = f.Prepare("ex1", batch);
  f.CommitEngine(batch);
  ASSERT_TRUE(f.coordinator->Deregister("a").ok());
  f.loop.RunReady();
  EXPECT_FALSE(f.IsDone(id));  // no callbacks yet
  EXPECT_EQ(f.Stored(id).status, "lost");
  f.Start("ex1");
  EXPECT_EQ(f.Done(id).status.code(), errc::kWorkerLost);
  EXPECT_TRUE(f.coordinator->Active("", "").empty());
}

// Nearest rank: with two samples p99 is the larger (it was the smaller: the index
// 0.99 * (n - 1) rounded down).
TEST(NearestRank, IsTheSmallestValueWithQOfTheSampleAtOrBelowIt) {
  std::vector<int64_t> two = {900, 100};
  EXPECT_EQ(NearestRank(two, 0.99), 900);
  EXPECT_EQ(NearestRank(two, 0.5), 100);
  std::vector<int64_t> one = {7};
  EXPECT_EQ(NearestRank(one, 0.99), 7);
  std::vector<int64_t> none;
  EXPECT_EQ(NearestRank(none, 0.5), 0);
  std::vector<int64_t> hundred;
  for (int64_t i = 100; i >= 1; --i) hundred.push_back(i);
  EXPECT_EQ(NearestRank(hundred, 0.99), 99);
  EXPECT_EQ(NearestRank(hundred, 0.5), 50);
}

}  // namespace
}  // namespace baton::workers
