// Attempt results, retries, timeouts, and the end of steps and executions.
#include "engine/engine_impl.h"

#include "expr/template.h"

namespace baton {

using engine::ExecState;
using engine::StepState;

namespace {

// Codes that no retry can fix, whatever the policy says.
bool NeverRetried(const std::string& code) {
  return code == errc::kTemplateError || code == errc::kValidation || code == errc::kCancelled ||
         code == errc::kUnsupportedStepType || code == errc::kConditionError;
}

// A worker's failure with "retryable": false: no retry can fix it, whatever the policy.
bool MarkedNotRetryable(const Json& error) {
  auto details = error.find("details");
  if (details == error.end() || !details->is_object()) return false;
  auto flag = details->find("retryable");
  return flag != details->end() && flag->is_boolean() && !flag->get<bool>();
}

std::string Tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(s.size() - n);
}

}  // namespace

void Engine::Impl::OnStarted(const std::string& exec_id, int step, const std::string& assignment) {
  ExecPtr ex = Find(exec_id);
  if (!ex || ex->finished) return;
  StepState& st = ex->steps[step];
  if (!st.in_flight || !IsCurrentAssignment(*ex, st, assignment) ||
      st.rec.status != StepStatus::kDispatched) {
    return;
  }
  TurnGuard turn(this);
  st.rec.status = StepStatus::kRunning;
  ArmHeartbeat(ex, step);
  MarkStepDirty(ex, step);
  Emit(*ex, "step.started", step, nullptr, st.rec.attempts);
  if (st.slow_watch_from_start) ArmSlowWatch(ex, step);  // after Emit: it began now
}

void Engine::Impl::OnProgress(const std::string& exec_id, int step, const std::string& assignment,
                              int progress, const Json& data) {
  ExecPtr ex = Find(exec_id);
  if (!ex || ex->finished) return;
  StepState& st = ex->steps[step];
  if (!st.in_flight || !IsCurrentAssignment(*ex, st, assignment)) return;
  progress = std::clamp(progress, 0, 99);  // 100 is reserved for a finished step
  TurnGuard turn(this);
  ArmHeartbeat(ex, step);
  ex->progress_sum += progress - st.rec.progress;
  st.rec.progress = progress;
  MarkStepDirty(ex, step);
  Json ev = {{"progress", progress}};
  if (!data.is_null()) ev["data"] = data;
  Emit(*ex, "step.progress", step, std::move(ev), st.rec.attempts);
}

void Engine::Impl::OnDone(const std::string& exec_id, int step, const std::string& assignment,
                          RunResult result) {
  ExecPtr ex = Find(exec_id);
  if (!ex || ex->finished) return;
  StepState& st = ex->steps[step];
  if (!st.in_flight || !IsCurrentAssignment(*ex, st, assignment))
    return;  // stale: timed out, cancelled
  TurnGuard turn(this);
  ApplyResult(ex, step, std::move(result));
}

void Engine::Impl::ApplyResult(const ExecPtr& ex, int step, RunResult result) {
  StepState& st = ex->steps[step];
  st.rec.exit_code = result.exit_code;
  if (!result.stderr_text.empty()) st.rec.stderr_tail = Tail(result.stderr_text, 4096);
  st.rec.output = std::move(result.output);
  if (!result.status.ok()) {
    return FailAttempt(ex, step, StepStatus::kFailed, result.status,
                       std::move(result.error_details));
  }
  CompleteAttempt(ex, step);
}

void Engine::Impl::CompleteAttempt(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  if (!st.BreakerKey().empty()) SettleBreaker(ex, step, nullptr);
  if (st.in_flight && !st.Fan() && st.rec.started_at) {
    RecordDuration(*ex, step, loop_->Now() - RunningSince(st));
  }
  if (st.def->extra().set_vars.is_object()) {
    // A variable that cannot be rendered fails the attempt, as a bad template would.
    if (Status set = SetVars(ex, step); !set.ok()) {
      return FailAttempt(ex, step, StepStatus::kFailed, set, nullptr);
    }
  }
  if (!st.CacheKey().empty()) StoreCacheResult(ex, step);
  Release(ex, step);
  st.rec.error = nullptr;
  st.rec.completed_at = loop_->Now();
  SaveAttempt(*ex, step, StepStatus::kCompleted, nullptr);
  Emit(*ex, "step.completed", step, nullptr, st.rec.attempts);
  ++stats_.steps_completed;
  FinishStep(ex, step, StepStatus::kCompleted);
}

void Engine::Impl::ArmAttemptTimeout(ExecState& ex, int step) {
  // On the monotonic clock, like the loop's timers: a wall-clock step (NTP, an operator)
  // neither fires it early nor delays it (clock_jump_test.cpp).
  const Clock& clock = loop_->clock();
  deadlines_.Arm(ex, step, engine::DeadlineKind::kAttemptTimeout,
                 clock.MonotonicMs() + (ex.steps[step].rec.deadline - clock.Now()));
  ScheduleDeadlines();
}

void Engine::Impl::CancelStepTimer(ExecState& ex, int step) {
  StepState& st = ex.steps[step];
  if (st.timer_is_deadline) {
    // The loop timer stays: firing early finds nothing due and waits for the next one.
    deadlines_.Disarm(ex, step, engine::DeadlineKind::kAttemptTimeout);
  } else if (st.timer) {
    loop_->CancelTimer(st.timer);
    st.timer = 0;
  }
}

void Engine::Impl::ScheduleDeadlines() {
  if (deadlines_.empty()) return;              // an armed timer fires once for nothing
  const int64_t next = deadlines_.NextTime();  // monotonic
  if (deadlines_timer_ && deadlines_timer_at_ <= next) return;
  if (deadlines_timer_) loop_->CancelTimer(deadlines_timer_);
  deadlines_timer_at_ = next;
  const Clock& clock = loop_->clock();
  deadlines_timer_ = loop_->ScheduleAt(clock.Now() + (next - clock.MonotonicMs()), [this] {
    deadlines_timer_ = 0;
    OnDeadlines();
  });
}

void Engine::Impl::OnDeadlines() {
  while (std::optional<engine::StepDeadlines::Due> due =
             deadlines_.PopDue(loop_->clock().MonotonicMs())) {
    // Entries never outlive their execution (DisarmAll before it leaves executions_).
    ExecPtr ex = Find(due->ex->rec.id);
    if (!ex || ex.get() != due->ex) continue;
    switch (due->kind) {
      case engine::DeadlineKind::kAttemptTimeout:
        OnAttemptTimeout(ex, due->step);
        break;
      case engine::DeadlineKind::kHeartbeat:
        OnHeartbeatTimeout(ex, due->step);
        break;
      case engine::DeadlineKind::kSlow:
        OnSlow(ex, due->step);
        break;
    }
  }
  ScheduleDeadlines();
}

void Engine::Impl::OnAttemptTimeout(const ExecPtr& ex, int step) {
  if (ex->finished) return;
  StepState& st = ex->steps[step];
  if (!st.in_flight) return;
  TurnGuard turn(this);
  StopStep(ex, step);
  FailAttempt(ex, step, StepStatus::kTimeout,
              Status(errc::kTimeout, "step '" + st.def->id + "' exceeded its timeout of " +
                                         FormatDuration(*st.def->timeout)),
              nullptr);
}

void Engine::Impl::ArmHeartbeat(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  CancelHeartbeat(*ex, step);
  if (!st.in_flight || st.Fan() || !st.def->extra().heartbeat_timeout ||
      st.def->extra().heartbeat_timeout->count() <= 0) {
    return;
  }
  deadlines_.Arm(*ex, step, engine::DeadlineKind::kHeartbeat,
                 loop_->clock().MonotonicMs() + st.def->extra().heartbeat_timeout->count());
  ScheduleDeadlines();
}

void Engine::Impl::CancelHeartbeat(ExecState& ex, int step) {
  deadlines_.Disarm(ex, step, engine::DeadlineKind::kHeartbeat);
}

void Engine::Impl::OnHeartbeatTimeout(const ExecPtr& ex, int step) {
  if (ex->finished) return;
  StepState& st = ex->steps[step];
  if (!st.in_flight) return;
  TurnGuard turn(this);
  StopStep(ex, step);
  // A failure, not a timeout: the work may be alive but silent, and the retry policy
  // decides whether another attempt is worth it.
  FailAttempt(
      ex, step, StepStatus::kFailed,
      Status(errc::kHeartbeatTimeout, "step '" + st.def->id + "' reported no progress for " +
                                          FormatDuration(*st.def->extra().heartbeat_timeout) +
                                          " (heartbeat_timeout)"),
      nullptr);
}

bool Engine::Impl::RecordStepNote(const std::string& exec_id, const std::string& step_id,
                                  const char* type, Json details) {
  ExecPtr ex = Find(exec_id);
  if (!ex || ex->finished) return false;
  auto it = ex->StepIndex().find(step_id);
  if (it == ex->StepIndex().end()) return true;  // no such step: nothing to log
  TurnGuard turn(this);
  Emit(*ex, type, it->second, std::move(details), ex->steps[it->second].rec.attempts);
  return true;
}

void Engine::Impl::StopStep(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  CancelStepTimer(*ex, step);
  CancelHeartbeat(*ex, step);
  CancelSlowWatch(*ex, step);
  if (!st.in_flight) return;
  if (st.def->type == StepType::kWorkflow) return StopChild(ex, step, "its parent step stopped");
  auto it = runners_.find(st.def->type);
  if (it == runners_.end() || !it->second) return;
  Runner* runner = it->second;
  if (st.Fan()) return StopInstances(ex, step, runner);
  std::string assignment = AssignmentOf(*ex, st);
  AddEffect([runner, assignment] { runner->Cancel(assignment); });
}

void Engine::Impl::Release(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  if (st.guards && (st.guards->pool_held > 0 || st.guards->pool_waiting)) {
    ReturnPoolSlots(ex, step);
  }
  if (!st.CacheKey().empty()) AbandonCacheFlight(ex, step);
  CancelStepTimer(*ex, step);
  CancelHeartbeat(*ex, step);
  CancelSlowWatch(*ex, step);
  if (!st.in_flight) return;
  st.in_flight = false;
  if (st.guards) st.guards->fan.reset();
  if (!st.uses_capacity) return;
  --ex->in_flight;
  --capacity_used_;
  if (ex->HasParked() && !ex->paused()) {
    int next = ex->extras->parked.pop_front();
    ready_.push({ex->rec.priority * 8 + static_cast<int>(ex->steps[next].def->priority),
                 ready_seq_++, ex, next});
  }
}

void Engine::Impl::FailAttempt(const ExecPtr& ex, int step, StepStatus status, const Status& error,
                               Json details) {
  StepState& st = ex->steps[step];
  const StepDef& def = *st.def;
  Release(ex, step);
  Json err = {{"code", error.code()}, {"message", error.message()}};
  if (!details.is_null()) err["details"] = std::move(details);
  Json logged = err;
  logged["attempt"] = st.rec.attempts;
  logged["at"] = loop_->Now();
  st.Guards().attempt_errors.push_back(std::move(logged));
  if (!st.BreakerKey().empty()) SettleBreaker(ex, step, &err);
  st.rec.error = err;
  SaveAttempt(*ex, step, status, err);
  MarkStepDirty(ex, step);

  const bool restart = error.code() == errc::kEngineRestart;
  if (restart) ++st.engine_restarts;
  const int counted = st.rec.attempts - st.engine_restarts - st.rec.attempt_base;
  const TimeMs now = loop_->Now();
  bool retry = false;
  Duration delay{0};
  if (ex->failing_fast || ex->finished) {
    retry = false;
  } else if (restart) {
    retry = st.engine_restarts <= options_.max_engine_restarts;
  } else if (!NeverRetried(error.code()) && def.retry.IsRetryable(error.code()) &&
             !MarkedNotRetryable(err) && counted < def.retry.max_attempts) {
    retry = true;
    delay = def.retry.DelayBefore(counted + 1);
    if (def.retry.jitter && delay.count() > 0) {
      std::uniform_real_distribution<double> dist(0.5, 1.0);
      delay = Duration(static_cast<int64_t>(static_cast<double>(delay.count()) * dist(rng_)));
    }
  }
  // Not before an open breaker's probe time: an earlier attempt would be refused.
  if (st.guards) {
    const TimeMs floor = st.guards->retry_floor;
    if (retry && floor > now + delay.count()) delay = Duration(floor - now);
    st.guards->retry_floor = 0;
  }
  if (retry) {
    st.rec.status = StepStatus::kWaitingRetry;
    st.rec.retry_at = now + delay.count();
    Emit(*ex, "step.retrying", step, {{"delay_ms", delay.count()}, {"error", err}},
         st.rec.attempts);
    std::string id = ex->rec.id;
    CancelStepTimer(*ex, step);  // `timer` is the retry's from here
    st.timer = loop_->ScheduleAt(st.rec.retry_at, [this, id, step] { RetryNow(id, step); });
    return;
  }
  st.rec.completed_at = now;
  Emit(*ex, status == StepStatus::kTimeout ? "step.timed_out" : "step.failed", step,
       {{"error", err}}, st.rec.attempts);
  ++stats_.steps_failed;
  WriteDeadLetter(ex, step, now);
  if (!def.optional) {
    if (!ex->had_failure) {
      Json& first = ex->More().first_failure;
      first = err;
      first["step"] = def.id;
    }
    ex->had_failure = true;
    if (ex->def->fail_fast && !ex->failing_fast) {
      ex->failing_fast = true;
      for (size_t i = 0; i < ex->steps.size(); ++i) {
        StepState& other = ex->steps[i];
        if (static_cast<int>(i) == step || IsTerminal(other.rec.status)) continue;
        if (other.in_flight || other.rec.status == StepStatus::kWaitingRetry ||
            other.rec.status == StepStatus::kReady) {
          StopStep(ex, static_cast<int>(i));
          Release(ex, static_cast<int>(i));
          other.rec.error = {{"code", errc::kCancelled}, {"message", "fail_fast"}};
          Emit(*ex, "step.cancelled", static_cast<int>(i), {{"reason", "fail_fast"}});
          FinishStep(ex, static_cast<int>(i), StepStatus::kCancelled);
        }
      }
    }
  }
  FinishStep(ex, step, status);
}

void Engine::Impl::RetryNow(const std::string& exec_id, int step) {
  ExecPtr ex = Find(exec_id);
  if (!ex || ex->finished) return;
  StepState& st = ex->steps[step];
  if (!st.timer_is_deadline) st.timer = 0;  // the retry timer that fired (never a deadline)
  if (st.rec.status != StepStatus::kWaitingRetry) return;
  TurnGuard turn(this);
  MakeReady(ex, step);
}

void Engine::Impl::FinishStep(const ExecPtr& ex, int step, StepStatus status, bool propagate) {
  StepState& st = ex->steps[step];
  st.rec.status = status;
  if (!st.rec.completed_at) st.rec.completed_at = loop_->Now();
  ex->progress_sum += 100 - st.rec.progress;
  st.rec.progress = 100;
  ++ex->terminal_steps;
  if (ex->layer_open) {
    --ex->layer_open[ex->Plan()->layer_of[step]];
    while (ex->current_layer < ex->Plan()->layers && ex->layer_open[ex->current_layer] == 0) {
      ++ex->current_layer;
    }
  }
  MarkStepDirty(ex, step);
  if (!ex->ParentId().empty()) ReportChildProgress(*ex);
  if (propagate) {
    for (int d : ex->Plan()->graph.Downstream(step)) {
      if (--ex->steps[d].pending_deps == 0) propagate_.emplace_back(ex, d);
    }
  }
  MaybeFinish(ex);
}

void Engine::Impl::MaybeFinish(const ExecPtr& ex) {
  if (ex->finished || ex->stopping) return;
  if (ex->terminal_steps < static_cast<int>(ex->steps.size())) return;
  if (ex->had_failure) {
    Json err = ex->extras ? ex->extras->first_failure : Json();
    err["message"] = "step '" + err.value("step", std::string()) +
                     "' failed: " + err.value("message", std::string());
    return FinishExecution(ex, ExecutionStatus::kFailed, std::move(err));
  }
  if (!ex->def->output.is_null()) {
    engine::ExecScope scope(*ex);
    Result<Json> out = expr::Render(ex->def->output, scope);
    if (!out.ok()) {
      return FinishExecution(ex, ExecutionStatus::kFailed,
                             {{"code", out.status().code()},
                              {"message", "workflow output: " + out.status().message()}});
    }
    ex->rec.Set().output = std::move(out.value());
  }
  FinishExecution(ex, ExecutionStatus::kCompleted, nullptr);
}

void Engine::Impl::FinishExecution(const ExecPtr& ex, ExecutionStatus status, Json error) {
  if (ex->finished) return;
  ex->finished = true;
  if (active_ > 0) --active_;
  if (ex->deadline_timer) {
    loop_->CancelTimer(ex->deadline_timer);
    ex->deadline_timer = 0;
  }
  if (ex->extras) ex->extras->parked.clear();
  const bool was_queued = ex->rec.status == ExecutionStatus::kQueued;
  ex->rec.status = status;
  ex->rec.Set().error = std::move(error);
  ex->rec.late->completed_at = loop_->Now();
  MarkDirty(ex);
  const char* type = "execution.completed";
  switch (status) {
    case ExecutionStatus::kFailed:
      type = "execution.failed";
      break;
    case ExecutionStatus::kTimeout:
      type = "execution.timed_out";
      break;
    case ExecutionStatus::kCancelled:
      type = "execution.cancelled";
      break;
    default:
      break;
  }
  Json data = {{"status", ToString(status)}};
  if (!ex->rec.error().is_null()) data["error"] = ex->rec.error();
  Emit(*ex, type, -1, std::move(data));
  // A child hands its result to the parent step in this same turn (children.cpp).
  if (!ex->ParentId().empty()) EndChild(*ex);
  // Its concurrency slots go to the next in line, in this turn too.
  if (was_queued || ex->holds_group_slot || ex->holds_global_slot) ReleaseSlots(ex);
  if (options_.finish_hook != nullptr) {
    auto after_commit = ex->WithRecord([&](const ExecutionRecord& record) {
      return options_.finish_hook->OnFinish(record, *ex->def, batch_);
    });
    if (after_commit) {
      AddEffect(std::move(after_commit));
    }
  }
}

void Engine::Impl::CancelOpenSteps(const ExecPtr& ex, const char* reason) {
  ex->stopping = true;  // the caller decides the execution's final status
  for (size_t i = 0; i < ex->steps.size(); ++i) {
    StepState& st = ex->steps[i];
    if (IsTerminal(st.rec.status)) continue;
    const bool had_attempt = st.in_flight;
    StopStep(ex, static_cast<int>(i));
    Release(ex, static_cast<int>(i));
    st.rec.error = {{"code", errc::kCancelled}, {"message", reason}};
    if (had_attempt) SaveAttempt(*ex, static_cast<int>(i), StepStatus::kCancelled, st.rec.error);
    Emit(*ex, "step.cancelled", static_cast<int>(i), {{"reason", reason}});
    FinishStep(ex, static_cast<int>(i), StepStatus::kCancelled, /*propagate=*/false);
  }
}

void Engine::Impl::OnExecutionDeadline(const std::string& exec_id) {
  ExecPtr ex = Find(exec_id);
  if (!ex || ex->finished) return;
  ex->deadline_timer = 0;
  TurnGuard turn(this);
  const std::string limit =
      ex->def->timeout ? FormatDuration(*ex->def->timeout) : std::string("its deadline");
  CancelOpenSteps(ex, "execution timed out");
  FinishExecution(
      ex, ExecutionStatus::kTimeout,
      {{"code", errc::kTimeout}, {"message", "execution exceeded its timeout of " + limit}});
}

}  // namespace baton
