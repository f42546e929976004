// The Engine runs executions of workflows: the decide loop of DESIGN.md §1 and §4.
//
// Threading: the engine lives on one EventLoop thread and every public member must be
// called there (use loop->Post from elsewhere). Runners and the store's writer call back
// through the loop, so execution state is touched by one thread only, without locks.
//
// Durability: every decide turn produces one WriteBatch; effects of the turn (starting
// runners, telling observers) happen only after the batch is committed (transactional
// outbox). A crash loses at most turns whose effects never happened.
#pragma once

#include <baton/clock.h>
#include <baton/commit_queue.h>
#include <baton/json.h>
#include <baton/runner.h>
#include <baton/status.h>
#include <baton/store.h>
#include <baton/workflow.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

// Where the engine sends its batches. Done callbacks may run on any thread; the engine
// posts back to its loop.
class Committer {
 public:
  virtual ~Committer() = default;
  // The batch is shared: the engine reads its events again after the commit.
  virtual void Submit(std::shared_ptr<const WriteBatch> batch,
                      std::function<void(const Status&)> done) = 0;
  // For a batch nobody reads after the commit: the store may take its records instead of
  // copying them (Store::CommitOwned). By default, Submit().
  virtual void SubmitOwned(std::unique_ptr<WriteBatch> batch,
                           std::function<void(const Status&)> done) {
    Submit(std::move(batch), std::move(done));
  }
  // Blocks until everything submitted has committed.
  virtual void Flush() = 0;
  // For the loop's thread when it is about to go idle: commits a little queued work on
  // the calling thread instead of waiting for the committer's own thread to wake (see
  // CommitQueue::CommitHere). Returns whether it committed. Default: nothing to do.
  virtual bool CommitHere() { return false; }
  // For that same loop (see CommitQueue::DeferWakeupsOnThisThread): batches it submits
  // leave the committer's thread asleep until it calls CommitHere() or WakeDeferred().
  // Default: nothing to defer.
  virtual void DeferWakeupsOnThisThread() {}
  virtual void WakeDeferred() {}
  // Totals for metrics (zero for committers that do not group). Thread-safe.
  virtual CommitQueue::Stats stats() const { return {}; }
  // After a refused batch a committer refuses every later one until this is called (see
  // CommitQueue::ClearFailure); the engine calls it once it has dropped what diverged.
  virtual void ClearFailure() {}
};
// Commits on the calling thread, one transaction per batch (tests, --ephemeral).
std::unique_ptr<Committer> NewSyncCommitter(Store* store);
// A writer thread that groups batches into one transaction (group commit).
std::unique_ptr<Committer> NewGroupCommitter(Store* store);

struct ExecutionProgress {
  std::string execution_id;
  ExecutionStatus status = ExecutionStatus::kPending;
  int percent = 0;  // mean over steps, terminal steps counting 100
  int layer = 0;    // 1-based index of the first layer with unfinished steps
  int layers = 0;
  int steps_done = 0;  // terminal steps
  int steps_total = 0;
  std::string workflow;
  std::string ns;  // namespace
  // Set on the event, not the execution: on a step event that ends an attempt
  // (step.completed, step.failed, step.timed_out, step.retrying, step.cancelled), when
  // that attempt began: its step.started, else its step.dispatched. 0 when it did neither
  // in this engine (e.g. it was reattached after a restart), and on every other event.
  // Observers time steps with it instead of remembering each start themselves.
  TimeMs attempt_began = 0;
};

// Live executions by status (Engine::LiveCounts): running (every execution.* event but
// the ones below), paused (execution.paused), waiting for a concurrency slot
// (execution.queued). A terminal event, or being dropped from memory, ends the count.
struct LiveExecutions {
  int64_t running = 0;
  int64_t paused = 0;
  int64_t queued = 0;
};

// Watches execution without touching the scheduler: the CLI's live view, the server's
// live feed, metrics. Called after the event is committed, on the thread its
// ObserverThread says; must be quick and must not call back into the engine
// synchronously.
// Where an observer hears of events (Engine::AddObserver).
enum class ObserverThread {
  // The engine thread, once the engine has heard the batch is durable. The observer may
  // be single-threaded; OnStoreError comes on this thread too.
  kEngine,
  // The thread that learns the batch is durable (the store's writer, or the engine's own
  // when its idle loop committed the batch: Committer::CommitHere), right after it has
  // told the engine's loop and without waiting for the loop to run: one thread hop
  // sooner, for the live feed. Which of the two observers hears of an event first is not
  // fixed. Each execution's events still come in order, each once, and only when the
  // batch committed. The observer must be
  // thread-safe and cheap (it delays the next commit), and it gets no OnStoreError. The
  // progress is the execution's as of the end of the turn that wrote the event.
  kCommit,
};

class ExecutionObserver {
 public:
  virtual ~ExecutionObserver() = default;
  virtual void OnEvent(const EventRecord& event, const ExecutionProgress& progress) = 0;
  // The store refused a batch: the engine stopped the affected executions in memory
  // (the store keeps the last committed state; `baton resume` continues from it).
  virtual void OnStoreError(const Status& /*status*/) {}
};

// Lets the host add follow-up records to the batch that commits an execution's terminal
// state (a transactional outbox: notifications and event triggers are written with it,
// so a crash can neither lose them nor send them for a state that never committed).
class FinishHook {
 public:
  virtual ~FinishHook() = default;
  // Called on the engine thread when `execution` has just become terminal (status,
  // output, error and completed_at are final). Records appended to `batch` commit with
  // that state; the returned function (may be empty) runs once the commit succeeded.
  virtual std::function<void()> OnFinish(const ExecutionRecord& execution,
                                         const WorkflowDef& workflow, WriteBatch& batch) = 0;
};

// Result caching (a step's `cache:`): how many entries and bytes of outputs the engine
// keeps (in memory and in the store), and which go first when over: the least recently
// used (lru), the least often used (lfu), or the soonest to expire (ttl).
enum class CacheEviction { kLru, kLfu, kTtl };
const char* ToString(CacheEviction e);
std::optional<CacheEviction> ParseCacheEviction(std::string_view s);
struct CacheOptions {
  size_t max_entries = 10'000;
  int64_t max_bytes = 64 << 20;
  CacheEviction eviction = CacheEviction::kLru;
};

// Finds the workflow a `type: workflow` step starts, by namespace, name and version (0 =
// the latest). Called on the engine thread when such a step starts; NOT_FOUND (or any
// error) fails that attempt.
using ChildWorkflowResolver = std::function<Result<std::shared_ptr<const WorkflowDef>>(
    const std::string& ns, const std::string& name, int version)>;

struct EngineOptions {
  int parallel = 0;          // local worker capacity (shell steps at once); 0 = hardware threads
  uint64_t random_seed = 0;  // jitter; 0 = seeded from the clock
  // Extra attempts granted to steps interrupted by an engine restart.
  int max_engine_restarts = 5;
  FinishHook* finish_hook = nullptr;  // not owned; outlives the engine
  // An execution with no event for this long while it runs (not paused, not only waiting
  // for a signal or a timer) gets one `execution.stalled` event, again after each new
  // stretch of silence. 0 = never.
  Duration stall_after{0};
  CacheOptions cache{};
  // Unset: `type: workflow` steps fail UNSUPPORTED_STEP_TYPE.
  ChildWorkflowResolver child_workflows{};
  // Set (Store::shared_pools() of a store several instances share; not owned, outlives
  // the engine): a pool's slots are held in the store, so the pool bounds the steps of
  // every instance; steps waiting for one try again every quarter second. Null: pools
  // are counted in this engine alone.
  // A workflow's `concurrency:` is held there too (as a pool of `limit` slots per key), so
  // the limit bounds the executions of every instance.
  SharedPools* shared_pools = nullptr;
  // With shared_pools: asks the instance that runs execution `id` to cancel it, when a
  // workflow's `concurrency: cancel_oldest` replaces an execution another instance runs.
  // Called on the engine thread; must not block. Unset: the new execution waits for the
  // slot until the old one ends.
  std::function<void(const std::string& id, const std::string& reason)> cancel_elsewhere{};
  // How deep child workflows may nest (a top-level execution is at depth 1).
  int max_child_depth = 16;
  // Top-level executions running at once (0 = no limit); more wait `queued`, highest
  // priority first, then first come first served. Child workflows are not counted (their
  // parents wait for them: counting them could stall a parent forever).
  int max_running_executions = 0;
  // false: the engine writes no step or attempt records (executions, events and the rest
  // are written as usual). Only for a store that keeps neither and is never recovered
  // from: `baton run --ephemeral` without --json (MemoryStoreOptions::keep_steps = false),
  // where building the rows only for the store to drop them was a tenth of the run of a
  // 100,000-step chain and a fifth of its memory.
  bool write_step_rows = true;

  // The local worker's capacity that `parallel` stands for.
  int local_capacity() const;
};

struct StartRequest {
  std::shared_ptr<const WorkflowDef> workflow;
  Json input = Json::object();  // already resolved (ResolveInputs)
  std::string execution_id;     // empty = generated
  std::string parent_id;        // a child workflow's parent (see ExecutionRecord)
  std::string parent_step;
  int parent_attempt = 0;
  std::optional<Priority> priority;  // overrides the workflow's
  std::string ns;                    // namespace; empty = kDefaultNamespace
  std::string idempotency_key;       // stored with the execution (the server dedupes)
};

struct EngineStats {
  uint64_t steps_dispatched = 0;
  uint64_t steps_completed = 0;
  uint64_t steps_failed = 0;
  uint64_t steps_slow = 0;               // step.slow events: attempts far past their usual duration
  uint64_t executions_stalled = 0;       // execution.stalled events
  uint64_t circuit_open_rejections = 0;  // attempts refused by an open circuit breaker
  uint64_t cache_hits = 0;               // steps served from the cache (`cached`)
  uint64_t cache_misses = 0;             // steps with `cache:` that ran
  uint64_t cache_evictions = 0;          // entries removed: expired, over the limits, or cleared
  uint64_t children_started = 0;         // child workflow executions started
  size_t executions_queued = 0;          // waiting for a concurrency slot now
  uint64_t concurrency_cancelled = 0;    // cancelled by cancel_newest / cancel_oldest
  size_t cache_entries = 0;
  int64_t cache_bytes = 0;
  uint64_t batches = 0;
  // Executions whose definition came without its compiled plan (built in code, or edited
  // since), so that one was compiled for them alone.
  uint64_t plans_compiled = 0;
  // Executions dropped from memory because a batch of theirs was refused by the store
  // (their stored state is the last good one; a restart or `baton resume` continues it).
  uint64_t executions_abandoned = 0;
  size_t ready_queue_depth = 0;
  size_t active_executions = 0;
};

// What a step that has not finished waits for (Engine::Why). `kind` is one of:
//   upstream      steps that must finish first (`steps`)
//   paused        the execution is paused
//   max_parallel  the workflow's max_parallel (`limit`) is reached (`steps`: running)
//   capacity      every local worker slot (`limit`) is busy
//   retry_backoff attempt `attempt` of `max_attempts` failed (`error`); next at `until`
//   signal        a signal named `signal` (`until`: the step's timeout, if any)
//   timer         a wait step's time (`until`)
//   instances     a for_each: `done` of `total` items finished, `limit` started; `steps`
//                 the item indices (as text) of the instances running now
//   running       attempt `attempt` runs since `since` (`until`: its timeout, if any)
//   cache         an identical step (`steps`: "execution/step") is running; its result
//                 will be this one's
//   pool          the step waits for slots of pool `breaker` (`limit` slots), held by
//                 `steps` ("execution/step")
//   child         the child execution `steps[0]` (a `type: workflow` step) runs
//   concurrency   the execution is queued: its workflow's concurrency key (in `breaker`)
//                 allows `limit` at once, held by `steps` (execution ids)
//   max_running   the execution is queued: the server runs `limit` executions at once
//   breaker       the circuit breaker `breaker` refused attempt `attempt` (`error`); the
//                 next attempt starts at `until`, its probe time
//   scheduling    ready, and starts on the engine's next turn
struct StepWait {
  std::string step_id;
  StepStatus status = StepStatus::kPending;
  std::string kind;
  std::vector<std::string> steps;
  std::string signal;
  std::string breaker;  // kind breaker: its key
  Json error;
  int attempt = 0;
  int max_attempts = 0;
  int limit = 0;
  size_t done = 0, total = 0;
  TimeMs since = 0;
  TimeMs until = 0;  // 0 = not known / none
};

// A pool as the engine holds it: its definition and who uses it now.
struct PoolUsage {
  PoolRecord pool;
  int used = 0;                      // slots held
  std::vector<std::string> holders;  // "execution/step"
  size_t waiting = 0;                // steps ready and waiting for slots
};

class Engine {
 public:
  Engine(EventLoop* loop, Committer* committer, EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // The runner for a step type; steps of a type with no runner fail with
  // UNSUPPORTED_STEP_TYPE. noop and wait are built in.
  void SetRunner(StepType type, Runner* runner);
  // Observers hear of events committed after they are added (add them before Start: a
  // batch submitted while there were none is not kept for them).
  void AddObserver(ExecutionObserver* observer, ObserverThread thread = ObserverThread::kEngine);

  // Begins an execution; returns its id. The start is committed before any step runs.
  Result<std::string> Start(StartRequest request);
  // Continues an execution from its stored state after a restart (see recovery.cpp).
  // `attempts`: its attempts that ended with an error (Store::GetFailedAttempts; the
  // others may be passed too, and are not read); `signals`: the execution's stored
  // signals (Store::ListSignals).
  Status Recover(const ExecutionRecord& execution, const std::vector<StepRecord>& steps,
                 const std::vector<AttemptRecord>& attempts, int64_t last_event_seq,
                 const std::vector<SignalRecord>& signals = {});

  // Runs a failed, timed-out or cancelled execution again from its stored state: steps
  // that completed (or were cached) keep their outputs; every other step is reset to
  // pending with a fresh retry budget (attempt numbers continue). With `from_step`, that
  // step and every step downstream of it run again too, completed or not, and a
  // completed execution may be run again this way (Conductor's rerun from a task);
  // VALIDATION when the workflow has no such step. CONFLICT for any other status, or
  // while the execution is still in memory.
  // `dead_letters`: the execution's dead-letter entries (Store::ListDeadLetters); each
  // open one of a step the retry runs again becomes `replayed`, linked to the attempt
  // the step's new run starts at, in the retry's commit (a DLQ replay is a retry from
  // the entry's step).
  Status Retry(const ExecutionRecord& execution, const std::vector<StepRecord>& steps,
               const std::vector<AttemptRecord>& attempts, int64_t last_event_seq,
               const std::vector<SignalRecord>& signals = {}, const std::string& from_step = "",
               const std::vector<DeadLetterRecord>& dead_letters = {});

  // Delivers a signal to a running execution (`type: wait` with `signal: NAME`): kept
  // durably, and taken by the first step that waits for that name -- now, if one is
  // waiting, else when one does; its payload becomes that step's output. The signal is
  // committed in this turn; WhenDurable() tells when. Errors: NOT_FOUND (not in this
  // engine), CONFLICT (finished), VALIDATION (no step of the workflow waits for `name`,
  // or the payload does not match that step's `schema`), TOO_MANY_SIGNALS.
  static constexpr size_t kMaxPendingSignals = 1000;
  Result<SignalRecord> Signal(const std::string& execution_id, const std::string& name,
                              Json payload);
  // For every step of a running execution that has not finished, what it waits for,
  // in definition order. NOT_FOUND when the execution is not running in this engine.
  Result<std::vector<StepWait>> Why(const std::string& execution_id) const;
  Status Cancel(const std::string& execution_id, const std::string& reason);
  Status Pause(const std::string& execution_id);
  // A remote worker answered for an assignment that is no longer current (fencing): the
  // execution's log gets a `step.stale_result` event with `details`; nothing else
  // changes. True when done; false when the execution is not running in this engine
  // (finished, or unknown): the caller may append the event to the stored log itself.
  bool RecordStaleResult(const std::string& execution_id, const std::string& step_id, Json details);
  // A step's command moved to another worker (DESIGN.md §4): a `step.reassigned` event
  // with `details`. False when the execution is not running in this engine.
  bool RecordReassignment(const std::string& execution_id, const std::string& step_id,
                          Json details);
  // Circuit breakers (DESIGN.md §3), shared by every execution of a namespace.
  // Takes the stored breakers (LoadBreakers below does): call before Start or Recover.
  void AdoptBreakers(std::vector<BreakerRecord> breakers);
  // Several instances on one store: the breakers as stored now, which other instances
  // may have changed. Each stored breaker changed later than this engine's copy
  // (updated_at) replaces it, so a breaker one instance opened is open here too (the
  // last instance to change a breaker decides its state and counts). Any time.
  void MergeBreakers(std::vector<BreakerRecord> stored);
  // The breakers of `ns` (empty = every namespace) as they stand, by namespace, then key.
  std::vector<BreakerRecord> Breakers(const std::string& ns) const;
  // Closes the breaker now, its counts cleared; committed in this turn (WhenDurable tells
  // when). NOT_FOUND when the namespace has no breaker of that key.
  Result<BreakerRecord> ResetBreaker(const std::string& ns, const std::string& key);

  // Pools (a step's `pool`), shared by every execution of a namespace. AdoptPools takes
  // the stored ones (LoadPools below): call before Start or Recover. SetPool creates or
  // resizes one, written in this turn (WhenDurable tells when) and lets waiting steps in;
  // RemovePool forgets one (NOT_FOUND when unknown): its holders keep their slots until
  // they end, steps waiting for it fail NOT_FOUND. The store's row is the caller's.
  void AdoptPools(std::vector<PoolRecord> pools);
  // Several instances on one database: the pools as stored now (every namespace), read
  // after other instances may have created, resized or removed some. A pool changed
  // here later than the stored row, or in the last 10 s (its row may not be durable
  // yet), stays as it is here.
  void MergePools(std::vector<PoolRecord> stored);
  Status SetPool(const PoolRecord& pool);
  Status RemovePool(const std::string& ns, const std::string& name);
  std::vector<PoolUsage> Pools(const std::string& ns) const;

  // Cached step results. Takes the stored entries (LoadCache below does): call before
  // Start or Recover. Entries beyond the options' limits are deleted.
  void AdoptCache(std::vector<CacheEntryRecord> entries);
  // What other instances sharing the store cached or deleted (SharedCache in
  // <baton/store.h>), already stored: `deleted` is removed, then each of `entries` this
  // cache does not hold as written is added. Nothing is written back, except entries the
  // limits then evict.
  void MergeCache(std::vector<CacheEntryRecord> entries, const std::vector<CacheKey>& deleted);
  // Entries of `ns` (empty = every namespace), optionally of one workflow and step, by
  // key; outputs included.
  std::vector<CacheEntryRecord> CacheEntries(const std::string& ns, const std::string& workflow,
                                             const std::string& step_id) const;
  // Deletes the entry `key` of `ns` (NOT_FOUND when absent), or with an empty key every
  // entry matching `workflow` and `step_id` (empty = any); committed in this turn. The
  // number deleted.
  Result<size_t> ClearCache(const std::string& ns, const std::string& key,
                            const std::string& workflow, const std::string& step_id);

  // The next EventRecord::position, for an event written outside the engine.
  int64_t TakeEventPosition();
  Status Resume(const std::string& execution_id);

  // Calls `done` on the loop once every batch submitted so far is committed (ok) or
  // was refused by the store (its error): the point where a caller may acknowledge
  // what it asked for, e.g. a server answering a submit.
  void WhenDurable(std::function<void(const Status&)> done);
  // The same, for an answer that needs nothing more from the engine (a server's reply,
  // made beforehand): `done` runs on the thread that learns the outcome (the committer's
  // writer, or the loop's own when it committed), one thread hop before the loop would
  // hear of it. It must not use the engine, and must be quick, thread-safe and not throw
  // (the loop hears of the commit after it). Should every batch have finished already, it
  // runs as WhenDurable's would, on the loop. Loop thread.
  void WhenDurableOffLoop(std::function<void(const Status&)> done);

  // One transaction for a message from outside and the engine's answer to it: a
  // worker's frame with an ack and a result commits the assignment's last state with
  // the step's completion, instead of in a transaction (and an fsync) of its own first.
  // While a JoinedTurn lives, batches submitted through joining_committer() are held;
  // when the outermost one ends, the runner reports delivered meanwhile are handled at
  // once, in one turn (not in a task of their own, so before tasks queued since), and
  // that turn's batch carries the held records after its own. Their done callbacks run
  // once it committed, or with its error. Loop thread only; JoinedTurns nest.
  class [[nodiscard]] JoinedTurn {
   public:
    explicit JoinedTurn(Engine* engine);
    ~JoinedTurn();
    JoinedTurn(const JoinedTurn&) = delete;
    JoinedTurn& operator=(const JoinedTurn&) = delete;

   private:
    Engine* engine_;
  };
  JoinedTurn JoinTurn() { return JoinedTurn(this); }
  // For a component on the loop whose records belong with the runner reports it makes
  // (the worker coordinator); see JoinedTurn. A batch is held while one is open, and
  // behind anything still held until the turn that closes the outermost one takes it;
  // otherwise it goes straight to the engine's committer. A batch with events is never
  // held (the engine's observers take its batch's events as its own): what is held is
  // submitted first, then it; so is everything held at a Flush(). Loop thread only;
  // lives as long as the engine.
  Committer* joining_committer();

  // Events emitted from now on get positions above `last` (EventRecord::position): give
  // it the store's LastEventPosition() before Start or Recover whenever the store may
  // already hold events (SeedEventPositions below does). Never moves numbering back.
  void SetLastEventPosition(int64_t last);

  // Executions in memory that have not reached a terminal state.
  size_t ActiveCount() const;
  // The executions in memory by the status their latest execution.* event gave them.
  // Thread-safe (the server's /metrics reads it from its I/O threads): kept as they
  // change, so a reader never walks the executions.
  LiveExecutions LiveCounts() const;
  std::optional<ExecutionProgress> Progress(const std::string& execution_id) const;
  // The execution's record as this engine holds it: what the batches submitted so far
  // say (durable once WhenDurable() says so), without a store read. nullopt when it is
  // not in memory (never started here, or finished and durable).
  std::optional<ExecutionRecord> Record(const std::string& execution_id) const;
  EngineStats Stats() const;
  // The executions dropped from memory since the last call because the store refused a
  // batch of theirs. The store holds their last good state: a host re-adopts them with
  // RecoverExecutions(store, engine, id) once it wants to try the store again (a
  // still-failing store drops them again, to be taken here again).
  std::vector<std::string> TakeAbandoned();
  // Drops an execution from memory without writing anything: its steps in flight are
  // stopped (their runners told to cancel), its slots given back. For an execution this
  // engine may no longer act on: another server instance took its lease
  // (ExecutionLeases in <baton/store.h>), which continues it from the store. Batches
  // already submitted for it are not recalled; the store refuses them. NOT_FOUND when it
  // is not in memory. Its child workflows in memory (and theirs) are dropped with it.
  Status Evict(const std::string& execution_id);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Loads every unfinished execution (or only `only_id`) from `store` into `engine`.
// Returns the ids recovered.
Result<std::vector<std::string>> RecoverExecutions(ExecutionStore* store, Engine* engine,
                                                   const std::string& only_id = "");

// Seeds `engine` with `store`'s last event position (Engine::SetLastEventPosition):
// every place that builds an engine over a store that may hold events calls it first.
Status SeedEventPositions(ExecutionStore* store, Engine* engine);

// Hands `engine` the breakers stored in `store` (Engine::AdoptBreakers): every place that
// builds an engine over a durable store calls it next to SeedEventPositions.
Status LoadBreakers(ExecutionStore* store, Engine* engine);

// Hands `engine` the cache entries stored in `store` (Engine::AdoptCache), next to
// LoadBreakers.
Status LoadCache(ExecutionStore* store, Engine* engine);

// Hands `engine` the pools stored in `store` (Engine::AdoptPools), next to LoadBreakers.
Status LoadPools(ExecutionStore* store, Engine* engine);

// New execution id: time-ordered, 15 characters, e.g. "01jd3k5x7q4f9a2".
std::string NewExecutionId(TimeMs now);

}  // namespace baton
