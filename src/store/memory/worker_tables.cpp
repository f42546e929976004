#include "store/memory/worker_tables.h"

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace baton::memory {
namespace {

bool IsActive(std::string_view status) {
  return status == "waiting" || status == "dispatched" || status == "accepted" ||
         status == "running";
}

// Of `execution`, as a listing by execution means it (records.h): the dispatch id is
// under "<execution>/".
bool FiledUnder(const AssignmentRecord& a, std::string_view execution) {
  std::string_view id = a.dispatch_id;
  return a.execution_id == execution && id.starts_with(execution) &&
         id.substr(execution.size()).starts_with('/');
}

// The first `limit` rows (0 = all) in the order `before`, copied out.
template <class T, class Before>
std::vector<T> Page(std::vector<const T*> rows, size_t limit, Before before) {
  const size_t n = limit == 0 ? rows.size() : std::min(limit, rows.size());
  std::partial_sort(rows.begin(), rows.begin() + static_cast<ptrdiff_t>(n), rows.end(), before);
  std::vector<T> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(*rows[i]);
  return out;
}

}  // namespace

Status WorkerTables::Check(std::span<const WriteBatch* const> batches) const {
  std::unordered_set<std::string_view> seen;
  for (const WriteBatch* b : batches) {
    for (const ReassignmentRecord& r : b->reassignments) {
      if (reassignment_ids_.count(r.id) != 0 || !seen.insert(r.id).second) {
        return Status(errc::kStore, "reassignment " + r.id + " already exists");
      }
    }
  }
  return Status::Ok();
}

void WorkerTables::Apply(const WriteBatch& b) {
  for (const WorkerRecord& w : b.workers) workers_.insert_or_assign(w.id, w);
  for (const AssignmentRecord& a : b.assignments) {
    auto [it, inserted] = assignments_.try_emplace(a.dispatch_id);
    if (!inserted) by_worker_facing_id_.erase({it->second.id, a.dispatch_id});
    it->second = a;
    by_worker_facing_id_.emplace(a.id, a.dispatch_id);
  }
  for (const ReassignmentRecord& r : b.reassignments) {
    reassignment_ids_.insert(r.id);
    reassignments_.push_back(r);
  }
}

std::vector<WorkerRecord> WorkerTables::ListWorkers(const std::string& ns) const {
  std::vector<WorkerRecord> out;
  for (const auto& [id, w] : workers_) {
    if (ns.empty() || w.ns == ns) out.push_back(w);
  }
  return out;
}

std::vector<AssignmentRecord> WorkerTables::ListAssignments(const AssignmentFilter& f) const {
  std::vector<const AssignmentRecord*> match;
  for (const auto& [dispatch_id, a] : assignments_) {
    if ((f.ns.empty() || a.ns == f.ns) && (f.worker_id.empty() || a.worker_id == f.worker_id) &&
        (f.execution_id.empty() || FiledUnder(a, f.execution_id)) &&
        (!f.active_only || IsActive(a.status))) {
      match.push_back(&a);
    }
  }
  return Page(std::move(match), f.limit, [](const AssignmentRecord* x, const AssignmentRecord* y) {
    return x->created_at != y->created_at ? x->created_at < y->created_at
                                          : x->dispatch_id < y->dispatch_id;
  });
}

// A dispatch id wins over a worker-facing one; among assignments sharing a worker-facing
// id (which the engine never writes) the lowest dispatch id wins, as in SqliteStore.
Result<AssignmentRecord> WorkerTables::GetAssignment(const std::string& id) const {
  if (auto it = assignments_.find(id); it != assignments_.end()) return it->second;
  auto by = by_worker_facing_id_.lower_bound({id, std::string()});
  if (by != by_worker_facing_id_.end() && by->first == id) return assignments_.at(by->second);
  return Status(errc::kNotFound, "assignment " + id);
}

std::vector<ReassignmentRecord> WorkerTables::ListReassignments(const ReassignmentFilter& f) const {
  std::vector<const ReassignmentRecord*> match;
  for (const ReassignmentRecord& r : reassignments_) {
    if ((f.ns.empty() || r.ns == f.ns) &&
        (f.dispatch_id.empty() || r.dispatch_id == f.dispatch_id) &&
        (f.worker_id.empty() || r.from_worker == f.worker_id || r.to_worker == f.worker_id)) {
      match.push_back(&r);
    }
  }
  return Page(std::move(match), f.limit,
              [](const ReassignmentRecord* x, const ReassignmentRecord* y) {
                return x->at != y->at ? x->at > y->at : x->id > y->id;
              });
}

}  // namespace baton::memory
