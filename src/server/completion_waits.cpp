#include "server/completion_waits.h"

#include <utility>

namespace baton::server {

CompletionWaits::Ticket CompletionWaits::Expect(const std::string& execution_id, Answer answer) {
  const Ticket ticket = next_++;
  Waiter w;
  w.execution_id = execution_id;
  w.answer = std::move(answer);
  waiters_.emplace(ticket, std::move(w));
  by_execution_.emplace(execution_id, ticket);
  return ticket;
}

void CompletionWaits::Arm(Ticket ticket, Duration wait, Engine& engine) {
  auto it = waiters_.find(ticket);
  if (it == waiters_.end()) return;
  Waiter& w = it->second;
  w.armed = true;
  if (w.final) {
    const ExecutionRecord record = std::move(*w.final);
    return Answer1(ticket, &record, true);
  }
  std::optional<ExecutionRecord> now = engine.Record(w.execution_id);
  if (!now) return Answer1(ticket, nullptr, false);
  if (IsTerminal(now->status)) {
    // It ended before this waiter was registered (a repeated submit), in a batch that
    // may not be durable yet: the answer waits for that.
    engine.WhenDurable([this, ticket, record = std::move(*now)](const Status& durable) {
      Answer1(ticket, durable.ok() ? &record : nullptr, durable.ok());
    });
    return;
  }
  Engine* e = &engine;
  w.timer = loop_->ScheduleAfter(wait, [this, ticket, e] {
    auto found = waiters_.find(ticket);
    if (found == waiters_.end()) return;
    found->second.timer = 0;
    const std::optional<ExecutionRecord> record = e->Record(found->second.execution_id);
    Answer1(ticket, record ? &*record : nullptr, false);
  });
}

void CompletionWaits::Drop(Ticket ticket) {
  auto it = waiters_.find(ticket);
  if (it == waiters_.end()) return;
  if (it->second.timer) loop_->CancelTimer(it->second.timer);
  auto [b, e] = by_execution_.equal_range(it->second.execution_id);
  for (auto i = b; i != e; ++i) {
    if (i->second == ticket) {
      by_execution_.erase(i);
      break;
    }
  }
  waiters_.erase(it);
}

void CompletionWaits::Answer1(Ticket ticket, const ExecutionRecord* record, bool final) {
  auto it = waiters_.find(ticket);
  if (it == waiters_.end()) return;
  Answer answer = std::move(it->second.answer);
  Drop(ticket);  // before answering: the answer may register another waiter
  answer(record, final);
}

std::function<void()> CompletionWaits::OnFinish(const ExecutionRecord& execution,
                                                const WorkflowDef& /*workflow*/,
                                                WriteBatch& /*batch*/) {
  auto [b, e] = by_execution_.equal_range(execution.id);
  if (b == e) return nullptr;  // the common case: nobody waits
  std::vector<Ticket> tickets;
  for (auto i = b; i != e; ++i) tickets.push_back(i->second);
  return [this, tickets = std::move(tickets), record = execution] { Finished(tickets, record); };
}

void CompletionWaits::Finished(const std::vector<Ticket>& tickets, const ExecutionRecord& record) {
  for (Ticket ticket : tickets) {
    auto it = waiters_.find(ticket);
    if (it == waiters_.end()) continue;
    if (it->second.armed) {
      Answer1(ticket, &record, true);
    } else {
      it->second.final = record;  // its start's durability is still being reported
    }
  }
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
