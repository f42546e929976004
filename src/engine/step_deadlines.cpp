#include "engine/step_deadlines.h"

#include "common/indexed_heap.h"
#include "engine/execution_state.h"

namespace baton::engine {

auto StepDeadlines::Placer() {
  return [this](size_t i, const Entry& e) {
    heap_[i] = e;
    e.ex->steps[e.step].timer = static_cast<TimerId>(i);
  };
}

void StepDeadlines::Arm(ExecState& ex, int step, TimeMs when) {
  Disarm(ex, step);
  ex.steps[step].timer_is_deadline = true;
  indexed_heap::Push(heap_, Entry{when, &ex, static_cast<uint32_t>(step), next_order_++}, Before,
                     Placer());
}

void StepDeadlines::Disarm(ExecState& ex, int step) {
  StepState& st = ex.steps[step];
  if (!st.timer_is_deadline) return;
  RemoveAt(static_cast<size_t>(st.timer));
}

void StepDeadlines::DisarmAll(ExecState& ex) {
  for (size_t step = 0; step < ex.steps.size(); ++step) Disarm(ex, static_cast<int>(step));
}

std::optional<StepDeadlines::Due> StepDeadlines::PopDue(TimeMs now) {
  if (heap_.empty() || heap_.front().when > now) return std::nullopt;
  const Due due{heap_.front().ex, static_cast<int>(heap_.front().step)};
  RemoveAt(0);
  return due;
}

void StepDeadlines::RemoveAt(size_t i) {
  StepState& gone = heap_[i].ex->steps[heap_[i].step];
  gone.timer = 0;
  gone.timer_is_deadline = false;
  indexed_heap::Erase(heap_, i, Before, Placer());
}

}  // namespace baton::engine
