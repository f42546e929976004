// Work shared with other server instances (DispatchExchange in coordinator.h): offering a
// dispatch no worker here can take, the news of an offered one, and running another
// instance's.
#include "workers/coordinator_internal.h"

#include <algorithm>

namespace baton::workers {

Placement Coordinator::PlacementOf(const std::string& ns, const Json& spec) {
  Placement p;
  p.ns = ns;
  p.command = spec.value("command", "");
  const Json target = spec.value("target", Json::object());
  if (target.is_object()) {
    p.node = target.value("node", "");
    if (auto tags = target.find("tags"); tags != target.end() && tags->is_array()) {
      for (const Json& t : *tags) {
        if (t.is_string()) p.tags.push_back(t.get<std::string>());
      }
    }
  }
  return p;
}

bool Coordinator::OfferIfStranded(Dispatch& d) {
  if (exchange_ == nullptr || d.local || d.awaiting_start || d.offered ||
      d.status != DispatchStatus::kWaiting || registry_.AnyOnline(PlacementFor(d))) {
    return false;
  }
  std::erase(queue_, &d);
  if (d.foreign) {
    // Not ours to offer on: back on the board, where its owner's offer still is.
    const std::string id = d.request.assignment_id;
    Forget(id);
    exchange_->GiveBack(id);
    return true;
  }
  OfferOut(d);
  return true;
}

void Coordinator::OfferOut(Dispatch& d) {
  d.offered = true;
  ++offered_;
  d.updated_at = loop_->Now();
  exchange_->Offer(d.FullRequest());
}

void Coordinator::OfferStranded() {
  if (exchange_ == nullptr) return;
  // By id: offering one may take others out of the queue (and out of dispatches_).
  std::vector<std::string> waiting;
  waiting.reserve(queue_.size());
  for (const Dispatch* d : queue_) waiting.push_back(d->request.assignment_id);
  for (const std::string& id : waiting) {
    auto it = dispatches_.find(id);
    if (it != dispatches_.end()) OfferIfStranded(**it);
  }
}

void Coordinator::OfferStarted(const std::string& dispatch_id) {
  auto it = dispatches_.find(dispatch_id);
  if (it == dispatches_.end() || !(*it)->offered) return;
  Dispatch& d = **it;
  if (d.status == DispatchStatus::kRunning) return;
  d.status = DispatchStatus::kRunning;
  d.updated_at = loop_->Now();
  RecordLatency(d);
  d.callbacks.Started();
}

void Coordinator::OfferProgress(const std::string& dispatch_id, int progress, Json data) {
  auto it = dispatches_.find(dispatch_id);
  if (it == dispatches_.end() || !(*it)->offered) return;
  Dispatch& d = **it;
  d.progress = progress;
  if (data.is_object() && data.contains("checkpoint")) d.SetCheckpoint(data["checkpoint"]);
  d.updated_at = loop_->Now();
  d.callbacks.Progress(progress, std::move(data));
}

void Coordinator::OfferDone(const std::string& dispatch_id, RunResult result) {
  auto it = dispatches_.find(dispatch_id);
  if (it == dispatches_.end() || !(*it)->offered) return;
  const bool ok = result.status.ok();
  Finish(**it, std::move(result), ok ? DispatchStatus::kCompleted : DispatchStatus::kFailed);
}

std::vector<std::string> Coordinator::OfferedIds() const {
  std::vector<std::string> out;
  if (offered_ == 0) return out;
  for (const auto& d : dispatches_) {
    if (d->offered) out.emplace_back(d->request.assignment_id);
  }
  return out;
}

std::vector<size_t> Coordinator::Takeable(const std::vector<RunRequest>& requests) const {
  std::map<std::string, int> used;  // worker id -> slots given in this call
  std::vector<size_t> out;
  for (size_t i = 0; i < requests.size(); ++i) {
    for (const auto& [worker, free] :
         registry_.Room(PlacementOf(requests[i].ns, *requests[i].spec))) {
      if (used[worker] < free) {
        ++used[worker];
        out.push_back(i);
        break;
      }
    }
  }
  return out;
}

bool Coordinator::TakeForeign(const RunRequest& request, RunCallbacks callbacks) {
  const std::string id = request.assignment_id;
  if (auto mine = dispatches_.find(id); mine != dispatches_.end()) {
    Dispatch& d = **mine;
    if (d.foreign) {
      // Taken again after this instance lost its take (the drop not done yet): it runs
      // on, reporting for the new take.
      d.callbacks = std::move(callbacks);
      return true;
    }
    if (d.offered) {  // this instance's own offer, now that a worker here can take it
      d.offered = false;
      --offered_;
      Enqueue(d, /*front=*/true);
      Place();
    }
    return false;
  }
  auto d = std::make_unique<Dispatch>(request);
  d->callbacks = std::move(callbacks);
  d->foreign = true;
  d->created_at = d->updated_at = loop_->Now();
  d->started = std::chrono::steady_clock::now();
  Enqueue(Keep(std::move(d)), /*front=*/false);
  Place();
  return true;
}

void Coordinator::DropForeign(const std::string& dispatch_id) {
  auto it = dispatches_.find(dispatch_id);
  if (it == dispatches_.end() || !(*it)->foreign) return;
  (*it)->callbacks = {};  // its owner no longer listens: nothing to report
  CancelDispatch(dispatch_id, "another instance took this dispatch over");
}

}  // namespace baton::workers
