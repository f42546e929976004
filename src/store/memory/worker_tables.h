// The MemoryStore's tables of remote workers: workers, assignments and reassignments.
// Private to the memory store, which guards every call with its mutex.
#pragma once

#include <baton/status.h>
#include <baton/store.h>

#include <map>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace baton::memory {

class WorkerTables {
 public:
  // What would fail the commit: a reassignment id already stored, or repeated within
  // the commit. Called before anything is applied (the commit is all or nothing).
  Status Check(std::span<const WriteBatch* const> batches) const;
  void Apply(const WriteBatch& b);

  std::vector<WorkerRecord> ListWorkers(const std::string& ns) const;
  std::vector<AssignmentRecord> ListAssignments(const AssignmentFilter& f) const;
  Result<AssignmentRecord> GetAssignment(const std::string& id) const;
  std::vector<ReassignmentRecord> ListReassignments(const ReassignmentFilter& f) const;

 private:
  std::map<std::string, WorkerRecord> workers_;                    // by id: the listing order
  std::unordered_map<std::string, AssignmentRecord> assignments_;  // by dispatch_id
  // (worker-facing id, dispatch_id) of every assignment: GetAssignment by a ".r<n>" id.
  std::set<std::pair<std::string, std::string>> by_worker_facing_id_;
  std::vector<ReassignmentRecord> reassignments_;  // in the order written
  std::unordered_set<std::string> reassignment_ids_;
};

}  // namespace baton::memory
