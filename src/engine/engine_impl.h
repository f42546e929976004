// Engine::Impl: the decide loop. Split across files by concept:
//   engine.cpp      public API, turns (batch + effects), commit, observers
//   scheduling.cpp  readiness, trigger rules, conditions, the ready queue, dispatch
//   results.cpp     attempt results, retries, timeouts, finishing executions
//   recovery.cpp    rebuilding state from the store after a restart
#pragma once

#include <baton/engine.h>

#include "common/id_set.h"
#include "engine/execution_state.h"
#include "engine/result_cache.h"
#include "engine/step_deadlines.h"

#include <array>
#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <queue>
#include <random>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace baton {

class Engine::Impl {
 public:
  using ExecPtr = std::shared_ptr<engine::ExecState>;

  Impl(EventLoop* loop, Committer* committer, EngineOptions options);
  ~Impl();

  // --- engine.cpp -------------------------------------------------------------
  Result<std::string> Start(StartRequest request);
  Status Cancel(const std::string& id, const std::string& reason);
  Status Pause(const std::string& id);
  Status Resume(const std::string& id);
  ExecutionProgress ProgressOf(const engine::ExecState& ex) const;
  ExecPtr Find(const std::string& id) const;

  // A turn is one reaction to an input; its changes commit as one batch before its
  // effects run. Turns nest: only the outermost one submits.
  void BeginTurn() { ++turn_depth_; }
  void EndTurn();
  struct TurnGuard {
    Impl* impl;
    explicit TurnGuard(Impl* i) : impl(i) { impl->BeginTurn(); }
    ~TurnGuard() { impl->EndTurn(); }
  };
  void AddEffect(std::function<void()> effect) { effects_.push_back(std::move(effect)); }
  // Appends an event; `attempt` for step events about an attempt (0 otherwise).
  // When the attempt that an event of `st` ends began (0: it does not end one, or that is
  // not known), keeping what it needs in `st`.
  static TimeMs AttemptBegan(engine::StepState& st, std::string_view type, TimeMs now);
  void Emit(engine::ExecState& ex, const char* type, int step, Json data = nullptr,
            int attempt = 0);
  void MarkDirty(const ExecPtr& ex);
  void MarkStepDirty(const ExecPtr& ex, int step);
  void SaveAttempt(engine::ExecState& ex, int step, StepStatus status, const Json& error);
  // Builds per-step bookkeeping (fresh step rows, graph edges, layers, conditions) for a
  // new state whose record has its id.
  Status BuildGraph(engine::ExecState& ex);

  // --- scheduling.cpp ---------------------------------------------------------
  // All upstream steps are terminal: decide skip / ready, per trigger rule and `when`.
  void OnDependenciesDone(const ExecPtr& ex, int step);
  void MakeReady(const ExecPtr& ex, int step);
  void DispatchReady();
  void Dispatch(const ExecPtr& ex, int step);
  bool TriggerRuleAllows(const engine::ExecState& ex, int step, std::string* why) const;

  // --- results.cpp ------------------------------------------------------------
  void OnStarted(const std::string& exec_id, int step, const std::string& assignment);
  void OnProgress(const std::string& exec_id, int step, const std::string& assignment, int progress,
                  const Json& data);
  void OnDone(const std::string& exec_id, int step, const std::string& assignment,
              RunResult result);
  // The attempt's outcome, within the caller's turn.
  void ApplyResult(const ExecPtr& ex, int step, RunResult result);
  // The attempt succeeded; its output and exit code are already in the step row.
  void CompleteAttempt(const ExecPtr& ex, int step);
  // The attempt timeout (the step's `timeout:`, due at st.rec.deadline): armed at dispatch
  // and re-attach in deadlines_, ended with the attempt by CancelStepTimer().
  void ArmAttemptTimeout(engine::ExecState& ex, int step);
  // Ends the step's retry timer or attempt timeout, whichever it has.
  void CancelStepTimer(engine::ExecState& ex, int step);
  // Fires the due attempt timeouts and heartbeat deadlines, then waits for the next one.
  void OnDeadlines();
  void ScheduleDeadlines();  // the loop timer at deadlines_'s earliest, when that moved
  void OnAttemptTimeout(const ExecPtr& ex, int step);
  // (Re)arms the step's heartbeat_timeout from now: at dispatch, start and each progress.
  void ArmHeartbeat(const ExecPtr& ex, int step);
  void OnHeartbeatTimeout(const ExecPtr& ex, int step);
  void CancelHeartbeat(engine::ExecState& ex, int step);
  // An event about a step that changes nothing (step.stale_result, step.reassigned).
  bool RecordStepNote(const std::string& exec_id, const std::string& step_id, const char* type,
                      Json details);
  // The attempt ended with an error: retry, or fail for good.
  void FailAttempt(const ExecPtr& ex, int step, StepStatus status, const Status& error,
                   Json details);
  // Terminal bookkeeping, then (unless `propagate` is false) downstream readiness.
  void FinishStep(const ExecPtr& ex, int step, StepStatus status, bool propagate = true);
  void SkipStep(const ExecPtr& ex, int step, const std::string& reason);
  void RetryNow(const std::string& exec_id, int step);
  void DrainPropagation();
  void Release(const ExecPtr& ex, int step);   // frees limits held by an in-flight step
  void StopStep(const ExecPtr& ex, int step);  // cancels a running attempt's work
  // The runner assignments a step has in flight (all live instances of a fan-out).
  void CollectInFlight(const engine::ExecState& ex, int step,
                       std::vector<std::pair<Runner*, std::string>>* out) const;
  void MaybeFinish(const ExecPtr& ex);
  void FinishExecution(const ExecPtr& ex, ExecutionStatus status, Json error);
  void OnExecutionDeadline(const std::string& exec_id);
  void CancelOpenSteps(const ExecPtr& ex, const char* reason);

  // --- fan_out.cpp (for_each) ----------------------------------------------
  // Renders for_each and begins the instances of a dispatched step.
  void BeginFanOut(const ExecPtr& ex, int step, Runner* runner);
  void StartInstances(const ExecPtr& ex, int step, Runner* runner);
  void OnInstanceDone(const std::string& exec_id, int step, const std::string& assignment,
                      RunResult result);
  // Effects that cancel every running instance of the step.
  void StopInstances(const ExecPtr& ex, int step, Runner* runner);
  // Prepares one runner assignment in this turn's batch (Runner::Prepare) and starts it
  // after the turn commits, or cancels it should the attempt have ended by then; its
  // callbacks come back to the loop, to OnInstanceDone for a for_each instance, else to
  // OnDone. `reattach`: hands the runner an attempt begun by a previous process
  // (recovery): nothing to prepare.
  void StartAssignment(const ExecPtr& ex, int step, Runner* runner, RunRequest req, bool instance,
                       bool reattach = false);
  // --- attempt_sink.cpp ---------------------------------------------------------
  // The callbacks of one runner assignment (`step_attempt_id`: the step's attempt, which
  // a for_each instance's Started() reports against). Any thread may call them.
  RunCallbacks MakeAttemptSink(const RunRequest& req, int step, bool instance,
                               const std::string& step_attempt_id);
  // The usual assignment id of the attempt (AssignmentIdFor), or empty when the
  // execution is not in memory.
  std::string AssignmentIdOf(const std::string& exec_id, int step, int attempt) const;
  struct AttemptSink;
  struct FullSink;
  RunRequest MakeRequest(const engine::ExecState& ex, int step, SpecPtr spec);
  // The step's spec as the definition has it, shared with the definition (no copy).
  static SpecPtr DefinitionSpec(const engine::ExecState& ex, int step);
  // recovery.cpp: an attempt that was running when the process stopped, taken over by a
  // runner that CanReattach(); false when it cannot be (the attempt is then lost).
  bool ReattachStep(const ExecPtr& ex, int step);
  // BATON_* variables of a shell step (item_index >= 0 inside a for_each instance).
  void AddShellEnv(const engine::ExecState& ex, int step, int64_t item_index, Json& spec);

  // --- recovery.cpp -----------------------------------------------------------
  Status Recover(const ExecutionRecord& execution, const std::vector<StepRecord>& steps,
                 const std::vector<AttemptRecord>& attempts, int64_t last_event_seq,
                 const std::vector<SignalRecord>& signals);
  // What a retry changes besides the stored state it hands Continue.
  struct RetryPlan {
    std::vector<std::string> reset_steps;  // in definition order
    std::string from_step;                 // "" = a plain retry
    // Dead-letter entries of the steps run again, now replayed: written in the retry's
    // commit, so an entry and the run it started cannot disagree after a crash.
    std::vector<DeadLetterRecord> replayed;
  };
  // The parsed definition an execution's stored snapshot describes: shared with other
  // executions whose snapshot is equal (snapshot_defs_), parsed otherwise.
  Result<std::shared_ptr<const WorkflowDef>> SnapshotDefinition(const ExecutionRecord& execution);
  // Per (workflow, version): the definition parsed last from a snapshot, while alive.
  std::map<std::pair<std::string, int>, std::weak_ptr<const WorkflowDef>> snapshot_defs_;
  // Loads stored state into memory and carries on; `retry` set: a retry (below).
  Status Continue(const ExecutionRecord& execution, const std::vector<StepRecord>& steps,
                  const std::vector<AttemptRecord>& attempts, int64_t last_event_seq,
                  const std::vector<SignalRecord>& signals, const RetryPlan* retry);

  // --- retry.cpp --------------------------------------------------------------
  Status Retry(const ExecutionRecord& execution, const std::vector<StepRecord>& steps,
               const std::vector<AttemptRecord>& attempts, int64_t last_event_seq,
               const std::vector<SignalRecord>& signals, const std::string& from_step,
               const std::vector<DeadLetterRecord>& dead_letters);

  // --- vars.cpp ---------------------------------------------------------------
  // Renders the completing step's set_vars into the execution's variables, one
  // `vars.set` event per value that changed. TEMPLATE_ERROR or VALIDATION (too big).
  Status SetVars(const ExecPtr& ex, int step);

  // --- slow_steps.cpp ---------------------------------------------------------
  // A deadline (kSlow in deadlines_) that emits `step.slow` once when the running attempt
  // passes its expected_duration, or three times the p95 of the step's recent successful
  // attempts (none until kMinSamples are known).
  void ArmSlowWatch(const ExecPtr& ex, int step);
  // Arms the step's watch for threshold_ms after its slow_since (set by ArmSlowWatch).
  void ArmSlowWatchAfter(engine::ExecState& ex, int step, int64_t threshold_ms);
  void CancelSlowWatch(engine::ExecState& ex, int step);
  // What sets an attempt's threshold: step.slow's data is built from it only when the
  // attempt turns out slow (nearly none do), not for every attempt watched.
  struct SlowBasis {
    int64_t threshold_ms = 0;
    int64_t p95_ms = 0;
    size_t samples = 0;  // 0: the step's expected_duration set the threshold
  };
  // The step's threshold now; none while its history is too short to say.
  std::optional<SlowBasis> SlowBasisOf(const engine::ExecState& ex, const StepDef& def) const;
  void OnSlow(const ExecPtr& ex, int step);
  // A successful attempt's duration, for the step's history.
  void RecordDuration(const engine::ExecState& ex, int step, int64_t ms);
  // When the running attempt's work began: its step.started, else its dispatch.
  static TimeMs RunningSince(const engine::StepState& st);

  // --- dead_letters.cpp -------------------------------------------------------
  // The step failed for good: its dead-letter entry joins this turn's batch.
  void WriteDeadLetter(const ExecPtr& ex, int step, TimeMs now);

  // --- breakers.cpp -----------------------------------------------------------
  // Before an attempt of a step with a circuit_breaker starts: true lets it go (the
  // breaker's key is kept in the step state until SettleBreaker); false means the
  // breaker refused it and the attempt already failed (CIRCUIT_OPEN, or the key could
  // not be worked out).
  bool PassBreaker(const ExecPtr& ex, int step, const Json& spec);
  // How an admitted attempt ended: `error` null for a success. Within the caller's turn.
  void SettleBreaker(const ExecPtr& ex, int step, const Json* error);
  Result<std::string> BreakerKey(const engine::ExecState& ex, int step, const Json& spec);
  void SaveBreaker(engine::Breaker& b);  // into this turn's batch
  void AdoptBreakers(std::vector<BreakerRecord> records);
  void MergeBreakers(std::vector<BreakerRecord> stored);
  std::vector<BreakerRecord> ListBreakers(const std::string& ns) const;
  Result<BreakerRecord> ResetBreaker(const std::string& ns, const std::string& key);
  // Distinct breaker keys an engine keeps (a templated key must not grow without end).
  static constexpr size_t kMaxBreakers = 10'000;

  // --- cache.cpp --------------------------------------------------------------
  // Before a step with `cache:` runs: true when it is settled without running -- served
  // from the cache, waiting for an identical step's run, or failed (its key could not be
  // rendered); false lets it run, its key kept for StoreCacheResult.
  bool LookUpCache(const ExecPtr& ex, int step, const Json& spec);
  Result<std::string> CacheKeyFor(const engine::ExecState& ex, int step, const Json& spec);
  // Completes the step `cached` with the entry's output (or readies it to run, should
  // the entry be gone).
  void ServeCacheHit(const ExecPtr& ex, int step, const std::string& key);
  // The step's run succeeded: its output becomes the entry, and its waiters' result.
  void StoreCacheResult(const ExecPtr& ex, int step);
  // The step's run ended otherwise: its waiters run themselves.
  void AbandonCacheFlight(const ExecPtr& ex, int step);
  void EndCacheFlight(const std::string& flight_id, bool stored, const std::string& key);
  void DeleteCacheEntries(const std::vector<CacheKey>& keys);  // into this turn's batch
  void AdoptCache(std::vector<CacheEntryRecord> entries);
  void MergeCache(std::vector<CacheEntryRecord> entries, const std::vector<CacheKey>& deleted);
  Result<size_t> ClearCache(const std::string& ns, const std::string& key,
                            const std::string& workflow, const std::string& step_id);

  // --- children.cpp -----------------------------------------------------------
  // Starts the child workflow of a dispatched `type: workflow` step in this turn (or
  // fails the attempt: unknown workflow, bad input, a cycle, too deep).
  void BeginChild(const ExecPtr& ex, int step, const Json& spec);
  // A child execution came into memory (recovery): known to its parent, and linked to
  // the parent's step when that step waits for it.
  void AdoptChild(const ExecPtr& child);
  // A recovered `type: workflow` step finds its child, should it be in memory already.
  void LinkChild(const ExecPtr& ex, int step);
  // A child finished (within its finishing turn): its result becomes the parent step's.
  void EndChild(const engine::ExecState& child);
  // A child step finished: the parent step's progress follows the child's.
  void ReportChildProgress(const engine::ExecState& child);
  // The parent step stops (cancel, timeout): its child is cancelled in this turn.
  void StopChild(const ExecPtr& ex, int step, const std::string& reason);
  std::vector<std::string> RunningChildren(const std::string& id) const;
  // The parent whose step (*step) waits for `child` now; null when none does.
  ExecPtr WaitingParent(const engine::ExecState& child, int* step) const;

  // --- concurrency.cpp --------------------------------------------------------
  using WaitQueue = engine::WaitQueue;
  struct ConcurrencyGroup {
    std::vector<std::string> running;  // holders, in admission order
    WaitQueue queued;
  };
  // "namespace\nworkflow\nrendered key", or "" for a workflow without `concurrency`.
  Result<std::string> ConcurrencyGroupOf(const engine::ExecState& ex) const;
  // Takes the slots a new (or queued) execution needs: true when it may run now; else it
  // is queued, or finished (cancel_newest, a key that cannot be rendered).
  bool Admit(const ExecPtr& ex);
  void Enqueue(const ExecPtr& ex, WaitQueue* queue);
  // Recovery: a queued execution waits again; a running one holds its slots again.
  void RequeueRecovered(const ExecPtr& ex);
  void HoldRecoveredSlots(const ExecPtr& ex);
  // The execution finished: its slots go to the next in line.
  void ReleaseSlots(const ExecPtr& ex);
  // Every execution was dropped from memory (store error): no slot is held.
  void DropAllSlots();
  Status Evict(const std::string& id);  // Engine::Evict
  // Stops what `ex` has in flight (its runners' work goes to `cancels`, to be told after
  // the turn), gives back its steps' slots and removes it from memory; false when it was
  // not there. Writes nothing.
  bool DropFromMemory(const ExecPtr& ex, std::vector<std::pair<Runner*, std::string>>* cancels);
  std::vector<std::string> SlotHolders(const engine::ExecState& ex) const;
  // With EngineOptions::shared_pools, a group's slots are held in the store (as a pool of
  // `limit` slots of the execution's namespace), so the limit bounds every instance:
  // the hold of `ex`'s slot; taking it (a store error counts as no room, and the queued
  // execution tries again); admitting `ex` to its group; admitting the queued executions
  // of a group that the holds now leave room for.
  PoolHold GroupHold(const engine::ExecState& ex) const;
  enum class SharedHold { kHeld, kFull, kStoreError };
  SharedHold HoldGroupSlot(const engine::ExecState& ex, bool force);
  void DropEmptyGroup(const std::string& group);
  bool AdmitToSharedGroup(const ExecPtr& ex, const ConcurrencySpec& spec);
  void WakeSharedGroup(const std::string& group);
  // An admitted execution's steps begin (and its timeout starts).
  void BeginSteps(const ExecPtr& ex);

  // --- pools.cpp --------------------------------------------------------------
  struct PoolState {
    PoolRecord rec;
    bool defined = false;  // false: deleted, or only known from a recovered holder
    int used = 0;
    std::vector<std::string> holders;                           // "execution/step"
    std::set<std::tuple<int, uint64_t, ExecPtr, int>> waiting;  // (-priority, seq, ex, step)
  };
  // Before an attempt of a step with a pool starts: true when it holds its slots; false
  // when it waits for them (queued in the pool) or failed (no such pool, too many slots).
  bool TakePoolSlots(const ExecPtr& ex, int step);
  void HoldPoolSlots(const ExecPtr& ex, int step);    // recovery: a re-attached attempt
  void ReturnPoolSlots(const ExecPtr& ex, int step);  // from Release()
  void WakePoolWaiters(PoolState& pool);
  void DispatchPoolWoken();  // from DispatchReady()
  Status SetPool(const PoolRecord& record);
  Status RemovePool(const std::string& ns, const std::string& name);
  void AdoptPools(std::vector<PoolRecord> records);
  void MergePools(std::vector<PoolRecord> stored);
  std::vector<PoolUsage> ListPools(const std::string& ns) const;
  void DropPoolSlots();
  // With EngineOptions::shared_pools: holds the step's slots in the store (true when
  // held; a store error counts as no room, and the step tries again), and the timer that
  // lets waiting steps try again while slots may come free on other instances.
  bool HoldSharedSlots(const engine::ExecState& ex, int step, const PoolState& pool, bool force);
  // Steps waiting for a pool and executions queued for a concurrency slot try again.
  void ArmSharedSlotRetry();
  bool shared_retry_armed_ = false;
  // Gives a shared hold back. The instance renews all its holds with its leases, so one
  // that could not be given back (a store error) would be held for as long as the
  // instance lives: it is kept here and given back at the next retries.
  void ReleaseShared(PoolHold hold);
  void RetryReleases();
  std::vector<PoolHold> unreleased_;

  // --- stalls.cpp -------------------------------------------------------------
  // Arms the periodic check for stalled executions (EngineOptions::stall_after) unless
  // it is armed; it stays armed while executions are active.
  void ArmStallSweep();
  void SweepStalls();

  // --- why.cpp ----------------------------------------------------------------
  Result<std::vector<StepWait>> Why(const std::string& id) const;

  // --- signals.cpp ------------------------------------------------------------
  Result<SignalRecord> Signal(const std::string& id, const std::string& name, Json payload);
  // A dispatched `wait` step on a signal: running from now, done when a signal comes.
  void BeginSignalWait(const ExecPtr& ex, int step);
  // Completes a waiting step with the oldest pending signal of its name, if any.
  bool TakeSignal(const ExecPtr& ex, int step);

  // --- state ------------------------------------------------------------------
  EventLoop* loop_;
  Committer* committer_;
  EngineOptions options_;
  int capacity_;
  int capacity_used_ = 0;
  // Recent successful attempt durations per workflow and step (slow_steps.cpp): kept in
  // memory only, so a restart starts learning again.
  std::unordered_map<std::string, engine::DurationHistory> durations_;
  TimerId stall_sweep_ = 0;  // 0 = not armed
  // Every running attempt's timeout and heartbeat deadline, fired by one loop timer
  // (step_deadlines.h), armed for deadlines_timer_at_ (monotonic, like the deadlines).
  engine::StepDeadlines deadlines_;
  TimerId deadlines_timer_ = 0;  // 0 = not armed
  int64_t deadlines_timer_at_ = 0;
  // Circuit breakers by namespace and key (ordered: listed by namespace, then key).
  std::map<std::pair<std::string, std::string>, engine::Breaker> breakers_;
  engine::ResultCache cache_;
  // Runs of cached steps in flight, by namespace + "\n" + key: who runs it, who waits.
  struct CacheFlight {
    std::string leader;  // "execution/step"
    std::vector<std::pair<std::weak_ptr<engine::ExecState>, int>> waiters;
  };
  std::unordered_map<std::string, CacheFlight> cache_flights_;
  std::unordered_map<std::string, ConcurrencyGroup> concurrency_;
  WaitQueue global_queue_;     // waiting for max_running_executions
  WaitQueue recovered_queue_;  // queued executions recovered, admitted after the recovery
  size_t running_top_ = 0;     // executions counted against max_running_executions
  bool admit_posted_ = false;
  std::map<std::pair<std::string, std::string>, PoolState> pools_;  // by namespace, name
  std::vector<std::pair<ExecPtr, int>> pool_woken_;  // given their slots, to dispatch
  // Running child executions by parent id (children.cpp).
  std::unordered_map<std::string, std::vector<std::string>> children_;
  std::mt19937_64 rng_;
  std::unordered_map<StepType, Runner*> runners_;
  std::unique_ptr<Runner> noop_runner_;
  std::unique_ptr<Runner> wait_runner_;
  std::vector<ExecutionObserver*> observers_;
  // ObserverThread::kCommit: called by the thread that committed the batch (the
  // committer's, or the loop's own when idle: Committer::CommitHere); read-only once
  // started.
  std::vector<ExecutionObserver*> commit_observers_;
  // Found by the execution's own id (rec.id, never changed once it is here): a copy of the
  // id per live execution was a heap block each, and a view of it half the node.
  struct ExecutionId {
    std::string_view operator()(const engine::ExecState& ex) const { return ex.rec.id; }
  };
  IdSet<ExecPtr, ExecutionId> executions_;
  size_t active_ = 0;
  // Engine::LiveCounts(), by ExecState::live (1 running, 2 paused, 3 queued; [0] unused).
  // Written on the engine thread only, read from any.
  std::array<std::atomic<int64_t>, 4> live_counts_{};
  // Counts `ex` as `kind` (0: no longer).
  void SetLive(engine::ExecState& ex, uint8_t kind);
  EngineStats stats_;
  std::vector<std::string> abandoned_;  // see Engine::TakeAbandoned
  uint64_t ready_seq_ = 0;
  int64_t last_position_ = 0;  // the last EventRecord::position handed out
  bool dispatching_ = false;
  bool draining_ = false;
  std::vector<std::pair<ExecPtr, int>> propagate_;  // steps whose upstream all finished

  // Global ready queue: highest priority first, then FIFO.
  struct ReadyItem {
    int priority;
    uint64_t seq;
    ExecPtr ex;
    int step;
    bool operator<(const ReadyItem& o) const {
      return priority != o.priority ? priority < o.priority : seq > o.seq;
    }
  };
  std::priority_queue<ReadyItem> ready_;

  // The open turn.
  int turn_depth_ = 0;
  WriteBatch batch_;
  std::vector<std::function<void()>> effects_;
  // Assignments whose runner was given Prepare() in this turn: cancelled should the batch
  // fail, since their effects (Start, or Cancel) then never run.
  using Prepared = std::vector<std::pair<Runner*, std::string>>;
  Prepared prepared_;
  std::vector<ExecPtr> dirty_execs_;
  // Raw pointers: drained within the turn, while executions_ owns every execution.
  std::vector<std::pair<engine::ExecState*, int>> dirty_steps_;
  // Whose events batch_ holds, in order: one entry per run of one execution's events.
  std::vector<const engine::ExecState*> event_execs_;
  // ExecutionProgress::attempt_began of each event in batch_, in order.
  std::vector<TimeMs> event_began_;
  // What observers are told with a committed batch's events. An execution's progress is
  // the same for all its events of a turn (as of the turn's end), so it is kept once per
  // run of them, not per event: a 100,000-step chain of noops is one turn of 300,000
  // events, and a copy per event was 36 MiB of the run's peak.
  struct TurnProgress {
    std::vector<ExecutionProgress> runs;  // one per entry of event_execs_, in order
    std::vector<TimeMs> began;            // attempt_began of each event
  };
  // Calls every observer for every event of `batch`, in order.
  static void TellObservers(const std::vector<ExecutionObserver*>& observers,
                            const WriteBatch& batch, const TurnProgress& progress);
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);

  // Runners report (started, progress, done) from any thread through one inbox. The loop
  // handles everything that arrived before it got there in ONE turn: a worker's ack and
  // result for a step, or a frame of 50 results, make one batch in which each step and
  // execution is written once, instead of a batch and a row each per report.
  struct RunnerInbox {
    EventLoop* loop = nullptr;
    Impl* impl = nullptr;
    std::weak_ptr<bool> alive;
    std::mutex mu;
    std::vector<std::function<void()>> reports;  // in arrival order
    bool drain_posted = false;
  };
  std::shared_ptr<RunnerInbox> inbox_;
  // Any thread; `report` runs on the loop, within a turn, while the engine lives.
  static void Deliver(const std::shared_ptr<RunnerInbox>& inbox, std::function<void()> report);

  // JoinedTurn (joined_turn.cpp): batches of joining_committer() held for the turn that
  // handles the reports their writer made.
  class JoiningCommitter;
  struct HeldBatch {
    std::shared_ptr<const WriteBatch> shared;  // one of these two
    std::unique_ptr<WriteBatch> owned;
    std::function<void(const Status&)> done;
  };
  int joining_depth_ = 0;
  std::vector<HeldBatch> held_;
  std::unique_ptr<Committer> joining_committer_;  // made on first use
  void BeginJoinedTurn();
  void EndJoinedTurn();
  // Handles, in the open turn, the reports waiting in the inbox (its posted drain then
  // finds none).
  void HandleReportsNow();
  // EndTurn: moves the held records in front of batch_'s; their done callbacks.
  std::vector<std::function<void(const Status&)>> TakeHeld();
  void SubmitHeldDirectly();

  // WhenDurable(): batches are numbered as submitted; committers finish them in order.
  uint64_t batches_submitted_ = 0;
  uint64_t batches_durable_ = 0;  // committed, or failed: nothing more is coming for them
  std::deque<std::pair<uint64_t, std::function<void(const Status&)>>> durable_waiters_;
  void NotifyDurable(uint64_t batch_number, const Status& status);
  // WhenDurableOffLoop(): waiters the committing thread runs as a batch finishes.
  std::mutex off_loop_mu_;
  uint64_t off_loop_finished_ = 0;  // the last batch whose commit ended; under the mutex
  std::deque<std::pair<uint64_t, std::function<void(const Status&)>>> off_loop_waiters_;
  void NotifyDurableOffLoop(uint64_t batch_number, const Status& status);  // any thread
};

// An error's code and message with what varies between occurrences of the same failure
// (numbers, ids, quoted text) masked and spacing normalised, at most 200 bytes:
// "COMMAND_FAILED: exit status N: cannot open '?'" (dead_letters.cpp).
// An attempt's assignment id as the engine forms it: "<execution>/<step id>/<attempt>".
// Fencing compares these: a result counts only for the dispatch it answers.
std::string AssignmentIdFor(const std::string& exec_id, const std::string& step_id, int attempt);
// Whether `id` is AssignmentIdFor(exec_id, step_id, attempt), compared without building it.
bool IsAssignmentIdFor(std::string_view id, std::string_view exec_id, std::string_view step_id,
                       int attempt);

std::string DeadLetterFingerprint(const std::string& code, const std::string& message);

// Built-in runners (builtin_runners.cpp).
std::unique_ptr<Runner> NewNoopRunner();
// The signal a `wait` step waits for (`signal: NAME`), or null for any other step.
const std::string* SignalWaitedFor(const StepDef& def);
// Parses a wait step's `until`, "2026-01-02T03:04:05Z" (optionally with .fff), into ms
// since the epoch.
std::optional<TimeMs> ParseUtcTime(const std::string& s);
std::unique_ptr<Runner> NewWaitRunner(EventLoop* loop);

// Template scope over an execution's state (scope.cpp).
namespace engine {
class ExecScope final : public expr::Scope {
 public:
  explicit ExecScope(const ExecState& ex) : ex_(ex) {}
  // Inside a for_each instance: `item` and `item_index` resolve too.
  ExecScope(const ExecState& ex, const Json* item, int64_t item_index)
      : ex_(ex), item_(item), item_index_(item_index) {}
  const Json* Find(const expr::Path& path) const override;

 private:
  const ExecState& ex_;
  const Json* item_ = nullptr;
  int64_t item_index_ = -1;
  mutable std::deque<Json> temporaries_;
};
}  // namespace engine

}  // namespace baton
