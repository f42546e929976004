// What the engine does when the store refuses a batch (a full disk, an I/O error):
// the executions of that batch leave memory, and everything they held is given back,
// so that the engine goes on once the store takes writes again (issue 11, defect 4).
#include "store/fault_injection.h"
#include "support/held_committer.h"
#include "support/sim_harness.h"

#include <gtest/gtest.h>

#include <map>

namespace baton::testing {
namespace {

// Commits through the store, or refuses every batch while `failing` is set, as a store
// on a full disk does (nothing of a refused batch is written).
class FlakyCommitter final : public Committer {
 public:
  explicit FlakyCommitter(Store* store) : store_(store) {}
  bool failing = false;
  int refused = 0;
  void Submit(std::shared_ptr<const WriteBatch> batch,
              std::function<void(const Status&)> done) override {
    if (failing) {
      ++refused;
      return done(Status(errc::kStore, "database or disk is full"));
    }
    done(store_->Commit(*batch));
  }
  void Flush() override {}

 private:
  Store* store_;
};

// Puts a committer of type C over `h`'s store, under a fresh engine.
template <class C>
C* InstallCommitter(SimHarness& h, EngineOptions options) {
  h.engine.reset();
  auto owned = std::make_unique<C>(h.store.get());
  C* committer = owned.get();
  h.committer = std::move(owned);
  h.Reset(options);
  return committer;
}

constexpr const char* kTwoParallel = R"(
name: pair
steps:
  - {id: fast, type: shell, run: "true", retry: {max_attempts: 3, initial_delay: 1s}}
  - {id: slow, type: shell, run: "true", retry: {max_attempts: 3, initial_delay: 1s}}
)";

// Regression: a refused batch dropped its executions from memory with their steps still
// counted against the local capacity; the slots never came back, and every later shell
// step stayed `ready` after the disk had room again.
TEST(StoreFault, ARefusedBatchGivesBackItsSlotsAndTheEngineGoesOn) {
  SimHarness h;
  FlakyCommitter* committer = InstallCommitter<FlakyCommitter>(h, EngineOptions{.parallel = 2});
  h.runner->script["fast"] = {Outcome(10)};
  h.runner->script["slow"] = {Outcome(10'000)};

  const std::string first = h.StartOnly(kTwoParallel);
  h.loop->RunReady();
  ASSERT_EQ(h.runner->running, 2);
  committer->failing = true;  // fast's completion is refused; slow is still running
  h.loop->RunUntilIdle(h.clock.Now() + 20);
  EXPECT_GE(committer->refused, 1);
  // slow's work is stopped: nothing can record its result any more.
  EXPECT_EQ(h.runner->running, 0);
  EXPECT_EQ(h.runner->cancelled.size(), 1u);
  // The store keeps the last good state: both steps dispatched, the execution running.
  EXPECT_EQ(h.Execution(first).status, ExecutionStatus::kRunning);

  committer->failing = false;  // the disk has room again
  h.runner->script["fast"] = {Outcome(10)};
  h.runner->script["slow"] = {Outcome(10)};
  const size_t calls_before = h.runner->calls.size();
  const std::string second = h.Run(kTwoParallel);
  ASSERT_EQ(h.Execution(second).status, ExecutionStatus::kCompleted);
  // Both of the new execution's steps ran at once: both slots were free.
  ASSERT_EQ(h.runner->calls.size(), calls_before + 2);
  EXPECT_EQ(h.runner->calls[calls_before].started, h.runner->calls[calls_before + 1].started);
  EXPECT_EQ(h.runner->max_running, 2);

  // The dropped execution comes back from its stored state: what was running when the
  // store refused runs again (at least once), and it completes.
  std::vector<std::string> abandoned = h.engine->TakeAbandoned();
  ASSERT_EQ(abandoned, std::vector<std::string>{first});
  h.loop->Post([&] { ASSERT_TRUE(RecoverExecutions(h.store.get(), h.engine.get(), first).ok()); });
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(first).status, ExecutionStatus::kCompleted);
  EXPECT_TRUE(h.engine->TakeAbandoned().empty());
}

constexpr const char* kOneShell = R"(
name: one
steps:
  - {id: a, type: shell, run: "true", retry: {max_attempts: 3, initial_delay: 1s}}
)";

// Regression (a PostgreSQL outage left an execution `running` for good): the batch before
// an execution's finish (its step.started) committed only after the finishing turn had
// run, and the finishing batch was then refused. The earlier batch's callback took the
// finished execution out of memory, so the refusal found nothing to drop and did not list
// it for re-adoption; the store kept its step running and nothing read it again.
TEST(StoreFault, AFinishRefusedAfterAnEarlierBatchCommittedIsReadopted) {
  SimHarness h;
  HeldCommitter* committer = InstallCommitter<HeldCommitter>(h, EngineOptions{.parallel = 1});
  h.runner->script["a"] = {Outcome(10)};

  const std::string id = h.StartOnly(kOneShell);
  h.loop->RunReady();
  ASSERT_EQ(committer->held(), 1u);  // the start, a dispatched
  committer->ReleaseOne();           // its effect starts a, whose start report...
  h.loop->RunReady();
  ASSERT_EQ(h.runner->running, 1);
  ASSERT_EQ(committer->held(), 1u);  // ...is the next batch: step.started, held
  h.loop->RunUntilIdle(h.clock.Now() + 10);
  ASSERT_EQ(h.runner->running, 0);
  ASSERT_EQ(committer->held(), 2u);  // the finishing turn's batch, behind it

  committer->ReleaseOne();  // step.started is durable, after the finishing turn
  h.loop->RunReady();
  committer->ReleaseOne(Status(errc::kStore, "the connection to PostgreSQL is lost"));
  h.loop->RunReady();
  ASSERT_EQ(h.Execution(id).status, ExecutionStatus::kRunning);  // the last good state
  ASSERT_EQ(h.engine->TakeAbandoned(), std::vector<std::string>{id});

  // What the server's tick does: re-adopt it. a runs again and the execution completes.
  h.loop->Post([&] { ASSERT_TRUE(RecoverExecutions(h.store.get(), h.engine.get(), id).ok()); });
  for (int round = 0; round < 20; ++round) {
    h.loop->RunUntilIdle(h.clock.Now() + 5'000);
    committer->Release();
  }
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.runner->calls.size(), 2u);
  auto events = *h.store->GetEvents(id, 0, 0);
  int completed = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].seq, static_cast<int64_t>(i + 1)) << "gap in the log";
    completed += events[i].type == "step.completed";
  }
  EXPECT_EQ(completed, 1);
}

// Puts a store that refuses its n-th commit (once) under `h`'s engine.
FaultInjectingStore* RefuseCommit(SimHarness& h, uint64_t n, EngineOptions options) {
  h.engine.reset();
  h.committer.reset();
  auto faulty =
      std::make_unique<FaultInjectingStore>(std::move(h.store), FaultInjectingStore::Plan{n, 1});
  FaultInjectingStore* store = faulty.get();
  h.store = std::move(faulty);
  h.committer = NewSyncCommitter(h.store.get());
  h.Reset(options);
  return store;
}

// What a host does every few hundred ms: re-adopts what a refused batch dropped.
void ReadoptDropped(SimHarness& h) {
  for (int round = 0; round < 5; ++round) {
    for (const std::string& dropped : h.engine->TakeAbandoned()) {
      h.loop->Post(
          [&h, dropped] { (void)RecoverExecutions(h.store.get(), h.engine.get(), dropped); });
    }
    h.loop->RunUntilIdle();
  }
}

constexpr const char* kDiamond = R"(
name: diamond
defaults:
  retry: {max_attempts: 4, initial_delay: 1s}
steps:
  - {id: a, type: shell, run: "true"}
  - {id: b, type: shell, run: "true", depends_on: [a]}
  - {id: c, type: shell, run: "true", depends_on: [a]}
  - {id: d, type: shell, run: "true", depends_on: [b, c]}
)";

// The store refuses commit N (for every N a run makes), then takes writes again; the
// host re-adopts what was dropped, as the server does. Whatever N: the execution ends
// completed, each step completed once in the stored log (gap-free), and no slot leaked.
TEST(StoreFault, FailingEachCommitInTurnLosesNothingAndLeaksNothing) {
  for (uint64_t n = 1; n <= 40; ++n) {
    SCOPED_TRACE("commit " + std::to_string(n) + " refused");
    SimHarness h;
    FaultInjectingStore* store = RefuseCommit(h, n, EngineOptions{.parallel = 2});
    for (const char* step : {"a", "b", "c", "d"}) h.runner->script[step] = {Outcome(10)};

    std::string id;
    h.loop->Post([&] {
      StartRequest req;
      req.workflow = MustParse(kDiamond);
      auto started = h.engine->Start(req);
      if (started.ok()) id = *started;
    });
    h.loop->RunUntilIdle();
    ReadoptDropped(h);
    if (store->refused() == 0) break;  // n is past the last commit a run makes
    if (id.empty() || !h.store->GetExecution(id).ok()) continue;  // the start was refused
    ASSERT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
    auto events = *h.store->GetEvents(id, 0, 0);
    std::map<std::string, int> completed;
    for (size_t i = 0; i < events.size(); ++i) {
      ASSERT_EQ(events[i].seq, static_cast<int64_t>(i + 1)) << "gap in the log";
      if (events[i].type == "step.completed") ++completed[events[i].step_id];
    }
    for (const char* step : {"a", "b", "c", "d"}) EXPECT_EQ(completed[step], 1) << step;
    // No slot leaked: a new execution's b and c still run side by side.
    const size_t before = h.runner->calls.size();
    const std::string next = h.Run(kDiamond);
    ASSERT_EQ(h.Execution(next).status, ExecutionStatus::kCompleted);
    ASSERT_EQ(h.runner->calls.size(), before + 4);
    EXPECT_EQ(h.runner->calls[before + 1].started, h.runner->calls[before + 2].started);
  }
}

constexpr const char* kOneAtATime = R"(
name: serial
concurrency: {limit: 1}
steps:
  - {id: work, type: shell, run: "true", retry: {max_attempts: 4, initial_delay: 1s}}
)";

// Concurrency slots after a refused commit: whichever commit N is refused, both
// executions (one queued behind the other) complete, and a third runs at once after
// them: no slot is leaked or held twice.
TEST(StoreFault, ARefusedCommitLeaksNoConcurrencySlot) {
  for (uint64_t n = 1; n <= 30; ++n) {
    SCOPED_TRACE("commit " + std::to_string(n) + " refused");
    SimHarness h;
    FaultInjectingStore* store = RefuseCommit(h, n, EngineOptions{});
    h.runner->script["work"] = {Outcome(10)};
    std::vector<std::string> ids;
    h.loop->Post([&] {
      for (int i = 0; i < 2; ++i) {
        StartRequest req;
        req.workflow = MustParse(kOneAtATime);
        auto started = h.engine->Start(req);
        if (started.ok()) ids.push_back(*started);
      }
    });
    h.loop->RunUntilIdle();
    ReadoptDropped(h);
    if (store->refused() == 0) break;
    for (const std::string& id : ids) {
      if (!h.store->GetExecution(id).ok()) continue;  // its start was refused
      EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted) << id;
    }
    EXPECT_EQ(h.engine->Stats().executions_queued, 0u);
    const std::string next = h.StartOnly(kOneAtATime);
    h.loop->RunReady();
    EXPECT_EQ(h.Execution(next).status, ExecutionStatus::kRunning);  // not queued: free
    h.loop->RunUntilIdle();
    EXPECT_EQ(h.Execution(next).status, ExecutionStatus::kCompleted);
  }
}

constexpr const char* kPooled = R"(
name: pooled
steps:
  - {id: a, type: shell, run: "true", pool: gpu, retry: {max_attempts: 4, initial_delay: 1s}}
  - {id: b, type: shell, run: "true", pool: gpu, retry: {max_attempts: 4, initial_delay: 1s}}
)";

// Pool slots after a refused commit: whichever commit N is refused, the execution
// completes and the pool has no slot in use afterwards.
TEST(StoreFault, ARefusedCommitLeaksNoPoolSlot) {
  for (uint64_t n = 1; n <= 30; ++n) {
    SCOPED_TRACE("commit " + std::to_string(n) + " refused");
    SimHarness h;
    FaultInjectingStore* store = RefuseCommit(h, n, EngineOptions{.parallel = 4});
    h.runner->script["a"] = {Outcome(10)};
    h.runner->script["b"] = {Outcome(10)};
    PoolRecord gpu;
    gpu.name = "gpu";
    gpu.slots = 1;
    std::string id;
    h.loop->Post([&] {
      if (!h.engine->SetPool(gpu).ok()) return;
      StartRequest req;
      req.workflow = MustParse(kPooled);
      auto started = h.engine->Start(req);
      if (started.ok()) id = *started;
    });
    h.loop->RunUntilIdle();
    ReadoptDropped(h);
    if (store->refused() == 0) break;
    // (A refused first commit may have held the pool itself: define it again.)
    h.loop->Post([&] { ASSERT_TRUE(h.engine->SetPool(gpu).ok()); });
    h.loop->RunUntilIdle();
    if (!id.empty() && h.store->GetExecution(id).ok()) {
      EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
    }
    ASSERT_EQ(h.engine->Pools("").size(), 1u);
    EXPECT_EQ(h.engine->Pools("")[0].used, 0);
    const std::string next = h.Run(kPooled);
    EXPECT_EQ(h.Execution(next).status, ExecutionStatus::kCompleted);
  }
}

}  // namespace
}  // namespace baton::testing
