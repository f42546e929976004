// The health half of the coordinator: per-worker deadlines, UNHEALTHY, reassignment with
// the last checkpoint (or WORKER_LOST), and the coordinator's writes.
#include "workers/coordinator_internal.h"

#include <algorithm>

namespace baton::workers {

void Coordinator::Write(std::unique_ptr<WriteBatch> batch,
                        std::function<void(const Status&)> then) {
  if (write_group_depth_ > 0) {
    if (!group_) group_ = std::make_unique<WriteBatch>();
    for (AssignmentRecord& a : batch->assignments) {
      auto [at, added] = group_assignments_.try_emplace(a.dispatch_id, group_->assignments.size());
      if (added) {
        group_->assignments.push_back(std::move(a));
      } else {
        group_->assignments[at->second] = std::move(a);  // upserts: the last state is enough
      }
    }
    for (WorkerRecord& w : batch->workers) group_->workers.push_back(std::move(w));
    for (ReassignmentRecord& r : batch->reassignments) {
      group_->reassignments.push_back(std::move(r));
    }
    if (then) group_thens_.push_back(std::move(then));
    return;
  }
  if (committer_ == nullptr) {  // unit tests of the in-memory logic
    if (then) then(Status::Ok());
    return;
  }
  // Done callbacks may come from the committer's thread: back to the loop.
  committer_->SubmitOwned(std::move(batch), [loop = loop_, alive = std::weak_ptr<bool>(alive_),
                                             then = std::move(then)](const Status& s) {
    if (!then) return;
    loop->Post([alive, then, s] {
      if (!alive.expired()) then(s);
    });
  });
}

void Coordinator::SubmitGroup() {
  group_assignments_.clear();
  if (!group_) return;
  std::unique_ptr<WriteBatch> batch = std::move(group_);
  auto thens = std::move(group_thens_);
  group_thens_.clear();
  if (thens.empty()) return Write(std::move(batch), {});
  Write(std::move(batch), [thens = std::move(thens)](const Status& s) {
    for (const auto& then : thens) then(s);
  });
}

void Coordinator::WriteWorker(const WorkerEntry& w) {
  auto batch = std::make_unique<WriteBatch>();
  WorkerRecord r;
  r.id = w.id;
  r.ns = w.ns;
  r.node = w.node;
  r.host = w.host;
  r.capacity = w.capacity;
  r.commands = w.commands;
  r.tags = w.tags;
  r.status = ToString(w.state);
  r.session = w.session;
  r.registered_at = w.registered_at;
  r.last_heartbeat = w.last_seen;
  r.updated_at = loop_->Now();
  batch->workers.push_back(std::move(r));
  Write(std::move(batch), {});
}

void Coordinator::ArmDeadline(WorkerEntry& w) {
  // When it was last heard from, on the monotonic clock: a wall-clock step moves no
  // deadline (clock.h).
  const int64_t heard = loop_->clock().MonotonicMs() - (loop_->Now() - w.last_seen);
  auto [it, added] = deadlines_.try_emplace(w.id);
  Deadline& d = it->second;
  if (!added) {
    // Armed for an earlier time: the timer stays, and arms itself again when it fires
    // (OnDeadline). A busy worker path otherwise cancels and schedules a timer for every
    // ack and every result (about 1 % of the engine thread's samples).
    if (heard >= d.heard) {
      d.heard = heard;
      return;
    }
    loop_->CancelTimer(d.timer);
  }
  d.heard = heard;
  ScheduleDeadline(w.id, d);
}

void Coordinator::ScheduleDeadline(const std::string& worker_id, Deadline& d) {
  const int64_t left = d.heard + options_.heartbeat_timeout.count() - loop_->clock().MonotonicMs();
  d.timer = loop_->ScheduleAfter(Duration(std::max<int64_t>(left, 0)),
                                 [this, alive = std::weak_ptr<bool>(alive_), id = worker_id] {
                                   if (!alive.expired()) OnDeadline(id);
                                 });
}

void Coordinator::OnDeadline(const std::string& worker_id) {
  if (auto it = deadlines_.find(worker_id); it != deadlines_.end()) {
    // Heard from since the timer was set: the rest of the way.
    if (loop_->clock().MonotonicMs() < it->second.heard + options_.heartbeat_timeout.count()) {
      return ScheduleDeadline(worker_id, it->second);
    }
    deadlines_.erase(it);
  }
  WorkerEntry* w = registry_.Find(worker_id);
  if (w == nullptr) return;
  // A draining or deregistered worker with nothing left simply goes away; one loaded
  // after a restart (OFFLINE, holding work) that did not come back is lost like any.
  if (w->held.empty() && w->state != WorkerState::kOnline) {
    if (w->state != WorkerState::kOffline) {
      w->state = WorkerState::kOffline;
      WriteWorker(*w);
    }
    return;
  }
  w->state = WorkerState::kUnhealthy;
  ++stats_.heartbeat_misses;
  WriteWorker(*w);
  const std::string reason = "worker " + worker_id + " sent no heartbeat for " +
                             FormatDuration(options_.heartbeat_timeout);
  // Unless it is heard from meanwhile: one that came back and went silent again has a
  // later grace of its own (this one may end first when the grace exceeds the timeout).
  const TimeMs silent_since = w->last_seen;
  loop_->ScheduleAfter(options_.reassignment_grace, [this, alive = std::weak_ptr<bool>(alive_),
                                                     worker_id, reason, silent_since] {
    if (alive.expired()) return;
    const WorkerEntry* again = registry_.Find(worker_id);
    if (again != nullptr && again->state == WorkerState::kUnhealthy &&
        again->last_seen == silent_since) {
      Reassign(worker_id, reason);
    }
  });
}

void Coordinator::Reassign(const std::string& worker_id, const std::string& reason) {
  WorkerEntry* w = registry_.Find(worker_id);
  if (w == nullptr) return;
  const std::set<std::string> held = w->held;
  for (const std::string& dispatch_id : held) MoveAway(*w, dispatch_id, reason, /*revoke=*/true);
  Place();
}

void Coordinator::MoveAway(WorkerEntry& w, const std::string& dispatch_id,
                           const std::string& reason, bool revoke) {
  const std::string& worker_id = w.id;
  auto it = dispatches_.find(dispatch_id);
  if (it == dispatches_.end()) return;
  Dispatch& d = **it;
  w.held.erase(dispatch_id);
  current_.erase(d.current_id());
  // (Prepared, not started: it never had the command, there is nothing to cancel.)
  if (revoke && d.placed && !d.awaiting_start) {
    revoked_[worker_id].insert(d.current_id());
  }
  if (d.reassignments >= options_.max_reassignments) {
    ++stats_.lost;
    auto batch = std::make_unique<WriteBatch>();
    ReassignmentRecord r;
    r.id = "rsg_" + std::to_string(loop_->Now()) + "_" + std::to_string(++next_reassignment_);
    r.ns = d.request.ns;
    r.dispatch_id = dispatch_id;
    r.assignment_id = d.current_id();
    r.execution_id = d.execution_id();
    r.step_id = d.step_id();
    r.from_worker = worker_id;
    r.reason = reason + "; not moved: it was moved " + std::to_string(d.reassignments) +
               " times already (max_reassignments)";
    r.checkpoint = d.checkpoint();
    r.at = loop_->Now();
    batch->reassignments.push_back(std::move(r));
    Write(std::move(batch), {});
    RunResult result;
    result.status =
        Status(errc::kWorkerLost, reason + "; moved " + std::to_string(d.reassignments) +
                                      " times already (max_reassignments)");
    Finish(d, std::move(result), DispatchStatus::kLost);
    return;
  }
  // Accepted or running work moves with its checkpoint; a command it never acknowledged
  // is simply placed again. Either way under a new worker-facing id, so whatever the old
  // holder still sends for it is stale.
  ++d.reassignments;
  ++stats_.reassigned;
  d.extra().previous_worker = worker_id;
  d.extra().reassign_reason = reason;
  d.SetWorker("");
  d.Unplace();
  d.status = DispatchStatus::kWaiting;
  d.extra().refused_by.insert(worker_id);
  // Stored as waiting before Place() records where it went: if nobody takes it, the
  // store must not keep naming the lost holder (a restart would hand it back).
  WriteAssignment(d);
  Enqueue(d, /*front=*/true);
}

void Coordinator::CancelRevoked(const std::string& worker_id) {
  auto it = revoked_.find(worker_id);
  if (it == revoked_.end()) return;
  auto ch = channels_.find(worker_id);
  if (ch == channels_.end()) return;  // kept until it has a channel again
  for (const std::string& id : it->second) {
    ch->second->Send(protocol::CommandCancel{
        id, "moved to another worker while " + worker_id + " was unreachable"});
  }
  revoked_.erase(it);
}

void Coordinator::ResendUnacknowledged(WorkerEntry& w) {
  for (const std::string& dispatch_id : w.held) {
    auto it = dispatches_.find(dispatch_id);
    if (it == dispatches_.end()) continue;
    Dispatch& d = **it;
    // Placed but not acknowledged: the command may never have reached it (it was sent on
    // a connection that died, or not sent at all before a restart). A worker that has it
    // already acknowledges it again without running it twice.
    if (d.status == DispatchStatus::kDispatched && d.durable) SendCommand(d);
  }
}

}  // namespace baton::workers
