#include "server/completion_waits.h"

#include "server/triggers/follow_ups.h"

#include <utility>

namespace baton::server {
namespace {

bool IsTerminalExecutionEvent(const EventRecord& event) {
  return event.step_id.empty() && IsTerminalEventName(event.type);
}

}  // namespace

CompletionWaits::Ticket CompletionWaits::Expect(const std::string& execution_id, Answer answer) {
  CancelStaleTimers();
  std::lock_guard lock(mu_);
  const Ticket ticket = next_++;
  Waiter w;
  w.execution_id = execution_id;
  w.answer = std::move(answer);
  waiters_.emplace(ticket, std::move(w));
  by_execution_.emplace(execution_id, ticket);
  count_.fetch_add(1, std::memory_order_relaxed);
  return ticket;
}

void CompletionWaits::Arm(Ticket ticket, Duration wait, Engine& engine) {
  CancelStaleTimers();
  std::string id;
  std::optional<Taken> ended;
  {
    std::lock_guard lock(mu_);
    auto it = waiters_.find(ticket);
    if (it == waiters_.end()) return;
    it->second.armed = true;
    if (it->second.durable) {
      ended = TakeLocked(it);
    } else {
      id = it->second.execution_id;
    }
  }
  if (ended) return ended->answer(ended->record.get(), true);
  // Its end is either still to come, or being committed (a repeated submit that came
  // after it): the engine's record says which.
  std::optional<ExecutionRecord> now = engine.Record(id);
  if (now && IsTerminal(now->status)) {
    engine.WhenDurable([this, ticket, record = std::move(*now)](const Status& durable) {
      AnswerIfWaiting(ticket, durable.ok() ? &record : nullptr, durable.ok());
    });
    return;
  }
  if (!now) return AnswerIfWaiting(ticket, nullptr, false);
  const TimerId timer = loop_->ScheduleAfter(wait, [this, ticket, e = &engine] {
    std::string execution_id;
    {
      std::lock_guard lock(mu_);
      auto it = waiters_.find(ticket);
      if (it == waiters_.end()) return;
      it->second.timer = 0;
      execution_id = it->second.execution_id;
    }
    // The wait passed: its state now. One whose end is being committed is answered
    // once that is durable (by its event, or here should the commit fail).
    std::optional<ExecutionRecord> record = e->Record(execution_id);
    if (record && IsTerminal(record->status)) {
      e->WhenDurable([this, ticket, ended = std::move(*record)](const Status& durable) {
        AnswerIfWaiting(ticket, durable.ok() ? &ended : nullptr, durable.ok());
      });
      return;
    }
    AnswerIfWaiting(ticket, record ? &*record : nullptr, false);
  });
  std::lock_guard lock(mu_);
  auto it = waiters_.find(ticket);
  if (it != waiters_.end()) {
    it->second.timer = timer;
  } else {
    stale_timers_.push_back(timer);  // answered on the committing thread meanwhile
  }
}

void CompletionWaits::AnswerIfWaiting(Ticket ticket, const ExecutionRecord* record, bool final) {
  std::optional<Taken> taken;
  {
    std::lock_guard lock(mu_);
    auto it = waiters_.find(ticket);
    if (it == waiters_.end()) return;  // answered already (on the committing thread)
    taken = TakeLocked(it);
  }
  taken->answer(record, final);
}

void CompletionWaits::Drop(Ticket ticket) {
  {
    std::lock_guard lock(mu_);
    auto it = waiters_.find(ticket);
    if (it == waiters_.end()) return;
    TakeLocked(it);
  }
  CancelStaleTimers();
}

void CompletionWaits::DropAll() {
  std::map<Ticket, Waiter> dropped;  // destroyed outside the lock
  {
    std::lock_guard lock(mu_);
    dropped.swap(waiters_);
    by_execution_.clear();
    stale_timers_.clear();
    count_.store(0, std::memory_order_relaxed);
  }
}

size_t CompletionWaits::waiting() const {
  std::lock_guard lock(mu_);
  return waiters_.size();
}

CompletionWaits::Taken CompletionWaits::TakeLocked(std::map<Ticket, Waiter>::iterator it) {
  Taken taken{std::move(it->second.answer), std::move(it->second.ending)};
  if (it->second.timer != 0) stale_timers_.push_back(it->second.timer);
  auto [b, e] = by_execution_.equal_range(it->second.execution_id);
  for (auto i = b; i != e; ++i) {
    if (i->second == it->first) {
      by_execution_.erase(i);
      break;
    }
  }
  waiters_.erase(it);
  count_.fetch_sub(1, std::memory_order_relaxed);
  return taken;
}

void CompletionWaits::CancelStaleTimers() {
  std::vector<TimerId> stale;
  {
    std::lock_guard lock(mu_);
    if (stale_timers_.empty()) return;
    stale.swap(stale_timers_);
  }
  for (TimerId timer : stale) loop_->CancelTimer(timer);
}

std::function<void()> CompletionWaits::OnFinish(const ExecutionRecord& execution,
                                                const WorkflowDef& /*workflow*/,
                                                WriteBatch& /*batch*/) {
  if (count_.load(std::memory_order_relaxed) == 0) return nullptr;  // nobody waits
  CancelStaleTimers();
  std::lock_guard lock(mu_);
  auto [b, e] = by_execution_.equal_range(execution.id);
  if (b == e) return nullptr;
  auto ending = std::make_shared<const ExecutionRecord>(execution);
  for (auto i = b; i != e; ++i) waiters_.at(i->second).ending = ending;
  return nullptr;
}

void CompletionWaits::OnEvent(const EventRecord& event, const ExecutionProgress& /*progress*/) {
  if (count_.load(std::memory_order_relaxed) == 0 || !IsTerminalExecutionEvent(event)) return;
  std::vector<Taken> ended;
  {
    std::lock_guard lock(mu_);
    auto [b, e] = by_execution_.equal_range(event.execution_id);
    std::vector<Ticket> tickets;
    for (auto i = b; i != e; ++i) tickets.push_back(i->second);
    for (Ticket ticket : tickets) {
      auto it = waiters_.find(ticket);
      if (!it->second.ending) continue;  // registered after its end: Arm handles it
      // An end kept aside that is not this event's (the execution was retried and ended
      // again meanwhile) waits for its own event.
      if (event.type != TerminalEvent(it->second.ending->status)) continue;
      if (it->second.armed) {
        ended.push_back(TakeLocked(it));
      } else {
        it->second.durable = true;  // its start's durability is still being reported
      }
    }
  }
  for (Taken& t : ended) t.answer(t.record.get(), true);
}

std::function<void()> FinishHooks::OnFinish(const ExecutionRecord& execution,
                                            const WorkflowDef& workflow, WriteBatch& batch) {
  std::vector<std::function<void()>> after;
  for (FinishHook* hook : hooks_) {
    if (auto f = hook->OnFinish(execution, workflow, batch)) after.push_back(std::move(f));
  }
  if (after.empty()) return nullptr;
  if (after.size() == 1) return std::move(after.front());
  return [after = std::move(after)] {
    for (const auto& f : after) f();
  };
}

}  // namespace baton::server
