// The engine's side of a dispatch: Prepare() places it in the engine's turn so that its
// assignment commits with the step's dispatch, Start() sends it (or queues it), Cancel()
// ends it; and the latency figures measured from them.
#include "workers/coordinator_internal.h"
#include "workers/nearest_rank.h"

#include <algorithm>
#include <cstdint>

namespace baton::workers {
namespace {

// `to - from` in microseconds, within [0, INT32_MAX].
int32_t LeadUs(std::chrono::steady_clock::time_point from,
               std::chrono::steady_clock::time_point to) {
  const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(to - from).count();
  return static_cast<int32_t>(std::clamp<int64_t>(us, 0, INT32_MAX));
}

}  // namespace

void Coordinator::Prepare(const RunRequest& request, WriteBatch& batch) {
  const auto now = std::chrono::steady_clock::now();
  // No worker for it now: nothing is recorded, since the engine's commit may still fail,
  // and a placement written on its own could be durable before the dispatch it belongs
  // to. Start() queues it.
  if (FreeSlots().second == 0) {
    // Every slot is taken (a backlog): it could not be placed, so it is not even tried.
    prepared_unplaced_[request.assignment_id] = now;
    return;
  }
  auto d = std::make_unique<Dispatch>(request);
  d->created_at = d->updated_at = loop_->Now();
  d->prepared = true;
  d->started = now;
  d->awaiting_start = true;
  const std::string id = request.assignment_id;
  Dispatch& prepared = Keep(std::move(d));
  // Queued and placed as Start() would: whatever waits ahead of it (a higher priority, an
  // earlier arrival) keeps its turn.
  Enqueue(prepared, /*front=*/false);
  Place(&prepared, &batch);
  if (!prepared.worker_id().empty()) return;  // its record is in `batch`
  // (Near the back of the queue: searched from there.)
  queue_.erase(std::find(queue_.rbegin(), queue_.rend(), &prepared).base() - 1);
  prepared_unplaced_[id] = now;
  Forget(id);
}

void Coordinator::Start(const RunRequest& request, RunCallbacks callbacks) {
  const std::string id = request.assignment_id;
  if (auto ended = ended_before_start_.find(id); ended != ended_before_start_.end()) {
    RunResult result = std::move(ended->second);
    ended_before_start_.erase(ended);
    callbacks.Done(std::move(result));
    return;
  }
  if (auto it = dispatches_.find(id); it != dispatches_.end() && (*it)->awaiting_start) {
    // Placed at Prepare(): the engine's commit made it durable. It may have moved since
    // (its worker lost: waiting again, or placed elsewhere with a write of its own, which
    // sends it once durable); wherever it is now, it may go out from here on.
    Dispatch& d = **it;
    d.callbacks = std::move(callbacks);
    d.awaiting_start = false;
    const auto now = std::chrono::steady_clock::now();
    d.prepared_lead_us = LeadUs(d.started, now);
    d.started = now;
    if (d.durable_at_start) {
      d.durable = true;
      d.durable_at_start = false;
    }
    // A worker without a channel now gets it when it registers again.
    if (d.status == DispatchStatus::kDispatched && d.durable) SendCommand(d);
    return;
  }
  auto d = std::make_unique<Dispatch>(request);
  d->callbacks = std::move(callbacks);
  d->created_at = d->updated_at = loop_->Now();
  d->started = std::chrono::steady_clock::now();
  if (auto unplaced = prepared_unplaced_.find(id); unplaced != prepared_unplaced_.end()) {
    d->prepared = true;
    d->prepared_lead_us = LeadUs(unplaced->second, d->started);
    prepared_unplaced_.erase(unplaced);
  }
  Enqueue(Keep(std::move(d)), /*front=*/false);
  Place();
  if (auto it = dispatches_.find(id); it != dispatches_.end()) OfferIfStranded(**it);
}

void Coordinator::CancelFromEngine(const std::string& dispatch_id) {
  // Also what Prepare() alone left: a placement frees its worker's slot (and its record,
  // durable with the engine's batch, ends as cancelled).
  prepared_unplaced_.erase(dispatch_id);
  CancelDispatch(dispatch_id, "cancelled by the engine");
  // Ended before Start(), by the coordinator or just now: no Start() is coming for it.
  ended_before_start_.erase(dispatch_id);
}

void Coordinator::RecordLatency(Dispatch& d) {
  if (d.latency_recorded) return;
  d.latency_recorded = true;
  const auto now = std::chrono::steady_clock::now();
  const int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(now - d.started).count();
  size_t b = 0;
  while (b < std::size(CoordinatorStats::kLatencyBucketsUs) &&
         us > CoordinatorStats::kLatencyBucketsUs[b]) {
    ++b;
  }
  ++stats_.latency_counts[b];
  stats_.latency_sum_us += static_cast<uint64_t>(us);
  ++stats_.latency_total;
  latency_window_.Add(us);
  if (d.prepared) {
    const int64_t prepared_us = us + d.prepared_lead_us;
    ++stats_.prepared_latency_total;
    stats_.prepared_latency_sum_us += static_cast<uint64_t>(prepared_us);
    prepared_latency_window_.Add(prepared_us);
  }
}

void Coordinator::LatencyWindow::Add(int64_t us) {
  if (ring_.size() < CoordinatorStats::kLatencyWindow) {
    ring_.push_back(us);
  } else {
    ring_[next_] = us;
    next_ = (next_ + 1) % CoordinatorStats::kLatencyWindow;
  }
}

std::pair<int64_t, int64_t> Coordinator::LatencyWindow::Quantiles() const {
  std::vector<int64_t> sample = ring_;
  const int64_t p50 = NearestRank(sample, 0.5);
  return {p50, NearestRank(sample, 0.99)};
}

}  // namespace baton::workers
