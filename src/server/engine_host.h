// The server's engine: one thread running the decide loop, the group-commit writer,
// and the local runners. Everything that touches the engine goes through Post().
#pragma once

#include <baton/engine.h>
#include <baton/event_loop.h>
#include <baton/runner.h>
#include <baton/store.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "runners/http_runner.h"

namespace baton::server {

class EngineHost {
 public:
  // `http` configures the http step runner (egress allow-list, limits); `clock` is the
  // loop's (a shifted, faster one in tests).
  EngineHost(Store* store, EngineOptions options, const HttpRunnerOptions& http = {},
             RealClock clock = {});
  ~EngineHost();  // Stop()s

  // Before Start() only; called afterwards on the thread `thread` names.
  void AddObserver(ExecutionObserver* observer, ObserverThread thread = ObserverThread::kEngine);
  // Before Start() only: the engine's loop, once it has run every task it was given,
  // commits the last few batches itself instead of waking the committer's thread
  // (Committer::CommitHere). Meanwhile a task posted to the loop waits for that commit,
  // so only for a store whose commits are local and short (SQLite), not one a commit of
  // which may wait on a network (PostgreSQL).
  void CommitWhenIdle();
  // Before Start() only: the engine thread asks for time slices this short
  // (common/thread_slice.h), to get a core as soon as a request or a result wakes it.
  void UseShortSlices(std::chrono::microseconds slice) { slice_ = slice; }
  // Before Start() only: the runner of a step type (command steps: the coordinator's).
  void SetRunner(StepType type, Runner* runner);
  // The engine itself, for components on the engine thread (never from another thread).
  Engine* engine() { return engine_.get(); }

  // Starts the engine thread and recovers every unfinished execution from the store
  // (the first thing the thread does). Returns the number recovered.
  // With `recover` false, nothing is recovered here (several server instances: each
  // recovers the executions it claims).
  Result<size_t> Start(bool recover = true);
  // Stops the loop, kills local processes, aborts http requests and flushes the store. Unfinished
  // executions stay in the store for the next start.
  void Stop();

  // Runs `task` on the engine thread. Thread-safe; tasks posted after Stop() never run.
  void Post(std::function<void(Engine&)> task);
  // Runs `task` on the engine thread once the tasks its loop has already taken are done
  // (what a turn sends goes out together, worker_session.cpp); on the calling thread,
  // at once, when the engine is not running. Thread-safe.
  void AfterCurrentTasks(std::function<void()> task);

  // Runs `task` on the engine thread every `period` from Start() on.
  void Every(Duration period, std::function<void(Engine&)> task);
  CommitQueue::Stats commit_stats() const { return committer_->stats(); }
  // The group committer, for records written on the engine thread besides the engine's.
  Committer* committer() { return committer_.get(); }
  // The same, for the worker coordinator: its records commit with the engine's answer
  // to the frame that made them (Engine::JoinedTurn).
  Committer* joining_committer() { return engine_->joining_committer(); }
  // The http step runner (its egress guard applies to notifications too).
  Runner* http_runner() { return http_.get(); }
  // The shell step runner (the coordinator's local worker runs it).
  Runner* shell_runner() { return shell_.get(); }

  Store* store() const { return store_; }
  // Where the shared cache's changes are to be read from (SharedCache): the position
  // just before Start() read every entry; 0 before Start() or without a shared cache.
  int64_t cache_read_from() const { return cache_read_from_; }
  // The engine's loop, for components that live on the engine thread (the scheduler).
  EventLoop* loop() { return &loop_; }
  const Clock& clock() const { return loop_.clock(); }
  bool running() const { return running_; }

 private:
  Store* store_;
  std::atomic<int64_t> cache_read_from_{0};
  RealEventLoop loop_;
  std::unique_ptr<Committer> committer_;
  std::unique_ptr<Runner> shell_;
  std::unique_ptr<Runner> http_;
  std::unique_ptr<Engine> engine_;
  std::thread thread_;
  std::chrono::microseconds slice_{0};  // 0: the kernel's default
  std::vector<std::shared_ptr<std::function<void()>>> periodic_;
  std::atomic<bool> running_{false};
};

}  // namespace baton::server
