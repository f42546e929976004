// Engine, the public facade (include/baton/engine.h): each call forwards to Engine::Impl
// (engine_impl.h), on the engine's loop thread where the header says so.
#include "engine/engine_impl.h"

#include <utility>

namespace baton {

Engine::Engine(EventLoop* loop, Committer* committer, EngineOptions options)
    : impl_(std::make_unique<Impl>(loop, committer, options)) {}
Engine::~Engine() = default;

void Engine::SetRunner(StepType type, Runner* runner) {
  impl_->runners_[type] = runner;
}
void Engine::AddObserver(ExecutionObserver* observer, ObserverThread thread) {
  (thread == ObserverThread::kCommit ? impl_->commit_observers_ : impl_->observers_)
      .push_back(observer);
}
Result<std::string> Engine::Start(StartRequest request) {
  return impl_->Start(std::move(request));
}
Status Engine::Recover(const ExecutionRecord& execution, const std::vector<StepRecord>& steps,
                       const std::vector<AttemptRecord>& attempts, int64_t last_event_seq,
                       const std::vector<SignalRecord>& signals) {
  return impl_->Recover(execution, steps, attempts, last_event_seq, signals);
}
Status Engine::Retry(const ExecutionRecord& execution, const std::vector<StepRecord>& steps,
                     const std::vector<AttemptRecord>& attempts, int64_t last_event_seq,
                     const std::vector<SignalRecord>& signals, const std::string& from_step,
                     const std::vector<DeadLetterRecord>& dead_letters) {
  return impl_->Retry(execution, steps, attempts, last_event_seq, signals, from_step, dead_letters);
}
Result<std::vector<StepWait>> Engine::Why(const std::string& execution_id) const {
  return impl_->Why(execution_id);
}
Result<SignalRecord> Engine::Signal(const std::string& execution_id, const std::string& name,
                                    Json payload) {
  return impl_->Signal(execution_id, name, std::move(payload));
}
Status Engine::Cancel(const std::string& id, const std::string& reason) {
  return impl_->Cancel(id, reason);
}
bool Engine::RecordStaleResult(const std::string& execution_id, const std::string& step_id,
                               Json details) {
  return impl_->RecordStepNote(execution_id, step_id, "step.stale_result", std::move(details));
}
bool Engine::RecordReassignment(const std::string& execution_id, const std::string& step_id,
                                Json details) {
  return impl_->RecordStepNote(execution_id, step_id, "step.reassigned", std::move(details));
}
int64_t Engine::TakeEventPosition() {
  return ++impl_->last_position_;
}
Status Engine::Pause(const std::string& id) {
  return impl_->Pause(id);
}
Status Engine::Resume(const std::string& id) {
  return impl_->Resume(id);
}
void Engine::WhenDurable(std::function<void(const Status&)> done) {
  Impl& impl = *impl_;
  // Every batch submitted so far is durable once the last one is (committers keep order).
  if (impl.durable_waiters_.empty() && impl.batches_submitted_ == impl.batches_durable_) {
    impl.loop_->Post([done = std::move(done)] { done(Status::Ok()); });
    return;
  }
  impl.durable_waiters_.emplace_back(impl.batches_submitted_, std::move(done));
}
void Engine::WhenDurableOffLoop(std::function<void(const Status&)> done) {
  Impl& impl = *impl_;
  {
    std::lock_guard lock(impl.off_loop_mu_);
    if (impl.off_loop_finished_ < impl.batches_submitted_) {
      impl.off_loop_waiters_.emplace_back(impl.batches_submitted_, std::move(done));
      return;
    }
  }
  // Finished before the caller got here (its outcome is the loop's to tell).
  WhenDurable(std::move(done));
}
void Engine::AdoptCache(std::vector<CacheEntryRecord> entries) {
  impl_->AdoptCache(std::move(entries));
}
void Engine::MergeCache(std::vector<CacheEntryRecord> entries,
                        const std::vector<CacheKey>& deleted) {
  impl_->MergeCache(std::move(entries), deleted);
}
std::vector<CacheEntryRecord> Engine::CacheEntries(const std::string& ns,
                                                   const std::string& workflow,
                                                   const std::string& step_id) const {
  std::vector<CacheEntryRecord> out;
  for (const CacheEntryRecord* e : impl_->cache_.List(ns, workflow, step_id)) out.push_back(*e);
  return out;
}
void Engine::AdoptPools(std::vector<PoolRecord> pools) {
  impl_->AdoptPools(std::move(pools));
}

void Engine::MergePools(std::vector<PoolRecord> stored) {
  impl_->MergePools(std::move(stored));
}
Status Engine::SetPool(const PoolRecord& pool) {
  return impl_->SetPool(pool);
}
Status Engine::RemovePool(const std::string& ns, const std::string& name) {
  return impl_->RemovePool(ns, name);
}
std::vector<PoolUsage> Engine::Pools(const std::string& ns) const {
  return impl_->ListPools(ns);
}
Result<size_t> Engine::ClearCache(const std::string& ns, const std::string& key,
                                  const std::string& workflow, const std::string& step_id) {
  return impl_->ClearCache(ns, key, workflow, step_id);
}
void Engine::AdoptBreakers(std::vector<BreakerRecord> breakers) {
  impl_->AdoptBreakers(std::move(breakers));
}
void Engine::MergeBreakers(std::vector<BreakerRecord> stored) {
  impl_->MergeBreakers(std::move(stored));
}
std::vector<BreakerRecord> Engine::Breakers(const std::string& ns) const {
  return impl_->ListBreakers(ns);
}
Result<BreakerRecord> Engine::ResetBreaker(const std::string& ns, const std::string& key) {
  return impl_->ResetBreaker(ns, key);
}
void Engine::SetLastEventPosition(int64_t last) {
  impl_->last_position_ = std::max(impl_->last_position_, last);
}
size_t Engine::ActiveCount() const {
  return impl_->active_;
}
std::optional<ExecutionProgress> Engine::Progress(const std::string& id) const {
  auto ex = impl_->Find(id);
  if (!ex) return std::nullopt;
  return impl_->ProgressOf(*ex);
}
std::optional<ExecutionRecord> Engine::Record(const std::string& id) const {
  auto ex = impl_->Find(id);
  if (!ex) return std::nullopt;
  return ex->Record();
}
std::vector<std::string> Engine::TakeAbandoned() {
  return std::exchange(impl_->abandoned_, {});
}
Status Engine::Evict(const std::string& id) {
  return impl_->Evict(id);
}
LiveExecutions Engine::LiveCounts() const {
  LiveExecutions live;
  live.running = impl_->live_counts_[1].load(std::memory_order_relaxed);
  live.paused = impl_->live_counts_[2].load(std::memory_order_relaxed);
  live.queued = impl_->live_counts_[3].load(std::memory_order_relaxed);
  return live;
}

EngineStats Engine::Stats() const {
  EngineStats s = impl_->stats_;
  s.ready_queue_depth = impl_->ready_.size();
  s.active_executions = impl_->active_;
  s.cache_entries = impl_->cache_.size();
  s.cache_bytes = impl_->cache_.bytes();
  return s;
}

}  // namespace baton
