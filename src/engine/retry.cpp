// Retrying a finished execution (seed 000's retry): completed work is kept, the rest
// runs again.
#include "engine/engine_impl.h"

namespace baton {

Status Engine::Impl::Retry(const ExecutionRecord& execution, const std::vector<StepRecord>& steps,
                           const std::vector<AttemptRecord>& attempts, int64_t last_event_seq,
                           const std::vector<SignalRecord>& signals) {
  const ExecutionStatus was = execution.status;
  if (was != ExecutionStatus::kFailed && was != ExecutionStatus::kTimeout &&
      was != ExecutionStatus::kCancelled) {
    return Status(errc::kConflict, "execution '" + execution.id + "' is " + ToString(was) +
                                       "; only failed, timed-out or cancelled ones are retried");
  }
  if (executions_.count(execution.id)) {
    return Status(errc::kConflict, "execution '" + execution.id + "' is still finishing");
  }
  const TimeMs now = loop_->Now();
  ExecutionRecord ex = execution;
  ex.status = ExecutionStatus::kRunning;
  ex.output = nullptr;
  ex.error = nullptr;
  ex.completed_at = 0;
  ex.deadline = 0;
  // The execution timeout restarts with the retry.
  if (auto def = WorkflowFromSnapshot(execution.definition, execution.workflow);
      def.ok() && def->timeout) {
    ex.deadline = now + def->timeout->count();
  }
  std::vector<StepRecord> reset = steps;
  std::vector<std::string> reset_ids;
  for (StepRecord& s : reset) {
    if (s.status == StepStatus::kCompleted || s.status == StepStatus::kCached) continue;
    reset_ids.push_back(s.step_id);
    StepRecord fresh;
    fresh.execution_id = s.execution_id;
    fresh.step_id = s.step_id;
    fresh.index = s.index;
    fresh.attempts = s.attempts;
    fresh.attempt_base = s.attempts;  // a fresh retry budget; attempt numbers continue
    s = std::move(fresh);
  }
  return Continue(ex, reset, attempts, last_event_seq, signals, &reset_ids);
}

}  // namespace baton
