#include "server/workers/workers_views.h"

#include "server/views.h"

namespace baton::server {

Json WorkerJson(const workers::WorkerEntry& w) {
  Json held = Json::array();
  for (const std::string& id : w.held) held.push_back(id);
  return {{"workerId", w.id},
          {"namespace", w.local ? "*" : w.ns},
          {"local", w.local},
          {"nodeId", w.node},
          {"host", w.host},
          {"status", ToString(w.state)},
          {"capacity", w.capacity},
          {"currentLoad", w.held.size()},
          {"reportedLoad", w.reported_load},
          {"commands", w.commands},
          {"tags", w.tags},
          {"lastHeartbeat", IsoTime(w.last_seen)},
          {"registeredAt", IsoTime(w.registered_at)},
          {"assignments", held}};
}

Json WorkerJson(const WorkerRecord& w) {
  return {{"workerId", w.id},
          {"namespace", w.ns},
          {"local", false},
          {"nodeId", w.node},
          {"host", w.host},
          {"status", w.status},
          {"capacity", w.capacity},
          {"currentLoad", 0},
          {"reportedLoad", 0},
          {"commands", w.commands},
          {"tags", w.tags},
          {"lastHeartbeat", IsoTime(w.last_heartbeat)},
          {"registeredAt", IsoTime(w.registered_at)},
          {"assignments", Json::array()}};
}

Json AssignmentJson(const AssignmentRecord& a) {
  return {{"assignmentId", a.id},
          {"dispatchId", a.dispatch_id},
          {"executionId", a.execution_id},
          {"stepId", a.step_id},
          {"attempt", a.attempt},
          {"command", a.command},
          {"workerId", a.worker_id.empty() ? Json() : Json(a.worker_id)},
          {"status", a.status},
          {"progress", a.progress},
          {"checkpoint", a.checkpoint},
          {"reassignments", a.reassignments},
          {"createdAt", IsoTime(a.created_at)},
          {"updatedAt", IsoTime(a.updated_at)}};
}

Json ReassignmentJson(const ReassignmentRecord& r) {
  return {{"id", r.id},
          {"dispatchId", r.dispatch_id},
          {"assignmentId", r.assignment_id},
          {"executionId", r.execution_id},
          {"stepId", r.step_id},
          {"fromWorkerId", r.from_worker},
          {"toWorkerId", r.to_worker.empty() ? Json() : Json(r.to_worker)},
          {"reassignedAt", IsoTime(r.at)},
          {"reason", r.reason},
          {"checkpoint", r.checkpoint}};
}

Json CoordinatorHealthJson(const std::vector<const workers::WorkerEntry*>& workers) {
  int online = 0, unhealthy = 0, draining = 0, offline = 0, capacity = 0, used = 0;
  for (const workers::WorkerEntry* w : workers) {
    switch (w->state) {
      case workers::WorkerState::kOnline:
        ++online;
        break;
      case workers::WorkerState::kUnhealthy:
        ++unhealthy;
        break;
      case workers::WorkerState::kDraining:
        ++draining;
        break;
      case workers::WorkerState::kOffline:
        ++offline;
        break;
    }
    if (w->state == workers::WorkerState::kOnline || w->state == workers::WorkerState::kDraining) {
      capacity += w->capacity;
    }
    used += static_cast<int>(w->held.size());
  }
  return {{"totalWorkers", workers.size()},
          {"onlineWorkers", online},
          {"unhealthyWorkers", unhealthy},
          {"drainingWorkers", draining},
          {"offlineWorkers", offline},
          {"totalCapacity", capacity},
          {"usedCapacity", used}};
}

}  // namespace baton::server
