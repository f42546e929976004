// The in-process local worker: shell and http steps through the coordinator's queue,
// placement and assignments, run by the engine's built-in runners.
#include "workers/coordinator_internal.h"

#include <unistd.h>

namespace baton::workers {

void Coordinator::LocalRunner::Start(const RunRequest& request, RunCallbacks callbacks) {
  auto runner = c_->local_.runners.find(request.type);
  if (runner == c_->local_.runners.end() || runner->second == nullptr) {
    RunResult r;
    r.status = Status(errc::kUnsupportedStepType, std::string("the local worker does not run '") +
                                                      ToString(request.type) + "' steps");
    return callbacks.Done(std::move(r));
  }
  auto d = std::make_unique<Dispatch>(request);
  d->callbacks = std::move(callbacks);
  d->local = true;
  d->created_at = d->updated_at = c_->loop_->Now();
  d->started = std::chrono::steady_clock::now();
  c_->Enqueue(c_->Keep(std::move(d)), /*front=*/false);
  c_->Place();
}

void Coordinator::LocalRunner::Cancel(const std::string& dispatch_id) {
  c_->CancelDispatch(dispatch_id, "cancelled by the engine");
}

LocalWorkerOptions LocalWorkerFor(const EngineOptions& engine, Runner* shell, Runner* http) {
  LocalWorkerOptions o;
  o.capacity = engine.local_capacity();
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0) o.host = name;
  if (shell != nullptr) o.runners[StepType::kShell] = shell;
  if (http != nullptr) o.runners[StepType::kHttp] = http;
  return o;
}

void Coordinator::AddLocalWorker(LocalWorkerOptions options) {
  local_ = std::move(options);
  WorkerEntry w;
  w.id = local_.id;
  w.local = true;
  w.node = local_.id;
  w.host = local_.host;
  w.capacity = local_.capacity;
  for (const auto& [type, runner] : local_.runners) {
    if (runner != nullptr) w.commands.push_back(ToString(type));
  }
  w.registered_at = w.last_seen = loop_->Now();
  // No channel, no deadline, not stored: it lives and dies with this process.
  registry_.Register(std::move(w));
}

Runner* Coordinator::local_runner() {
  if (!local_runner_) local_runner_ = std::make_unique<LocalRunner>(this);
  return local_runner_.get();
}

void Coordinator::RunLocal(Dispatch& d) {
  d.sent = true;
  d.status = DispatchStatus::kAccepted;
  if (WorkerEntry* w = registry_.Find(d.worker_id()))
    w->last_seen = loop_->Now();  // alive  // nothing to refuse it: it was placed within capacity
  RunRequest request = d.FullRequest();
  request.assignment_id = d.current_id();
  // The built-in runners call back from their I/O thread; the coordinator lives on the
  // loop. A callback for a dispatch that is no longer current (cancelled, finished) is
  // dropped there.
  // The loop outlives the coordinator; `this` is touched only once `alive` says so.
  std::weak_ptr<bool> alive = alive_;
  EventLoop* loop = loop_;
  const std::string id = d.current_id(), worker = d.worker_id();
  RunFunctions cb;
  cb.on_started = [this, loop, alive, id, worker] {
    loop->Post([this, alive, id, worker] {
      if (alive.expired()) return;
      Dispatch* current = Current(id, worker);
      if (current == nullptr || current->status != DispatchStatus::kAccepted) return;
      current->status = DispatchStatus::kRunning;
      current->updated_at = loop_->Now();
      current->callbacks.Started();
    });
  };
  cb.on_progress = [this, loop, alive, id, worker](int progress, Json data) {
    loop->Post([this, alive, id, worker, progress, data = std::move(data)]() mutable {
      if (alive.expired()) return;
      Dispatch* current = Current(id, worker);
      if (current == nullptr) return;
      current->status = DispatchStatus::kRunning;
      current->progress = progress;
      current->updated_at = loop_->Now();
      if (auto cp = data.find("checkpoint"); data.is_object() && cp != data.end()) {
        current->SetCheckpoint(*cp);
      }
      current->callbacks.Progress(progress, std::move(data));
    });
  };
  cb.on_done = [this, loop, alive, id](RunResult result) {
    loop->Post([this, alive, id, result = std::move(result)]() mutable {
      if (!alive.expired()) OnLocalDone(id, std::move(result));
    });
  };
  LocalRunnerFor(d)->Start(request, std::move(cb));
}

Runner* Coordinator::LocalRunnerFor(const Dispatch& d) const {
  return local_.runners.at(d.request.type);
}

void Coordinator::OnLocalDone(const std::string& current_id, RunResult result) {
  Dispatch* d = Current(current_id, local_.id);
  if (d == nullptr) return;
  const DispatchStatus status = result.status.ok() ? DispatchStatus::kCompleted
                                : result.status.code() == errc::kCancelled
                                    ? DispatchStatus::kCancelled
                                    : DispatchStatus::kFailed;
  Finish(*d, std::move(result), status);
}

}  // namespace baton::workers
