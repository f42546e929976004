#include "engine/step_deadlines.h"

#include "common/indexed_heap.h"
#include "engine/execution_state.h"

namespace baton::engine {

auto StepDeadlines::Placer() {
  return [this](size_t i, const Entry& e) {
    heap_[i] = e;
    StepState& st = e.ex->steps[e.step];
    switch (static_cast<DeadlineKind>(e.kind)) {
      case DeadlineKind::kAttemptTimeout:
        st.timer = static_cast<TimerId>(i);
        break;
      case DeadlineKind::kHeartbeat:
        st.heartbeat_deadline = static_cast<uint32_t>(i);
        break;
      case DeadlineKind::kSlow:
        st.slow_watch = static_cast<uint32_t>(i);
        break;
    }
  };
}

namespace {

// Whether the step has a deadline of this kind in the heap, and where.
bool Armed(const StepState& st, DeadlineKind kind, size_t* at) {
  switch (kind) {
    case DeadlineKind::kAttemptTimeout:
      *at = static_cast<size_t>(st.timer);
      return st.timer_is_deadline;
    case DeadlineKind::kHeartbeat:
      *at = static_cast<size_t>(st.heartbeat_deadline);
      return st.heartbeat_armed;
    case DeadlineKind::kSlow:
      *at = static_cast<size_t>(st.slow_watch);
      return st.slow_armed;
  }
  return false;
}

}  // namespace

void StepDeadlines::Arm(ExecState& ex, int step, DeadlineKind kind, int64_t when) {
  Disarm(ex, step, kind);
  StepState& st = ex.steps[step];
  switch (kind) {  // (bit-fields: no conditional assignment through `?:` in clang 14)
    case DeadlineKind::kAttemptTimeout:
      st.timer_is_deadline = true;
      break;
    case DeadlineKind::kHeartbeat:
      st.heartbeat_armed = true;
      break;
    case DeadlineKind::kSlow:
      st.slow_armed = true;
      break;
  }
  Entry e{when, &ex, static_cast<uint32_t>(step), static_cast<uint32_t>(kind), next_order_++};
  indexed_heap::Push(heap_, e, Before, Placer());
}

void StepDeadlines::Disarm(ExecState& ex, int step, DeadlineKind kind) {
  size_t at = 0;
  if (Armed(ex.steps[step], kind, &at)) RemoveAt(at);
}

void StepDeadlines::DisarmAll(ExecState& ex) {
  for (size_t step = 0; step < ex.steps.size(); ++step) {
    Disarm(ex, static_cast<int>(step), DeadlineKind::kAttemptTimeout);
    Disarm(ex, static_cast<int>(step), DeadlineKind::kHeartbeat);
    Disarm(ex, static_cast<int>(step), DeadlineKind::kSlow);
  }
}

std::optional<StepDeadlines::Due> StepDeadlines::PopDue(int64_t now) {
  if (heap_.empty() || heap_.front().when > now) return std::nullopt;
  const Entry& e = heap_.front();
  const Due due{e.ex, static_cast<int>(e.step), static_cast<DeadlineKind>(e.kind)};
  RemoveAt(0);
  return due;
}

void StepDeadlines::RemoveAt(size_t i) {
  StepState& gone = heap_[i].ex->steps[heap_[i].step];
  switch (static_cast<DeadlineKind>(heap_[i].kind)) {
    case DeadlineKind::kAttemptTimeout:
      gone.timer = 0;
      gone.timer_is_deadline = false;
      break;
    case DeadlineKind::kHeartbeat:
      gone.heartbeat_deadline = 0;
      gone.heartbeat_armed = false;
      break;
    case DeadlineKind::kSlow:
      gone.slow_watch = 0;
      gone.slow_armed = false;
      break;
  }
  indexed_heap::Erase(heap_, i, Before, Placer());
}

}  // namespace baton::engine
