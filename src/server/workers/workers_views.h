// JSON shapes of the coordinator's API (camelCase, as in seed 003 and the protocol).
#pragma once

#include <baton/store.h>

#include "workers/registry.h"

#include <vector>

namespace baton::server {

// {"workerId","namespace","nodeId","host","status","capacity","currentLoad",
//  "reportedLoad","commands","tags","lastHeartbeat","registeredAt","assignments"}
Json WorkerJson(const workers::WorkerEntry& w);
// A stored worker this process has not seen: no load, no assignments.
Json WorkerJson(const WorkerRecord& w);
// {"assignmentId","dispatchId","executionId","stepId","attempt","command","workerId",
//  "status","progress","checkpoint","reassignments","createdAt","updatedAt"}
Json AssignmentJson(const AssignmentRecord& a);
// {"id","dispatchId","assignmentId","executionId","stepId","fromWorkerId","toWorkerId",
//  "reassignedAt","reason","checkpoint"}
Json ReassignmentJson(const ReassignmentRecord& r);
// {"totalWorkers","onlineWorkers","unhealthyWorkers","drainingWorkers","offlineWorkers",
//  "totalCapacity","usedCapacity"} over the workers given (capacity of ONLINE and
// DRAINING ones).
Json CoordinatorHealthJson(const std::vector<const workers::WorkerEntry*>& workers);

}  // namespace baton::server
