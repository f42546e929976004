// The dispatch half of the coordinator: the queue, placement, the command sent once its
// assignment is durable, fencing, and the end of a dispatch.
#include "workers/coordinator_internal.h"

#include <algorithm>
#include <array>

namespace baton::workers {

namespace {
constexpr std::array<const char*, 8> kDispatchStatusNames = {
    "waiting", "dispatched", "accepted", "running", "completed", "failed", "cancelled", "lost"};
}  // namespace

const char* ToString(DispatchStatus s) {
  return kDispatchStatusNames[static_cast<size_t>(s)];
}

std::optional<DispatchStatus> ParseDispatchStatus(std::string_view s) {
  for (size_t i = 0; i < kDispatchStatusNames.size(); ++i) {
    if (s == kDispatchStatusNames[i]) return static_cast<DispatchStatus>(i);
  }
  return std::nullopt;
}

class Coordinator::RemoteRunner final : public Runner {
 public:
  explicit RemoteRunner(Coordinator* c) : c_(c) {}
  void Prepare(const RunRequest& request, WriteBatch& batch) override {
    c_->Prepare(request, batch);
  }
  void Start(const RunRequest& request, RunCallbacks callbacks) override {
    c_->Start(request, std::move(callbacks));
  }
  void Cancel(const std::string& dispatch_id) override { c_->CancelFromEngine(dispatch_id); }
  bool CanReattach() const override { return true; }
  bool ReportsStart() const override { return true; }  // a worker's ack
  void Reattach(const RunRequest& request, RunCallbacks callbacks) override {
    c_->Reattach(request, std::move(callbacks));
  }

 private:
  Coordinator* c_;
};

Coordinator::Coordinator(EventLoop* loop, Committer* committer, CoordinatorOptions options)
    : loop_(loop), committer_(committer), options_(options) {}

// Here, where RemoteRunner is complete.
Coordinator::~Coordinator() {
  *alive_ = false;
  for (auto& [id, deadline] : deadlines_) loop_->CancelTimer(deadline.timer);
  for (auto& [id, timer] : drain_timers_) loop_->CancelTimer(timer);
}

Runner* Coordinator::runner() {
  if (!runner_) runner_ = std::make_unique<RemoteRunner>(this);
  return runner_.get();
}

Coordinator::Dispatch::Dispatch(const RunRequest& r) {
#if defined(__GLIBCXX__) && defined(__x86_64__)
  // One per waiting step: past 192 bytes it moves up a jemalloc size class. Keep rare
  // fields in Extras instead of raising the bound.
  static_assert(sizeof(Dispatch) <= 192, "a waiting Dispatch must fit 192 bytes");
  // DispatchRequest and FullRequest() copy RunRequest field by field: a field added to
  // RunRequest changes its size, and must be kept here too.
  static_assert(sizeof(RunRequest) == 168, "a new RunRequest field: copy it here as well");
#endif
  request.assignment_id = r.assignment_id;
  request.ns = r.ns;
  request.spec = r.spec;
  request.timeout = r.timeout;
  request.attempt = r.attempt;
  request.priority = r.priority;
  request.step_index = r.step_index;
  request.type = r.type;
  if (r.execution_id.size() <= UINT16_MAX && !r.execution_id.empty() &&
      r.assignment_id.starts_with(r.execution_id)) {
    execution_id_size = static_cast<uint16_t>(r.execution_id.size());
  } else if (!r.execution_id.empty()) {
    extra().execution_id = r.execution_id;
  }
  // The step id is the assignment id's next part when it reads "<execution>/<step>/...".
  const std::string& a = r.assignment_id;
  const size_t at = execution_id_size + 1u;
  if (execution_id_size > 0 && !r.step_id.empty() && r.step_id.size() <= UINT16_MAX &&
      a.size() > at + r.step_id.size() && a[execution_id_size] == '/' &&
      a.compare(at, r.step_id.size(), r.step_id) == 0 && a[at + r.step_id.size()] == '/') {
    step_id_size = static_cast<uint16_t>(r.step_id.size());
  } else if (!r.step_id.empty()) {
    extra().step_id = r.step_id;
  }
}

RunRequest Coordinator::Dispatch::FullRequest() const {
  RunRequest r;
  r.execution_id = execution_id();
  r.step_id = step_id();
  r.assignment_id = request.assignment_id;
  r.ns = request.ns;
  r.spec = request.spec;
  r.timeout = request.timeout;
  r.attempt = request.attempt;
  r.priority = request.priority;
  r.step_index = request.step_index;
  r.type = request.type;
  return r;
}

Coordinator::Dispatch& Coordinator::Keep(std::unique_ptr<Dispatch> d) {
  // An entry is found by the id inside it: the old entry goes first.
  if (auto old = dispatches_.find(d->request.assignment_id); old != dispatches_.end()) {
    // The queues point at their entries: none may outlive it.
    std::erase(queue_, old->get());
    std::erase(local_queue_, old->get());
    dispatches_.erase(old);
  }
  Dispatch& kept = *d;
  dispatches_.insert(std::move(d));
  return kept;
}

std::string_view Coordinator::DispatchId::operator()(const Dispatch& d) const {
  return d.request.assignment_id;
}

void Coordinator::Forget(std::string_view dispatch_id) {
  if (auto it = dispatches_.find(dispatch_id); it != dispatches_.end()) dispatches_.erase(it);
}

void Coordinator::Enqueue(Dispatch& dispatch, bool front) {
  // Priority first, then arrival: a reassigned dispatch goes ahead of its equals.
  Dispatch* d = &dispatch;
  const int priority = d->request.priority;
  std::deque<Dispatch*>& queue = d->local ? local_queue_ : queue_;
  auto priority_of = [](const Dispatch* other) { return other->request.priority; };
  // Searched from the end it belongs nearest to, so that a queue of equals costs O(1)
  // (a backlog of thousands must not make every arrival a scan).
  if (front) {
    queue.insert(std::find_if(queue.begin(), queue.end(),
                              [&](const Dispatch* o) { return priority_of(o) <= priority; }),
                 d);
  } else {
    auto after = std::find_if(queue.rbegin(), queue.rend(),
                              [&](const Dispatch* o) { return priority_of(o) >= priority; });
    queue.insert(after.base(), d);
  }
}

Placement Coordinator::PlacementFor(const Dispatch& d) const {
  if (d.local) {
    Placement p;
    p.ns = d.request.ns;
    p.local = true;
    p.command = ToString(d.request.type);
    return p;
  }
  Placement p = PlacementOf(d.request.ns, *d.request.spec);
  if (d.extras) p.exclude = d.extras->refused_by;
  return p;
}

void Coordinator::Place(const Dispatch* prepared, WriteBatch* engine_batch) {
  // Nothing can be placed once no ONLINE worker has room: stop there rather than ask the
  // registry about every waiting dispatch (a backlog made each completion O(queue)). The
  // local worker's slots count for its own queue only: a free one must not make a backlog
  // of remote commands scanned again.
  const auto [local_room, remote_room] = FreeSlots();
  PlaceFrom(local_queue_, local_room, prepared, engine_batch);
  PlaceFrom(queue_, remote_room, prepared, engine_batch);
}

std::pair<int, int> Coordinator::FreeSlots() const {
  int local_room = 0, remote_room = 0;
  for (const WorkerEntry* w : registry_.List("")) {
    if (w->state == WorkerState::kOnline)
      (w->local ? local_room : remote_room) += std::max(0, w->free());
  }
  return {local_room, remote_room};
}

void Coordinator::PlaceFrom(std::deque<Dispatch*>& queue, int room, const Dispatch* prepared,
                            WriteBatch* engine_batch) {
  for (auto it = queue.begin(); it != queue.end() && room > 0;) {
    Dispatch& d = **it;
    const Placement p = PlacementFor(d);
    WorkerEntry* w = registry_.Select(p, nullptr);
    if (w == nullptr) {
      ++it;
      continue;
    }
    it = queue.erase(it);
    --room;
    Assign(d, *w, &d == prepared ? engine_batch : nullptr);
  }
}

void Coordinator::Assign(Dispatch& d, WorkerEntry& w, WriteBatch* engine_batch) {
  const std::string from = d.extras ? d.extras->previous_worker : std::string();
  d.SetWorker(w.id);
  d.PlaceAs(d.reassignments == 0
                ? d.request.assignment_id
                : d.request.assignment_id + ".r" + std::to_string(d.reassignments));
  d.status = DispatchStatus::kDispatched;
  d.sent = false;
  d.durable = false;
  d.durable_at_start = false;
  d.updated_at = loop_->Now();
  w.held.insert(d.request.assignment_id);
  current_[d.current_id()] = d.request.assignment_id;
  ++stats_.dispatched;
  if (d.local) {
    // Nothing to make durable first: the engine's step record is the durable state of
    // local work (see coordinator.h).
    d.durable = true;
    return RunLocal(d);
  }
  if (engine_batch != nullptr) {
    // Committed with the engine's dispatch (a first placement: nothing moved); Start()
    // comes once that commit is done and sends the command.
    engine_batch->assignments.push_back(ToRecord(d));
    d.durable_at_start = true;
    ++stats_.placed_at_prepare;
    return;
  }

  auto batch = std::make_unique<WriteBatch>();
  batch->assignments.push_back(ToRecord(d));
  if (!from.empty()) {
    ReassignmentRecord r;
    r.id = "rsg_" + std::to_string(loop_->Now()) + "_" + std::to_string(++next_reassignment_);
    r.ns = d.request.ns;
    r.dispatch_id = d.request.assignment_id;
    r.assignment_id = d.current_id();
    r.execution_id = d.execution_id();
    r.step_id = d.step_id();
    r.from_worker = from;
    r.to_worker = w.id;
    r.reason = d.extras->reassign_reason;
    r.checkpoint = d.checkpoint();
    r.at = loop_->Now();
    if (on_reassign_) {
      on_reassign_(r.execution_id, r.step_id,
                   {{"from_worker", r.from_worker},
                    {"to_worker", r.to_worker},
                    {"reason", r.reason},
                    {"assignment_id", r.assignment_id}});
    }
    batch->reassignments.push_back(std::move(r));
    d.extras->previous_worker.clear();
  }
  // The command goes out only once the assignment is durable: a crash in between finds
  // it in the store and re-attaches (or re-sends) it.
  const std::string dispatch_id = d.request.assignment_id, current = d.current_id();
  Write(std::move(batch), [this, dispatch_id, current](const Status& s) {
    auto it = dispatches_.find(dispatch_id);
    if (it == dispatches_.end() || (*it)->current_id() != current) return;
    Dispatch& again = **it;
    if (!s.ok()) {
      RunResult r;
      r.status = Status(errc::kStore, "could not record the assignment: " + s.message());
      return Finish(again, std::move(r), DispatchStatus::kFailed);
    }
    again.durable = true;
    SendCommand(again);
  });
}

void Coordinator::SendCommand(Dispatch& d) {
  if (d.awaiting_start) return;  // Start() sends it
  auto ch = channels_.find(d.worker_id());
  if (ch == channels_.end()) return;  // sent again when the worker registers again
  d.sent = true;
  protocol::Command c;
  c.message_id = "msg_" + d.current_id();
  c.assignment_id = d.current_id();
  c.command = d.request.spec->value("command", "");
  c.resource = d.request.spec->value("resource", Json());
  c.data = d.request.spec->value("data", Json());
  c.execution = {std::string(d.execution_id()), std::string(d.step_id()), d.request.step_index,
                 d.request.attempt};
  c.checkpoint = d.checkpoint();
  c.timeout_seconds = (d.request.timeout.count() + 999) / 1000;
  c.metadata.correlation_id = std::string(d.execution_id()) + "/" + std::string(d.step_id()) + "/" +
                              std::to_string(d.request.attempt);
  static const char* kPriorities[] = {"low", "normal", "high", "critical"};
  c.metadata.priority = kPriorities[std::clamp(d.request.priority, 0, 3)];
  ch->second->Send(c);
}

Coordinator::Dispatch* Coordinator::Current(const std::string& assignment_id,
                                            const std::string& worker_id) {
  auto cur = current_.find(assignment_id);
  if (cur == current_.end()) return nullptr;
  auto it = dispatches_.find(cur->second);
  if (it == dispatches_.end() || (*it)->worker_id() != worker_id) return nullptr;
  return it->get();
}

void Coordinator::Stale(const std::string& worker_id, const std::string& assignment_id,
                        const char* what) {
  ++stats_.stale;
  if (!on_stale_) return;
  // "<execution>/<step>/<attempt>[.r<n>]": the ids say where it belonged even once the
  // dispatch is gone.
  const size_t a = assignment_id.find('/');
  const size_t b = a == std::string::npos ? a : assignment_id.find('/', a + 1);
  if (b == std::string::npos) return;
  on_stale_(assignment_id.substr(0, a), assignment_id.substr(a + 1, b - a - 1),
            Json{{"assignment_id", assignment_id}, {"worker", worker_id}, {"message", what}});
}

void Coordinator::Finish(Dispatch& d, RunResult result, DispatchStatus final_status) {
  if (d.offered) {
    // Out of the queue; its taker's records are the assignment's.
    --offered_;
    d.status = final_status;
    auto callbacks = std::move(d.callbacks);
    dispatches_.erase(dispatches_.find(d.request.assignment_id));  // `d` is gone from here on
    callbacks.Done(std::move(result));
    return;
  }
  // Only a dispatch still waiting for a worker is in a queue (Assign takes it out): the
  // scan stays off the path of every completion, where it was O(backlog).
  if (d.status == DispatchStatus::kWaiting) {
    std::erase(d.local ? local_queue_ : queue_, &d);
  }
  d.status = final_status;
  d.updated_at = loop_->Now();
  WriteAssignment(d);
  if (WorkerEntry* holder = registry_.Find(d.worker_id())) {
    holder->held.erase(d.request.assignment_id);
  }
  current_.erase(d.current_id());
  auto callbacks = std::move(d.callbacks);
  const bool before_start = d.awaiting_start;
  const std::string id = d.request.assignment_id;
  Forget(id);  // `d` is gone from here on
  if (before_start) {
    // No callbacks yet: Start() delivers the result (the engine's Cancel() drops it).
    ended_before_start_[id] = std::move(result);
  } else {
    callbacks.Done(std::move(result));
  }
  Place();
}

void Coordinator::CancelDispatch(const std::string& dispatch_id, const std::string& reason) {
  auto it = dispatches_.find(dispatch_id);
  if (it == dispatches_.end()) return;
  Dispatch& d = **it;
  if (d.offered) exchange_->Withdraw(dispatch_id);
  if (d.local && !d.worker_id().empty()) {
    // Its slot is free once the process is gone, not before: the runner's Done() ends it.
    return LocalRunnerFor(d)->Cancel(d.current_id());
  }
  if (!d.worker_id().empty() && !d.awaiting_start) {  // before Start() the worker has nothing
    if (auto ch = channels_.find(d.worker_id()); ch != channels_.end()) {
      ch->second->Send(protocol::CommandCancel{d.current_id(), reason});
    }
  }
  RunResult r;
  r.status = Status(errc::kCancelled, reason);
  Finish(d, std::move(r), DispatchStatus::kCancelled);
}

AssignmentRecord Coordinator::ToRecord(const Dispatch& d) const {
  AssignmentRecord r;
  r.dispatch_id = d.request.assignment_id;
  r.id = d.placed ? d.current_id() : d.request.assignment_id;
  r.ns = d.request.ns;
  r.execution_id = d.execution_id();
  r.step_id = d.step_id();
  r.attempt = d.request.attempt;
  r.command = d.local ? ToString(d.request.type) : d.request.spec->value("command", "");
  r.worker_id = d.worker_id();
  r.status = ToString(d.status);
  r.progress = d.progress;
  r.checkpoint = d.checkpoint();
  r.reassignments = d.reassignments;
  r.created_at = d.created_at;
  r.updated_at = d.updated_at;
  return r;
}

void Coordinator::WriteAssignment(const Dispatch& d, std::function<void(const Status&)> then) {
  if (d.local) {  // never stored (coordinator.h)
    if (then) then(Status::Ok());
    return;
  }
  auto batch = std::make_unique<WriteBatch>();
  batch->assignments.push_back(ToRecord(d));
  Write(std::move(batch), std::move(then));
}

void Coordinator::Reattach(const RunRequest& request, RunCallbacks callbacks) {
  if (auto here = dispatches_.find(request.assignment_id);
      here != dispatches_.end() && (*here)->foreign) {
    // Taken from the instance that held the execution, which this one has taken over:
    // it runs on here, reporting to the engine now.
    Dispatch& d = **here;
    d.foreign = false;
    d.callbacks = std::move(callbacks);
    exchange_->Adopted(request.assignment_id);
    if (d.status == DispatchStatus::kAccepted || d.status == DispatchStatus::kRunning) {
      d.callbacks.Started();
    }
    return;
  }
  auto stored = loaded_.find(request.assignment_id);
  auto d = std::make_unique<Dispatch>(request);
  d->callbacks = std::move(callbacks);
  d->created_at = d->updated_at = loop_->Now();
  d->started = std::chrono::steady_clock::now();
  const std::string id = request.assignment_id;
  if (stored == loaded_.end() && exchange_ != nullptr) {
    // Another instance held this execution (a takeover): wherever its step went, the
    // board says; offering it under its id makes this instance the owner of that offer,
    // or offers it anew.
    OfferOut(Keep(std::move(d)));
    return;
  }
  if (stored == loaded_.end()) {
    // Never placed before the restart (or placed and finished unrecorded): from scratch.
    Enqueue(Keep(std::move(d)), /*front=*/true);
    return Place();
  }
  const AssignmentRecord rec = std::move(stored->second);
  loaded_.erase(stored);
  d->created_at = rec.created_at;
  d->progress = rec.progress;
  if (!rec.checkpoint.is_null()) d->SetCheckpoint(rec.checkpoint);
  d->reassignments = rec.reassignments;
  WorkerEntry* holder = rec.worker_id.empty() ? nullptr : registry_.Find(rec.worker_id);
  // Load() keeps the active ones only; a status none of them is (a row written by
  // something else) is treated as waiting: at worst the command goes out again.
  const std::optional<DispatchStatus> stored_status = ParseDispatchStatus(rec.status);
  if (holder == nullptr || !stored_status || *stored_status == DispatchStatus::kWaiting ||
      *stored_status > DispatchStatus::kRunning) {
    Enqueue(Keep(std::move(d)), /*front=*/true);
    return Place();
  }
  // Still the holder's: it has heartbeat_timeout (armed by Load) to come back and report.
  d->SetWorker(holder->id);
  d->PlaceAs(rec.id);
  d->status = *stored_status;
  d->sent = d->status != DispatchStatus::kDispatched;
  d->durable = true;
  holder->held.insert(id);
  current_[rec.id] = id;
  Dispatch& reattached = Keep(std::move(d));
  if (auto was = loaded_sessions_.find(holder->id);
      was != loaded_sessions_.end() && !was->second.empty() && !holder->session.empty() &&
      was->second != holder->session) {
    // A new process registered under the holder's id before this step came back: the
    // one that ran it is gone (Register() could not move what was not re-attached yet).
    MoveAway(*holder, id, "worker " + holder->id + " restarted (a new process registered)",
             /*revoke=*/false);
    // ... and the new process may take it: it did not fail it. (Unless no move was left:
    // then MoveAway failed it WORKER_LOST, and `reattached` is gone.)
    if (auto still = dispatches_.find(id); still != dispatches_.end()) {
      (*still)->Unrefuse(holder->id);
    }
    return Place();
  }
  // A holder that registered again before this missed the re-send for it: send it now
  // (a holder not back yet gets it when it registers).
  if (!reattached.sent) SendCommand(reattached);
}

std::vector<AssignmentRecord> Coordinator::Active(const std::string& ns,
                                                  const std::string& worker_id) const {
  std::vector<AssignmentRecord> out;
  for (const auto& d : dispatches_) {
    if ((!ns.empty() && d->request.ns != ns) ||
        (!worker_id.empty() && d->worker_id() != worker_id)) {
      continue;
    }
    out.push_back(ToRecord(*d));
  }
  std::sort(out.begin(), out.end(), [](const AssignmentRecord& a, const AssignmentRecord& b) {
    return std::tie(a.created_at, a.dispatch_id) < std::tie(b.created_at, b.dispatch_id);
  });
  return out;
}

std::string Coordinator::WaitingReason(const std::string& execution_id) const {
  auto reasons = WaitingReasons(execution_id);
  if (reasons.empty()) return "";
  return "step '" + reasons.begin()->first + "': " + reasons.begin()->second;
}

std::map<std::string, std::string> Coordinator::WaitingReasons(
    const std::string& execution_id) const {
  std::map<std::string, std::string> out;
  if (offered_ > 0) {
    for (const auto& d : dispatches_) {
      if (d->offered && d->status == DispatchStatus::kWaiting &&
          d->execution_id() == execution_id) {
        out.emplace(d->step_id(),
                    "offered to the other instances: " + registry_.Explain(PlacementFor(*d)) +
                        " connected to this one");
      }
    }
  }
  for (const auto* queue : {&queue_, &local_queue_}) {
    for (const Dispatch* waiting : *queue) {
      if (waiting->execution_id() == execution_id) {
        const Dispatch& d = *waiting;
        // Asked now, not remembered from the last placement attempt: it stays true.
        out.emplace(d.step_id(), registry_.Explain(PlacementFor(d)));
      }
    }
  }
  return out;
}

}  // namespace baton::workers
