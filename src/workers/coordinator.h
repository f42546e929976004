// The coordinator: runs `command` steps on remote workers (docs/coordinator.md).
//
// Dispatch: the engine calls runner()->Prepare(RunRequest, batch) in the turn that
// dispatches the step. When a worker has room right away (nothing waiting ahead of it
// takes it), the dispatch is placed there and its AssignmentRecord goes into the engine's
// batch: one commit makes the step's dispatch and its assignment durable together, and
// Start(), which follows that commit, sends the `command`. Otherwise nothing is recorded
// yet and Start() queues it. Waiting dispatches (and Start() without Prepare) are ordered
// by the execution's priority, then arrival, until the Registry finds a worker; placing
// one then writes its AssignmentRecord through the committer and only once that is
// durable sends the `command`. Either way, the dispatch is persisted first, and nothing
// goes out before Start() (the engine's dispatch durable, the callbacks known); an attempt
// that ends before Start() gets Cancel() instead, which frees the worker's slot.
//
// Worker-facing assignment ids are `<dispatch>` for the first placement and
// `<dispatch>.r<n>` after the n-th reassignment; an ack, progress or result naming any
// other id, or sent by a worker that does not hold it, is STALE_ASSIGNMENT: it changes
// nothing and is reported through `on_stale` (the engine logs a step.stale_result event).
//
// Failure detection: each worker has a deadline timer at last_seen + heartbeat_timeout,
// re-armed by every message it sends. Firing: UNHEALTHY. reassignment_grace later, if
// it is still UNHEALTHY, its accepted or running assignments move to other ONLINE
// workers with their last checkpoint (a ReassignmentRecord each), up to
// max_reassignments, after which the attempt fails WORKER_LOST and the step's retry
// policy decides. Assignments it had not yet acknowledged are placed again as well.
//
// A server restart: Load() reads the workers and the active assignments; the engine's
// recovery re-attaches their steps (Runner::Reattach) instead of failing them with
// ENGINE_RESTART. A holder gets heartbeat_timeout to register again; a command it may
// never have received is sent again when it does.
//
// The in-process local worker (AddLocalWorker): `shell` and `http` steps take the same
// path. local_runner() is their Runner: a dispatch waits in the same queue, is placed
// through the Registry on the `local` entry (capacity = the engine's --parallel), gets an
// assignment id, and its start, progress and end update the same assignment that the
// API and `baton workers` show. Only the transport differs: the built-in runner is called
// directly instead of a message being sent, and a local assignment is not written to the
// store (it cannot outlive this process, so there is nothing for a restart to re-attach:
// the engine fails such an attempt ENGINE_RESTART and its retry policy decides).
//
// Threading: every member runs on the engine loop's thread, except WorkerChannel::Send.
#pragma once

#include <baton/clock.h>
#include <baton/engine.h>
#include <baton/runner.h>
#include <baton/store.h>

#include "common/id_set.h"
#include "protocol/worker_protocol.h"
#include "workers/registry.h"

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace baton::workers {

struct CoordinatorOptions {
  Duration heartbeat_interval{30'000};  // told to workers at registration
  Duration heartbeat_timeout{60'000};   // silence that makes a worker UNHEALTHY
  Duration reassignment_grace{0};       // UNHEALTHY for this long: its work moves
  int max_reassignments = 3;            // per attempt; then WORKER_LOST
  Duration drain_timeout{300'000};      // a draining worker's leftovers move after this
};

// A connected worker's outbound side (a WebSocket session, or a long-poll mailbox).
class WorkerChannel {
 public:
  virtual ~WorkerChannel() = default;
  // Queues the message; never blocks. Thread-safe.
  virtual void Send(const protocol::ServerMessage& message) = 0;
  // Ends the connection (a newer registration of the same worker replaced it).
  virtual void Close() = 0;
};

// Several server instances on one database: where a dispatch goes that no worker
// connected to this instance can take, and where another instance's comes from
// (server/instance_exchange.h drives it through the store's OfferBoard).
//
// A dispatch waiting here with no ONLINE worker that could ever take it (none connected
// handles its command, node and tags) is offered: it leaves the queue, stays a dispatch
// of this coordinator (shown waiting), and its start and result come back through
// OfferStarted() and OfferDone(). Cancel withdraws it. A step re-attached after a
// takeover is offered at once under its id, which makes this instance the owner of
// whatever the previous owner offered. The other way, TakeForeign() runs another
// instance's dispatch on a worker here: it is placed like any other but never offered
// on, and given back when no worker here can take it any more.
class DispatchExchange {
 public:
  virtual ~DispatchExchange() = default;
  // Engine thread; none of them blocks.
  virtual void Offer(const RunRequest& request) = 0;
  virtual void Withdraw(const std::string& dispatch_id) = 0;
  virtual void GiveBack(const std::string& dispatch_id) = 0;
  // A foreign dispatch became this instance's own (it took the execution over): the
  // board's copy goes.
  virtual void Adopted(const std::string& dispatch_id) = 0;
};

// The in-process local worker.
struct LocalWorkerOptions {
  std::string id = "local";  // reserved: a remote worker cannot register with it
  std::string host;          // shown by the API
  int capacity = 1;          // the engine's --parallel
  // The built-in runners by step type (shell, http); owned by the caller, outlive the
  // coordinator's use of them.
  std::map<StepType, Runner*> runners;
};

// The local worker for an engine with these options and built-in runners (either may be
// null): capacity = the engine's, host = this machine's name.
LocalWorkerOptions LocalWorkerFor(const EngineOptions& engine, Runner* shell, Runner* http);

struct CoordinatorStats {
  uint64_t dispatched = 0;         // commands sent (placements)
  uint64_t placed_at_prepare = 0;  // of which recorded in the engine's batch (no own write)
  uint64_t reassigned = 0;         // assignments moved off a worker
  uint64_t lost = 0;               // attempts failed WORKER_LOST
  uint64_t stale = 0;              // messages refused STALE_ASSIGNMENT
  uint64_t heartbeat_misses = 0;   // workers that went UNHEALTHY
  // Start() to the worker's accepted ack, in microseconds: counts per bucket upper bound
  // (the last bucket is +Inf), and their sum. A dispatch placed at Prepare() is durable by
  // Start(): this no longer includes its commit (see the figure from Prepare below).
  static constexpr int64_t kLatencyBucketsUs[] = {
      100, 250, 500, 1'000, 2'500, 5'000, 10'000, 25'000, 100'000, 1'000'000, 10'000'000};
  static constexpr size_t kBuckets = std::size(kLatencyBucketsUs) + 1;
  uint64_t latency_counts[kBuckets] = {};
  uint64_t latency_sum_us = 0;
  uint64_t latency_total = 0;
  // Over the last kLatencyWindow dispatches (0 before any): what bench/ quotes.
  static constexpr size_t kLatencyWindow = 4096;
  int64_t latency_p50_us = 0, latency_p99_us = 0;
  // Prepare() to the accepted ack, for the dispatches the engine prepared: includes the
  // commit of the engine's batch that makes the dispatch durable. Same window.
  uint64_t prepared_latency_total = 0;
  uint64_t prepared_latency_sum_us = 0;
  int64_t prepared_latency_p50_us = 0, prepared_latency_p99_us = 0;
};

// Where one dispatch is (coordinator_internal.h).
enum class DispatchStatus : uint8_t;

class Coordinator {
 public:
  // `store` is read by Load() only; writes go through `committer`.
  Coordinator(EventLoop* loop, Committer* committer, CoordinatorOptions options);
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Before the engine recovers: the stored workers and active assignments, so that
  // Reattach() can take the running ones over. Workers holding work are registered as
  // OFFLINE with heartbeat_timeout to come back.
  Status Load(WorkerStore* store);

  // Called with (execution id, step id, details) for every stale message.
  void SetStaleHandler(std::function<void(const std::string&, const std::string&, Json)> f) {
    on_stale_ = std::move(f);
  }

  // Called with (execution id, step id, {from_worker, to_worker, reason, assignment_id})
  // each time a step's command moves to another worker.
  void SetReassignHandler(std::function<void(const std::string&, const std::string&, Json)> f) {
    on_reassign_ = std::move(f);
  }

  // ---- the worker side ----
  // CONFLICT when the id is taken in another namespace.
  Result<protocol::Registered> Register(const std::string& ns, const protocol::Register& message,
                                        std::shared_ptr<WorkerChannel> channel);
  // Heartbeat, ack, progress, result: STALE_ASSIGNMENT (errc::kStaleAssignment) for an
  // assignment that is not the sender's current one; NOT_FOUND for a worker that is not
  // registered (it must register again).
  Status OnMessage(const std::string& worker_id, const protocol::WorkerMessage& message);
  // While a WriteGroup lives, the coordinator's writes are gathered and submitted as one
  // batch when it ends, an assignment written several times (ack, then result) once, in
  // its last state. Open one around the messages of one frame. Nests; engine thread.
  class [[nodiscard]] WriteGroup {
   public:
    explicit WriteGroup(Coordinator* c) : c_(c) { ++c_->write_group_depth_; }
    ~WriteGroup() {
      if (--c_->write_group_depth_ == 0) c_->SubmitGroup();
    }
    WriteGroup(const WriteGroup&) = delete;
    WriteGroup& operator=(const WriteGroup&) = delete;

   private:
    Coordinator* c_;
  };
  WriteGroup GroupWrites() { return WriteGroup(this); }
  // A sign of life without a message (a long-poll): re-arms the worker's deadline, makes
  // an UNHEALTHY worker ONLINE again. NOT_FOUND as for OnMessage.
  Status Touch(const std::string& worker_id);
  // The worker is leaving: OFFLINE, no deadline; anything it still holds moves at once.
  Status Deregister(const std::string& worker_id);
  // The channel closed; the worker keeps its assignments until its deadline passes.
  void Disconnected(const std::string& worker_id, const WorkerChannel* channel);
  // No new work; running work finishes or moves after drain_timeout. NOT_FOUND unless a
  // worker of `ns`.
  Status Drain(const std::string& ns, const std::string& worker_id);

  // ---- the engine side ----
  // The Runner of `command` steps (remote workers).
  Runner* runner();
  // Registers the in-process local worker. Once, before the engine starts.
  void AddLocalWorker(LocalWorkerOptions options);
  // The Runner of the local worker's step types (shell, http).
  Runner* local_runner();

  // ---- other instances (DispatchExchange) ----
  // Before the engine starts; not owned, outlives the coordinator's use of it.
  void SetExchange(DispatchExchange* exchange) { exchange_ = exchange; }
  // An offered dispatch's taker started it / it ended with `result`. Ignored for an id
  // this coordinator does not have on offer (cancelled meanwhile, or never offered).
  void OfferStarted(const std::string& dispatch_id);
  // Its progress on the taker's worker (`data` may carry the checkpoint), as a worker's
  // command.progress would report it.
  void OfferProgress(const std::string& dispatch_id, int progress, Json data);
  void OfferDone(const std::string& dispatch_id, RunResult result);
  // Of these requests (another instance's, or this one's on offer), the ones workers here
  // have room for now, as many as there are free slots.
  std::vector<size_t> Takeable(const std::vector<RunRequest>& requests) const;
  // Runs a taken dispatch here. This instance's own offer comes home (false: the exchange
  // drops the offer); another's runs with `callbacks` reporting back (true).
  bool TakeForeign(const RunRequest& request, RunCallbacks callbacks);
  // A taken dispatch this instance lost (its take expired, or the owner withdrew it):
  // cancelled here, without a result.
  void DropForeign(const std::string& dispatch_id);
  // Offers what waits with no worker here able to take it; gives back foreign ones.
  void OfferStranded();
  // Dispatches on offer to the other instances: how many, and their ids.
  size_t OfferedCount() const { return offered_; }
  std::vector<std::string> OfferedIds() const;

  // ---- the API ----
  const Registry& registry() const { return registry_; }
  // Active assignments (waiting, dispatched, accepted, running) of `ns` (empty = all),
  // of one worker (empty = all).
  std::vector<AssignmentRecord> Active(const std::string& ns, const std::string& worker_id) const;
  // Why a step of this execution waits for a worker ("" when none waits).
  std::string WaitingReason(const std::string& execution_id) const;
  // The same for every such step: step id -> why no worker takes it.
  std::map<std::string, std::string> WaitingReasons(const std::string& execution_id) const;
  // Dispatches waiting for a worker, in every namespace.
  size_t WaitingCount() const { return queue_.size() + local_queue_.size(); }
  // Counters, with the latency quantiles computed now.
  CoordinatorStats stats() const;
  const CoordinatorOptions& options() const { return options_; }

 private:
  struct Dispatch;
  class RemoteRunner;
  class LocalRunner;
  // The last kLatencyWindow samples (microseconds), for the quantiles.
  class LatencyWindow {
   public:
    void Add(int64_t us);
    // (p50, p99); (0, 0) before any sample.
    std::pair<int64_t, int64_t> Quantiles() const;

   private:
    std::vector<int64_t> ring_;
    size_t next_ = 0;
  };

  // coordinator_dispatch.cpp
  void Enqueue(Dispatch& d, bool front);
  // As much of the queue as fits. `prepared` (in the queue), if placed, is recorded in
  // `engine_batch` instead of a write of its own.
  void Place(const Dispatch* prepared = nullptr, WriteBatch* engine_batch = nullptr);
  // Free slots of the ONLINE workers: {the local worker's, the remote ones'}.
  std::pair<int, int> FreeSlots() const;
  void PlaceFrom(std::deque<Dispatch*>& queue, int room, const Dispatch* prepared,
                 WriteBatch* engine_batch);
  Placement PlacementFor(const Dispatch& d) const;
  void Assign(Dispatch& d, WorkerEntry& w, WriteBatch* engine_batch = nullptr);
  void SendCommand(Dispatch& d);
  // The local worker's "send": the built-in runner starts it, its callbacks come back here.
  void RunLocal(Dispatch& d);
  // The built-in runner of a local dispatch's step type.
  Runner* LocalRunnerFor(const Dispatch& d) const;
  void OnLocalDone(const std::string& current_id, RunResult result);
  // coordinator_prepare.cpp: the runner's Prepare, Start and Cancel.
  void Prepare(const RunRequest& request, WriteBatch& batch);
  void Start(const RunRequest& request, RunCallbacks callbacks);
  void CancelFromEngine(const std::string& dispatch_id);
  void RecordLatency(Dispatch& d);
  void Finish(Dispatch& d, RunResult result, DispatchStatus final_status);
  void CancelDispatch(const std::string& dispatch_id, const std::string& reason);
  AssignmentRecord ToRecord(const Dispatch& d) const;
  void WriteAssignment(const Dispatch& d, std::function<void(const Status&)> then = {});
  void Reattach(const RunRequest& request, RunCallbacks callbacks);
  Dispatch* Current(const std::string& assignment_id, const std::string& worker_id);
  void Stale(const std::string& worker_id, const std::string& assignment_id, const char* what);

  // coordinator_exchange.cpp
  static Placement PlacementOf(const std::string& ns, const Json& spec);
  // Offers `d` if an exchange is set and no worker here can ever take it; true if it did.
  bool OfferIfStranded(Dispatch& d);
  void OfferOut(Dispatch& d);

  // coordinator_health.cpp
  void ArmDeadline(WorkerEntry& w);
  void OnDeadline(const std::string& worker_id);
  void Reassign(const std::string& worker_id, const std::string& reason);
  // Moves one dispatch off `w` (or fails it WORKER_LOST past max_reassignments); the
  // caller runs Place(). `revoke`: cancel the old id when `w` is heard from again (not
  // when `w` is already a new process that never had it).
  void MoveAway(WorkerEntry& w, const std::string& dispatch_id, const std::string& reason,
                bool revoke);
  void WriteWorker(const WorkerEntry& w);
  void Write(std::unique_ptr<WriteBatch> batch, std::function<void(const Status&)> then);
  void SubmitGroup();  // what the last WriteGroup gathered
  int write_group_depth_ = 0;
  std::unique_ptr<WriteBatch> group_;
  std::unordered_map<std::string, size_t> group_assignments_;  // dispatch id -> index
  std::vector<std::function<void(const Status&)>> group_thens_;
  void ResendUnacknowledged(WorkerEntry& w);
  // Sends command.cancel for what was moved off this worker while it was unreachable.
  void CancelRevoked(const std::string& worker_id);
  void CancelDrainTimer(const std::string& worker_id);

  EventLoop* loop_;
  Committer* committer_;
  CoordinatorOptions options_;
  Registry registry_;
  std::map<std::string, std::shared_ptr<WorkerChannel>> channels_;  // by worker id
  // A worker's heartbeat deadline: one timer, due `heartbeat_timeout` after `heard` (the
  // monotonic time it was heard from when the timer was set). A message moves `heard`
  // only; the timer, when it fires early, arms itself again for the rest (OnDeadline).
  struct Deadline {
    TimerId timer = 0;
    int64_t heard = 0;  // Clock::MonotonicMs()
  };
  std::map<std::string, Deadline> deadlines_;  // by worker id
  void ScheduleDeadline(const std::string& worker_id, Deadline& d);
  std::map<std::string, TimerId> drain_timers_;  // by worker id
  // Hashed, not ordered: tens of thousands of ids sharing a long time-ordered prefix made
  // every lookup a dozen long compares. Found by the dispatch's own id (its request's
  // assignment_id, never changed once kept): a copy of the id per waiting step was a heap
  // block each, and a view of it half the node. Only Keep() inserts.
  struct DispatchId {
    std::string_view operator()(const Dispatch& d) const;
  };
  IdSet<std::unique_ptr<Dispatch>, DispatchId> dispatches_;
  Dispatch& Keep(std::unique_ptr<Dispatch> d);            // replaces one of the same id
  void Forget(std::string_view dispatch_id);              // erases it, if kept
  std::unordered_map<std::string, std::string> current_;  // worker-facing id -> dispatch id
  // Dispatches waiting for a worker, in placement order. Each points into dispatches_,
  // and leaves its queue before it leaves dispatches_ (Finish, Keep, OfferIfStranded).
  std::deque<Dispatch*> queue_;
  std::deque<Dispatch*> local_queue_;               // ... for the local worker
  std::map<std::string, AssignmentRecord> loaded_;  // by dispatch id, until re-attached
  // Worker id -> the session that held loaded_ work: a holder registered under another
  // one by the time its step is re-attached is a new process that lost it.
  std::map<std::string, std::string> loaded_sessions_;
  // Worker id -> worker-facing ids moved off it: cancelled when it is heard from again.
  std::map<std::string, std::set<std::string>> revoked_;
  std::unique_ptr<RemoteRunner> runner_;
  std::unique_ptr<LocalRunner> local_runner_;
  LocalWorkerOptions local_;
  std::function<void(const std::string&, const std::string&, Json)> on_stale_;
  std::function<void(const std::string&, const std::string&, Json)> on_reassign_;
  // Prepared when no worker had room: nothing recorded, Start() queues them. By id, with
  // the time of Prepare() (for the latency from it).
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> prepared_unplaced_;
  // Prepared dispatches the coordinator ended before their Start() (WORKER_LOST, a failed
  // write): their result, for Start() to deliver.
  std::unordered_map<std::string, RunResult> ended_before_start_;
  DispatchExchange* exchange_ = nullptr;
  size_t offered_ = 0;  // dispatches on offer
  CoordinatorStats stats_;
  LatencyWindow latency_window_, prepared_latency_window_;
  uint64_t next_reassignment_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace baton::workers
