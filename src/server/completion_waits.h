// Submits that wait for their execution's end (POST /api/v1/executions?wait=MS): a
// waiter gets the execution's record once its terminal state is durable, or, when the
// wait passes first, the record as the engine holds it then.
//
// A waiter is registered (Expect) before the execution can end: for a new start, on the
// engine thread in the turn that started it; then armed (Arm) once the start is durable.
// Its end may be durable in between (the start's commit is slow to be reported): Arm
// then answers at once. A waiter is answered once, or dropped (Drop) without an answer.
//
// The end is answered from the thread that learns it is durable, as the live feed is
// (ObserverThread::kCommit): the engine keeps the terminal record aside in the turn
// that ends the execution (OnFinish), and the execution's terminal event, once
// committed, sends it. A refused commit sends nothing; the wait's timer answers then.
//
// Threading: Expect, Arm, Drop and OnFinish on the engine thread (the timers run
// there); OnEvent on the committing thread. Answers run on either. Bounded by the
// server's connections: one waiter per held request.
// Lifetime: the engine is stopped before it is destroyed (it is the engine's finish hook
// and observer), and its timers die with the engine's loop. A waiter's answer holds the
// HTTP session it answers: the server drops what is left (DropAll) once the engine has
// stopped, while its I/O threads' contexts still exist.
#pragma once

#include <baton/engine.h>
#include <baton/event_loop.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace baton::server {

class CompletionWaits final : public FinishHook, public ExecutionObserver {
 public:
  // `record`: the execution's terminal record (`final`), or, when the wait passed, its
  // record as the engine holds it (`final` false); null when the engine no longer holds
  // it (the store refused a batch of it, or another instance runs it): the store has
  // its state. Null only on the engine thread.
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
  // Forgets every waiter without answering it: the server is shutting down and its
  // engine has stopped. Any thread.
  void DropAll();
  size_t waiting() const;

  // Engine thread, in the turn that ends the execution: keeps its terminal record for
  // the waiters on it.
  std::function<void()> OnFinish(const ExecutionRecord& execution, const WorkflowDef& workflow,
                                 WriteBatch& batch) override;
  // The committing thread: an execution's terminal event is durable.
  void OnEvent(const EventRecord& event, const ExecutionProgress& progress) override;

 private:
  struct Waiter {
    std::string execution_id;
    Answer answer;
    bool armed = false;
    TimerId timer = 0;
    std::shared_ptr<const ExecutionRecord> ending;  // its end, being committed
    bool durable = false;                           // ...and committed (not armed yet)
  };
  // A waiter taken out to be answered (outside the lock).
  struct Taken {
    Answer answer;
    std::shared_ptr<const ExecutionRecord> record;
  };
  // Answers the waiter unless it was answered (or dropped) already.
  void AnswerIfWaiting(Ticket ticket, const ExecutionRecord* record, bool final);
  // With mu_ held: removes the waiter; its timer is cancelled later, on the engine thread.
  Taken TakeLocked(std::map<Ticket, Waiter>::iterator it);
  // Engine thread: cancels the timers of waiters answered elsewhere.
  void CancelStaleTimers();

  EventLoop* loop_ = nullptr;
  mutable std::mutex mu_;
  Ticket next_ = 1;
  std::map<Ticket, Waiter> waiters_;
  std::multimap<std::string, Ticket> by_execution_;
  std::vector<TimerId> stale_timers_;
  // Whether anyone waits: read without the lock by OnEvent, which every event reaches.
  std::atomic<size_t> count_{0};
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
