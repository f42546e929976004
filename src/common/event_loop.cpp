#include <baton/event_loop.h>

#include <cassert>
#include <chrono>

namespace baton {

TimerId TimerQueue::Add(TimeMs when, std::function<void()> task) {
  TimerId id = next_id_++;
  timers_.emplace(std::make_pair(when, id), std::move(task));
  when_.emplace(id, when);
  return id;
}

void TimerQueue::Cancel(TimerId id) {
  auto it = when_.find(id);
  if (it == when_.end()) return;
  timers_.erase({it->second, id});
  when_.erase(it);
}

TimeMs TimerQueue::NextTime() const {
  assert(!timers_.empty());
  return timers_.begin()->first.first;
}

std::function<void()> TimerQueue::PopDue(TimeMs now) {
  if (timers_.empty() || timers_.begin()->first.first > now) return nullptr;
  auto node = timers_.extract(timers_.begin());
  when_.erase(node.key().second);
  return std::move(node.mapped());
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
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
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
    for (auto& task : batch) task();
    batch.clear();
    const int64_t now = clock_.MonotonicMs();
    while (auto task = timers_.PopDue(now)) task();
  }
}

void SimEventLoop::Post(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mu_);
  posted_.push_back(std::move(task));
}

TimerId SimEventLoop::ScheduleAt(TimeMs when, std::function<void()> task) {
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
