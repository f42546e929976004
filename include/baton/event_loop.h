// The two EventLoop implementations: real time on a dedicated thread, and virtual
// time for deterministic tests.
#pragma once

#include <baton/clock.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>

namespace baton {

// Timers ordered by (time, id) so equal deadlines fire in scheduling order. The times
// are the owning loop's monotonic reading (Clock::MonotonicMs), never the wall clock.
class TimerQueue {
 public:
  TimerId Add(TimeMs when, std::function<void()> task);
  void Cancel(TimerId id);
  bool empty() const { return timers_.empty(); }
  TimeMs NextTime() const;  // requires !empty()
  // Removes and returns the earliest timer's task if it is due at `now`.
  std::function<void()> PopDue(TimeMs now);

 private:
  TimerId next_id_ = 1;
  std::map<std::pair<TimeMs, TimerId>, std::function<void()>> timers_;
  std::map<TimerId, TimeMs> when_;
};

// Runs tasks and timers on the thread that calls Run(), in real time.
class RealEventLoop final : public EventLoop {
 public:
  RealEventLoop() = default;
  explicit RealEventLoop(RealClock clock) : clock_(clock) {}
  const Clock& clock() const override { return clock_; }
  void Post(std::function<void()> task) override;  // thread-safe
  TimerId ScheduleAt(TimeMs when, std::function<void()> task) override;
  void CancelTimer(TimerId id) override;
  // Runs until Stop(). Stop() is thread-safe; tasks posted before it still run.
  void Run();
  void Stop();

 private:
  RealClock clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> posted_;
  bool stopping_ = false;
  TimerQueue timers_;  // loop thread only
};

// Virtual time: RunUntilIdle() runs posted tasks and, when none are left, jumps the
// clock to the next timer and fires it. A whole execution with hour-long backoffs runs
// in microseconds. Post() is thread-safe, but tests that use it normally stay on one
// thread.
class SimEventLoop final : public EventLoop {
 public:
  explicit SimEventLoop(SimClock* clock) : clock_(clock) {}
  const Clock& clock() const override { return *clock_; }
  void Post(std::function<void()> task) override;
  TimerId ScheduleAt(TimeMs when, std::function<void()> task) override;
  void CancelTimer(TimerId id) override;
  // Runs posted tasks, then due timers, advancing virtual time, until nothing is left
  // or virtual time would pass `limit`. Returns the number of tasks run.
  size_t RunUntilIdle(TimeMs limit = INT64_MAX);
  // Runs only what is due now, without advancing time.
  size_t RunReady();
  bool HasTimers() const { return !timers_.empty(); }

 private:
  SimClock* clock_;
  std::mutex mu_;
  std::deque<std::function<void()>> posted_;
  TimerQueue timers_;
};

}  // namespace baton
