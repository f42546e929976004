// Concurrency limits: a workflow's `concurrency: {limit, key, policy}` and the engine's
// max_running_executions. An execution over a limit waits `queued` (no step starts),
// highest priority first, then first come first served, or is cancelled per the policy.
//
// Slots are derived from executions in memory, never stored: a slot is held from the
// admission of an execution until it finishes (FinishExecution) or is dropped (a store
// error), and after a restart the running executions take theirs again before any
// queued one is admitted. So no crash, cancel, timeout or store error can leak one.
//
// With several instances on one database (EngineOptions::shared_pools), a workflow's
// limit bounds them all: each admitted execution also holds a slot in the store, leased
// with its instance (a hold whose instance died lapses), and executions queued here try
// again every quarter second, in their order here. max_running_executions stays this
// engine's own: it is the capacity of one instance.
#include "engine/engine_impl.h"

#include "expr/template.h"

namespace baton {

using engine::ExecState;

namespace {

bool CountsGlobally(const ExecState& ex) {
  return ex.ParentId().empty();  // children: their parents wait for them
}

}  // namespace

Result<std::string> Engine::Impl::ConcurrencyGroupOf(const ExecState& ex) const {
  if (!ex.def->concurrency) return std::string();
  std::string key = ex.def->concurrency->key;
  if (expr::HasTemplates(Json(key))) {
    engine::ExecScope scope(ex);
    Result<Json> rendered = expr::Render(Json(key), scope);
    if (!rendered.ok()) return rendered.status();
    key = rendered->is_string() ? rendered->get<std::string>() : rendered->dump();
  }
  return ex.rec.ns + "\n" + ex.def->name + "\n" + key;
}

bool Engine::Impl::Admit(const ExecPtr& ex) {
  if (ex->ConcurrencyGroup().empty() && ex->def->concurrency) {
    Result<std::string> group = ConcurrencyGroupOf(*ex);
    if (!group.ok()) {
      FinishExecution(ex, ExecutionStatus::kFailed,
                      {{"code", errc::kTemplateError},
                       {"message", "concurrency key: " + group.status().message()}});
      return false;
    }
    ex->More().concurrency_group = std::move(group.value());
  }
  if (!ex->ConcurrencyGroup().empty() && !ex->holds_group_slot &&
      options_.shared_pools != nullptr) {
    if (!AdmitToSharedGroup(ex, *ex->def->concurrency)) return false;
  } else if (!ex->ConcurrencyGroup().empty() && !ex->holds_group_slot) {
    const ConcurrencySpec& spec = *ex->def->concurrency;
    if (ConcurrencyGroup& g = concurrency_[ex->ConcurrencyGroup()];
        static_cast<int>(g.running.size()) >= spec.limit &&
        spec.policy == ConcurrencyPolicy::kCancelOldest) {
      ++stats_.concurrency_cancelled;
      // Cancelling frees its slot (and may drop the group: look it up again below).
      (void)Cancel(g.running.front(),
                   "replaced by execution " + ex->rec.id + " (concurrency: cancel_oldest)");
    }
    ConcurrencyGroup& g = concurrency_[ex->ConcurrencyGroup()];
    if (static_cast<int>(g.running.size()) >= spec.limit) {
      if (spec.policy == ConcurrencyPolicy::kCancelNewest) {
        ++stats_.concurrency_cancelled;
        CancelOpenSteps(ex, "concurrency limit reached");
        FinishExecution(ex, ExecutionStatus::kCancelled,
                        {{"code", errc::kConcurrencyLimit},
                         {"message", "workflow '" + ex->def->name + "' already runs " +
                                         std::to_string(g.running.size()) +
                                         " execution(s) of its concurrency key (limit " +
                                         std::to_string(spec.limit) + ", cancel_newest)"}});
        return false;
      }
      Enqueue(ex, &g.queued);
      return false;
    }
    g.running.push_back(ex->rec.id);
    ex->holds_group_slot = true;
  }
  if (options_.max_running_executions > 0 && CountsGlobally(*ex) && !ex->holds_global_slot) {
    if (running_top_ >= static_cast<size_t>(options_.max_running_executions)) {
      Enqueue(ex, &global_queue_);
      return false;
    }
    ++running_top_;
    ex->holds_global_slot = true;
  }
  if (ex->rec.status == ExecutionStatus::kQueued) {
    --stats_.executions_queued;
    ex->rec.status = ExecutionStatus::kRunning;
    MarkDirty(ex);
    Emit(*ex, "execution.dequeued", -1);
  }
  return true;
}

PoolHold Engine::Impl::GroupHold(const ExecState& ex) const {
  // The group is "namespace\nworkflow\nkey": the pool, "concurrency\nworkflow\nkey", is
  // a name no user pool can have.
  const std::string& group = ex.ConcurrencyGroup();
  return {ex.rec.ns, "concurrency" + group.substr(group.find('\n')), ex.rec.id, 1};
}

Engine::Impl::SharedHold Engine::Impl::HoldGroupSlot(const ExecState& ex, bool force) {
  Result<bool> held =
      options_.shared_pools->HoldSlots(GroupHold(ex), ex.def->concurrency->limit, force);
  if (!held.ok()) return SharedHold::kStoreError;
  return *held ? SharedHold::kHeld : SharedHold::kFull;
}

void Engine::Impl::DropEmptyGroup(const std::string& group) {
  auto it = concurrency_.find(group);
  if (it != concurrency_.end() && it->second.running.empty() && it->second.queued.empty()) {
    concurrency_.erase(it);
  }
}

bool Engine::Impl::AdmitToSharedGroup(const ExecPtr& ex, const ConcurrencySpec& spec) {
  // Not ahead of one queued here: it waits behind. The store not answering is not a full
  // key either: the execution waits queued and tries again, whatever the policy.
  SharedHold result = SharedHold::kStoreError;  // stands for "waits" until tried
  if (concurrency_[ex->ConcurrencyGroup()].queued.empty()) result = HoldGroupSlot(*ex, false);
  if (result == SharedHold::kFull && spec.policy == ConcurrencyPolicy::kCancelOldest) {
    const PoolHold hold = GroupHold(*ex);
    Result<std::vector<std::string>> holders = options_.shared_pools->Holders(hold.ns, hold.pool);
    if (holders.ok() && !holders->empty()) {
      ++stats_.concurrency_cancelled;
      const std::string& oldest = holders->front();
      const std::string reason =
          "replaced by execution " + ex->rec.id + " (concurrency: cancel_oldest)";
      if (Find(oldest) != nullptr) {
        (void)Cancel(oldest, reason);  // gives its slot back now
        result = HoldGroupSlot(*ex, false);
      } else if (options_.cancel_elsewhere) {
        // Its instance cancels it; this one waits queued for the slot meanwhile.
        options_.cancel_elsewhere(oldest, reason);
      }
    }
  }
  if (result == SharedHold::kFull && spec.policy == ConcurrencyPolicy::kCancelNewest) {
    ++stats_.concurrency_cancelled;
    CancelOpenSteps(ex, "concurrency limit reached");
    FinishExecution(
        ex, ExecutionStatus::kCancelled,
        {{"code", errc::kConcurrencyLimit},
         {"message",
          "workflow '" + ex->def->name + "' already runs its concurrency key's limit of " +
              std::to_string(spec.limit) + " execution(s) across instances (cancel_newest)"}});
    DropEmptyGroup(ex->ConcurrencyGroup());
    return false;
  }
  // Cancelling may have dropped the group: look it up again.
  ConcurrencyGroup& g = concurrency_[ex->ConcurrencyGroup()];
  if (result != SharedHold::kHeld) {
    Enqueue(ex, &g.queued);
    ArmSharedSlotRetry();  // a slot may come free on another instance
    return false;
  }
  g.running.push_back(ex->rec.id);
  ex->holds_group_slot = true;
  return true;
}

void Engine::Impl::WakeSharedGroup(const std::string& group) {
  if (options_.shared_pools == nullptr) return;
  for (;;) {
    auto it = concurrency_.find(group);
    if (it == concurrency_.end()) return;
    ConcurrencyGroup& g = it->second;
    if (g.queued.empty()) {
      if (g.running.empty()) concurrency_.erase(it);
      return;
    }
    ExecPtr next = std::get<2>(*g.queued.begin());
    if (HoldGroupSlot(*next, false) != SharedHold::kHeld) return;
    g.queued.erase(g.queued.begin());
    next->More().waiting_in = nullptr;
    g.running.push_back(next->rec.id);
    next->holds_group_slot = true;
    if (!next->finished && Admit(next)) BeginSteps(next);
  }
}

void Engine::Impl::Enqueue(const ExecPtr& ex, WaitQueue* queue) {
  engine::ExecExtras& more = ex->More();
  more.waiting_in = queue;
  more.queue_seq = ready_seq_++;
  queue->insert({-ex->rec.priority, more.queue_seq, ex});
  if (ex->rec.status == ExecutionStatus::kQueued) return;  // moved on to the global queue
  ++stats_.executions_queued;
  ex->rec.status = ExecutionStatus::kQueued;
  MarkDirty(ex);
  Json data = {{"reason", queue == &global_queue_ ? "max_running" : "concurrency"}};
  if (queue != &global_queue_) data["limit"] = ex->def->concurrency->limit;
  Emit(*ex, "execution.queued", -1, std::move(data));
}

void Engine::Impl::RequeueRecovered(const ExecPtr& ex) {
  // Admitted (or refused) once every execution of the recovery is in memory, so that
  // the running ones hold their slots first.
  ++stats_.executions_queued;  // queued already: Enqueue does not count it again
  Enqueue(ex, &recovered_queue_);
  if (admit_posted_) return;
  admit_posted_ = true;
  loop_->Post([this, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired()) return;
    admit_posted_ = false;
    TurnGuard turn(this);
    WaitQueue recovered;
    recovered.swap(recovered_queue_);
    for (const auto& [priority, seq, queued] : recovered) {
      queued->More().waiting_in = nullptr;
      if (!queued->finished && Admit(queued)) BeginSteps(queued);
    }
  });
}

void Engine::Impl::HoldRecoveredSlots(const ExecPtr& ex) {
  // A running execution had its slots before the restart: it keeps them, even over a
  // limit lowered since.
  if (ex->def->concurrency) {
    Result<std::string> group = ConcurrencyGroupOf(*ex);
    if (group.ok()) {
      ex->More().concurrency_group = std::move(group.value());
      concurrency_[ex->ConcurrencyGroup()].running.push_back(ex->rec.id);
      ex->holds_group_slot = true;
      // A store error leaves it held here only; the limit may then be passed elsewhere.
      if (options_.shared_pools != nullptr) (void)HoldGroupSlot(*ex, true);
    }
  }
  if (options_.max_running_executions > 0 && CountsGlobally(*ex)) {
    ++running_top_;
    ex->holds_global_slot = true;
  }
}

void Engine::Impl::ReleaseSlots(const ExecPtr& ex) {
  if (WaitQueue* queue = ex->WaitingIn()) {  // finished while queued (cancelled)
    queue->erase({-ex->rec.priority, ex->extras->queue_seq, ex});
    ex->extras->waiting_in = nullptr;
    if (stats_.executions_queued > 0) --stats_.executions_queued;
  }
  std::vector<ExecPtr> next;
  bool wake_shared = false;
  if (ex->holds_group_slot) {
    ex->holds_group_slot = false;
    auto it = concurrency_.find(ex->ConcurrencyGroup());
    if (options_.shared_pools != nullptr) {
      // A failure leaves the hold to lapse (as a pool's: never more than the limit).
      ReleaseShared(GroupHold(*ex));
      if (it != concurrency_.end()) std::erase(it->second.running, ex->rec.id);
      wake_shared = true;
    } else if (it != concurrency_.end()) {
      ConcurrencyGroup& g = it->second;
      std::erase(g.running, ex->rec.id);
      if (!g.queued.empty()) {
        next.push_back(std::get<2>(*g.queued.begin()));
        g.queued.erase(g.queued.begin());
      } else if (g.running.empty()) {
        concurrency_.erase(it);
      }
    }
  }
  if (ex->holds_global_slot) {
    ex->holds_global_slot = false;
    --running_top_;
    if (!global_queue_.empty()) {
      next.push_back(std::get<2>(*global_queue_.begin()));
      global_queue_.erase(global_queue_.begin());
    }
  }
  for (const ExecPtr& waiting : next) {
    waiting->More().waiting_in = nullptr;
    if (!waiting->finished && Admit(waiting)) BeginSteps(waiting);
  }
  if (wake_shared) WakeSharedGroup(ex->ConcurrencyGroup());
  // Cancelled while queued, or refused: a group nobody holds or waits for goes.
  if (options_.shared_pools != nullptr && !ex->ConcurrencyGroup().empty()) {
    DropEmptyGroup(ex->ConcurrencyGroup());
  }
}

void Engine::Impl::DropAllSlots() {
  concurrency_.clear();
  global_queue_.clear();
  recovered_queue_.clear();
  running_top_ = 0;
  stats_.executions_queued = 0;
  children_.clear();
  DropPoolSlots();
}

bool Engine::Impl::DropFromMemory(const ExecPtr& ex,
                                  std::vector<std::pair<Runner*, std::string>>* cancels) {
  for (int step = 0; step < static_cast<int>(ex->steps.size()); ++step) {
    CollectInFlight(*ex, step, cancels);
    Release(ex, step);
  }
  if (!ex->finished) {
    ex->finished = true;
    if (active_ > 0) --active_;
  }
  SetLive(*ex, 0);
  auto it = executions_.find(ex->rec.id);
  if (it == executions_.end()) return false;
  deadlines_.DisarmAll(*ex);  // Release() ended them; none may outlive it
  executions_.erase(it);      // `ex` is the caller's: it outlives the erase
  return true;
}

Status Engine::Impl::Evict(const std::string& id) {
  auto it = executions_.find(id);
  if (it == executions_.end()) {
    return Status(errc::kNotFound, "execution " + id + " is not running here");
  }
  // Its child workflows go with it: they are held with it (leased through their root).
  std::vector<ExecPtr> family = {*it};
  for (size_t i = 0; i < family.size(); ++i) {
    for (const std::string& child : RunningChildren(family[i]->rec.id)) {
      if (ExecPtr c = Find(child)) family.push_back(std::move(c));
    }
  }
  std::vector<std::pair<Runner*, std::string>> cancels;
  {
    TurnGuard turn(this);  // its end dispatches what the freed slots allow
    for (const ExecPtr& ex : family) {
      ReleaseSlots(ex);
      DropFromMemory(ex, &cancels);
      children_.erase(ex->rec.id);
    }
  }
  for (const auto& [runner, assignment] : cancels) runner->Cancel(assignment);
  return Status::Ok();
}

std::vector<std::string> Engine::Impl::SlotHolders(const ExecState& ex) const {
  if (options_.shared_pools != nullptr && !ex.ConcurrencyGroup().empty()) {
    const PoolHold hold = GroupHold(ex);  // every instance's
    Result<std::vector<std::string>> holders = options_.shared_pools->Holders(hold.ns, hold.pool);
    if (holders.ok()) return std::move(holders.value());
  }
  auto it = concurrency_.find(ex.ConcurrencyGroup());
  return it == concurrency_.end() ? std::vector<std::string>{} : it->second.running;
}

}  // namespace baton
