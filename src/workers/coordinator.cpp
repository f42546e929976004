// The worker side of the coordinator: registration, the messages workers send, drain
// and deregistration, and loading the state a previous process left.
#include "workers/coordinator_internal.h"

#include <algorithm>
#include <tuple>

namespace baton::workers {

Status Coordinator::Load(WorkerStore* store) {
  AssignmentFilter active;
  active.active_only = true;
  active.limit = 0;
  Result<std::vector<AssignmentRecord>> assignments = store->ListAssignments(active);
  if (!assignments.ok()) return assignments.status();
  Result<std::vector<WorkerRecord>> workers = store->ListWorkers("");
  if (!workers.ok()) return workers.status();
  std::set<std::string> holders;
  for (AssignmentRecord& a : *assignments) {
    if (!a.worker_id.empty()) holders.insert(a.worker_id);
    loaded_.emplace(a.dispatch_id, std::move(a));
  }
  for (const WorkerRecord& r : *workers) {
    if (!holders.count(r.id)) continue;  // nothing to wait for: it registers afresh
    loaded_sessions_[r.id] = r.session;
    WorkerEntry w;
    w.id = r.id;
    w.ns = r.ns;
    w.node = r.node;
    w.host = r.host;
    w.capacity = r.capacity;
    w.commands = r.commands;
    w.tags = r.tags;
    w.session = r.session;
    w.registered_at = r.registered_at;
    w.last_seen = loop_->Now();
    WorkerEntry& entry = registry_.Register(std::move(w));
    entry.state = WorkerState::kOffline;  // until it registers again; gets no new work
    ArmDeadline(entry);
  }
  return Status::Ok();
}

Result<protocol::Registered> Coordinator::Register(const std::string& ns,
                                                   const protocol::Register& m,
                                                   std::shared_ptr<WorkerChannel> channel) {
  if (!local_.runners.empty() && m.worker_id == local_.id) {
    return Status(errc::kConflict, "worker id '" + m.worker_id +
                                       "' is reserved for the server's in-process local worker");
  }
  if (const WorkerEntry* existing = registry_.Find(m.worker_id);
      existing != nullptr && existing->ns != ns) {
    return Status(errc::kConflict, "worker id '" + m.worker_id + "' is taken in another namespace");
  }
  if (WorkerEntry* previous = registry_.Find(m.worker_id);
      previous != nullptr && !m.session_id.empty() && !previous->session.empty() &&
      previous->session != m.session_id) {
    // A new process under a known id (a restart: the id defaults to the host name). The
    // old one is gone, and so is whatever it was running: place it again now, with its
    // checkpoint, rather than wait for a heartbeat timeout or keep it booked on the new
    // process. The new process may take it: what the old one lost does not count
    // against it (issue 11, defect 5). Sessions are stored with the worker, so this
    // holds across a server restart too; a worker that sends no session (older
    // workers) is taken as the same process, so that its running work re-attaches.
    if (!previous->held.empty()) {
      Reassign(m.worker_id, "worker " + m.worker_id + " restarted (a new process registered)");
    }
    for (const auto& d : dispatches_) d->Unrefuse(m.worker_id);
    revoked_.erase(m.worker_id);  // the new process never had those ids
  }
  WorkerEntry w;
  w.id = m.worker_id;
  w.ns = ns;
  w.session = m.session_id;
  w.node = m.node_id.empty() ? m.worker_id : m.node_id;
  w.host = m.host;
  w.capacity = m.capacity;
  w.commands = m.commands;
  w.tags = m.tags;
  w.registered_at = w.last_seen = loop_->Now();
  WorkerEntry& entry = registry_.Register(std::move(w));
  CancelDrainTimer(entry.id);
  if (auto old = channels_.find(entry.id); old != channels_.end() && old->second != channel) {
    old->second->Close();
  }
  channels_[entry.id] = std::move(channel);
  ArmDeadline(entry);
  WriteWorker(entry);
  protocol::Registered r;
  r.worker_id = entry.id;
  r.heartbeat_interval_ms = options_.heartbeat_interval.count();
  r.heartbeat_timeout_ms = options_.heartbeat_timeout.count();
  // After the `registered` answer: commands it may have missed while away, then new work.
  // What it ran and no longer holds is refused (STALE_ASSIGNMENT) when it reports.
  const std::string id = entry.id;
  loop_->Post([this, alive = std::weak_ptr<bool>(alive_), id] {
    if (alive.expired()) return;
    CancelRevoked(id);
    if (WorkerEntry* again = registry_.Find(id)) ResendUnacknowledged(*again);
    Place();
  });
  return r;
}

void Coordinator::Disconnected(const std::string& worker_id, const WorkerChannel* channel) {
  auto it = channels_.find(worker_id);
  if (it != channels_.end() && it->second.get() == channel) channels_.erase(it);
}

Status Coordinator::Drain(const std::string& ns, const std::string& worker_id) {
  WorkerEntry* w = registry_.Find(worker_id);
  if (w != nullptr && w->local) {
    return Status(errc::kConflict,
                  "the local worker runs the server's own shell and http steps "
                  "and cannot be drained; stop the server instead");
  }
  if (w == nullptr || w->ns != ns) return Status(errc::kNotFound, "no worker '" + worker_id + "'");
  if (w->state == WorkerState::kDraining || w->state == WorkerState::kOffline) {
    return Status::Ok();
  }
  w->state = WorkerState::kDraining;
  WriteWorker(*w);
  CancelDrainTimer(worker_id);
  drain_timers_[worker_id] = loop_->ScheduleAfter(
      options_.drain_timeout, [this, alive = std::weak_ptr<bool>(alive_), worker_id] {
        if (alive.expired()) return;
        drain_timers_.erase(worker_id);
        const WorkerEntry* again = registry_.Find(worker_id);
        if (again != nullptr && again->state == WorkerState::kDraining && !again->held.empty()) {
          Reassign(worker_id, "worker " + worker_id + " did not finish draining in time");
        }
      });
  return Status::Ok();
}

void Coordinator::CancelDrainTimer(const std::string& worker_id) {
  // A drain that ended (it registered again, ONLINE) must not move the work of a later one
  // early.
  if (auto it = drain_timers_.find(worker_id); it != drain_timers_.end()) {
    loop_->CancelTimer(it->second);
    drain_timers_.erase(it);
  }
}

Status Coordinator::Deregister(const std::string& worker_id) {
  WorkerEntry* w = registry_.Find(worker_id);
  if (w == nullptr) return Status(errc::kNotFound, "worker '" + worker_id + "' is not registered");
  w->state = WorkerState::kOffline;
  if (auto it = deadlines_.find(worker_id); it != deadlines_.end()) {
    loop_->CancelTimer(it->second.timer);
    deadlines_.erase(it);
  }
  channels_.erase(worker_id);
  WriteWorker(*w);
  if (!w->held.empty()) Reassign(worker_id, "worker " + worker_id + " deregistered");
  return Status::Ok();
}

CoordinatorStats Coordinator::stats() const {
  CoordinatorStats s = stats_;
  std::tie(s.latency_p50_us, s.latency_p99_us) = latency_window_.Quantiles();
  std::tie(s.prepared_latency_p50_us, s.prepared_latency_p99_us) =
      prepared_latency_window_.Quantiles();
  return s;
}

Status Coordinator::Touch(const std::string& worker_id) {
  WorkerEntry* w = registry_.Find(worker_id);
  if (w == nullptr || w->state == WorkerState::kOffline) {
    return Status(errc::kNotFound, "worker '" + worker_id + "' is not registered");
  }
  w->last_seen = loop_->Now();
  if (w->state == WorkerState::kUnhealthy) {
    w->state = WorkerState::kOnline;
    WriteWorker(*w);
  }
  CancelRevoked(worker_id);
  ArmDeadline(*w);
  return Status::Ok();
}

Status Coordinator::OnMessage(const std::string& worker_id, const protocol::WorkerMessage& m) {
  if (Status alive = Touch(worker_id); !alive.ok()) return alive;
  WorkerEntry* w = registry_.Find(worker_id);
  if (const auto* hb = std::get_if<protocol::Heartbeat>(&m)) {
    w->reported_load = hb->current_load;
    if (hb->status == protocol::WorkerStatus::kDraining && w->state != WorkerState::kDraining) {
      return Drain(w->ns, w->id);
    }
    return Status::Ok();
  }
  if (std::holds_alternative<protocol::Register>(m)) {
    return Status(errc::kValidation, "already registered");
  }
  std::string assignment;
  std::visit(
      [&](const auto& x) {
        if constexpr (requires { x.assignment_id; }) assignment = x.assignment_id;
      },
      m);
  if (assignment.empty()) return Status::Ok();  // a message without one (deregister)
  Dispatch* d = Current(assignment, worker_id);
  if (d == nullptr) {
    const char* what = std::holds_alternative<protocol::CommandResult>(m) ? "result"
                       : std::holds_alternative<protocol::CommandAck>(m)  ? "ack"
                                                                          : "progress";
    Stale(worker_id, assignment, what);
    return Status(errc::kStaleAssignment, "assignment '" + assignment +
                                              "' is no longer held by worker '" + worker_id +
                                              "'; its " + what + " was ignored");
  }
  d->updated_at = loop_->Now();
  d->sent = true;  // whatever it answers, it has the command
  if (const auto* ack = std::get_if<protocol::CommandAck>(&m)) {
    if (ack->status == protocol::AckStatus::kRejected) {
      d->extra().refused_by.insert(worker_id);
      w->held.erase(d->request.assignment_id);
      current_.erase(d->current_id());
      d->SetWorker("");
      d->Unplace();
      d->status = DispatchStatus::kWaiting;
      WriteAssignment(*d);
      Enqueue(*d, /*front=*/true);
      Place();
      return Status::Ok();
    }
    if (d->status != DispatchStatus::kDispatched) return Status::Ok();  // a repeated ack
    d->status = DispatchStatus::kAccepted;
    RecordLatency(*d);
    WriteAssignment(*d);
    d->callbacks.Started();
  } else if (const auto* p = std::get_if<protocol::CommandProgress>(&m)) {
    const bool starting = d->status == DispatchStatus::kDispatched;
    d->status = DispatchStatus::kRunning;
    d->progress = p->progress;
    if (!p->checkpoint.is_null()) d->SetCheckpoint(p->checkpoint);
    WriteAssignment(*d);
    if (starting) d->callbacks.Started();
    Json data = p->data;
    if (!p->checkpoint.is_null()) {
      if (!data.is_object()) data = data.is_null() ? Json::object() : Json{{"data", data}};
      data["checkpoint"] = p->checkpoint;
    }
    d->callbacks.Progress(p->progress, std::move(data));
  } else if (const auto* r = std::get_if<protocol::CommandResult>(&m)) {
    if (d->status == DispatchStatus::kDispatched) {
      // A result stands for its ack (docs/worker-protocol.md): a worker whose answer is
      // ready before its ack went out sends the result alone. The step still starts, so
      // its history has step.started; the dispatch latency counts this first answer (an
      // upper bound of when the ack would have come). Finish writes the assignment.
      d->status = DispatchStatus::kAccepted;
      RecordLatency(*d);
      d->callbacks.Started();
    }
    RunResult result;
    result.output = r->output;
    const bool ok = r->status == protocol::ResultStatus::kSuccess;
    if (!ok) {
      result.status = Status(r->error.code, r->error.message);
      result.error_details = r->error.details;
      if (!r->error.retryable) result.error_details["retryable"] = false;
    }
    Finish(*d, std::move(result), ok ? DispatchStatus::kCompleted : DispatchStatus::kFailed);
  }
  return Status::Ok();
}

}  // namespace baton::workers
