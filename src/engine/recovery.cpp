// Continuing executions from the store after a crash or restart (DESIGN.md §5).
//
// Completed steps are never run again. A step that was dispatched or running when the
// process died lost its attempt: it is recorded as a failed attempt ENGINE_RESTART and
// runs again (without using up the step's retry budget, up to max_engine_restarts).
#include "engine/engine_impl.h"

#include "expr/template.h"

#include <unordered_map>

namespace baton {

using engine::ExecState;
using engine::StepState;

Status Engine::Impl::Recover(const ExecutionRecord& execution, const std::vector<StepRecord>& steps,
                             const std::vector<AttemptRecord>& attempts, int64_t last_event_seq,
                             const std::vector<SignalRecord>& signals) {
  if (IsTerminal(execution.status)) return Status::Ok();
  return Continue(execution, steps, attempts, last_event_seq, signals, nullptr);
}

Result<std::shared_ptr<const WorkflowDef>> Engine::Impl::SnapshotDefinition(
    const ExecutionRecord& execution) {
  // Recovering thousands of executions of one workflow version must not parse and hold
  // its definition thousands of times: one that is still alive and equal is shared.
  auto key = std::make_pair(execution.workflow, execution.version);
  if (auto it = snapshot_defs_.find(key); it != snapshot_defs_.end()) {
    if (auto def = it->second.lock();
        def && execution.definition &&
        (def->source == execution.definition || *def->source == *execution.definition)) {
      return def;
    }
  }
  Result<WorkflowDef> def = WorkflowFromSnapshot(execution.definition, execution.workflow);
  if (!def.ok()) {
    return Status(def.status().code(),
                  "execution '" + execution.id + "': stored definition: " + def.status().message());
  }
  // The engine writes an execution's workflow name and version from the definition it
  // runs: that must say what the record said, whatever the snapshot's text says.
  if (!execution.workflow.empty()) def.value().name = execution.workflow;
  def.value().version = execution.version;
  auto shared = std::make_shared<const WorkflowDef>(std::move(def.value()));
  snapshot_defs_[key] = shared;
  return shared;
}

Status Engine::Impl::Continue(const ExecutionRecord& execution,
                              const std::vector<StepRecord>& steps,
                              const std::vector<AttemptRecord>& attempts, int64_t last_event_seq,
                              const std::vector<SignalRecord>& signals, const RetryPlan* retry) {
  if (executions_.count(execution.id)) {
    return Status(errc::kConflict, "execution '" + execution.id + "' is already running");
  }
  auto def = SnapshotDefinition(execution);
  if (!def.ok()) return def.status();
  auto ex = std::make_shared<ExecState>();
  ex->def = std::move(def.value());
  // The record's copy of the text goes; the shared definition's serves instead (as its
  // workflow name and version: SnapshotDefinition made them the record's).
  ex->Adopt(execution);
  ex->SetOrigin(execution);
  ex->next_seq = last_event_seq + 1;
  if (Status st = BuildGraph(*ex); !st.ok()) return st;
  if (!signals.empty()) {
    ex->More().signals = signals;
    for (const SignalRecord& sg : signals) ex->extras->pending_signals += sg.consumed_by.empty();
  }

  std::unordered_map<std::string, const StepRecord*> stored;
  for (const auto& s : steps) stored[s.step_id] = &s;
  for (size_t i = 0; i < ex->steps.size(); ++i) {
    StepState& st = ex->steps[i];
    auto it = stored.find(st.def->id);
    if (it == stored.end()) continue;  // never written: the fresh row BuildGraph made
    st.rec = *it->second;
    st.rec.index = static_cast<int>(i);
    SetAssignment(*ex, st, std::move(st.rec.assignment_id));
  }
  for (const auto& a : attempts) {
    const auto& index = ex->StepIndex();
    auto it = index.find(a.step_id);
    if (it == index.end() || a.error.is_null()) continue;
    StepState& st = ex->steps[it->second];
    if (a.attempt <= st.rec.attempt_base) continue;  // before the last retry: spent
    Json logged = a.error;
    logged["attempt"] = a.attempt;
    logged["at"] = a.completed_at;
    st.Guards().attempt_errors.push_back(std::move(logged));
    if (a.error.value("code", "") == errc::kEngineRestart) ++st.engine_restarts;
  }

  // Derived counters, from the stored statuses.
  for (size_t i = 0; i < ex->steps.size(); ++i) {
    StepState& st = ex->steps[i];
    if (IsTerminal(st.rec.status)) {
      ++ex->terminal_steps;
      st.rec.progress = 100;
      --ex->layer_open[ex->Plan()->layer_of[i]];
      if ((st.rec.status == StepStatus::kFailed || st.rec.status == StepStatus::kTimeout) &&
          !st.def->optional) {
        if (!ex->had_failure) {
          Json& first = ex->More().first_failure;
          first = st.rec.error;
          first["step"] = st.def->id;
        }
        ex->had_failure = true;
      }
      for (int d : ex->Plan()->graph.Downstream(static_cast<int>(i))) --ex->steps[d].pending_deps;
    }
    ex->progress_sum += st.rec.progress;
  }
  while (ex->current_layer < ex->Plan()->layers && ex->layer_open[ex->current_layer] == 0) {
    ++ex->current_layer;
  }
  if (ex->had_failure && ex->def->fail_fast) ex->failing_fast = true;

  TurnGuard turn(this);
  executions_.insert(ex);
  ++active_;
  if (!ex->ParentId().empty()) AdoptChild(ex);
  if (ex->rec.status == ExecutionStatus::kQueued && retry == nullptr) {
    // Nothing of it ran: it waits for its slot again, in its place.
    Emit(*ex, "execution.recovered", -1,
         {{"steps_done", ex->terminal_steps}, {"steps_total", ex->steps.size()}});
    RequeueRecovered(ex);
    return Status::Ok();
  }
  HoldRecoveredSlots(ex);
  ArmStallSweep();
  if (ex->rec.status == ExecutionStatus::kPending) {
    ex->rec.status = ExecutionStatus::kRunning;
    MarkDirty(ex);
  }
  if (retry != nullptr) {
    // A retry rewrites the execution and every reset step in this turn, so a crash right
    // after it recovers the retried state, not the failed one.
    MarkDirty(ex);
    for (const std::string& id : retry->reset_steps) MarkStepDirty(ex, ex->StepIndex().at(id));
    Json data = {{"steps_reset", retry->reset_steps}};
    if (!retry->from_step.empty()) data["from"] = retry->from_step;
    if (!retry->replayed.empty()) {
      Json ids = Json::array();
      for (const DeadLetterRecord& d : retry->replayed) {
        ids.push_back(d.id);
        batch_.dead_letters.push_back(d);
      }
      data["dead_letters_replayed"] = std::move(ids);
    }
    Emit(*ex, "execution.retried", -1, std::move(data));
  } else {
    Emit(*ex, "execution.recovered", -1,
         {{"steps_done", ex->terminal_steps}, {"steps_total", ex->steps.size()}});
  }
  if (ex->rec.deadline) {
    std::string id = ex->rec.id;
    ex->deadline_timer =
        loop_->ScheduleAt(ex->rec.deadline, [this, id] { OnExecutionDeadline(id); });
  }
  for (size_t i = 0; i < ex->steps.size(); ++i) {
    StepState& st = ex->steps[i];
    const int step = static_cast<int>(i);
    switch (st.rec.status) {
      case StepStatus::kDispatched:
      case StepStatus::kRunning:
        if (ReattachStep(ex, step)) {
          HoldPoolSlots(ex, step);
          break;
        }
        FailAttempt(
            ex, step, StepStatus::kFailed,
            Status(errc::kEngineRestart, "the engine stopped while this attempt was running"),
            nullptr);
        break;
      case StepStatus::kWaitingRetry: {
        std::string id = ex->rec.id;
        st.timer = loop_->ScheduleAt(std::max(st.rec.retry_at, loop_->Now()),
                                     [this, id, step] { RetryNow(id, step); });
        break;
      }
      case StepStatus::kReady:
        st.rec.status = StepStatus::kPending;
        MakeReady(ex, step);
        break;
      case StepStatus::kPending:
        if (st.pending_deps == 0) propagate_.emplace_back(ex, step);
        break;
      default:
        break;
    }
  }
  MaybeFinish(ex);
  return Status::Ok();
}

bool Engine::Impl::ReattachStep(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  const StepDef& def = *st.def;
  const bool signal = SignalWaitedFor(def) != nullptr;
  const bool child = def.type == StepType::kWorkflow && st.rec.status == StepStatus::kRunning;
  if (signal || child) {
    // Nothing ran outside the engine: the step simply waits again, for a signal or for
    // its child (started in the same commit as this attempt, so in the store and
    // recovered too: no second child). Its timeout, if any, still counts from its
    // first dispatch.
    st.in_flight = true;
    if (!HasAssignment(st)) {
      ImplyAssignment(st);
    }
    if (st.rec.deadline) ArmAttemptTimeout(*ex, step);  // one already past fires at once
    if (signal) {
      Emit(*ex, "step.reattached", step, {{"signal", def.spec["signal"]}}, st.rec.attempts);
      BeginSignalWait(ex, step);
    } else {
      LinkChild(ex, step);  // else the child links itself when it is recovered
      Emit(*ex, "step.reattached", step,
           st.ChildId().empty() ? Json() : Json{{"child_id", st.ChildId()}}, st.rec.attempts);
    }
    return true;
  }
  if (!def.for_each.is_null() || !HasAssignment(st)) return false;
  auto it = runners_.find(def.type);
  if (it == runners_.end() || it->second == nullptr || !it->second->CanReattach()) return false;
  // The same spec as at dispatch: rendered from the same inputs and upstream outputs.
  SpecPtr spec = DefinitionSpec(*ex, step);
  if (ex->Plan()->spec_has_templates[step]) {
    engine::ExecScope scope(*ex);
    Result<Json> rendered = expr::Render(def.spec, scope);
    if (!rendered.ok()) return false;
    spec = MakeSpec(std::move(rendered.value()));
  }
  st.in_flight = true;
  if (st.uses_capacity) {
    ++ex->in_flight;
    ++capacity_used_;
  }
  if (st.rec.deadline) ArmAttemptTimeout(*ex, step);  // one already past fires at once
  ArmHeartbeat(ex, step);
  st.resolved_input = ex->Plan()->spec_has_templates[step] ? spec : nullptr;  // as at dispatch
  Emit(*ex, "step.reattached", step, {{"assignment_id", AssignmentOf(*ex, st)}}, st.rec.attempts);
  StartAssignment(ex, step, it->second, MakeRequest(*ex, step, std::move(spec)),
                  /*instance=*/false, /*reattach=*/true);
  return true;
}

Status SeedEventPositions(ExecutionStore* store, Engine* engine) {
  Result<int64_t> last = store->LastEventPosition();
  if (!last.ok()) return last.status();
  engine->SetLastEventPosition(*last);
  return Status::Ok();
}

Status LoadPools(ExecutionStore* store, Engine* engine) {
  Result<std::vector<PoolRecord>> pools = store->ListPools("");
  if (!pools.ok()) return pools.status();
  engine->AdoptPools(std::move(pools.value()));
  return Status::Ok();
}

Status LoadBreakers(ExecutionStore* store, Engine* engine) {
  Result<std::vector<BreakerRecord>> breakers = store->ListBreakers("");
  if (!breakers.ok()) return breakers.status();
  engine->AdoptBreakers(std::move(breakers.value()));
  return Status::Ok();
}

Result<std::vector<std::string>> RecoverExecutions(ExecutionStore* store, Engine* engine,
                                                   const std::string& only_id) {
  std::vector<ExecutionRecord> to_recover;
  if (!only_id.empty()) {
    Result<ExecutionRecord> one = store->GetExecution(only_id);
    if (!one.ok()) return one.status();
    if (IsTerminal(one->status)) {
      return Status(errc::kConflict,
                    "execution '" + only_id + "' already finished (" + ToString(one->status) + ")");
    }
    to_recover.push_back(std::move(one.value()));
  } else {
    Result<std::vector<ExecutionRecord>> all = store->ListUnfinishedExecutions();
    if (!all.ok()) return all.status();
    to_recover = std::move(all.value());
  }
  std::vector<std::string> ids;
  for (const auto& ex : to_recover) {
    auto steps = store->GetSteps(ex.id);
    if (!steps.ok()) return steps.status();
    auto attempts = store->GetFailedAttempts(ex.id);
    if (!attempts.ok()) return attempts.status();
    auto last_seq = store->LastEventSeq(ex.id);
    if (!last_seq.ok()) return last_seq.status();
    auto signals = store->ListSignals(ex.id);
    if (!signals.ok()) return signals.status();
    if (Status st = engine->Recover(ex, *steps, *attempts, *last_seq, *signals); !st.ok()) {
      return st;
    }
    ids.push_back(ex.id);
  }
  if (!only_id.empty()) {
    // Its running children (and theirs) come back with it: its steps wait for them.
    ExecutionFilter children;
    children.parent_id = only_id;
    children.limit = 0;
    Result<std::vector<ExecutionRecord>> found = store->ListExecutions(children);
    if (!found.ok()) return found.status();
    for (const ExecutionRecord& child : *found) {
      if (IsTerminal(child.status)) continue;
      auto more = RecoverExecutions(store, engine, child.id);
      if (!more.ok() && more.status().code() != errc::kConflict) return more.status();
      if (more.ok()) ids.insert(ids.end(), more->begin(), more->end());
    }
  }
  return ids;
}

}  // namespace baton
