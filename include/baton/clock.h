// Time and the event loop: everything that waits goes through these interfaces so
// that tests run timeouts, backoff and deadlines in virtual time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

namespace baton {

using Duration = std::chrono::milliseconds;
// Wall-clock time in milliseconds since the Unix epoch. Stored deadlines use it, so they
// keep their meaning across restarts.
using TimeMs = int64_t;

// Two readings: Now(), the wall clock, for timestamps and for deadlines that are stored
// (they must mean the same instant after a restart); and MonotonicMs(), which never
// jumps, for measuring waits. A wall-clock step (NTP, an operator, a VM resume) moves
// Now() but no timer: an event loop turns every ScheduleAt(when) into "after
// when - Now()" on the monotonic reading at the moment it is armed.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeMs Now() const = 0;
  // Milliseconds from an arbitrary origin; only differences mean anything.
  virtual int64_t MonotonicMs() const = 0;
};

// The system clock; or, for tests that drive a whole server process through days of
// schedules, a clock that starts at `start` and runs `rate` times as fast as real time.
class RealClock final : public Clock {
 public:
  RealClock() = default;
  RealClock(TimeMs start, double rate);
  TimeMs Now() const override;
  int64_t MonotonicMs() const override;
  // Real milliseconds until this clock has moved on by `delta` (rounded up).
  int64_t RealDelay(int64_t delta) const;

 private:
  TimeMs start_ = 0;  // 0: the system clock as it is
  double rate_ = 1;
  int64_t origin_ = 0;  // steady clock (ms) when `start_` was current
};

// A clock that moves only when told to. Thread-safe.
class SimClock final : public Clock {
 public:
  explicit SimClock(TimeMs start = 1'700'000'000'000) : now_(start) {}
  TimeMs Now() const override;
  int64_t MonotonicMs() const override;
  // Time passes: both readings move (Set to an earlier time moves only the wall clock).
  void Set(TimeMs t);
  void Advance(Duration d);
  // The wall clock is stepped (forward or back) while no time passes: timers must not
  // notice.
  void JumpWall(Duration d);

 private:
  std::atomic<TimeMs> now_;
  std::atomic<int64_t> mono_{0};
};

using TimerId = uint64_t;

// A single-threaded executor with timers. Post() may be called from any thread; every
// other member only from the loop's own thread (inside a posted task or timer).
class EventLoop {
 public:
  virtual ~EventLoop() = default;
  virtual const Clock& clock() const = 0;
  TimeMs Now() const { return clock().Now(); }

  // Runs `task` on the loop thread, after the tasks already posted. Thread-safe.
  virtual void Post(std::function<void()> task) = 0;
  // Runs `task` once the clock reaches `when`. Returns an id for CancelTimer.
  virtual TimerId ScheduleAt(TimeMs when, std::function<void()> task) = 0;
  TimerId ScheduleAfter(Duration d, std::function<void()> task) {
    return ScheduleAt(Now() + d.count(), std::move(task));
  }
  // Cancels a timer that has not fired yet; a no-op otherwise.
  virtual void CancelTimer(TimerId id) = 0;
};

}  // namespace baton
