// StepDeadlines: the attempt timeouts (a step's `timeout:`), heartbeat deadlines (its
// `heartbeat_timeout:`) and slow-attempt watches (`step.slow`, slow_steps.cpp) of every
// running step, in one min-heap that the engine fires from a single loop timer.
//
// Why not a loop timer per step: each one costs a TimerQueue slot and heap entry (64
// bytes, in vectors that double) and a closure naming the execution (48 bytes on the
// heap), about 150 bytes per waiting step: enough to take a waiting step past 1 KiB
// (bench/README.md). An entry here is 24 bytes, in a deque that grows a block at a time.
//
// Ownership and lifetime: an entry points at its ExecState. The engine removes it when the
// attempt ends (Disarm) and, before an ExecState leaves its executions (DisarmAll), every
// entry of that execution: an entry never outlives what it points at.
//
// The step holds each entry's position while it is armed, which is what makes Disarm
// O(log n): an attempt timeout's in StepState::timer (with timer_is_deadline set: a step's
// retry timer and its attempt timeout are never armed together), a heartbeat deadline's in
// StepState::heartbeat_deadline (with heartbeat_armed set), a slow watch's in
// StepState::slow_watch (with slow_armed set).
//
// Times are the engine loop's monotonic readings (Clock::MonotonicMs), as the loop's own
// timers are: the engine converts a step's wall-clock deadline once, when it arms it, so
// that a step of the wall clock neither fires a deadline early nor delays one.
//
// Threading: the engine thread's only.
#pragma once

#include <baton/clock.h>

#include <cstdint>
#include <deque>
#include <optional>

namespace baton::engine {

struct ExecState;

enum class DeadlineKind : uint8_t { kAttemptTimeout, kHeartbeat, kSlow };

class StepDeadlines {
 public:
  struct Due {
    ExecState* ex;
    int step;
    DeadlineKind kind;
  };

  // Arms the step's deadline of this kind for `when` (monotonic), replacing the one it had.
  void Arm(ExecState& ex, int step, DeadlineKind kind, int64_t when);
  // Removes the step's deadline of this kind; nothing when it has none.
  void Disarm(ExecState& ex, int step, DeadlineKind kind);
  // Every deadline of `ex`.
  void DisarmAll(ExecState& ex);

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  int64_t NextTime() const { return heap_.front().when; }  // requires !empty()
  // Removes and returns the earliest deadline if it is due at `now` (earlier ones first;
  // equal ones in the order they were armed).
  std::optional<Due> PopDue(int64_t now);

 private:
  struct Entry {
    int64_t when;
    ExecState* ex;
    uint32_t step : 30;
    uint32_t kind : 2;  // a DeadlineKind
    uint32_t order;     // arming order, compared with wrap-around: ties fire first in, first out
  };
  static bool Before(const Entry& a, const Entry& b) {
    return a.when != b.when ? a.when < b.when : static_cast<int32_t>(a.order - b.order) < 0;
  }
  auto Placer();  // heap_[i] = e, and its step learns where (common/indexed_heap.h)
  void RemoveAt(size_t i);

  std::deque<Entry> heap_;  // a binary min-heap by Before()
  uint32_t next_order_ = 0;
};

}  // namespace baton::engine
