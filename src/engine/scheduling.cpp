// Readiness and dispatch: trigger rules, `when`, the ready queue, limits.
#include "engine/engine_impl.h"

#include "expr/template.h"

namespace baton {

using engine::ExecState;
using engine::StepState;

namespace {

bool IsSuccess(StepStatus s) {
  return s == StepStatus::kCompleted || s == StepStatus::kCached;
}
bool IsFailure(StepStatus s) {
  return s == StepStatus::kFailed || s == StepStatus::kTimeout || s == StepStatus::kCancelled;
}

// Rules that still run a step after a failure (fail_fast lets only these start).
bool AcceptsFailure(TriggerRule r) {
  return r == TriggerRule::kAllDone || r == TriggerRule::kAllFailed ||
         r == TriggerRule::kOneFailed || r == TriggerRule::kAlways;
}

}  // namespace

bool Engine::Impl::TriggerRuleAllows(const ExecState& ex, int step, std::string* why) const {
  const StepState& st = ex.steps[step];
  const std::span<const int> upstream = ex.Plan()->graph.Upstream(step);
  if (upstream.empty()) return true;  // a root step has nothing to wait for
  int success = 0, failed = 0, skipped = 0;
  for (int up : upstream) {
    StepStatus s = ex.steps[up].rec.status;
    if (IsSuccess(s))
      ++success;
    else if (IsFailure(s))
      ++failed;
    else if (s == StepStatus::kSkipped)
      ++skipped;
  }
  const int n = static_cast<int>(upstream.size());
  bool ok = false;
  switch (st.def->trigger_rule) {
    case TriggerRule::kAllSuccess:
      ok = success == n;
      break;
    case TriggerRule::kAllDone:
      ok = true;
      break;
    case TriggerRule::kAllFailed:
      ok = failed == n;
      break;
    case TriggerRule::kOneSuccess:
      ok = success > 0;
      break;
    case TriggerRule::kOneFailed:
      ok = failed > 0;
      break;
    case TriggerRule::kNoneFailed:
      ok = failed == 0;
      break;
    case TriggerRule::kNoneSkipped:
      ok = skipped == 0;
      break;
    case TriggerRule::kAlways:
      ok = true;
      break;
  }
  if (!ok) {
    *why = std::string("trigger rule ") + ToString(st.def->trigger_rule) + " not met (" +
           std::to_string(success) + " succeeded, " + std::to_string(failed) + " failed, " +
           std::to_string(skipped) + " skipped of " + std::to_string(n) + " upstream)";
  }
  return ok;
}

void Engine::Impl::OnDependenciesDone(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  if (ex->finished || st.rec.status != StepStatus::kPending) return;
  std::string why;
  if (!TriggerRuleAllows(*ex, step, &why)) return SkipStep(ex, step, why);
  if (ex->failing_fast && !AcceptsFailure(st.def->trigger_rule)) {
    return SkipStep(ex, step, "fail_fast: the execution is failing");
  }
  if (const expr::Condition* cond = ex->Plan()->conditions[step].get()) {
    engine::ExecScope scope(*ex);
    Result<bool> r = cond->Evaluate(scope);
    if (!r.ok()) {
      PinAssignment(*ex, st);
      st.rec.attempts += 1;
      st.rec.started_at = loop_->Now();
      FailAttempt(ex, step, StepStatus::kFailed,
                  Status(errc::kConditionError, r.status().message()), nullptr);
      return;
    }
    if (!*r) return SkipStep(ex, step, "condition is false: " + cond->source());
  }
  MakeReady(ex, step);
}

void Engine::Impl::SkipStep(const ExecPtr& ex, int step, const std::string& reason) {
  Emit(*ex, "step.skipped", step, {{"reason", reason}});
  FinishStep(ex, step, StepStatus::kSkipped);
}

void Engine::Impl::MakeReady(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  st.rec.status = StepStatus::kReady;
  MarkStepDirty(ex, step);
  Emit(*ex, "step.ready", step);
  if (ex->paused()) {
    ex->More().parked.push_back(step);
  } else if (!st.uses_capacity) {
    Dispatch(ex, step);  // noop and wait hold no slot: no reason to queue them
  } else {
    ready_.push(
        {ex->rec.priority * 8 + static_cast<int>(st.def->priority), ready_seq_++, ex, step});
  }
}

void Engine::Impl::DispatchReady() {
  if (dispatching_) return;
  dispatching_ = true;
  DrainPropagation();
  if (!pool_woken_.empty()) DispatchPoolWoken();
  while (!ready_.empty() && capacity_used_ < capacity_) {
    ReadyItem item = ready_.top();
    ready_.pop();
    ExecState& ex = *item.ex;
    if (ex.finished || ex.steps[item.step].rec.status != StepStatus::kReady) continue;
    if (ex.paused() || (ex.def->max_parallel > 0 && ex.in_flight >= ex.def->max_parallel)) {
      ex.More().parked.push_back(item.step);  // woken by Release or Resume
      continue;
    }
    Dispatch(item.ex, item.step);
    DrainPropagation();  // a dispatch can fail at once (template error) and free steps
  }
  dispatching_ = false;
}

void Engine::Impl::Dispatch(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  const StepDef& def = *st.def;
  if (!def.extra().pool.empty() && !TakePoolSlots(ex, step)) return;  // waits (ready), or failed
  ClearAssignment(st);
  st.rec.attempts += 1;
  st.rec.status = StepStatus::kDispatched;
  st.rec.started_at = loop_->Now();
  st.rec.completed_at = 0;
  st.rec.retry_at = 0;
  st.rec.error = nullptr;
  MarkStepDirty(ex, step);

  // A for_each step renders its spec per item (BeginFanOut); any other step here.
  const bool fan_out = !def.for_each.is_null();
  auto runner_it = runners_.find(def.type);
  if (!fan_out && !ex->Plan()->spec_has_templates[step] && runner_it != runners_.end() &&
      runner_it->second == noop_runner_.get() && !def.extra().circuit_breaker &&
      !def.extra().cache) {
    // The common noop: nothing to render, nothing to copy but its `with`, and no
    // RunResult to build: the step row gets what ApplyResult would take from one.
    ++stats_.steps_dispatched;
    Emit(*ex, "step.dispatched", step, nullptr, st.rec.attempts);
    st.rec.exit_code = -1;
    const auto with = def.spec.find("with");
    st.rec.output = with != def.spec.end() ? *with : Json();
    return CompleteAttempt(ex, step);
  }
  // Rendered once and shared from here on (the runner, the dead-letter record); without
  // templates, the definition's own.
  SpecPtr spec;
  if (fan_out || !ex->Plan()->spec_has_templates[step]) {
    spec = DefinitionSpec(*ex, step);
  } else {
    engine::ExecScope scope(*ex);
    Result<Json> rendered = expr::Render(def.spec, scope);
    if (!rendered.ok()) {
      st.resolved_input = nullptr;
      return FailAttempt(ex, step, StepStatus::kFailed, rendered.status(), nullptr);
    }
    spec = MakeSpec(std::move(rendered.value()));
  }
  const bool child = def.type == StepType::kWorkflow;  // run by the engine itself
  if (!child && (runner_it == runners_.end() || runner_it->second == nullptr)) {
    st.resolved_input = std::move(spec);
    return FailAttempt(
        ex, step, StepStatus::kFailed,
        Status(
            errc::kUnsupportedStepType,
            std::string("step type '") + ToString(def.type) +
                "' cannot run here (no runner for it in this engine; command steps need a server "
                "and its workers)"),
        nullptr);
  }
  // A cached result needs no run; an open breaker refuses the attempt before anything
  // starts (the attempt has failed).
  if (def.extra().cache && !fan_out && LookUpCache(ex, step, *spec)) return;
  if (def.extra().circuit_breaker && !PassBreaker(ex, step, *spec)) return;
  Runner* runner = child ? nullptr : runner_it->second;
  ++stats_.steps_dispatched;
  // The attempt's row is written when it ends; until then the step row describes it.
  Emit(*ex, "step.dispatched", step, nullptr, st.rec.attempts);

  if (!fan_out && runner == noop_runner_.get()) {
    // A built-in noop has no effect outside the engine, so there is nothing for the
    // outbox to hold back: it completes in this turn, with the same events and records
    // as any step. (A chain of noops finishes in one turn, one batch.)
    RunResult done;
    if (auto it = spec->find("with"); it != spec->end()) done.output = *it;
    return ApplyResult(ex, step, std::move(done));
  }

  // Fencing: a result counts only for the dispatch it answers. (A noop above needs
  // none: nothing can answer it late.)
  ImplyAssignment(st);
  st.in_flight = true;
  if (st.uses_capacity) {
    ++ex->in_flight;
    ++capacity_used_;
  }
  if (st.rec.deadline = 0; def.timeout && def.timeout->count() > 0) {
    st.rec.deadline = st.rec.started_at + def.timeout->count();
    ArmAttemptTimeout(*ex, step);
  }
  if (fan_out) return BeginFanOut(ex, step, runner);
  if (SignalWaitedFor(def) != nullptr) {
    st.resolved_input = std::move(spec);
    return BeginSignalWait(ex, step);
  }
  if (child) {
    st.resolved_input = spec;
    return BeginChild(ex, step, *st.resolved_input);
  }
  ArmHeartbeat(ex, step);
  // Waiting for a worker or a free slot is not running slowly: such a runner's attempt is
  // watched from its step.started (OnStarted).
  st.slow_watch_from_start = runner->ReportsStart();
  if (st.slow_watch_from_start) {
    CancelSlowWatch(*ex, step);
  } else {
    ArmSlowWatch(ex, step);
  }

  // Kept for the dead-letter record should the step fail, the same copy the runner holds;
  // a spec without templates is the definition's own (null here means that).
  st.resolved_input = ex->Plan()->spec_has_templates[step] ? spec : nullptr;
  StartAssignment(ex, step, runner, MakeRequest(*ex, step, std::move(spec)), /*instance=*/false);
}

SpecPtr Engine::Impl::DefinitionSpec(const ExecState& ex, int step) {
  // Aliasing: shares ownership of the definition, points at the step's spec inside it.
  return SpecPtr(ex.def, &ex.steps[step].def->spec);
}

RunRequest Engine::Impl::MakeRequest(const ExecState& ex, int step, SpecPtr spec) {
  const StepState& st = ex.steps[step];
  const StepDef& def = *st.def;
  RunRequest req;
  req.execution_id = ex.rec.id;
  req.step_id = def.id;
  req.attempt = st.rec.attempts;
  req.assignment_id = AssignmentOf(ex, st);
  req.type = def.type;
  req.timeout = def.timeout.value_or(Duration(0));
  if (def.type == StepType::kShell) {
    Json with_env = *spec;  // the env is the runner's, not the dead-letter record's
    AddShellEnv(ex, step, -1, with_env);
    spec = MakeSpec(std::move(with_env));
  }
  req.spec = std::move(spec);
  req.ns = ex.rec.ns;
  req.priority = static_cast<int>(ex.rec.priority);
  req.step_index = step;
  return req;
}

void Engine::Impl::AddShellEnv(const ExecState& ex, int step, int64_t item_index, Json& spec) {
  // Who am I: lets a script pick up a checkpoint or behave per attempt.
  Json& env = spec["env"];
  if (!env.is_object()) env = Json::object();
  env.emplace("BATON_EXECUTION_ID", ex.rec.id);
  env.emplace("BATON_STEP_ID", ex.steps[step].def->id);
  env.emplace("BATON_ATTEMPT", std::to_string(ex.steps[step].rec.attempts));
  if (item_index >= 0) env.emplace("BATON_ITEM_INDEX", std::to_string(item_index));
}

void Engine::Impl::StartAssignment(const ExecPtr& ex, int step, Runner* runner, RunRequest req,
                                   bool instance, bool reattach) {
  // The runner starts only after this turn is durable (transactional outbox). What it
  // must record about the dispatch (a remote worker's assignment) commits with it.
  if (!reattach) {
    runner->Prepare(req, batch_);
    prepared_.emplace_back(runner, req.assignment_id);
  }
  std::weak_ptr<ExecState> weak_ex = ex;
  AddEffect([this, weak_ex, step, runner, instance, reattach, req = std::move(req)]() mutable {
    auto exs = weak_ex.lock();
    const StepState* st = exs && !exs->finished ? &exs->steps[step] : nullptr;
    if (st == nullptr || !st->in_flight ||
        (instance ? !(st->Fan() && st->Fan()->live.count(req.assignment_id))
                  : !IsCurrentAssignment(*exs, *st, req.assignment_id))) {
      // Ended meanwhile (cancelled, timed out): no Start, but what Prepare reserved
      // is released. The step's own cancel may follow; runners ignore the second.
      if (!reattach) runner->Cancel(req.assignment_id);
      return;
    }
    RunCallbacks cb = MakeAttemptSink(req, step, instance, AssignmentOf(*exs, *st));
    if (reattach) {
      runner->Reattach(req, std::move(cb));
    } else {
      runner->Start(req, std::move(cb));
    }
  });
}

void Engine::Impl::DrainPropagation() {
  if (draining_) return;
  draining_ = true;
  // A worklist, not recursion: skipping the head of a 100k-step chain must not
  // overflow the stack.
  for (size_t i = 0; i < propagate_.size(); ++i) {
    // Moved out, not referenced: the vector may grow below. (Moving also spares the
    // shared count two atomic updates per step.)
    auto [ex, step] = std::move(propagate_[i]);
    OnDependenciesDone(ex, step);
  }
  propagate_.clear();
  draining_ = false;
}

}  // namespace baton
