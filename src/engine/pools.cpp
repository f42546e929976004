// Pools: named sets of slots shared by every workflow of a namespace (Airflow's pools).
// An attempt of a step with `pool: NAME` starts only once `pool_slots` slots are free and
// holds them until it ends; waiting steps stay `ready`, taken by priority, then in order.
//
// Slots in use are derived, never stored: they are taken at dispatch and given back in
// Release(), which every end of an attempt goes through (completion, failure, timeout,
// cancel); after a restart the attempts re-attached take theirs again, and a store error
// that drops executions from memory drops their slots with them.
#include "engine/engine_impl.h"

namespace baton {

using engine::ExecState;
using engine::StepState;

namespace {
std::string Holder(const ExecState& ex, int step) {
  return ex.rec.id + "/" + ex.steps[step].def->id;
}
}  // namespace

bool Engine::Impl::TakePoolSlots(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  if (st.guards && st.guards->pool_held > 0) return true;  // given when it was woken
  const std::string& name = st.def->extra().pool;
  auto fail = [&](const std::string& code, const std::string& message) {
    PinAssignment(*ex, st);
    st.rec.attempts += 1;
    st.rec.started_at = loop_->Now();
    FailAttempt(ex, step, StepStatus::kFailed, Status(code, message), {{"pool", name}});
  };
  auto it = pools_.find({ex->rec.ns, name});
  if (it == pools_.end() || !it->second.defined) {
    fail(errc::kNotFound, "no pool '" + name + "' in namespace '" + ex->rec.ns +
                              "' (create it: POST /api/v1/pools, or baton run --pool " + name +
                              "=N)");
    return false;
  }
  PoolState& pool = it->second;
  const int n = st.def->extra().pool_slots;
  if (n > pool.rec.slots) {
    fail(errc::kValidation, "asks for " + std::to_string(n) + " slots of pool '" + name +
                                "', which has " + std::to_string(pool.rec.slots));
    return false;
  }
  // Shared by several instances, the room is counted in the store; a step does not
  // overtake one waiting here.
  const bool room = options_.shared_pools != nullptr
                        ? pool.waiting.empty() && HoldSharedSlots(*ex, step, pool, false)
                        : pool.used + n <= pool.rec.slots;
  if (!room) {
    if (!st.Guards().pool_waiting) {
      st.guards->pool_waiting = true;
      pool.waiting.insert(
          {-(ex->rec.priority * 8 + static_cast<int>(st.def->priority)), ready_seq_++, ex, step});
      Emit(*ex, "step.waiting", step, {{"pool", name}, {"slots", n}});
    }
    if (options_.shared_pools != nullptr) ArmSharedSlotRetry();
    return false;
  }
  pool.used += n;
  pool.holders.push_back(Holder(*ex, step));
  st.Guards().pool_held = n;
  return true;
}

void Engine::Impl::HoldPoolSlots(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  if (st.def->extra().pool.empty() || (st.guards && st.guards->pool_held > 0)) return;
  // It held them before the restart: it keeps them, even past a size lowered since.
  PoolState& pool = pools_[{ex->rec.ns, st.def->extra().pool}];
  if (options_.shared_pools != nullptr) HoldSharedSlots(*ex, step, pool, true);
  pool.used += st.def->extra().pool_slots;
  pool.holders.push_back(Holder(*ex, step));
  st.Guards().pool_held = st.def->extra().pool_slots;
}

void Engine::Impl::ReturnPoolSlots(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  auto it = pools_.find({ex->rec.ns, st.def->extra().pool});
  if (it == pools_.end()) return;
  PoolState& pool = it->second;
  if (st.guards->pool_waiting) {  // ended (cancelled) while waiting
    st.guards->pool_waiting = false;
    for (auto w = pool.waiting.begin(); w != pool.waiting.end(); ++w) {
      if (std::get<2>(*w) == ex && std::get<3>(*w) == step) {
        pool.waiting.erase(w);
        break;
      }
    }
  }
  if (st.guards->pool_held > 0) {
    if (options_.shared_pools != nullptr) {
      ReleaseShared({ex->rec.ns, st.def->extra().pool, Holder(*ex, step), st.guards->pool_held});
    }
    pool.used -= st.guards->pool_held;
    st.guards->pool_held = 0;
    std::erase(pool.holders, Holder(*ex, step));
    WakePoolWaiters(pool);
  }
}

void Engine::Impl::WakePoolWaiters(PoolState& pool) {
  // In order, as long as the next one fits: a big request is not overtaken by small ones.
  while (!pool.waiting.empty()) {
    auto [priority, seq, ex, step] = *pool.waiting.begin();
    StepState& st = ex->steps[step];
    const bool gone = ex->finished || st.rec.status != StepStatus::kReady;
    if (!gone && (options_.shared_pools != nullptr
                      ? !HoldSharedSlots(*ex, step, pool, false)
                      : pool.used + st.def->extra().pool_slots > pool.rec.slots)) {
      break;
    }
    pool.waiting.erase(pool.waiting.begin());
    st.guards->pool_waiting = false;
    if (gone) continue;
    // The slots are its own from now (so nothing overtakes it before it dispatches);
    // Release() gives them back should it end without running.
    pool.used += st.def->extra().pool_slots;
    pool.holders.push_back(Holder(*ex, step));
    st.guards->pool_held = st.def->extra().pool_slots;
    pool_woken_.emplace_back(ex, step);
  }
}

bool Engine::Impl::HoldSharedSlots(const ExecState& ex, int step, const PoolState& pool,
                                   bool force) {
  const StepDef& def = *ex.steps[step].def;
  Result<bool> held = options_.shared_pools->HoldSlots(
      {ex.rec.ns, def.extra().pool, Holder(ex, step), def.extra().pool_slots}, pool.rec.slots,
      force);
  return held.ok() && *held;
}

void Engine::Impl::ArmSharedSlotRetry() {
  if (shared_retry_armed_) return;
  shared_retry_armed_ = true;
  loop_->ScheduleAfter(Duration(250), [this, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired()) return;
    shared_retry_armed_ = false;
    TurnGuard turn(this);
    bool waiting = false;
    for (auto& [key, pool] : pools_) {
      if (pool.waiting.empty()) continue;
      WakePoolWaiters(pool);
      waiting = waiting || !pool.waiting.empty();
    }
    RetryReleases();
    waiting = waiting || !unreleased_.empty();
    // Admitting may finish executions, which changes concurrency_: walk a copy of the keys.
    std::vector<std::string> queued;
    for (const auto& [group, g] : concurrency_) {
      if (!g.queued.empty()) queued.push_back(group);
    }
    for (const std::string& group : queued) {
      WakeSharedGroup(group);
      auto it = concurrency_.find(group);
      waiting = waiting || (it != concurrency_.end() && !it->second.queued.empty());
    }
    if (waiting) ArmSharedSlotRetry();
  });
}

void Engine::Impl::ReleaseShared(PoolHold hold) {
  if (options_.shared_pools->ReleaseSlots(hold).ok()) return;
  unreleased_.push_back(std::move(hold));
  ArmSharedSlotRetry();
}

void Engine::Impl::RetryReleases() {
  std::vector<PoolHold> pending;
  pending.swap(unreleased_);
  for (PoolHold& hold : pending) {
    // Held again meanwhile (an execution retried, a step run again): it is not ours to
    // give back any more.
    const size_t slash = hold.holder.find('/');
    ExecPtr ex = Find(hold.holder.substr(0, slash));
    bool again = false;
    if (ex && slash == std::string::npos) {
      again = ex->holds_group_slot;
    } else if (ex) {
      const std::string step = hold.holder.substr(slash + 1);
      for (const StepState& st : ex->steps) {
        if (st.def->id == step) again = st.guards && st.guards->pool_held > 0;
      }
    }
    if (again) continue;
    if (!options_.shared_pools->ReleaseSlots(hold).ok()) unreleased_.push_back(std::move(hold));
  }
}

void Engine::Impl::DispatchPoolWoken() {
  std::vector<std::pair<ExecPtr, int>> woken;
  woken.swap(pool_woken_);
  for (auto& [ex, step] : woken) {
    StepState& st = ex->steps[step];
    if (ex->finished || st.rec.status != StepStatus::kReady) continue;
    if (ex->paused()) {
      ex->More().parked.push_back(step);
    } else if (st.uses_capacity) {
      ready_.push(
          {ex->rec.priority * 8 + static_cast<int>(st.def->priority), ready_seq_++, ex, step});
    } else {
      Dispatch(ex, step);
    }
  }
}

Status Engine::Impl::SetPool(const PoolRecord& record) {
  TurnGuard turn(this);
  PoolState& pool = pools_[{record.ns, record.name}];
  PoolRecord stored = record;
  if (pool.defined && pool.rec.created_at) stored.created_at = pool.rec.created_at;
  if (!stored.created_at) stored.created_at = loop_->Now();
  stored.updated_at = loop_->Now();
  pool.rec = stored;
  pool.defined = true;
  batch_.pools.push_back(stored);
  WakePoolWaiters(pool);  // a bigger pool lets more in
  return Status::Ok();
}

Status Engine::Impl::RemovePool(const std::string& ns, const std::string& name) {
  auto it = pools_.find({ns, name});
  if (it == pools_.end() || !it->second.defined) {
    return Status(errc::kNotFound, "no pool '" + name + "' in namespace '" + ns + "'");
  }
  TurnGuard turn(this);
  PoolState& pool = it->second;
  pool.defined = false;  // holders keep their slots until they end
  std::vector<std::pair<ExecPtr, int>> stranded;
  for (const auto& [priority, seq, ex, step] : pool.waiting) stranded.emplace_back(ex, step);
  pool.waiting.clear();
  for (auto& [ex, step] : stranded) {
    ex->steps[step].guards->pool_waiting = false;
    if (!ex->finished && ex->steps[step].rec.status == StepStatus::kReady) {
      TakePoolSlots(ex, step);  // fails it: the pool is gone
    }
  }
  return Status::Ok();
}

void Engine::Impl::AdoptPools(std::vector<PoolRecord> records) {
  for (PoolRecord& r : records) {
    PoolState& pool = pools_[{r.ns, r.name}];
    pool.rec = std::move(r);
    pool.defined = true;
  }
}

void Engine::Impl::MergePools(std::vector<PoolRecord> stored) {
  TurnGuard turn(this);
  std::set<std::pair<std::string, std::string>> listed;
  for (PoolRecord& r : stored) {
    listed.insert({r.ns, r.name});
    PoolState& pool = pools_[{r.ns, r.name}];
    if (pool.defined && pool.rec.updated_at >= r.updated_at) continue;  // as new here
    pool.rec = std::move(r);
    pool.defined = true;
    WakePoolWaiters(pool);  // a bigger pool lets more in
  }
  // Removed through another instance: unless changed here lately (not durable yet).
  const TimeMs settled = loop_->Now() - 10'000;
  std::vector<std::pair<std::string, std::string>> removed;
  for (const auto& [key, pool] : pools_) {
    if (pool.defined && !listed.count(key) && pool.rec.updated_at < settled) removed.push_back(key);
  }
  for (const auto& [ns, name] : removed) (void)RemovePool(ns, name);
}

std::vector<PoolUsage> Engine::Impl::ListPools(const std::string& ns) const {
  std::vector<PoolUsage> out;
  for (const auto& [key, pool] : pools_) {
    if (!pool.defined || (!ns.empty() && key.first != ns)) continue;
    PoolUsage& u = out.emplace_back();
    u.pool = pool.rec;
    u.used = pool.used;
    if (options_.shared_pools != nullptr) {  // every instance's holders
      Result<int64_t> held = options_.shared_pools->SlotsHeld(key.first, key.second);
      if (held.ok()) u.used = static_cast<int>(*held);
    }
    u.holders = pool.holders;
    u.waiting = pool.waiting.size();
  }
  return out;
}

void Engine::Impl::DropPoolSlots() {
  // Taken again as the executions are re-adopted (HoldPoolSlots); a failure leaves the
  // holds to lapse.
  if (options_.shared_pools != nullptr && options_.shared_pools->ReleaseAllSlots().ok()) {
    unreleased_.clear();
  }
  for (auto& [key, pool] : pools_) {
    pool.used = 0;
    pool.holders.clear();
    pool.waiting.clear();
  }
  pool_woken_.clear();
}

}  // namespace baton
