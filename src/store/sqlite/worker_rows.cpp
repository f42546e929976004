// The filtered listings of the worker tables: assignments and reassignments.
#include "store/sqlite/rows.h"

#include <string>

namespace baton::sqlite {

// The assignments_active index's condition (migration 15), term for term: SQLite uses a
// partial index only for a query that repeats its condition.
constexpr const char* kActiveAssignmentCondition =
    "status = 'waiting' OR status = 'dispatched' OR status = 'accepted' OR status = 'running'";

// The SQL names only the filters that are set, so each shape can use its index;
// parameters keep fixed numbers whatever the shape.
//
// An execution's assignments are a range of the primary key (their dispatch ids are
// under "<execution>/", records.h: '0' follows '/'); the other terms are then written so
// that SQLite does not pick their index over that range.
std::string SelectAssignments(const AssignmentFilter& f) {
  const bool by_execution = !f.execution_id.empty();
  const char* unindexed = by_execution ? "+" : "";
  std::string sql = std::string(kSelectAssignments) + " WHERE 1";
  if (!f.ns.empty()) sql += std::string(" AND ") + unindexed + "ns = ?1";
  if (!f.worker_id.empty()) sql += std::string(" AND ") + unindexed + "worker_id = ?2";
  if (by_execution) {
    sql += " AND execution_id = ?3 AND dispatch_id >= ?5 AND dispatch_id < ?6";
  }
  if (f.active_only) sql += " AND (" + std::string(kActiveAssignmentCondition) + ")";
  return sql + " ORDER BY created_at, dispatch_id LIMIT ?4";
}

void Bind(Stmt& q, const AssignmentFilter& f) {
  if (!f.ns.empty()) q.Bind(1, f.ns);
  if (!f.worker_id.empty()) q.Bind(2, f.worker_id);
  if (!f.execution_id.empty()) {
    q.Bind(3, f.execution_id);
    q.BindCopy(5, f.execution_id + "/");
    q.BindCopy(6, f.execution_id + "0");
  }
  q.Bind(4, SqlLimit(f.limit));
}

std::string SelectReassignments(const ReassignmentFilter& f) {
  std::string sql = std::string(kSelectReassignments) + " WHERE 1";
  if (!f.ns.empty()) sql += " AND ns = ?1";
  if (!f.dispatch_id.empty()) sql += " AND dispatch_id = ?2";
  if (!f.worker_id.empty()) sql += " AND (from_worker = ?3 OR to_worker = ?3)";
  return sql + " ORDER BY at DESC, id DESC LIMIT ?4";
}

void Bind(Stmt& q, const ReassignmentFilter& f) {
  if (!f.ns.empty()) q.Bind(1, f.ns);
  if (!f.dispatch_id.empty()) q.Bind(2, f.dispatch_id);
  if (!f.worker_id.empty()) q.Bind(3, f.worker_id);
  q.Bind(4, SqlLimit(f.limit));
}

}  // namespace baton::sqlite
