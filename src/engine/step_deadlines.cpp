#include "engine/step_deadlines.h"

#include "common/indexed_heap.h"
#include "engine/execution_state.h"

namespace baton::engine {

auto StepDeadlines::Placer() {
  return [this](size_t i, const Entry& e) {
    heap_[i] = e;
    StepState& st = e.ex->steps[e.step];
    if (e.heartbeat) {
      st.heartbeat_deadline = static_cast<TimerId>(i);
    } else {
      st.timer = static_cast<TimerId>(i);
    }
  };
}

void StepDeadlines::Arm(ExecState& ex, int step, DeadlineKind kind, int64_t when) {
  Disarm(ex, step, kind);
  const bool heartbeat = kind == DeadlineKind::kHeartbeat;
  StepState& st = ex.steps[step];
  if (heartbeat) {  // (bit-fields: no conditional assignment through `?:` in clang 14)
    st.heartbeat_armed = true;
  } else {
    st.timer_is_deadline = true;
  }
  Entry e{when, &ex, static_cast<uint32_t>(step), heartbeat, next_order_++};
  indexed_heap::Push(heap_, e, Before, Placer());
}

void StepDeadlines::Disarm(ExecState& ex, int step, DeadlineKind kind) {
  const StepState& st = ex.steps[step];
  if (kind == DeadlineKind::kHeartbeat) {
    if (st.heartbeat_armed) RemoveAt(static_cast<size_t>(st.heartbeat_deadline));
  } else if (st.timer_is_deadline) {
    RemoveAt(static_cast<size_t>(st.timer));
  }
}

void StepDeadlines::DisarmAll(ExecState& ex) {
  for (size_t step = 0; step < ex.steps.size(); ++step) {
    Disarm(ex, static_cast<int>(step), DeadlineKind::kAttemptTimeout);
    Disarm(ex, static_cast<int>(step), DeadlineKind::kHeartbeat);
  }
}

std::optional<StepDeadlines::Due> StepDeadlines::PopDue(int64_t now) {
  if (heap_.empty() || heap_.front().when > now) return std::nullopt;
  const Entry& e = heap_.front();
  const Due due{e.ex, static_cast<int>(e.step),
                e.heartbeat ? DeadlineKind::kHeartbeat : DeadlineKind::kAttemptTimeout};
  RemoveAt(0);
  return due;
}

void StepDeadlines::RemoveAt(size_t i) {
  StepState& gone = heap_[i].ex->steps[heap_[i].step];
  if (heap_[i].heartbeat) {
    gone.heartbeat_deadline = 0;
    gone.heartbeat_armed = false;
  } else {
    gone.timer = 0;
    gone.timer_is_deadline = false;
  }
  indexed_heap::Erase(heap_, i, Before, Placer());
}

}  // namespace baton::engine
