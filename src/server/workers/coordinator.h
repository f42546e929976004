// The coordinator: runs `command` steps on remote workers (docs/coordinator.md).
//
// WORK IN PROGRESS (branch wip-coordinator): the interface the next session implements.
// Needs from the engine: RunRequest gains `ns`, `priority` and `step_index`; a
// `step.stale_result` event; re-attaching running command steps at recovery instead of
// failing them with ENGINE_RESTART.
//
// Dispatch: Start() queues a RunRequest (priority, then FIFO); Place() picks a worker
// through the Registry; the AssignmentRecord is committed (group commit) before the
// `command` message is sent. Worker-facing ids are `<dispatch>` then `<dispatch>.r<n>`
// after the n-th reassignment; a message naming any other id, or sent by a worker that
// does not hold it, is STALE_ASSIGNMENT and changes nothing.
//
// Failure detection: each worker has a deadline timer at last_seen + heartbeat_timeout,
// re-armed by every message. Firing: UNHEALTHY; reassignment_grace later its accepted or
// running assignments move to other ONLINE workers with their last checkpoint, up to
// max_reassignments (then the attempt fails WORKER_LOST). A worker that comes back gets
// `command.cancel` for what it no longer holds.
//
// Threading: every member on the engine loop's thread, except the channels' Send().
#pragma once

#include <baton/clock.h>
#include <baton/engine.h>
#include <baton/runner.h>

#include "protocol/worker_protocol.h"
#include "server/workers/registry.h"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace baton::server {

struct CoordinatorOptions {
  Duration heartbeat_interval{30'000};
  Duration heartbeat_timeout{60'000};
  Duration reassignment_grace{0};
  int max_reassignments = 3;
  Duration drain_timeout{300'000};
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

struct AssignmentView {
  std::string id;           // the current worker-facing id
  std::string dispatch_id;  // the engine's assignment id
  std::string execution_id, step_id;
  int attempt = 1;
  std::string worker_id;  // empty while waiting
  std::string status;     // waiting | dispatched | accepted | running | ...
  std::string waiting_reason;
  int progress = 0;
  Json checkpoint;
  int reassignments = 0;
  TimeMs created_at = 0, updated_at = 0;
};

class Coordinator {
 public:
  struct Stats {
    uint64_t dispatched = 0, reassigned = 0, lost = 0, stale = 0, heartbeat_misses = 0;
  };

  Coordinator(EventLoop* loop, Committer* committer, CoordinatorOptions options);
  ~Coordinator();

  // ---- the worker side ----
  Result<protocol::Registered> Register(const std::string& ns, const protocol::Register& message,
                                        std::shared_ptr<WorkerChannel> channel);
  // Heartbeat, ack, progress, result. STALE_ASSIGNMENT (errc::kStaleAssignment) for an
  // assignment that is not the sender's current one; NOT_FOUND for an unknown worker.
  Status OnMessage(const std::string& worker_id, const protocol::WorkerMessage& message);
  // The channel closed; the worker keeps its assignments until its deadline passes.
  void Disconnected(const std::string& worker_id, const WorkerChannel* channel);
  // No new work; running work finishes or is reassigned after drain_timeout.
  Status Drain(const std::string& ns, const std::string& worker_id);

  // ---- the engine side: the Runner of `command` steps ----
  Runner* runner();

  // ---- the API ----
  const Registry& registry() const { return registry_; }
  std::vector<AssignmentView> Assignments(const std::string& ns,
                                          const std::string& worker_id) const;
  Stats stats() const { return stats_; }

 private:
  struct Dispatch;
  class RemoteRunner;

  void Place();                                // as much of the queue as fits
  void Send(Dispatch& d, WorkerEntry& w);      // TODO: after the assignment is durable
  void Finish(Dispatch& d, RunResult result);  // erases `d`
  void CancelDispatch(const std::string& dispatch_id, const std::string& reason);
  void ArmDeadline(WorkerEntry& w);
  void OnDeadline(const std::string& worker_id);
  void Reassign(const std::string& worker_id, const std::string& reason);

  EventLoop* loop_;
  Committer* committer_;
  CoordinatorOptions options_;
  Registry registry_;
  std::map<std::string, std::shared_ptr<WorkerChannel>> channels_;  // by worker id
  std::map<std::string, TimerId> deadlines_;                        // by worker id
  std::map<std::string, std::unique_ptr<Dispatch>> dispatches_;     // by dispatch id
  std::map<std::string, std::string> current_;  // worker-facing id -> dispatch id
  std::deque<std::string> queue_;               // dispatch ids waiting for a worker
  std::unique_ptr<RemoteRunner> runner_;
  Stats stats_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace baton::server
