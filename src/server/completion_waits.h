// Submits that wait for their execution's end (POST /api/v1/executions?wait=MS): a
// waiter gets the execution's record once its terminal state is durable, or, when the
// wait passes first, the record as the engine holds it then.
//
// A waiter is registered (Expect) before the execution can end: for a new start, on the
// engine thread in the turn that started it; then armed (Arm) once the start is durable.
// Its end may come in between (the start's commit is slow to be reported): Arm then
// answers at once. A waiter is answered once, or dropped (Drop) without an answer.
//
// Threading: engine thread only. OnFinish is called there by the engine, and every
// answer runs there. Bounded by the server's connections: one waiter per held request.
// Lifetime: it outlives the engine (it is the engine's finish hook), so it is destroyed
// after the engine's loop; its timers die with the loop and are not cancelled here.
#pragma once

#include <baton/engine.h>
#include <baton/event_loop.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace baton::server {

class CompletionWaits final : public FinishHook {
 public:
  // `record`: the execution's terminal record (`final`), or, when the wait passed, its
  // record as the engine holds it (`final` false); null when the engine no longer holds
  // it (the store refused a batch of it, or another instance runs it): the store has
  // its state.
  using Answer = std::function<void(const ExecutionRecord* record, bool final)>;
  using Ticket = uint64_t;

  CompletionWaits() = default;
  CompletionWaits(const CompletionWaits&) = delete;
  CompletionWaits& operator=(const CompletionWaits&) = delete;

  // Before the engine starts: the loop the waits' timers run on (the engine's).
  void SetLoop(EventLoop* loop) { loop_ = loop; }
  // Registers a waiter for `execution_id`; nothing answers it before Arm.
  Ticket Expect(const std::string& execution_id, Answer answer);
  // Starts the wait: answers at once when the execution ended (durably) meanwhile or
  // the engine does not hold it; waits for the durable end of one whose terminal state
  // is being committed; otherwise answers at its end or after `wait`, whichever is first.
  void Arm(Ticket ticket, Duration wait, Engine& engine);
  // Forgets a waiter without answering it (its start failed).
  void Drop(Ticket ticket);
  size_t waiting() const { return waiters_.size(); }

  // Engine thread, in the turn that ends the execution: the waiters on it are answered
  // once that turn's batch is durable.
  std::function<void()> OnFinish(const ExecutionRecord& execution, const WorkflowDef& workflow,
                                 WriteBatch& batch) override;

 private:
  struct Waiter {
    std::string execution_id;
    Answer answer;
    bool armed = false;
    TimerId timer = 0;
    std::optional<ExecutionRecord> final;  // its end, durable before it was armed
  };
  void Finished(const std::vector<Ticket>& tickets, const ExecutionRecord& record);
  void Answer1(Ticket ticket, const ExecutionRecord* record, bool final);

  EventLoop* loop_ = nullptr;
  Ticket next_ = 1;
  std::map<Ticket, Waiter> waiters_;
  std::multimap<std::string, Ticket> by_execution_;
};

// Several finish hooks as one, each with its own after-commit function (run in order).
class FinishHooks final : public FinishHook {
 public:
  explicit FinishHooks(std::vector<FinishHook*> hooks) : hooks_(std::move(hooks)) {}
  std::function<void()> OnFinish(const ExecutionRecord& execution, const WorkflowDef& workflow,
                                 WriteBatch& batch) override;

 private:
  std::vector<FinishHook*> hooks_;
};

}  // namespace baton::server
