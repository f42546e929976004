// Prefetch (CoordinatorOptions::prefetch): what a worker with every slot taken holds
// back, sent the moment a result frees a slot, or moved to a worker with an idle one.
#include "workers/coordinator_internal.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace baton::workers {

void Coordinator::Unhold(WorkerEntry& w, Dispatch& d, bool promote) {
  w.held.erase(d.request.assignment_id);
  if (d.held_back) {
    d.held_back = false;
    std::erase(w.held_back, d.request.assignment_id);
  } else if (d.sent && !w.local) {
    --w.sent;
  }
  if (promote) Promote(w);
}

void Coordinator::Promote(WorkerEntry& w) {
  while (w.state == WorkerState::kOnline && w.sent < w.capacity && !w.held_back.empty()) {
    const std::string id = std::move(w.held_back.front());
    w.held_back.pop_front();
    auto it = dispatches_.find(id);
    if (it == dispatches_.end()) continue;
    (*it)->held_back = false;
    SendCommand(**it);
  }
}

void Coordinator::Rebalance() {
  // Only when some worker holds back while another has a slot that nothing is meant for:
  // held back, a dispatch waits for a slot of its holder, which may be minutes away.
  bool holding = false, idle = false;
  for (const WorkerEntry* w : registry_.List("")) {
    if (w->local) continue;
    holding |= !w->held_back.empty();
    idle |= w->state == WorkerState::kOnline && w->idle_slots() > 0;
  }
  if (!holding || !idle) return;
  std::vector<std::pair<std::string, std::string>> candidates;  // {holder, dispatch}
  for (const WorkerEntry* w : registry_.List("")) {
    // The newest first: they have the longest to wait where they are.
    for (auto it = w->held_back.rbegin(); it != w->held_back.rend(); ++it) {
      candidates.emplace_back(w->id, *it);
    }
  }
  for (const auto& [holder_id, dispatch_id] : candidates) {
    WorkerEntry* holder = registry_.Find(holder_id);
    auto it = dispatches_.find(dispatch_id);
    if (holder == nullptr || it == dispatches_.end() || !(*it)->held_back) continue;
    Dispatch& d = **it;
    Placement p = PlacementFor(d);
    p.exclude.insert(holder_id);
    WorkerEntry* to = registry_.Select(p, nullptr);
    if (to == nullptr || to->idle_slots() <= 0) continue;
    PutBack(*holder, d);
    Assign(d, *to);
  }
}

void Coordinator::PutBack(WorkerEntry& w, Dispatch& d) {
  // Never sent, so nothing to revoke or cancel at the holder, and not a reassignment.
  Unhold(w, d, /*promote=*/false);
  current_.erase(d.current_id());
  d.SetWorker("");
  d.Unplace();
  d.status = DispatchStatus::kWaiting;
}

std::pair<int, int> Coordinator::FreeSlots() const {
  int local_room = 0, remote_room = 0;
  for (const WorkerEntry* w : registry_.List("")) {
    if (w->state == WorkerState::kOnline)
      (w->local ? local_room : remote_room) += std::max(0, w->free());
  }
  return {local_room, remote_room};
}

}  // namespace baton::workers
