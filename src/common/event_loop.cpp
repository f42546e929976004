#include <baton/event_loop.h>

#include "common/indexed_heap.h"

#include <cassert>
#include <chrono>

namespace baton {

TimerId TimerQueue::Add(TimeMs when, std::function<void()> task) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    assert(slots_.size() < kNotQueued);
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  slots_[slot].task = std::move(task);
  indexed_heap::Push(heap_, Entry{when, next_order_++, slot}, Before, Placer());
  return (static_cast<TimerId>(slots_[slot].generation) << 32) | slot;
}

void TimerQueue::Cancel(TimerId id) {
  const auto slot = static_cast<uint32_t>(id & 0xffffffffu);
  const auto generation = static_cast<uint32_t>(id >> 32);
  if (slot >= slots_.size() || slots_[slot].generation != generation ||
      slots_[slot].heap_index == kNotQueued) {
    return;  // fired, cancelled, or never one of ours
  }
  Remove(slots_[slot].heap_index);
}

TimeMs TimerQueue::NextTime() const {
  assert(!heap_.empty());
  return heap_.front().when;
}

std::function<void()> TimerQueue::PopDue(TimeMs now) {
  if (heap_.empty() || heap_.front().when > now) return nullptr;
  return Remove(0);
}

std::function<void()> TimerQueue::Remove(size_t i) {
  const uint32_t slot = heap_[i].slot;
  indexed_heap::Erase(heap_, i, Before, Placer());
  Slot& s = slots_[slot];
  std::function<void()> task = std::move(s.task);
  s.task = nullptr;
  s.heap_index = kNotQueued;
  if (++s.generation == 0) s.generation = 1;  // ids are never 0 ("no timer")
  free_slots_.push_back(slot);
  return task;
}

void RealEventLoop::Post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    posted_.push_back(std::move(task));
  }
  cv_.notify_one();
}

// Timers are kept on the monotonic reading (see Clock): `when` is converted once, here.
TimerId RealEventLoop::ScheduleAt(TimeMs when, std::function<void()> task) {
  return timers_.Add(clock_.MonotonicMs() + (when - clock_.Now()), std::move(task));
}

void RealEventLoop::CancelTimer(TimerId id) {
  timers_.Cancel(id);
}

void RealEventLoop::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
}

void RealEventLoop::Run() {
  std::deque<std::function<void()>> batch;
  bool ran = false;  // the last pass ran tasks or timers
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (posted_.empty() && !stopping_ && idle_hook_) {
        lock.unlock();
        idle_hook_();
        lock.lock();
      } else if (ran && !posted_.empty() && busy_hook_) {
        lock.unlock();
        busy_hook_();
        lock.lock();
      }
      if (posted_.empty() && !stopping_) {
        if (timers_.empty()) {
          cv_.wait(lock, [&] { return !posted_.empty() || stopping_; });
        } else {
          const int64_t wait = clock_.RealDelay(timers_.NextTime() - clock_.MonotonicMs());
          if (wait > 0) {
            cv_.wait_for(lock, std::chrono::milliseconds(wait),
                         [&] { return !posted_.empty() || stopping_; });
          }
        }
      }
      if (posted_.empty() && stopping_) return;
      batch.swap(posted_);
    }
    ran = !batch.empty();
    for (auto& task : batch) task();
    batch.clear();
    const int64_t now = clock_.MonotonicMs();
    while (auto task = timers_.PopDue(now)) {
      task();
      ran = true;
    }
  }
}

void SimEventLoop::Post(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mu_);
  posted_.push_back(std::move(task));
}

TimerId SimEventLoop::ScheduleAt(TimeMs when, std::function<void()> task) {
  ++timers_scheduled_;
  return timers_.Add(clock_->MonotonicMs() + (when - clock_->Now()), std::move(task));
}

void SimEventLoop::CancelTimer(TimerId id) {
  timers_.Cancel(id);
}

size_t SimEventLoop::RunReady() {
  size_t ran = 0;
  for (;;) {
    std::function<void()> task;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!posted_.empty()) {
        task = std::move(posted_.front());
        posted_.pop_front();
      }
    }
    if (!task) task = timers_.PopDue(clock_->MonotonicMs());
    if (!task) return ran;
    task();
    ++ran;
  }
}

size_t SimEventLoop::RunUntilIdle(TimeMs limit) {
  size_t ran = 0;
  for (;;) {
    ran += RunReady();
    if (timers_.empty()) return ran;
    // Timers are monotonic; `limit` is a wall-clock instant.
    const int64_t next = timers_.NextTime();
    const int64_t mono = clock_->MonotonicMs();
    if (limit != INT64_MAX && next - mono > limit - clock_->Now()) return ran;
    if (next > mono) clock_->Advance(Duration(next - mono));
  }
}

}  // namespace baton
