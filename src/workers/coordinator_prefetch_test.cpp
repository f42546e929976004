// CoordinatorOptions::prefetch: a worker with every slot taken holds as many dispatches
// again, placed and durable, their commands kept back until a result frees a slot. Without
// it a slot freed by a result stayed idle for a commit: the next dispatch was placed in the
// result's turn and its command went out once that turn's batch was durable.
#include "workers/coordinator_test_util.h"

namespace baton::workers {
namespace {

using testing::CoordinatorFixture;
using testing::WorkerSpec;

CoordinatorOptions Prefetching() {
  CoordinatorOptions o;
  o.prefetch = true;
  return o;
}

std::vector<std::string> CommandIds(const testing::TestChannel& ch) {
  std::vector<std::string> ids;
  for (const protocol::Command& c : ch.Commands()) ids.push_back(c.assignment_id);
  return ids;
}

TEST(CoordinatorPrefetch, AResultSendsTheNextCommandWithoutACommitInBetween) {
  CoordinatorFixture f(Prefetching(), /*hold_commits=*/true);
  auto w1 = f.Connect("w1", WorkerSpec{.capacity = 2});
  std::vector<std::string> ids;
  for (const char* ex : {"ex1", "ex2", "ex3", "ex4", "ex5"}) ids.push_back(f.Start(ex));
  f.holding_committer->Release();
  f.loop.RunReady();
  // Two slots and two held back, all four durable; the fifth waits.
  EXPECT_EQ(CommandIds(*w1), (std::vector<std::string>{ids[0], ids[1]}));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(f.Stored(ids[i]).status, "dispatched") << ids[i];
    EXPECT_EQ(f.Stored(ids[i]).worker_id, "w1") << ids[i];
  }
  EXPECT_FALSE(f.store->GetAssignment(ids[4]).ok());  // waiting: not written yet

  ASSERT_TRUE(f.Ack("w1", ids[0]).ok());
  ASSERT_TRUE(f.Succeed("w1", ids[0]).ok());
  // The held-back command went out in the result's turn, before anything was committed;
  // the fifth took the room the result made, held back in its turn.
  EXPECT_EQ(CommandIds(*w1), (std::vector<std::string>{ids[0], ids[1], ids[2]}));
  EXPECT_GT(f.holding_committer->held(), 0u);
  f.holding_committer->Release();
  f.loop.RunReady();
  EXPECT_EQ(f.Stored(ids[4]).status, "dispatched");
  EXPECT_EQ(CommandIds(*w1).size(), 3u);  // never more out than its capacity

  for (int i = 1; i < 5; ++i) {
    ASSERT_TRUE(f.Succeed("w1", ids[i]).ok()) << ids[i];
    f.holding_committer->Release();
    f.loop.RunReady();
  }
  EXPECT_EQ(CommandIds(*w1), ids);
  for (const std::string& id : ids) EXPECT_TRUE(f.Done(id).status.ok()) << id;
  const WorkerEntry* w = f.coordinator->registry().Find("w1");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->sent, 0);
  EXPECT_TRUE(w->held.empty());
  EXPECT_TRUE(w->held_back.empty());
}

TEST(CoordinatorPrefetch, WithoutItADispatchWaitsForASlot) {
  CoordinatorFixture f;  // prefetch off
  auto w1 = f.Connect("w1", WorkerSpec{.capacity = 1});
  const std::string a = f.Start("ex1"), b = f.Start("ex2");
  EXPECT_EQ(CommandIds(*w1), std::vector<std::string>{a});
  EXPECT_FALSE(f.store->GetAssignment(b).ok());  // waiting: not written yet
}

TEST(CoordinatorPrefetch, AHeldBackDispatchMovesToAWorkerWithAnIdleSlot) {
  CoordinatorFixture f(Prefetching());
  auto w1 = f.Connect("w1", WorkerSpec{.capacity = 1});
  const std::string a = f.Start("ex1"), b = f.Start("ex2");
  EXPECT_EQ(CommandIds(*w1), std::vector<std::string>{a});
  EXPECT_EQ(f.Stored(b).worker_id, "w1");  // held back there
  // A second worker, idle: it takes what w1 holds back rather than let it wait for w1's
  // slot. w1 never had the command, so nothing is cancelled there, and it is no move.
  auto w2 = f.Connect("w2", WorkerSpec{.capacity = 1});
  EXPECT_EQ(CommandIds(*w2), std::vector<std::string>{b});
  EXPECT_EQ(f.Stored(b).worker_id, "w2");
  EXPECT_EQ(f.Stored(b).id, b);  // the same worker-facing id
  EXPECT_TRUE(f.Moves(b).empty());
  EXPECT_TRUE(w1->Cancels().empty());
  ASSERT_TRUE(f.Succeed("w1", a).ok());
  EXPECT_EQ(CommandIds(*w1), std::vector<std::string>{a});  // nothing more for w1
  ASSERT_TRUE(f.Succeed("w2", b).ok());
  EXPECT_TRUE(f.Done(a).status.ok());
  EXPECT_TRUE(f.Done(b).status.ok());
}

TEST(CoordinatorPrefetch, ACancelledHeldBackDispatchIsNotCancelledAtTheWorker) {
  CoordinatorFixture f(Prefetching());
  auto w1 = f.Connect("w1", WorkerSpec{.capacity = 1});
  const std::string a = f.Start("ex1"), b = f.Start("ex2");
  f.Cancel(b);
  EXPECT_TRUE(w1->Cancels().empty());  // it never had the command
  EXPECT_EQ(f.Stored(b).status, "cancelled");
  ASSERT_TRUE(f.Succeed("w1", a).ok());
  EXPECT_EQ(CommandIds(*w1), std::vector<std::string>{a});
  const WorkerEntry* w = f.coordinator->registry().Find("w1");
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(w->held_back.empty());
  EXPECT_EQ(w->sent, 0);
}

TEST(CoordinatorPrefetch, ADrainingWorkerGivesBackWhatItHoldsBack) {
  CoordinatorFixture f(Prefetching());
  auto w1 = f.Connect("w1", WorkerSpec{.capacity = 1});
  const std::string a = f.Start("ex1"), b = f.Start("ex2");
  ASSERT_TRUE(f.Heartbeat("w1", /*draining=*/true).ok());
  EXPECT_EQ(f.Stored(b).status, "waiting");
  EXPECT_EQ(f.Stored(b).worker_id, "");
  ASSERT_TRUE(f.Succeed("w1", a).ok());
  EXPECT_EQ(CommandIds(*w1), std::vector<std::string>{a});  // draining: nothing new
  auto w2 = f.Connect("w2", WorkerSpec{.capacity = 1});
  EXPECT_EQ(CommandIds(*w2), std::vector<std::string>{b});
}

TEST(CoordinatorPrefetch, ALostWorkersHeldBackWorkIsPlacedAgain) {
  CoordinatorOptions o = Prefetching();
  o.heartbeat_interval = Duration(2'000);
  o.heartbeat_timeout = Duration(10'000);
  CoordinatorFixture f(o);
  auto w1 = f.Connect("w1", WorkerSpec{.capacity = 1});
  const std::string a = f.Start("ex1"), b = f.Start("ex2");
  ASSERT_TRUE(f.Ack("w1", a).ok());
  EXPECT_EQ(CommandIds(*w1), std::vector<std::string>{a});  // b held back
  f.RunUntil(testing::kStart + 30'000);  // silent: UNHEALTHY, then its work moves
  EXPECT_EQ(f.StateOf("w1"), WorkerState::kUnhealthy);
  EXPECT_EQ(f.Stored(a).status, "waiting");
  EXPECT_EQ(f.Stored(b).status, "waiting");
  const WorkerEntry* w = f.coordinator->registry().Find("w1");
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(w->held.empty());
  EXPECT_TRUE(w->held_back.empty());
  EXPECT_EQ(w->sent, 0);
  auto w2 = f.Connect("w2", WorkerSpec{.capacity = 2});
  std::vector<std::string> moved = CommandIds(*w2);
  std::sort(moved.begin(), moved.end());
  EXPECT_EQ(moved, (std::vector<std::string>{a + ".r1", b + ".r1"}));
  ASSERT_TRUE(f.Succeed("w2", a + ".r1").ok());
  ASSERT_TRUE(f.Succeed("w2", b + ".r1").ok());
  EXPECT_TRUE(f.Done(a).status.ok());
  EXPECT_TRUE(f.Done(b).status.ok());
}

// A restart finds what was held back as dispatched to its worker, like a command sent
// that it may not have received; when the worker registers again, no more go out than it
// has slots for, and the rest follow as its results come.
TEST(CoordinatorPrefetch, AfterARestartNoMoreGoOutThanTheWorkerHasSlots) {
  CoordinatorFixture f(Prefetching());
  auto w1 = f.Connect("w1", WorkerSpec{.capacity = 1, .session = "p1"});
  const std::string a = f.Start("ex1"), b = f.Start("ex2");
  ASSERT_TRUE(f.Ack("w1", a).ok());
  EXPECT_EQ(f.Stored(b).status, "dispatched");  // held back, durable

  f.Restart();
  f.Reattach("ex1");
  f.Reattach("ex2");
  auto again = f.Connect("w1", WorkerSpec{.capacity = 1, .session = "p1"});
  EXPECT_TRUE(again->Commands().empty());  // a: accepted already; b: no slot
  ASSERT_TRUE(f.Succeed("w1", a).ok());
  EXPECT_EQ(CommandIds(*again), std::vector<std::string>{b});
  ASSERT_TRUE(f.Succeed("w1", b).ok());
  EXPECT_TRUE(f.Done(a).status.ok());
  EXPECT_TRUE(f.Done(b).status.ok());
  const WorkerEntry* w = f.coordinator->registry().Find("w1");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->sent, 0);
  EXPECT_TRUE(w->held.empty());
}

}  // namespace
}  // namespace baton::workers
