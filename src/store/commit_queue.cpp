#include <baton/commit_queue.h>
#include "common/thread_name.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

namespace baton {

namespace {
// The queue whose wake-ups the calling thread defers (DeferWakeupsOnThisThread).
thread_local const CommitQueue* deferring_queue = nullptr;
}  // namespace

CommitQueue::CommitQueue(Store* store) : CommitQueue(store, Options{}) {}

CommitQueue::CommitQueue(Store* store, Options options)
    : store_(store), options_(options), writer_([this] {
        SetThreadName("baton-commit");
        Run();
      }) {}

CommitQueue::~CommitQueue() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_one();
  writer_.join();
}

void CommitQueue::Submit(WriteBatch batch, std::function<void(const Status&)> done) {
  Submit(std::make_shared<const WriteBatch>(std::move(batch)), std::move(done));
}

void CommitQueue::Submit(std::shared_ptr<const WriteBatch> batch,
                         std::function<void(const Status&)> done) {
  {
    std::lock_guard lock(mu_);
    ++submitted_;
    queue_.push_back(Item{std::move(batch), std::move(done), submitted_});
    // One batch at a time: a second one while the first waits means the thread is busy
    // producing, and the writer should be committing meanwhile.
    if (deferring_queue == this && !wake_deferred_) {
      wake_deferred_ = true;
      return;
    }
    wake_deferred_ = false;
  }
  work_cv_.notify_one();
}

void CommitQueue::DeferWakeupsOnThisThread() {
  deferring_queue = this;
}

void CommitQueue::WakeDeferred() {
  {
    std::lock_guard lock(mu_);
    if (!wake_deferred_) return;
    wake_deferred_ = false;
    if (queue_.empty()) return;
  }
  work_cv_.notify_one();
}

void CommitQueue::Flush() {
  std::unique_lock lock(mu_);
  const uint64_t target = submitted_;
  if (wake_deferred_) {  // the writer may be asleep on batches left for CommitHere()
    wake_deferred_ = false;
    work_cv_.notify_one();
  }
  done_cv_.wait(lock, [&] { return completed_ >= target; });
}

void CommitQueue::ClearFailure() {
  std::lock_guard lock(mu_);
  if (!refusing_) return;
  refusing_ = false;
  refuse_through_ = submitted_;
}

CommitQueue::Stats CommitQueue::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

CommitQueue::Stats CommitQueue::RowsOf(const std::vector<const WriteBatch*>& batches) {
  Stats rows;
  for (const WriteBatch* b : batches) {
    rows.execution_rows += b->executions.size();
    rows.step_rows += b->steps.size();
    rows.attempt_rows += b->attempts.size();
    rows.event_rows += b->events.size();
    rows.assignment_rows += b->assignments.size();
    rows.other_rows += b->workflows.size() + b->dead_letters.size() + b->tokens.size() +
                       b->schedules.size() + b->hooks.size() + b->triggers.size() +
                       b->deliveries.size() + b->workers.size() + b->reassignments.size() +
                       b->signals.size() + b->breakers.size() + b->pools.size() +
                       b->cache_entries.size() + b->cache_touches.size() + b->cache_deletes.size();
  }
  return rows;
}

void CommitQueue::CountRows(const Stats& rows) {
  stats_.execution_rows += rows.execution_rows;
  stats_.step_rows += rows.step_rows;
  stats_.attempt_rows += rows.attempt_rows;
  stats_.event_rows += rows.event_rows;
  stats_.assignment_rows += rows.assignment_rows;
  stats_.other_rows += rows.other_rows;
}

void CommitQueue::Run() {
  const size_t max_group = std::max<size_t>(options_.max_group, 1);
  std::unique_lock lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return !committing_ && (stopping_ || !queue_.empty()); });
    if (queue_.empty()) return;  // stopping and drained (no commit is in progress)
    // The window trades latency for bigger groups: it only pays when producers are
    // many and the fsync is what limits throughput.
    if (options_.window.count() > 0 && queue_.size() < max_group && !stopping_) {
      work_cv_.wait_for(lock, options_.window,
                        [&] { return stopping_ || queue_.size() >= max_group; });
      if (committing_ || queue_.empty()) continue;  // a CommitHere() took them meanwhile
    }
    CommitGroup(lock, max_group);
  }
}

bool CommitQueue::CommitHere(size_t max_batches) {
  std::unique_lock lock(mu_);
  if (committing_ || queue_.empty() || queue_.size() > max_batches) {
    // Declined: batches left for this call go to the writer (one committing now takes
    // them when it is done).
    if (wake_deferred_ && !queue_.empty() && !committing_) work_cv_.notify_one();
    wake_deferred_ = false;
    return false;
  }
  CommitGroup(lock, std::min(max_batches, std::max<size_t>(options_.max_group, 1)));
  return true;
}

void CommitQueue::CommitGroup(std::unique_lock<std::mutex>& lock, size_t max_group) {
  committing_ = true;
  // Batches behind a refused one are refused too (see ClearFailure): a group is all
  // refused or all attempted.
  const bool refuse = refusing_ || queue_.front().seq <= refuse_through_;
  std::vector<Item>& group = group_;  // kept between commits: its capacity stays
  while (group.size() < max_group && !queue_.empty() &&
         (refuse == (refusing_ || queue_.front().seq <= refuse_through_))) {
    group.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  const size_t n = group.size();
  if (queue_.empty()) wake_deferred_ = false;  // every deferred batch is in this group
  const std::string earlier = failure_;
  lock.unlock();

  // Producers keep queueing while this commit (and its fsync) runs; that backlog is
  // what the next group picks up.
  std::vector<const WriteBatch*>& ptrs = ptrs_;
  ptrs.clear();
  for (const Item& item : group) ptrs.push_back(item.batch.get());
  const Stats rows = RowsOf(ptrs);
  const auto start = std::chrono::steady_clock::now();
  const Status status =
      refuse ? Status(errc::kStore, "not written: an earlier batch was refused (" + earlier + ")")
             : store_->Commit(ptrs);
  if (!status.ok() && !refuse) {
    std::lock_guard failed(mu_);
    refusing_ = true;
    failure_ = status.message();
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (Item& item : group) {
    if (item.done) item.done(status);
  }
  group.clear();  // free the batches before taking the lock again

  lock.lock();
  if (!refuse && status.ok()) CountRows(rows);
  if (!refuse) stats_.commits += 1;
  stats_.batches += n;
  stats_.max_group_seen = std::max<uint64_t>(stats_.max_group_seen, n);
  stats_.total_commit_ms += ms;
  completed_ += n;
  committing_ = false;
  done_cv_.notify_all();
  // The writer waits for this commit to end whatever its thread: when queued work is
  // left, it takes it from here.
  if (!queue_.empty() || stopping_) work_cv_.notify_one();
}

}  // namespace baton
