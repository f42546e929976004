// WORK IN PROGRESS (branch wip-coordinator): dispatch, fencing, deadlines and
// reassignment in memory; assignments are not persisted yet (see coordinator.h).
#include "server/workers/coordinator.h"

#include <algorithm>

namespace baton::server {

struct Coordinator::Dispatch {
  RunRequest request;
  RunCallbacks callbacks;
  std::string current_id;  // worker-facing id; empty while waiting
  std::string worker_id;   // holder; empty while waiting
  std::string status = "waiting";
  std::string waiting_reason;
  std::set<std::string> refused_by;
  int progress = 0;
  Json checkpoint;
  int reassignments = 0;
  TimeMs created_at = 0, updated_at = 0;
  bool done = false;
};

class Coordinator::RemoteRunner final : public Runner {
 public:
  explicit RemoteRunner(Coordinator* c) : c_(c) {}
  void Start(const RunRequest& request, RunCallbacks callbacks) override {
    auto d = std::make_unique<Dispatch>();
    d->request = request;
    d->callbacks = std::move(callbacks);
    d->created_at = d->updated_at = c_->loop_->Now();
    const std::string id = request.assignment_id;
    c_->dispatches_[id] = std::move(d);
    c_->queue_.push_back(id);
    c_->Place();
  }
  void Cancel(const std::string& dispatch_id) override {
    c_->CancelDispatch(dispatch_id, "cancelled");
  }

 private:
  Coordinator* c_;
};

Coordinator::Coordinator(EventLoop* loop, Committer* committer, CoordinatorOptions options)
    : loop_(loop),
      committer_(committer),
      options_(options),
      runner_(std::make_unique<RemoteRunner>(this)) {}

Coordinator::~Coordinator() {
  *alive_ = false;
  for (auto& [id, timer] : deadlines_) loop_->CancelTimer(timer);
}

Runner* Coordinator::runner() {
  return runner_.get();
}

Result<protocol::Registered> Coordinator::Register(const std::string& ns,
                                                   const protocol::Register& m,
                                                   std::shared_ptr<WorkerChannel> channel) {
  if (const WorkerEntry* existing = registry_.Find(m.worker_id);
      existing != nullptr && existing->ns != ns) {
    return Status(errc::kConflict, "worker id '" + m.worker_id + "' is taken in another namespace");
  }
  WorkerEntry w;
  w.id = m.worker_id;
  w.ns = ns;
  w.node = m.node_id.empty() ? m.worker_id : m.node_id;
  w.host = m.host;
  w.capacity = m.capacity;
  w.commands = m.commands;
  w.tags = m.tags;
  w.registered_at = w.last_seen = loop_->Now();
  WorkerEntry& entry = registry_.Register(std::move(w));
  if (auto old = channels_.find(entry.id); old != channels_.end() && old->second != channel) {
    old->second->Close();
  }
  channels_[entry.id] = std::move(channel);
  ArmDeadline(entry);
  protocol::Registered r;
  r.worker_id = entry.id;
  r.heartbeat_interval_ms = options_.heartbeat_interval.count();
  r.heartbeat_timeout_ms = options_.heartbeat_timeout.count();
  // What it held while away and no longer holds is cancelled by the caller's first
  // stale message; what it still holds continues.
  loop_->Post([this, alive = std::weak_ptr<bool>(alive_)] {
    if (!alive.expired()) Place();
  });
  return r;
}

void Coordinator::Disconnected(const std::string& worker_id, const WorkerChannel* channel) {
  auto it = channels_.find(worker_id);
  if (it != channels_.end() && it->second.get() == channel) channels_.erase(it);
}

Status Coordinator::Drain(const std::string& ns, const std::string& worker_id) {
  WorkerEntry* w = registry_.Find(worker_id);
  if (w == nullptr || w->ns != ns) return Status(errc::kNotFound, "no worker '" + worker_id + "'");
  w->state = WorkerState::kDraining;
  return Status::Ok();
}

Status Coordinator::OnMessage(const std::string& worker_id, const protocol::WorkerMessage& m) {
  WorkerEntry* w = registry_.Find(worker_id);
  if (w == nullptr) return Status(errc::kNotFound, "worker '" + worker_id + "' is not registered");
  w->last_seen = loop_->Now();
  if (w->state == WorkerState::kUnhealthy) w->state = WorkerState::kOnline;
  ArmDeadline(*w);
  if (const auto* hb = std::get_if<protocol::Heartbeat>(&m)) {
    w->reported_load = hb->current_load;
    if (hb->status == protocol::WorkerStatus::kDraining) w->state = WorkerState::kDraining;
    return Status::Ok();
  }
  std::string assignment;
  std::visit(
      [&](const auto& x) {
        if constexpr (requires { x.assignment_id; }) assignment = x.assignment_id;
      },
      m);
  auto cur = current_.find(assignment);
  Dispatch* d = nullptr;
  if (cur != current_.end()) {
    auto it = dispatches_.find(cur->second);
    if (it != dispatches_.end() && it->second->worker_id == worker_id && !it->second->done) {
      d = it->second.get();
    }
  }
  if (d == nullptr) {
    ++stats_.stale;
    return Status(errc::kStaleAssignment,
                  "assignment '" + assignment + "' is not held by worker '" + worker_id + "'");
  }
  d->updated_at = loop_->Now();
  if (const auto* ack = std::get_if<protocol::CommandAck>(&m)) {
    if (ack->status == protocol::AckStatus::kRejected) {
      d->refused_by.insert(worker_id);
      w->held.erase(d->request.assignment_id);
      current_.erase(d->current_id);
      d->worker_id.clear();
      d->current_id.clear();
      d->status = "waiting";
      queue_.push_front(d->request.assignment_id);
      Place();
      return Status::Ok();
    }
    d->status = "accepted";
    if (d->callbacks.on_started) d->callbacks.on_started();
  } else if (const auto* p = std::get_if<protocol::CommandProgress>(&m)) {
    d->status = "running";
    d->progress = p->progress;
    if (!p->checkpoint.is_null()) d->checkpoint = p->checkpoint;
    if (d->callbacks.on_progress) d->callbacks.on_progress(p->progress, p->checkpoint);
  } else if (const auto* r = std::get_if<protocol::CommandResult>(&m)) {
    RunResult result;
    result.output = r->output;
    if (r->status == protocol::ResultStatus::kFailure) {
      result.status = Status(r->error.code, r->error.message);
      result.error_details = r->error.details;
      if (!r->error.retryable) result.error_details["retryable"] = false;
    }
    Finish(*d, std::move(result));
  }
  return Status::Ok();
}

void Coordinator::Finish(Dispatch& d, RunResult result) {
  d.done = true;
  d.status = result.status.ok() ? "completed" : "failed";
  if (WorkerEntry* holder = registry_.Find(d.worker_id))
    holder->held.erase(d.request.assignment_id);
  current_.erase(d.current_id);
  auto callbacks = std::move(d.callbacks);
  dispatches_.erase(d.request.assignment_id);  // `d` is gone from here on
  if (callbacks.on_done) callbacks.on_done(std::move(result));
  Place();
}

void Coordinator::CancelDispatch(const std::string& dispatch_id, const std::string& reason) {
  auto it = dispatches_.find(dispatch_id);
  if (it == dispatches_.end()) return;
  Dispatch& d = *it->second;
  if (!d.worker_id.empty()) {
    if (auto ch = channels_.find(d.worker_id); ch != channels_.end()) {
      ch->second->Send(protocol::CommandCancel{d.current_id, reason});
    }
  }
  std::erase(queue_, dispatch_id);
  RunResult r;
  r.status = Status(errc::kCancelled, reason);
  Finish(d, std::move(r));
}

void Coordinator::Place() {
  for (auto it = queue_.begin(); it != queue_.end();) {
    auto found = dispatches_.find(*it);
    if (found == dispatches_.end()) {
      it = queue_.erase(it);
      continue;
    }
    Dispatch& d = *found->second;
    Placement p;
    p.ns = d.request.ns;
    p.command = d.request.spec.value("command", "");
    const Json& target = d.request.spec.value("target", Json::object());
    p.node = target.value("node", "");
    if (target.contains("tags") && target["tags"].is_array()) {
      for (const Json& t : target["tags"]) {
        if (t.is_string()) p.tags.push_back(t.get<std::string>());
      }
    }
    p.exclude = d.refused_by;
    WorkerEntry* w = registry_.Select(p, &d.waiting_reason);
    if (w == nullptr) {
      ++it;
      continue;
    }
    it = queue_.erase(it);
    d.waiting_reason.clear();
    Send(d, *w);
  }
}

void Coordinator::Send(Dispatch& d, WorkerEntry& w) {
  d.worker_id = w.id;
  d.current_id = d.reassignments == 0
                     ? d.request.assignment_id
                     : d.request.assignment_id + ".r" + std::to_string(d.reassignments);
  d.status = "dispatched";
  d.updated_at = loop_->Now();
  w.held.insert(d.request.assignment_id);
  current_[d.current_id] = d.request.assignment_id;
  ++stats_.dispatched;
  protocol::Command c;
  c.message_id = "msg_" + d.current_id;
  c.assignment_id = d.current_id;
  c.command = d.request.spec.value("command", "");
  c.resource = d.request.spec.value("resource", Json());
  c.data = d.request.spec.value("data", Json());
  c.execution = {d.request.execution_id, d.request.step_id, d.request.step_index,
                 d.request.attempt};
  c.checkpoint = d.checkpoint;
  c.timeout_seconds = d.request.timeout.count() / 1000;
  c.metadata.correlation_id =
      d.request.execution_id + "/" + d.request.step_id + "/" + std::to_string(d.request.attempt);
  if (auto ch = channels_.find(w.id); ch != channels_.end()) ch->second->Send(c);
}

void Coordinator::ArmDeadline(WorkerEntry& w) {
  if (auto it = deadlines_.find(w.id); it != deadlines_.end()) loop_->CancelTimer(it->second);
  std::weak_ptr<bool> alive = alive_;
  const std::string id = w.id;
  deadlines_[id] =
      loop_->ScheduleAt(w.last_seen + options_.heartbeat_timeout.count(), [this, alive, id] {
        if (!alive.expired()) OnDeadline(id);
      });
}

void Coordinator::OnDeadline(const std::string& worker_id) {
  deadlines_.erase(worker_id);
  WorkerEntry* w = registry_.Find(worker_id);
  if (w == nullptr || w->state == WorkerState::kOffline) return;
  w->state = WorkerState::kUnhealthy;
  ++stats_.heartbeat_misses;
  std::weak_ptr<bool> alive = alive_;
  loop_->ScheduleAfter(options_.reassignment_grace, [this, alive, worker_id] {
    if (alive.expired()) return;
    const WorkerEntry* again = registry_.Find(worker_id);
    if (again != nullptr && again->state == WorkerState::kUnhealthy) {
      Reassign(worker_id, "worker " + worker_id + " missed its heartbeats");
    }
  });
}

void Coordinator::Reassign(const std::string& worker_id, const std::string& reason) {
  WorkerEntry* w = registry_.Find(worker_id);
  if (w == nullptr) return;
  const std::set<std::string> held = w->held;
  for (const std::string& dispatch_id : held) {
    auto it = dispatches_.find(dispatch_id);
    if (it == dispatches_.end()) continue;
    Dispatch& d = *it->second;
    w->held.erase(dispatch_id);
    current_.erase(d.current_id);
    if (d.reassignments >= options_.max_reassignments) {
      ++stats_.lost;
      RunResult r;
      r.status = Status(errc::kWorkerLost, reason + "; moved " + std::to_string(d.reassignments) +
                                               " times already (max_reassignments)");
      Finish(d, std::move(r));
      continue;
    }
    ++d.reassignments;
    ++stats_.reassigned;
    d.worker_id.clear();
    d.current_id.clear();
    d.status = "waiting";
    d.refused_by.insert(worker_id);
    queue_.push_front(dispatch_id);
  }
  Place();
}

std::vector<AssignmentView> Coordinator::Assignments(const std::string& ns,
                                                     const std::string& worker_id) const {
  std::vector<AssignmentView> out;
  for (const auto& [id, d] : dispatches_) {
    if (d->request.ns != ns || (!worker_id.empty() && d->worker_id != worker_id)) continue;
    AssignmentView v;
    v.id = d->current_id;
    v.dispatch_id = id;
    v.execution_id = d->request.execution_id;
    v.step_id = d->request.step_id;
    v.attempt = d->request.attempt;
    v.worker_id = d->worker_id;
    v.status = d->status;
    v.waiting_reason = d->waiting_reason;
    v.progress = d->progress;
    v.checkpoint = d->checkpoint;
    v.reassignments = d->reassignments;
    v.created_at = d->created_at;
    v.updated_at = d->updated_at;
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace baton::server
