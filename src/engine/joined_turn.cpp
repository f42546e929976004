// JoinedTurn: a message from outside and the engine's answer to it in one transaction.
//
// A worker's frame with an ack and a result used to cost two: the coordinator's batch
// (the assignment's last state) went to the committer at the end of the frame's task,
// which the idle writer thread took and fsynced at once, and the step's completion came
// a task later, when the posted inbox drain ran, in a transaction of its own behind the
// first. One fsync and two thread hops of a worker step's latency went there.
#include "engine/engine_impl.h"

#include <iterator>
#include <utility>

namespace baton {
namespace {

template <class T>
void Append(std::vector<T>& into, std::vector<T>&& from) {
  if (from.empty()) return;
  if (into.empty()) {
    into = std::move(from);
    return;
  }
  into.insert(into.end(), std::make_move_iterator(from.begin()),
              std::make_move_iterator(from.end()));
}

template <class T>
void AppendCopy(std::vector<T>& into, const std::vector<T>& from) {
  into.insert(into.end(), from.begin(), from.end());
}

// Every kind of record a held batch may carry (never events: see JoiningCommitter).
template <class Batch, class Each>
void ForEachKind(WriteBatch& into, Batch&& from, Each each) {
  each(into.workflows, std::forward<Batch>(from).workflows);
  each(into.executions, std::forward<Batch>(from).executions);
  each(into.steps, std::forward<Batch>(from).steps);
  each(into.attempts, std::forward<Batch>(from).attempts);
  each(into.dead_letters, std::forward<Batch>(from).dead_letters);
  each(into.tokens, std::forward<Batch>(from).tokens);
  each(into.schedules, std::forward<Batch>(from).schedules);
  each(into.hooks, std::forward<Batch>(from).hooks);
  each(into.triggers, std::forward<Batch>(from).triggers);
  each(into.deliveries, std::forward<Batch>(from).deliveries);
  each(into.workers, std::forward<Batch>(from).workers);
  each(into.assignments, std::forward<Batch>(from).assignments);
  each(into.reassignments, std::forward<Batch>(from).reassignments);
  each(into.signals, std::forward<Batch>(from).signals);
  each(into.breakers, std::forward<Batch>(from).breakers);
  each(into.pools, std::forward<Batch>(from).pools);
  each(into.cache_entries, std::forward<Batch>(from).cache_entries);
  each(into.cache_touches, std::forward<Batch>(from).cache_touches);
  each(into.cache_deletes, std::forward<Batch>(from).cache_deletes);
}

}  // namespace

// Loop thread only, as the coordinator that uses it.
class Engine::Impl::JoiningCommitter final : public Committer {
 public:
  explicit JoiningCommitter(Impl* impl) : impl_(impl) {}
  void Submit(std::shared_ptr<const WriteBatch> batch,
              std::function<void(const Status&)> done) override {
    if (!Holds(*batch)) return impl_->committer_->Submit(std::move(batch), std::move(done));
    impl_->held_.push_back(HeldBatch{std::move(batch), nullptr, std::move(done)});
  }
  void SubmitOwned(std::unique_ptr<WriteBatch> batch,
                   std::function<void(const Status&)> done) override {
    if (!Holds(*batch)) return impl_->committer_->SubmitOwned(std::move(batch), std::move(done));
    impl_->held_.push_back(HeldBatch{nullptr, std::move(batch), std::move(done)});
  }
  // Held batches are submitted first: after Flush, everything submitted has committed.
  void Flush() override {
    impl_->SubmitHeldDirectly();
    impl_->committer_->Flush();
  }
  CommitQueue::Stats stats() const override { return impl_->committer_->stats(); }
  void ClearFailure() override { impl_->committer_->ClearFailure(); }

 private:
  // Held while a JoinedTurn is open, and after it until the turn's batch takes what is
  // held (so that nothing overtakes it). A batch with events goes straight through, after
  // what is held: the engine's observers read its batch's events as the engine's own.
  bool Holds(const WriteBatch& batch) {
    if (impl_->joining_depth_ == 0 && impl_->held_.empty()) return false;
    if (batch.events.empty()) return true;
    impl_->SubmitHeldDirectly();
    return false;
  }
  Impl* impl_;
};

void Engine::Impl::BeginJoinedTurn() {
  ++joining_depth_;
  BeginTurn();
}

void Engine::Impl::EndJoinedTurn() {
  if (--joining_depth_ == 0) HandleReportsNow();
  EndTurn();
}

void Engine::Impl::HandleReportsNow() {
  std::vector<std::function<void()>> reports;
  {
    std::lock_guard lock(inbox_->mu);
    reports.swap(inbox_->reports);
  }
  for (auto& each : reports) each();
}

std::vector<std::function<void(const Status&)>> Engine::Impl::TakeHeld() {
  std::vector<HeldBatch> held = std::move(held_);
  held_.clear();
  std::vector<std::function<void(const Status&)>> dones;
  // After the turn's own records, in submission order. The held writers' rows are never
  // the engine's, except an assignment a runner's Prepare() put in this batch, which
  // the coordinator can only have written after that: its state must come last.
  for (HeldBatch& h : held) {
    if (h.owned) {
      ForEachKind(batch_, std::move(*h.owned),
                  [](auto& into, auto&& from) { Append(into, std::move(from)); });
    } else {
      ForEachKind(batch_, *h.shared, [](auto& into, const auto& from) { AppendCopy(into, from); });
    }
    if (h.done) dones.push_back(std::move(h.done));
  }
  return dones;
}

void Engine::Impl::SubmitHeldDirectly() {
  std::vector<HeldBatch> held = std::move(held_);
  held_.clear();
  for (HeldBatch& h : held) {
    if (h.owned) {
      committer_->SubmitOwned(std::move(h.owned), std::move(h.done));
    } else {
      committer_->Submit(std::move(h.shared), std::move(h.done));
    }
  }
}

Engine::JoinedTurn::JoinedTurn(Engine* engine) : engine_(engine) {
  engine_->impl_->BeginJoinedTurn();
}
Engine::JoinedTurn::~JoinedTurn() {
  engine_->impl_->EndJoinedTurn();
}

Committer* Engine::joining_committer() {
  if (!impl_->joining_committer_) {
    impl_->joining_committer_ = std::make_unique<Impl::JoiningCommitter>(impl_.get());
  }
  return impl_->joining_committer_.get();
}

}  // namespace baton
