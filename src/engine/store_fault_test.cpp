// What the engine does when the store refuses a batch (a full disk, an I/O error):
// the executions of that batch leave memory, and everything they held is given back,
// so that the engine goes on once the store takes writes again (issue 11, defect 4).
#include "support/sim_harness.h"

#include <gtest/gtest.h>

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
  h.engine.reset();
  auto flaky = std::make_unique<FlakyCommitter>(h.store.get());
  FlakyCommitter* committer = flaky.get();
  h.committer = std::move(flaky);
  h.Reset(EngineOptions{.parallel = 2});
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

}  // namespace
}  // namespace baton::testing
