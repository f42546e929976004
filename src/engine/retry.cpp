// Retrying a finished execution (seed 000's retry): completed work is kept, the rest
// runs again.
#include "engine/engine_impl.h"

#include <unordered_set>

namespace baton {
namespace {

// `from` and every step that depends on it, directly or not. A template may only name
// upstream steps (ParseWorkflow), so this is everything whose inputs `from` can change.
Result<std::unordered_set<std::string>> Downstream(const WorkflowDef& def,
                                                   const std::string& from) {
  std::unordered_set<std::string> out;
  for (const StepDef& s : def.steps) {
    if (s.id == from) out.insert(from);
  }
  if (out.empty()) {
    return Status(errc::kValidation,
                  "workflow '" + def.name + "' has no step '" + from + "' to run again from");
  }
  // Steps are in definition order, not topological order: repeat until nothing is added.
  for (size_t added = 1; added != 0;) {
    added = 0;
    for (const StepDef& s : def.steps) {
      if (out.count(s.id)) continue;
      for (const std::string& dep : s.depends_on) {
        if (out.count(dep)) {
          out.insert(s.id);
          ++added;
          break;
        }
      }
    }
  }
  return out;
}

}  // namespace

Status Engine::Impl::Retry(const ExecutionRecord& execution, const std::vector<StepRecord>& steps,
                           const std::vector<AttemptRecord>& attempts, int64_t last_event_seq,
                           const std::vector<SignalRecord>& signals, const std::string& from_step,
                           const std::vector<DeadLetterRecord>& dead_letters) {
  const ExecutionStatus was = execution.status;
  if (was != ExecutionStatus::kFailed && was != ExecutionStatus::kTimeout &&
      was != ExecutionStatus::kCancelled &&
      (from_step.empty() || was != ExecutionStatus::kCompleted)) {
    return Status(errc::kConflict,
                  "execution '" + execution.id + "' is " + ToString(was) +
                      (from_step.empty() ? "; only failed, timed-out or cancelled ones are retried"
                                         : "; only finished ones are run again from a step"));
  }
  if (executions_.count(execution.id)) {
    return Status(errc::kConflict, "execution '" + execution.id + "' is still finishing");
  }
  auto def = WorkflowFromSnapshot(execution.definition, execution.workflow);
  if (!def.ok()) return def.status();
  std::unordered_set<std::string> rerun;  // from_step and everything downstream of it
  if (!from_step.empty()) {
    auto downstream = Downstream(*def, from_step);
    if (!downstream.ok()) return downstream.status();
    rerun = std::move(downstream).value();
  }
  const TimeMs now = loop_->Now();
  ExecutionRecord ex = execution;
  ex.status = ExecutionStatus::kRunning;
  ex.output = nullptr;
  ex.error = nullptr;
  ex.completed_at = 0;
  ex.deadline = 0;
  // The execution timeout restarts with the retry.
  if (def->timeout) ex.deadline = now + def->timeout->count();
  std::vector<StepRecord> reset = steps;
  RetryPlan plan;
  plan.from_step = from_step;
  std::vector<std::string>& reset_ids = plan.reset_steps;
  for (StepRecord& s : reset) {
    if ((s.status == StepStatus::kCompleted || s.status == StepStatus::kCached) &&
        !rerun.count(s.step_id)) {
      continue;
    }
    reset_ids.push_back(s.step_id);
    StepRecord fresh;
    fresh.execution_id = s.execution_id;
    fresh.step_id = s.step_id;
    fresh.index = s.index;
    fresh.attempts = s.attempts;
    fresh.attempt_base = s.attempts;  // a fresh retry budget; attempt numbers continue
    for (const DeadLetterRecord& d : dead_letters) {
      if (d.execution_id != execution.id || d.step_id != s.step_id || d.status != kDeadLetterOpen) {
        continue;
      }
      DeadLetterRecord& replayed = plan.replayed.emplace_back(d);
      replayed.status = kDeadLetterReplayed;
      replayed.resolved_at = now;
      replayed.replay_attempt = s.attempts + 1;
    }
    s = std::move(fresh);
  }
  return Continue(ex, reset, attempts, last_event_seq, signals, &plan);
}

}  // namespace baton
