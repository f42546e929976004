// CommitQueue: group commit in front of a Store.
//
// Durable stores pay one fsync per transaction. Producers (the engine's decide step,
// worker result handlers) Submit() their WriteBatches here; one writer thread takes
// everything queued -- up to Options::max_group batches -- and writes it with ONE
// Store::Commit() call, so under load many batches share one transaction and one fsync.
//
// Ordering: batches commit in submission order (a group is a contiguous run of the
// queue), and their `done` callbacks run in submission order.
// Atomicity: a group is all or nothing; when its Commit fails, every batch of the group
// gets the same error, and none of them is stored.
// Threading: Submit(), CommitHere(), Flush() and stats() are thread-safe. Callbacks run on
// the thread that committed their group: the writer, or a CommitHere() caller. They must
// not throw and must not call Flush() (it would wait for itself), but may Submit(); a
// CommitHere() from a callback does nothing (a group is being committed). One group
// commits at a time, so order holds whoever commits it. The Store must outlive the queue.
#pragma once

#include <baton/clock.h>
#include <baton/status.h>
#include <baton/store.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace baton {

class CommitQueue {
 public:
  struct Options {
    size_t max_group = 512;  // most batches per transaction
    // Extra wait to gather more batches once the writer is idle and work arrives;
    // 0 = commit only what is already queued (latency first; grouping still happens
    // while a commit is in flight).
    Duration window{0};
  };

  explicit CommitQueue(Store* store);          // default Options
  CommitQueue(Store* store, Options options);  // starts one writer thread
  ~CommitQueue();  // commits everything submitted, runs its callbacks, joins
  CommitQueue(const CommitQueue&) = delete;
  CommitQueue& operator=(const CommitQueue&) = delete;

  // Queues `batch`. `done` (may be empty) runs on the committing thread once the
  // transaction holding the batch committed (ok) or failed (its error).
  void Submit(WriteBatch batch, std::function<void(const Status&)> done);
  // The same, for a batch the caller keeps reading after the commit (the engine tells
  // observers about its events). The batch must not change once submitted.
  void Submit(std::shared_ptr<const WriteBatch> batch, std::function<void(const Status&)> done);

  // Blocks until everything submitted before the call has committed and its callback
  // ran. Not from a callback.
  void Flush();

  // Commits what is queued on the calling thread, when no commit is in progress and at
  // most `max_batches` batches wait; returns whether it did. For a thread about to go idle
  // anyway (the engine's loop with nothing left to run): the writer it would otherwise
  // wake may wait for a core behind another process for a whole time slice, while this
  // thread already has one. The writer is still woken by Submit() and takes the batches
  // if it gets there first. From a callback it does nothing (its group is committing).
  bool CommitHere(size_t max_batches);

  // For a thread that commits what it submits when it goes idle (an event loop with
  // CommitHere() as its idle hook): from now on, a batch Submit()ted on the calling thread
  // leaves a sleeping writer asleep, unless an earlier one still waits (a thread that
  // submits twice is busy: the writer commits meanwhile). Waking it costs a system call, and on a
  // virtual machine often an interrupt to another CPU, only for the writer to find the batch
  // already taken by CommitHere() and sleep again. The thread must then, before it waits for
  // anything, call CommitHere() or WakeDeferred(): the batches it left are the writer's again only
  // once woken. A writer already committing takes them when it is done, as before.
  void DeferWakeupsOnThisThread();
  // Wakes the writer for the batches Submit() left it asleep for, if any are still
  // queued. Thread-safe; cheap when there are none.
  void WakeDeferred();

  // A failed transaction makes the queue refuse every later batch with the same kind of
  // error, without writing it: a batch must never be stored when one submitted before
  // it was refused (an execution's event log would have a gap, a step a completion
  // without its dispatch). The producer, once it has dropped what diverged from the
  // store, calls ClearFailure(): batches submitted after that call commit again; those
  // submitted before it are still refused.
  void ClearFailure();

  struct Stats {
    uint64_t commits = 0;         // Store::Commit calls
    uint64_t batches = 0;         // batches written by them
    uint64_t max_group_seen = 0;  // most batches in one Commit
    double total_commit_ms = 0;   // wall time inside Store::Commit
    // Records written by committed groups, by table: the write amplification of a
    // workload (rows per step) read from outside through /metrics.
    uint64_t execution_rows = 0;
    uint64_t step_rows = 0;
    uint64_t attempt_rows = 0;
    uint64_t event_rows = 0;
    uint64_t assignment_rows = 0;
    uint64_t other_rows = 0;  // every other table
  };
  Stats stats() const;

 private:
  struct Item {
    std::shared_ptr<const WriteBatch> batch;
    std::function<void(const Status&)> done;
    uint64_t seq = 0;  // 1-based submission number
  };

  void Run();
  // Takes the group at the queue's front and commits it; mu_ held by `lock` on entry and
  // exit (released meanwhile). committing_ is set throughout.
  void CommitGroup(std::unique_lock<std::mutex>& lock, size_t max_group);
  static Stats RowsOf(const std::vector<const WriteBatch*>& batches);  // only the row counts
  void CountRows(const Stats& rows);                                   // under mu_

  Store* const store_;
  const Options options_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // writer waits for work
  std::condition_variable done_cv_;  // Flush waits for completion
  std::deque<Item> queue_;
  uint64_t submitted_ = 0;  // batches ever submitted
  uint64_t completed_ = 0;  // batches whose callback ran
  bool stopping_ = false;
  bool committing_ = false;  // a group is being committed (by the writer or CommitHere)
  // A batch was queued without waking the writer (DeferWakeupsOnThisThread); cleared when
  // a group takes every queued batch or WakeDeferred() wakes it.
  bool wake_deferred_ = false;
  // The group being committed and its batches: only its committer touches them.
  std::vector<Item> group_;
  std::vector<const WriteBatch*> ptrs_;
  bool refusing_ = false;        // a transaction failed and ClearFailure() has not come
  uint64_t refuse_through_ = 0;  // batches up to this seq are refused (see ClearFailure)
  std::string failure_;          // the first error of the failure being refused after
  Stats stats_;
  std::thread writer_;  // last: starts after every other member is ready
};

}  // namespace baton
