// Rows of the worker tables: remote workers, their assignments and the reassignments.
#include "store/sqlite/rows.h"

#include <string>

namespace baton::sqlite {

const char* const kUpsertWorker =
    "INSERT INTO workers (id, ns, node, host, version, capacity, commands, tags, status, "
    "registered_at, last_heartbeat, updated_at, session) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
    "ON CONFLICT (id) DO UPDATE SET ns = excluded.ns, node = excluded.node, "
    "host = excluded.host, version = excluded.version, capacity = excluded.capacity, "
    "commands = excluded.commands, tags = excluded.tags, status = excluded.status, "
    "registered_at = excluded.registered_at, last_heartbeat = excluded.last_heartbeat, "
    "updated_at = excluded.updated_at, session = excluded.session";
const char* const kSelectWorkers =
    "SELECT id, ns, node, host, version, capacity, commands, tags, status, registered_at, "
    "last_heartbeat, updated_at, session FROM workers";

const char* const kUpsertAssignment =
    "INSERT INTO assignments (dispatch_id, id, ns, execution_id, step_id, attempt, command, "
    "worker_id, status, progress, checkpoint, reassignments, created_at, updated_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
    "ON CONFLICT (dispatch_id) DO UPDATE SET id = excluded.id, ns = excluded.ns, "
    "execution_id = excluded.execution_id, step_id = excluded.step_id, "
    "attempt = excluded.attempt, command = excluded.command, "
    "worker_id = excluded.worker_id, status = excluded.status, "
    "progress = excluded.progress, checkpoint = excluded.checkpoint, "
    "reassignments = excluded.reassignments, created_at = excluded.created_at, "
    "updated_at = excluded.updated_at";
// An assignment moves through its statuses under one worker: like
// kUpsertExecutionState, this leaves the indexed columns alone and updates nothing when
// one of them differs (a reassignment); the caller then runs kUpsertAssignment.
const char* const kUpsertAssignmentState =
    "INSERT INTO assignments (dispatch_id, id, ns, execution_id, step_id, attempt, command, "
    "worker_id, status, progress, checkpoint, reassignments, created_at, updated_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
    "ON CONFLICT (dispatch_id) DO UPDATE SET step_id = excluded.step_id, "
    "attempt = excluded.attempt, command = excluded.command, status = excluded.status, "
    "progress = excluded.progress, checkpoint = excluded.checkpoint, "
    "reassignments = excluded.reassignments, updated_at = excluded.updated_at "
    "WHERE id = excluded.id AND ns = excluded.ns AND execution_id = excluded.execution_id "
    "AND worker_id = excluded.worker_id AND created_at = excluded.created_at";
const char* const kSelectAssignments =
    "SELECT dispatch_id, id, ns, execution_id, step_id, attempt, command, worker_id, status, "
    "progress, checkpoint, reassignments, created_at, updated_at FROM assignments";

// A dispatch id wins over a worker-facing one; among assignments sharing a
// worker-facing id (which the engine never writes) the lowest dispatch id wins. An id
// equal to its row's dispatch id is found by the first term: the second one carries the
// condition of the partial index assignments_moved_id, so that SQLite can use it.
const char* const kSelectAssignmentById =
    "SELECT dispatch_id, id, ns, execution_id, step_id, attempt, command, worker_id, status, "
    "progress, checkpoint, reassignments, created_at, updated_at FROM assignments "
    "WHERE dispatch_id = ?1 OR (id = ?1 AND id != dispatch_id) "
    "ORDER BY dispatch_id != ?1, dispatch_id LIMIT 1";

const char* const kInsertReassignment =
    "INSERT INTO reassignments (id, ns, dispatch_id, assignment_id, execution_id, step_id, "
    "from_worker, to_worker, reason, checkpoint, at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
const char* const kSelectReassignments =
    "SELECT id, ns, dispatch_id, assignment_id, execution_id, step_id, from_worker, "
    "to_worker, reason, checkpoint, at FROM reassignments";

Status Write(Stmt& q, const WorkerRecord& w) {
  q.Bind(1, w.id);
  q.Bind(2, w.ns);
  q.Bind(3, w.node);
  q.Bind(4, w.host);
  q.Bind(5, w.version);
  q.Bind(6, w.capacity);
  const std::string commands = StringsJson(w.commands);  // bound without a copy: keep alive
  q.Bind(7, commands);
  const std::string tags = StringsJson(w.tags);
  q.Bind(8, tags);
  q.Bind(9, w.status);
  q.Bind(10, w.registered_at);
  q.Bind(11, w.last_heartbeat);
  q.Bind(12, w.updated_at);
  q.Bind(13, w.session);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "writing worker " + w.id);
}

bool Read(const Stmt& q, WorkerRecord* w) {
  w->id = q.Text(0);
  w->ns = q.Text(1);
  w->node = q.Text(2);
  w->host = q.Text(3);
  w->version = q.Text(4);
  w->capacity = static_cast<int>(q.Int(5));
  w->status = q.Text(8);
  w->registered_at = q.Int(9);
  w->last_heartbeat = q.Int(10);
  w->updated_at = q.Int(11);
  w->session = q.Text(12);
  return ReadStrings(q, 6, &w->commands) && ReadStrings(q, 7, &w->tags);
}

Status Write(Stmt& q, const AssignmentRecord& a) {
  q.Bind(1, a.dispatch_id);
  q.Bind(2, a.id);
  q.Bind(3, a.ns);
  q.Bind(4, a.execution_id);
  q.Bind(5, a.step_id);
  q.Bind(6, a.attempt);
  q.Bind(7, a.command);
  q.Bind(8, a.worker_id);
  q.Bind(9, a.status);
  q.Bind(10, a.progress);
  q.BindJson(11, a.checkpoint);
  q.Bind(12, a.reassignments);
  q.Bind(13, a.created_at);
  q.Bind(14, a.updated_at);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "writing assignment " + a.dispatch_id);
}

bool Read(const Stmt& q, AssignmentRecord* a) {
  a->dispatch_id = q.Text(0);
  a->id = q.Text(1);
  a->ns = q.Text(2);
  a->execution_id = q.Text(3);
  a->step_id = q.Text(4);
  a->attempt = static_cast<int>(q.Int(5));
  a->command = q.Text(6);
  a->worker_id = q.Text(7);
  a->status = q.Text(8);
  a->progress = static_cast<int>(q.Int(9));
  a->reassignments = static_cast<int>(q.Int(11));
  a->created_at = q.Int(12);
  a->updated_at = q.Int(13);
  return q.JsonAt(10, &a->checkpoint);
}

Status Write(Stmt& q, const ReassignmentRecord& r) {
  q.Bind(1, r.id);
  q.Bind(2, r.ns);
  q.Bind(3, r.dispatch_id);
  q.Bind(4, r.assignment_id);
  q.Bind(5, r.execution_id);
  q.Bind(6, r.step_id);
  q.Bind(7, r.from_worker);
  q.Bind(8, r.to_worker);
  q.Bind(9, r.reason);
  q.BindJson(10, r.checkpoint);
  q.Bind(11, r.at);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "writing reassignment " + r.id);
}

bool Read(const Stmt& q, ReassignmentRecord* r) {
  r->id = q.Text(0);
  r->ns = q.Text(1);
  r->dispatch_id = q.Text(2);
  r->assignment_id = q.Text(3);
  r->execution_id = q.Text(4);
  r->step_id = q.Text(5);
  r->from_worker = q.Text(6);
  r->to_worker = q.Text(7);
  r->reason = q.Text(8);
  r->at = q.Int(10);
  return q.JsonAt(9, &r->checkpoint);
}

// The assignments_active index's condition (migration 15), term for term: SQLite uses a
// partial index only for a query that repeats its condition.
constexpr const char* kActiveAssignmentCondition =
    "status = 'waiting' OR status = 'dispatched' OR status = 'accepted' OR status = 'running'";

// The SQL names only the filters that are set, so each shape can use its index;
// parameters keep fixed numbers whatever the shape.
std::string SelectAssignments(const AssignmentFilter& f) {
  std::string sql = std::string(kSelectAssignments) + " WHERE 1";
  if (!f.ns.empty()) sql += " AND ns = ?1";
  if (!f.worker_id.empty()) sql += " AND worker_id = ?2";
  if (!f.execution_id.empty()) sql += " AND execution_id = ?3";
  if (f.active_only) sql += " AND (" + std::string(kActiveAssignmentCondition) + ")";
  return sql + " ORDER BY created_at, dispatch_id LIMIT ?4";
}

void Bind(Stmt& q, const AssignmentFilter& f) {
  if (!f.ns.empty()) q.Bind(1, f.ns);
  if (!f.worker_id.empty()) q.Bind(2, f.worker_id);
  if (!f.execution_id.empty()) q.Bind(3, f.execution_id);
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
