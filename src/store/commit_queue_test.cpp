#include <baton/commit_queue.h>
#include <baton/memory_store.h>

#include "store/store_test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace baton {
namespace {

using testing::Event;
using testing::Id;

// Forwards to a real store; the first Commit blocks until Release(), so a test can
// queue batches behind a commit in flight and get a deterministic grouping.
class GatedStore final : public StoreWrapper {
 public:
  explicit GatedStore(Store* inner) : StoreWrapper(inner) {}

  // Blocks until the first Commit has started (and is held at the gate).
  void WaitUntilHeld() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return held_; });
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  std::vector<size_t> group_sizes() {
    std::lock_guard lock(mu_);
    return group_sizes_;
  }

  Status Commit(std::span<const WriteBatch* const> batches) override {
    {
      std::unique_lock lock(mu_);
      group_sizes_.push_back(batches.size());
      if (!held_) {
        held_ = true;
        cv_.notify_all();
        cv_.wait(lock, [&] { return released_; });
      }
    }
    return StoreWrapper::Commit(batches);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false;
  bool released_ = false;
  std::vector<size_t> group_sizes_;
};

WriteBatch OneEvent(const std::string& execution, int64_t seq) {
  WriteBatch b;
  b.events.push_back(Event(execution, seq));
  return b;
}

TEST(CommitQueue, ManyThreadsEveryCallbackOnceInSubmissionOrder) {
  auto store = NewMemoryStore();
  CommitQueue queue(store.get(), {.max_group = 16});
  constexpr int kThreads = 8;
  constexpr int kPerThread = 300;
  std::mutex submit_mu;  // makes the submission order observable
  std::vector<int> submitted;
  std::vector<int> completed;  // written only on the writer thread
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 1; i <= kPerThread; ++i) {
        const int id = t * kPerThread + i;
        std::lock_guard lock(submit_mu);
        submitted.push_back(id);
        queue.Submit(OneEvent(Id("e", t), i), [&, id](const Status& s) {
          if (!s.ok()) ++failures;
          completed.push_back(id);
        });
      }
    });
  }
  for (auto& t : threads) t.join();
  queue.Flush();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(completed, submitted);  // each once, in submission order
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(store->GetEvents(Id("e", t), 0, 0)->size(), size_t{kPerThread});
  }
  const CommitQueue::Stats stats = queue.stats();
  EXPECT_EQ(stats.batches, uint64_t{kThreads * kPerThread});
  EXPECT_LE(stats.max_group_seen, 16u);
}

TEST(CommitQueue, GroupsBatchesQueuedBehindACommitInFlight) {
  auto memory = NewMemoryStore();
  GatedStore store(memory.get());
  CommitQueue queue(&store, {});
  std::vector<int> order;
  queue.Submit(OneEvent("e", 1), [&](const Status& s) {
    EXPECT_TRUE(s.ok());
    order.push_back(1);
  });
  store.WaitUntilHeld();  // the writer is inside the first Commit
  for (int i = 2; i <= 11; ++i) {
    queue.Submit(OneEvent("e", i), [&, i](const Status& s) {
      EXPECT_TRUE(s.ok());
      order.push_back(i);
    });
  }
  store.Release();
  queue.Flush();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(store.group_sizes(), (std::vector<size_t>{1, 10}));
  const CommitQueue::Stats stats = queue.stats();
  EXPECT_EQ(stats.commits, 2u);
  EXPECT_EQ(stats.batches, 11u);
  EXPECT_GT(stats.batches, stats.commits);
  EXPECT_EQ(stats.max_group_seen, 10u);
  EXPECT_GE(stats.total_commit_ms, 0.0);
}

TEST(CommitQueue, RespectsMaxGroup) {
  auto memory = NewMemoryStore();
  GatedStore store(memory.get());
  CommitQueue queue(&store, {.max_group = 4});
  queue.Submit(OneEvent("e", 1), nullptr);
  store.WaitUntilHeld();
  for (int i = 2; i <= 11; ++i) queue.Submit(OneEvent("e", i), nullptr);
  store.Release();
  queue.Flush();
  EXPECT_EQ(store.group_sizes(), (std::vector<size_t>{1, 4, 4, 2}));
  EXPECT_EQ(memory->GetEvents("e", 0, 0)->size(), 11u);
}

TEST(CommitQueue, FailureReachesEveryBatchOfTheGroupAndNothingIsStored) {
  auto memory = NewMemoryStore();
  GatedStore store(memory.get());
  CommitQueue queue(&store, {});
  queue.Submit(OneEvent("e", 1), [](const Status& s) { EXPECT_TRUE(s.ok()); });
  store.WaitUntilHeld();
  std::vector<Status> results;
  for (int64_t seq : {2, 1 /* duplicate */, 3}) {
    queue.Submit(OneEvent("e", seq), [&](const Status& s) { results.push_back(s); });
  }
  store.Release();
  queue.Flush();
  ASSERT_EQ(results.size(), 3u);
  for (const Status& s : results) EXPECT_EQ(s.code(), errc::kStore) << s.ToString();
  EXPECT_EQ(memory->GetEvents("e", 0, 0)->size(), 1u);

  // Batches behind a failed group are refused unwritten until the producer clears the
  // failure (it has dropped what diverged from the store); then the queue works again.
  Status refused = Status::Ok();
  queue.Submit(OneEvent("e", 2), [&](const Status& s) { refused = s; });
  queue.Flush();
  EXPECT_EQ(refused.code(), errc::kStore);
  EXPECT_NE(refused.message().find("an earlier batch was refused"), std::string::npos);
  EXPECT_EQ(memory->GetEvents("e", 0, 0)->size(), 1u);
  queue.ClearFailure();
  Status later = Status(errc::kIo, "not called");
  queue.Submit(OneEvent("e", 2), [&](const Status& s) { later = s; });
  queue.Flush();
  EXPECT_TRUE(later.ok()) << later.ToString();
  // Only committed rows count: the first event and the last one.
  EXPECT_EQ(queue.stats().event_rows, 2u);
}

// Regression (found by StoreFault.FailingEachCommitInTurnLosesNothingAndLeaksNothing): a
// batch queued behind a refused one committed, leaving a gap in the event log. Batches
// submitted before ClearFailure() stay refused even when the writer reaches them after.
TEST(CommitQueue, BatchesQueuedBeforeTheFailureWasClearedStayRefused) {
  auto memory = NewMemoryStore();
  GatedStore store(memory.get());
  CommitQueue queue(&store, {.max_group = 1});  // one batch per transaction
  queue.Submit(OneEvent("e", 1), [](const Status& s) { EXPECT_TRUE(s.ok()); });
  store.WaitUntilHeld();
  Status duplicate, behind;
  // The producer clears the failure as soon as it hears of it (the engine does, once
  // it has dropped its state), before the writer reaches the batch queued behind.
  queue.Submit(OneEvent("e", 1), [&](const Status& s) {
    duplicate = s;
    queue.ClearFailure();
  });
  queue.Submit(OneEvent("e", 3), [&](const Status& s) { behind = s; });
  store.Release();
  queue.Flush();
  EXPECT_FALSE(duplicate.ok());
  EXPECT_FALSE(behind.ok()) << "seq 3 was stored behind a refused batch";
  EXPECT_EQ(memory->GetEvents("e", 0, 0)->size(), 1u);
  Status later = Status(errc::kIo, "not called");
  queue.Submit(OneEvent("e", 2), [&](const Status& s) { later = s; });
  queue.Flush();
  EXPECT_TRUE(later.ok()) << later.ToString();
}

TEST(CommitQueue, DestructorDrainsPendingBatches) {
  auto store = NewMemoryStore();
  int called = 0;
  {
    CommitQueue queue(store.get());
    for (int i = 1; i <= 100; ++i) {
      queue.Submit(OneEvent("e", i), [&](const Status& s) {
        EXPECT_TRUE(s.ok());
        ++called;
      });
    }
  }
  EXPECT_EQ(called, 100);
  EXPECT_EQ(store->GetEvents("e", 0, 0)->size(), 100u);
}

TEST(CommitQueue, WindowGathersLaterBatches) {
  auto store = NewMemoryStore();
  CommitQueue queue(store.get(), {.max_group = 2, .window = Duration(2000)});
  queue.Submit(OneEvent("e", 1), nullptr);
  // Well inside the window; max_group reached ends the wait early.
  queue.Submit(OneEvent("e", 2), nullptr);
  queue.Flush();
  EXPECT_EQ(store->GetEvents("e", 0, 0)->size(), 2u);
  EXPECT_EQ(queue.stats().commits, 1u);
}

TEST(CommitQueue, CallbackMaySubmit) {
  auto store = NewMemoryStore();
  CommitQueue queue(store.get());
  std::atomic<bool> second_done{false};
  queue.Submit(OneEvent("e", 1), [&](const Status&) {
    queue.Submit(OneEvent("e", 2), [&](const Status& s) { second_done = s.ok(); });
  });
  queue.Flush();  // the nested submission happened before this returned...
  queue.Flush();  // ...so a second Flush waits for it
  EXPECT_TRUE(second_done.load());
}

TEST(CommitQueue, CommitHereLeavesAGroupInFlightToTheWriter) {
  auto inner = NewMemoryStore();
  GatedStore store(inner.get());
  CommitQueue queue(&store);
  std::mutex mu;
  std::vector<int> done;
  auto record = [&](int n) {
    return [&, n](const Status& s) {
      std::lock_guard lock(mu);
      done.push_back(s.ok() ? n : -n);
    };
  };
  queue.Submit(OneEvent("a", 1), record(1));
  store.WaitUntilHeld();  // the writer is inside the first commit
  queue.Submit(OneEvent("b", 1), record(2));
  EXPECT_FALSE(queue.CommitHere(4));  // one commit at a time: the writer takes it next
  store.Release();
  queue.Flush();
  EXPECT_EQ(done, (std::vector<int>{1, 2}));
  EXPECT_EQ(store.group_sizes(), (std::vector<size_t>{1, 1}));
  EXPECT_FALSE(queue.CommitHere(4));  // nothing queued
}

// A thread calling CommitHere between its submissions races the writer for them: each
// batch is committed once, whoever takes it, and the callbacks keep submission order.
TEST(CommitQueue, CommitHereAndTheWriterKeepSubmissionOrder) {
  auto store = NewMemoryStore();
  CommitQueue queue(store.get());
  constexpr int kBatches = 3000;
  std::mutex mu;
  std::vector<int> completed;
  int here = 0;  // callbacks run by the submitting thread (its CommitHere won)
  const auto self = std::this_thread::get_id();
  for (int i = 0; i < kBatches; ++i) {
    queue.Submit(OneEvent("e" + std::to_string(i % 7), i / 7 + 1), [&, i](const Status& s) {
      std::lock_guard lock(mu);
      completed.push_back(s.ok() ? i : -1);
      if (std::this_thread::get_id() == self) ++here;
    });
    if (i % 3 != 0) queue.CommitHere(4);
  }
  queue.Flush();
  ASSERT_EQ(completed.size(), static_cast<size_t>(kBatches));
  for (int i = 0; i < kBatches; ++i) ASSERT_EQ(completed[i], i);
  EXPECT_EQ(queue.stats().batches, static_cast<uint64_t>(kBatches));
  for (int e = 0; e < 7; ++e) {
    auto events = store->GetEvents("e" + std::to_string(e), 0, 0);
    ASSERT_TRUE(events.ok());
    EXPECT_EQ(events->size(), static_cast<size_t>((kBatches - e + 6) / 7));
  }
  ::testing::Test::RecordProperty("committed_by_the_caller", here);
}

// A queue whose test thread defers its wake-ups; Count() makes a callback that counts
// committed batches and notes the thread that committed the last one.
class CommitQueueDeferredWakeups : public ::testing::Test {
 protected:
  CommitQueueDeferredWakeups() {
    // Deferring only leaves a writer that sleeps asleep; one still starting up takes what
    // it finds queued. Once Flush() returns, the writer is waiting for work: it holds the
    // queue's lock from counting a group done until it waits, and Flush() needs that lock.
    queue_.Submit(OneEvent("first", 1), nullptr);
    queue_.Flush();
    queue_.DeferWakeupsOnThisThread();
  }

  std::function<void(const Status&)> Count() {
    return [this](const Status& s) {
      committed_by_ = std::this_thread::get_id();
      if (s.ok()) ++done_;
    };
  }
  // Waits up to 30 s: a batch nobody commits fails the test instead of hanging it.
  bool WaitForDone(int want) {
    for (int i = 0; i < 30'000 && done_.load() < want; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return done_.load() >= want;
  }

  std::unique_ptr<Store> store_ = NewMemoryStore();
  CommitQueue queue_{store_.get()};
  std::atomic<int> done_{0};
  std::thread::id committed_by_;  // written before done_ is counted up
};

// A thread that defers wake-ups leaves its batch to its own CommitHere(): the writer,
// asleep, does not take it meanwhile.
TEST_F(CommitQueueDeferredWakeups, ABatchWaitsForTheSubmittersCommitHere) {
  queue_.Submit(OneEvent("e", 1), Count());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(done_.load(), 0);  // an awake writer would have committed it by now
  EXPECT_TRUE(queue_.CommitHere(4));
  EXPECT_EQ(done_.load(), 1);
  EXPECT_EQ(committed_by_, std::this_thread::get_id());
  EXPECT_EQ(queue_.stats().commits, 2u);  // the fixture's, then this one
}

// WakeDeferred() hands the batch to the writer.
TEST_F(CommitQueueDeferredWakeups, WakeDeferredHandsTheBatchToTheWriter) {
  queue_.Submit(OneEvent("e", 1), Count());
  queue_.WakeDeferred();
  ASSERT_TRUE(WaitForDone(1));
  EXPECT_NE(committed_by_, std::this_thread::get_id());
  queue_.WakeDeferred();  // nothing left: harmless
}

// A second batch while the first still waits means the thread is busy: the writer is
// woken and commits both, with no CommitHere() or WakeDeferred() from the thread.
TEST_F(CommitQueueDeferredWakeups, ASecondBatchWakesTheWriter) {
  queue_.Submit(OneEvent("e", 1), Count());
  queue_.Submit(OneEvent("e", 2), Count());
  ASSERT_TRUE(WaitForDone(2));
  auto events = store_->GetEvents("e", 0, 0);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->size(), 2u);
}

// CommitHere() that declines (more batches than it takes) wakes the writer for them.
TEST_F(CommitQueueDeferredWakeups, ADeclinedCommitHereWakesTheWriter) {
  queue_.Submit(OneEvent("e", 1), Count());
  EXPECT_FALSE(queue_.CommitHere(0));
  ASSERT_TRUE(WaitForDone(1));
}

// Flush() from the deferring thread does not wait on a writer it left asleep.
TEST_F(CommitQueueDeferredWakeups, FlushCommitsADeferredBatch) {
  queue_.Submit(OneEvent("e", 1), Count());
  queue_.Flush();
  EXPECT_EQ(done_.load(), 1);
}

// Only the thread that asked defers: another thread's batch wakes the writer as before.
TEST_F(CommitQueueDeferredWakeups, OtherThreadsStillWakeTheWriter) {
  std::thread other([&] { queue_.Submit(OneEvent("e", 1), Count()); });
  other.join();
  ASSERT_TRUE(WaitForDone(1));
}

}  // namespace
}  // namespace baton
