#include "engine/engine_impl.h"

#include "common/crash_point.h"
#include "expr/template.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <thread>
#include <utility>

namespace baton {

namespace {

// Makes room for `more` elements, at least doubling the capacity when it grows.
template <class Vector>
void ReserveMore(Vector& v, size_t more) {
  const size_t need = v.size() + more;
  if (need > v.capacity()) v.reserve(std::max(need, 2 * v.capacity()));
}

}  // namespace

int EngineOptions::local_capacity() const {
  return parallel > 0 ? parallel
                      : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

using engine::ExecState;
using engine::StepState;

Engine::Impl::Impl(EventLoop* loop, Committer* committer, EngineOptions options)
    : loop_(loop), committer_(committer), options_(options) {
  capacity_ = options_.local_capacity();
  cache_ = engine::ResultCache(options_.cache);
  rng_.seed(options_.random_seed ? options_.random_seed : static_cast<uint64_t>(loop_->Now()));
  noop_runner_ = NewNoopRunner();
  wait_runner_ = NewWaitRunner(loop_);
  runners_[StepType::kNoop] = noop_runner_.get();
  runners_[StepType::kWait] = wait_runner_.get();
  inbox_ = std::make_shared<RunnerInbox>();
  inbox_->loop = loop_;
  inbox_->impl = this;
  inbox_->alive = alive_;
}

Engine::Impl::~Impl() {
  *alive_ = false;
}

Engine::Impl::ExecPtr Engine::Impl::Find(const std::string& id) const {
  auto it = executions_.find(id);
  return it == executions_.end() ? nullptr : *it;
}

// Records are built in place in the batch: a step costs several of them, and a local
// record moved in would copy every short string twice.
void Engine::Impl::Emit(ExecState& ex, const char* type, int step, Json data, int attempt) {
  EventRecord& ev = batch_.events.emplace_back();
  ev.execution_id = ex.rec.id;
  ev.seq = ex.next_seq++;
  // Turns run one at a time on this thread and committers keep submission order, so
  // emission order is commit order.
  ev.position = ++last_position_;
  ev.type = type;
  if (step >= 0) ev.step_id = ex.steps[step].def->id;
  ev.data = std::move(data);
  ev.attempt = attempt;
  ev.time = loop_->Now();
  event_began_.push_back(step >= 0 ? AttemptBegan(ex.steps[step], ev.type, ev.time) : 0);
  if (std::strncmp(type, "execution.", 10) == 0) {
    const char* kind = type + 10;
    const bool terminal = std::strcmp(kind, "completed") == 0 || std::strcmp(kind, "failed") == 0 ||
                          std::strcmp(kind, "timed_out") == 0 ||
                          std::strcmp(kind, "cancelled") == 0;
    SetLive(ex, terminal                           ? 0
                : std::strcmp(kind, "paused") == 0 ? 2
                : std::strcmp(kind, "queued") == 0 ? 3
                                                   : 1);
  }
  ex.last_activity = ev.time;
  ex.stall_reported = false;
  if (event_execs_.empty() || event_execs_.back() != &ex) event_execs_.push_back(&ex);
}

TimeMs Engine::Impl::AttemptBegan(StepState& st, std::string_view type, TimeMs now) {
  if (type == "step.dispatched") {
    if (st.run_delay_ms == StepState::kNotBegun) st.run_delay_ms = StepState::kDispatchedOnly;
    return 0;
  }
  if (type == "step.started") {
    st.run_delay_ms = static_cast<int32_t>(
        std::clamp<TimeMs>(now - st.rec.started_at, 0, std::numeric_limits<int32_t>::max()));
    return 0;
  }
  if (type != "step.completed" && type != "step.failed" && type != "step.timed_out" &&
      type != "step.retrying" && type != "step.cancelled") {
    return 0;
  }
  const int32_t delay = st.run_delay_ms;
  st.run_delay_ms = StepState::kNotBegun;  // the next attempt starts afresh
  if (delay == StepState::kNotBegun || st.rec.started_at <= 0) return 0;
  return st.rec.started_at + std::max(delay, 0);
}

void Engine::Impl::SetLive(ExecState& ex, uint8_t kind) {
  if (ex.live == kind) return;
  if (ex.live != 0) live_counts_[ex.live].fetch_sub(1, std::memory_order_relaxed);
  if (kind != 0) live_counts_[kind].fetch_add(1, std::memory_order_relaxed);
  ex.live = kind;
}

void Engine::Impl::MarkDirty(const ExecPtr& ex) {
  if (ex->dirty) return;
  ex->dirty = true;
  dirty_execs_.push_back(ex);
}

void Engine::Impl::MarkStepDirty(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  if (st.dirty || !options_.write_step_rows) return;
  st.dirty = true;
  dirty_steps_.emplace_back(ex.get(), step);
}

void Engine::Impl::SaveAttempt(ExecState& ex, int step, StepStatus status, const Json& error) {
  if (!options_.write_step_rows) return;
  const StepState& st = ex.steps[step];
  AttemptRecord& a = batch_.attempts.emplace_back();
  a.execution_id = ex.rec.id;
  a.step_id = st.def->id;
  a.attempt = st.rec.attempts;
  a.status = status;
  a.assignment_id = AssignmentOf(ex, st);
  a.error = error;
  a.started_at = st.rec.started_at;
  a.completed_at = IsTerminal(status) ? loop_->Now() : 0;
}

void Engine::Impl::EndTurn() {
  if (--turn_depth_ > 0) return;
  // Dispatch decisions belong to the same turn as what made steps ready.
  ++turn_depth_;
  DispatchReady();
  --turn_depth_;

  for (auto& ex : dirty_execs_) {
    ex->dirty = false;
    ex->FillRecord(batch_.executions.emplace_back());
  }
  dirty_execs_.clear();
  batch_.steps.reserve(batch_.steps.size() + dirty_steps_.size());
  for (auto& [ex, step] : dirty_steps_) {
    StepState& st = ex->steps[step];
    st.dirty = false;
    StepRecord& r = batch_.steps.emplace_back();
    static_cast<StepRecordFields&>(r) = st.rec;
    if (st.assignment_implied) r.assignment_id = AssignmentOf(*ex, st);
    r.execution_id = ex->rec.id;
    r.step_id = st.def->id;
  }
  dirty_steps_.clear();
  // What a JoinedTurn held commits in this batch, after the turn's own records (and is
  // submitted even when the rest is empty: its writers wait for their callbacks).
  std::shared_ptr<std::vector<std::function<void(const Status&)>>> held_dones;
  if (!held_.empty()) {
    held_dones = std::make_shared<std::vector<std::function<void(const Status&)>>>(TakeHeld());
  }
  if (batch_.empty() && effects_.empty() && !held_dones) return;

  ++stats_.batches;
  auto effects = std::make_shared<std::vector<std::function<void()>>>(std::move(effects_));
  effects_.clear();
  std::shared_ptr<Prepared> prepared;  // null in the common turn that prepared nothing
  if (!prepared_.empty()) {
    prepared = std::make_shared<Prepared>(std::move(prepared_));
    prepared_.clear();
  }
  auto batch = std::make_unique<WriteBatch>(std::move(batch_));
  batch_ = WriteBatch();
  // Observers learn of events after the commit; which execution each belongs to is
  // pinned here so progress can be computed then. Executions leave memory only in these
  // callbacks, so the pointers stay valid until the last one runs.
  auto execs = std::make_shared<std::vector<ExecPtr>>();
  execs->reserve(event_execs_.size());
  const auto this_batch = static_cast<uint32_t>(batches_submitted_ + 1);  // numbered below
  for (const ExecState* e : event_execs_) {
    auto it = executions_.find(e->rec.id);
    if (it == executions_.end()) throw std::out_of_range("an event of an execution not held");
    execs->push_back(*it);
    execs->back()->last_batch = this_batch;
  }
  event_execs_.clear();
  // Observers read the events again after the commit, so with any the batch is shared;
  // with none, the store may take its records instead of copying them. Each event's
  // progress is the execution's as of now, the end of the turn that wrote it: the
  // commit-thread observers cannot read the executions, which this thread goes on
  // changing, and all observers get the same.
  std::shared_ptr<const WriteBatch> observed;
  std::shared_ptr<const TurnProgress> progress;  // with observed
  if ((!observers_.empty() || !commit_observers_.empty()) && !batch->events.empty()) {
    auto now = std::make_shared<TurnProgress>();
    now->runs.reserve(execs->size());
    for (const ExecPtr& ex : *execs) now->runs.push_back(ProgressOf(*ex));
    now->began = std::move(event_began_);
    progress = std::move(now);
    observed = std::move(batch);
  }
  event_began_.clear();
  std::weak_ptr<bool> alive = alive_;
  const uint64_t number = ++batches_submitted_;
  auto on_commit = [this, alive, effects, prepared, observed, execs, progress, number,
                    held_dones](const Status& st) {
    if (held_dones) {
      for (const auto& done : *held_dones) done(st);  // as their committer would: any thread
    }
    NotifyDurableOffLoop(number, st);
    loop_->Post([this, alive, effects, prepared, execs, st, number,
                 observed = observers_.empty() ? nullptr : observed, progress] {
      if (alive.expired()) return;
      NotifyDurable(number, st);
      if (!st.ok()) {
        // Nothing of the batch was stored, and Start will not follow: runners release
        // what Prepare reserved for it.
        if (prepared) {
          for (const auto& [runner, assignment] : *prepared) runner->Cancel(assignment);
        }
        // The store has the last good state; stop what diverged from it. Steps in
        // flight give back their slots, timers and runners' work: without this a full
        // disk left the local worker's slots taken forever, and every later shell step
        // stayed `ready` after the disk had room again (issue 11, defect 4).
        // The runners are told at once, not through the outbox: no batch has to be
        // durable first, and the next one may be refused as well.
        //
        // Every execution in memory is dropped, not only this batch's: the committer
        // refuses the batches submitted after this one (CommitQueue::ClearFailure), and
        // any execution may have events in those. The store is the truth; the host
        // re-adopts them from it (TakeAbandoned).
        std::vector<ExecPtr> dropped = *execs;
        for (const ExecPtr& ex : executions_) dropped.push_back(ex);
        std::vector<std::pair<Runner*, std::string>> cancels;
        {
          TurnGuard turn(this);  // its end dispatches what the freed slots allow
          for (auto& ex : dropped) {
            if (DropFromMemory(ex, &cancels)) {
              ++stats_.executions_abandoned;
              abandoned_.push_back(ex->rec.id);
            }
          }
          DropAllSlots();              // taken again as they are re-adopted
          committer_->ClearFailure();  // batches submitted from now on may commit
        }
        for (const auto& [runner, assignment] : cancels) {
          const bool was_prepared =
              prepared && std::find(prepared->begin(), prepared->end(),
                                    std::make_pair(runner, assignment)) != prepared->end();
          if (!was_prepared) runner->Cancel(assignment);  // cancelled above already
        }
        for (auto* o : observers_) o->OnStoreError(st);
        return;
      }
      CrashPoint("engine.after_commit");
      TurnGuard turn(this);
      for (auto& effect : *effects) effect();
      if (observed) TellObservers(observers_, *observed, *progress);
      // Finished executions leave memory once the last batch with their events is
      // durable (ExecState::last_batch): were a later one still in flight and refused,
      // they must be here to be dropped and re-adopted.
      for (auto& ex : *execs) {
        if (ex->finished && ex->in_flight == 0 && ex->last_batch == static_cast<uint32_t>(number)) {
          auto it = executions_.find(ex->rec.id);
          if (it != executions_.end() && *it == ex) {
            deadlines_.DisarmAll(*ex);  // none should be left; none may outlive it
            executions_.erase(it);
          }
        }
      }
    });
    // After the loop is told, so that the engine goes on while this thread feeds the
    // commit-thread observers (and then, most often, frees the batch, not the engine).
    // When the loop itself committed (idle: Committer::CommitHere), it feeds them first.
    if (observed && st.ok()) TellObservers(commit_observers_, *observed, *progress);
  };
  if (observed) {
    committer_->Submit(std::move(observed), std::move(on_commit));
  } else {
    committer_->SubmitOwned(std::move(batch), std::move(on_commit));
  }
}

void Engine::Impl::CollectInFlight(const ExecState& ex, int step,
                                   std::vector<std::pair<Runner*, std::string>>* out) const {
  const StepState& st = ex.steps[step];
  if (!st.in_flight) return;
  auto it = runners_.find(st.def->type);
  if (it == runners_.end() || it->second == nullptr) return;
  if (const engine::FanOut* fan = st.Fan()) {
    for (const auto& [assignment, item] : fan->live) out->emplace_back(it->second, assignment);
  } else {
    out->emplace_back(it->second, AssignmentOf(ex, st));
  }
}

void Engine::Impl::TellObservers(const std::vector<ExecutionObserver*>& observers,
                                 const WriteBatch& batch, const TurnProgress& progress) {
  ExecutionProgress with_began;  // reused: its strings keep their buffers
  size_t run = 0;
  for (size_t i = 0; i < batch.events.size(); ++i) {
    const EventRecord& event = batch.events[i];
    while (progress.runs[run].execution_id != event.execution_id) ++run;
    const ExecutionProgress* p = &progress.runs[run];
    if (progress.began[i] != 0) {
      with_began = *p;
      with_began.attempt_began = progress.began[i];
      p = &with_began;
    }
    for (auto* o : observers) o->OnEvent(event, *p);
  }
}

void Engine::Impl::NotifyDurable(uint64_t batch_number, const Status& status) {
  batches_durable_ = batch_number;
  while (!durable_waiters_.empty() && durable_waiters_.front().first <= batch_number) {
    auto done = std::move(durable_waiters_.front().second);
    durable_waiters_.pop_front();
    done(status);
  }
}

void Engine::Impl::NotifyDurableOffLoop(uint64_t batch_number, const Status& status) {
  std::vector<std::function<void(const Status&)>> due;
  {
    std::lock_guard lock(off_loop_mu_);
    off_loop_finished_ = batch_number;
    while (!off_loop_waiters_.empty() && off_loop_waiters_.front().first <= batch_number) {
      due.push_back(std::move(off_loop_waiters_.front().second));
      off_loop_waiters_.pop_front();
    }
  }
  for (const auto& done : due) done(status);
}

ExecutionProgress Engine::Impl::ProgressOf(const ExecState& ex) const {
  ExecutionProgress p;
  p.execution_id = ex.rec.id;
  p.status = ex.rec.status;
  p.steps_total = static_cast<int>(ex.steps.size());
  p.steps_done = ex.terminal_steps;
  p.percent = ex.steps.empty() ? 100 : static_cast<int>(ex.progress_sum / ex.steps.size());
  p.layers = ex.Plan()->layers;
  p.layer = std::min(ex.current_layer + 1, ex.Plan()->layers);
  p.workflow = ex.def->name;
  p.ns = ex.rec.ns;
  return p;
}

Status Engine::Impl::BuildGraph(ExecState& ex) {
  const WorkflowDef& def = *ex.def;
  const size_t n = def.steps.size();
  // The plan comes compiled with the definition; one built in code without it (or edited
  // since) is compiled here, for this execution.
  if (!def.plan || def.plan->graph.size() != n) {
    Result<std::shared_ptr<const WorkflowPlan>> plan = CompilePlan(def);
    if (!plan.ok()) return plan.status();
    ex.More().own_plan = std::move(plan).value();
    ++stats_.plans_compiled;
  }
  const StepGraph& g = ex.Plan()->graph;
  // Each step's state is built once, in place: a 100k-step workflow should not pay for
  // a default-constructed pass and then an assigning one.
  ex.steps.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    StepState& st = ex.steps.emplace_back();
    st.def = &def.steps[i];
    st.rec.index = static_cast<int>(i);
    st.pending_deps = static_cast<int>(g.Upstream(static_cast<int>(i)).size());
    // Remote work (command) counts against its worker's capacity, not the local one.
    // A child workflow's steps count for themselves: its parent step holds no slot (it
    // would deadlock a capacity of one).
    st.uses_capacity = st.def->type != StepType::kNoop && st.def->type != StepType::kWait &&
                       st.def->type != StepType::kCommand && st.def->type != StepType::kWorkflow;
  }
  if (!ex.Plan()->layer_size.empty()) {
    ex.layer_open = std::make_unique<int[]>(ex.Plan()->layer_size.size());
    std::copy(ex.Plan()->layer_size.begin(), ex.Plan()->layer_size.end(), ex.layer_open.get());
  }
  return Status::Ok();
}

Result<std::string> Engine::Impl::Start(StartRequest request) {
  if (!request.workflow) return Status(errc::kInvalidArgument, "no workflow given");
  const TimeMs now = loop_->Now();
  auto ex = std::make_shared<ExecState>();
  ex->def = request.workflow;
  ex->rec.id = request.execution_id.empty() ? NewExecutionId(now) : request.execution_id;
  if (executions_.count(ex->rec.id)) {
    return Status(errc::kConflict, "execution '" + ex->rec.id + "' is already running");
  }
  ex->SetInput(std::move(request.input));
  ex->rec.priority = static_cast<int>(request.priority.value_or(ex->def->priority));
  ex->origin = engine::ExecOrigin::Of(request.parent_id, request.parent_step,
                                      request.parent_attempt, request.idempotency_key);
  ex->rec.ns = request.ns.empty() ? kDefaultNamespace : request.ns;
  ex->rec.status = ExecutionStatus::kRunning;
  ex->rec.created_at = now;
  ex->rec.started_at = now;
  if (Status st = BuildGraph(*ex); !st.ok()) return st;

  TurnGuard turn(this);
  executions_.insert(ex);
  ++active_;
  ArmStallSweep();
  // Room for what this turn may write: every step row, and for steps that finish at
  // once (noops) their events and attempt rows. Reserved pages that stay unused cost
  // address space, not memory; growing by doubling would copy everything many times.
  // Several starts may share a turn (a parent's children): the room grows geometrically
  // then, or each start would copy what the ones before it wrote.
  const size_t n = ex->steps.size();
  if (options_.write_step_rows) {
    ReserveMore(dirty_steps_, n);
    ReserveMore(batch_.steps, n);
    ReserveMore(batch_.attempts, n);
  }
  ReserveMore(batch_.events, 3 * n + 2);
  propagate_.reserve(n);
  MarkDirty(ex);
  for (size_t i = 0; i < ex->steps.size(); ++i) MarkStepDirty(ex, static_cast<int>(i));
  Json started = {
      {"workflow", ex->def->name}, {"version", ex->def->version}, {"input", ex->Input()}};
  if (!ex->ParentId().empty()) {
    started["parent_id"] = ex->ParentId();
    started["parent_step"] = ex->ParentStep();
    children_[ex->ParentId()].push_back(ex->rec.id);
  }
  Emit(*ex, "execution.started", -1, std::move(started));
  if (!ex->ParentId().empty()) ++stats_.children_started;
  if (Admit(ex)) BeginSteps(ex);  // else queued, or refused by its concurrency policy
  return ex->rec.id;
}

void Engine::Impl::BeginSteps(const ExecPtr& ex) {
  // The timeout counts from here: time spent queued is not running time.
  if (ex->def->timeout) {
    ex->rec.deadline = loop_->Now() + ex->def->timeout->count();
    MarkDirty(ex);
    std::string id = ex->rec.id;
    ex->deadline_timer =
        loop_->ScheduleAt(ex->rec.deadline, [this, id] { OnExecutionDeadline(id); });
  }
  for (size_t i = 0; i < ex->steps.size(); ++i) {
    if (ex->steps[i].pending_deps == 0) OnDependenciesDone(ex, static_cast<int>(i));
  }
  MaybeFinish(ex);  // an execution of only skipped steps
}

Status Engine::Impl::Cancel(const std::string& id, const std::string& reason) {
  ExecPtr ex = Find(id);
  if (!ex || ex->finished) return Status(errc::kNotFound, "no running execution '" + id + "'");
  TurnGuard turn(this);
  CancelOpenSteps(ex, "execution cancelled");
  FinishExecution(ex, ExecutionStatus::kCancelled,
                  {{"code", errc::kCancelled}, {"message", reason}});
  return Status::Ok();
}

Status Engine::Impl::Pause(const std::string& id) {
  ExecPtr ex = Find(id);
  if (!ex || ex->finished) return Status(errc::kNotFound, "no running execution '" + id + "'");
  if (ex->paused()) return Status::Ok();
  if (ex->rec.status == ExecutionStatus::kQueued) {
    return Status(errc::kConflict, "execution '" + id +
                                       "' is queued for a concurrency slot: nothing runs to "
                                       "pause (cancel it, or let it start)");
  }
  TurnGuard turn(this);
  ex->rec.status = ExecutionStatus::kPaused;
  MarkDirty(ex);
  Emit(*ex, "execution.paused", -1);
  for (const std::string& child : RunningChildren(id)) (void)Pause(child);
  return Status::Ok();
}

Status Engine::Impl::Resume(const std::string& id) {
  ExecPtr ex = Find(id);
  if (!ex || ex->finished) return Status(errc::kNotFound, "no running execution '" + id + "'");
  if (!ex->paused()) return Status::Ok();
  TurnGuard turn(this);
  ex->rec.status = ExecutionStatus::kRunning;
  MarkDirty(ex);
  Emit(*ex, "execution.resumed", -1);
  for (int step : ex->HasParked() ? ex->extras->parked.TakeAll() : std::vector<int>()) {
    ready_.push({ex->rec.priority * 8 + static_cast<int>(ex->steps[step].def->priority),
                 ready_seq_++, ex, step});
  }
  for (const std::string& child : RunningChildren(id)) (void)Resume(child);
  return Status::Ok();
}

}  // namespace baton
