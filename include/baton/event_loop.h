// The two EventLoop implementations: real time on a dedicated thread, and virtual
// time for deterministic tests.
#pragma once

#include <baton/clock.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

namespace baton {

// Timers ordered by (time, scheduling order): equal deadlines fire in the order they
// were scheduled. The times are the owning loop's monotonic reading (Clock::MonotonicMs),
// never the wall clock.
//
// Every waiting step with a timeout, heartbeat or slow watch holds a timer, so a timer is
// small: its task in a slot of one vector, its place in a binary heap in another, and no
// allocation of its own (about 64 bytes, against 128 in two ordered maps' nodes). A
// TimerId is the slot and the slot's generation, which changes each time the slot is
// freed: cancelling a timer that fired or was cancelled (a stale id) does nothing, even
// once its slot holds another timer. Not thread-safe: the loop's thread only.
class TimerQueue {
 public:
  TimerId Add(TimeMs when, std::function<void()> task);
  void Cancel(TimerId id);
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  TimeMs NextTime() const;  // requires !empty()
  // Removes and returns the earliest timer's task if it is due at `now`.
  std::function<void()> PopDue(TimeMs now);

 private:
  static constexpr uint32_t kNotQueued = UINT32_MAX;
  struct Slot {
    std::function<void()> task;
    uint32_t generation = 1;  // part of the TimerId; bumped when the slot is freed
    uint32_t heap_index = kNotQueued;
  };
  struct Entry {
    TimeMs when;
    uint64_t order;  // scheduling order: ties fire first in, first out
    uint32_t slot;
  };
  static bool Before(const Entry& a, const Entry& b) {
    return a.when != b.when ? a.when < b.when : a.order < b.order;
  }
  // heap_[i] = e, and its slot learns where (common/indexed_heap.h).
  auto Placer() {
    return [this](size_t i, const Entry& e) {
      slots_[e.slot].heap_index = static_cast<uint32_t>(i);
      heap_[i] = e;
    };
  }
  // Takes heap_[i] out of the heap and frees its slot, returning the slot's task.
  std::function<void()> Remove(size_t i);

  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  std::vector<Entry> heap_;  // a binary min-heap by Before()
  uint64_t next_order_ = 0;
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
  // Called on the loop's thread each time it has run every posted task and would wait
  // (for a task or a timer, or not at all when a timer is due), never once stopping; it
  // may post tasks (the loop then runs them instead of waiting). Before Run().
  void SetIdleHook(std::function<void()> hook) { idle_hook_ = std::move(hook); }
  // Called on the loop's thread each time it has run every posted task and finds more
  // posted meanwhile, before it runs them (where it would have called the idle hook had
  // there been none). Before Run().
  void SetBusyHook(std::function<void()> hook) { busy_hook_ = std::move(hook); }

 private:
  RealClock clock_;
  std::function<void()> idle_hook_;
  std::function<void()> busy_hook_;
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
  // How many timers ScheduleAt has set since construction, fired or cancelled or not.
  uint64_t TimersScheduled() const { return timers_scheduled_; }

 private:
  SimClock* clock_;
  std::mutex mu_;
  std::deque<std::function<void()>> posted_;
  TimerQueue timers_;
  uint64_t timers_scheduled_ = 0;  // loop thread
};

}  // namespace baton
