#include "store/sqlite/rows.h"

#include <array>
#include <memory>
#include <string>
#include <string_view>

namespace baton::sqlite {

const char* const kUpsertWorkflow =
    "INSERT INTO workflows (name, version, definition, created_at, ns) "
    "VALUES (?1, ?2, ?3, ?4, ?5) "
    "ON CONFLICT (ns, name, version) DO UPDATE SET definition = excluded.definition, "
    "created_at = excluded.created_at";
const char* const kUpsertExecution =
    "INSERT INTO executions (id, workflow, version, definition, input, status, priority, "
    "output, error, parent_id, created_at, started_at, completed_at, deadline, ns, "
    "idempotency_key, vars, parent_step, parent_attempt) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
    "?19) "
    "ON CONFLICT (id) DO UPDATE SET workflow = excluded.workflow, "
    "version = excluded.version, definition = excluded.definition, input = excluded.input, "
    "status = excluded.status, priority = excluded.priority, output = excluded.output, "
    "error = excluded.error, parent_id = excluded.parent_id, "
    "created_at = excluded.created_at, started_at = excluded.started_at, "
    "completed_at = excluded.completed_at, deadline = excluded.deadline, ns = excluded.ns, "
    "idempotency_key = excluded.idempotency_key, vars = excluded.vars, "
    "parent_step = excluded.parent_step, parent_attempt = excluded.parent_attempt";
// The usual update of an execution changes its state, not what it is filed under: this
// upsert leaves the indexed columns alone (SQLite rewrites an index entry only when a
// column of that index is SET), and updates nothing when one of them differs; the
// caller then writes the row with kUpsertExecution. Same parameters as kUpsertExecution.
const char* const kUpsertExecutionState =
    "INSERT INTO executions (id, workflow, version, definition, input, status, priority, "
    "output, error, parent_id, created_at, started_at, completed_at, deadline, ns, "
    "idempotency_key, vars, parent_step, parent_attempt) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
    "?19) "
    "ON CONFLICT (id) DO UPDATE SET version = excluded.version, "
    "definition = excluded.definition, input = excluded.input, status = excluded.status, "
    "priority = excluded.priority, output = excluded.output, error = excluded.error, "
    "started_at = excluded.started_at, completed_at = excluded.completed_at, "
    "deadline = excluded.deadline, vars = excluded.vars, parent_step = excluded.parent_step, "
    "parent_attempt = excluded.parent_attempt "
    "WHERE workflow = excluded.workflow AND parent_id = excluded.parent_id "
    "AND created_at = excluded.created_at AND ns = excluded.ns "
    "AND idempotency_key = excluded.idempotency_key";
const char* const kUpsertStep =
    "INSERT INTO steps (execution_id, step_id, idx, status, attempts, progress, output, "
    "error, exit_code, stderr_tail, assignment_id, started_at, completed_at, retry_at, "
    "deadline, attempt_base) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16) "
    "ON CONFLICT (execution_id, step_id) DO UPDATE SET idx = excluded.idx, "
    "status = excluded.status, attempts = excluded.attempts, "
    "progress = excluded.progress, output = excluded.output, error = excluded.error, "
    "exit_code = excluded.exit_code, stderr_tail = excluded.stderr_tail, "
    "assignment_id = excluded.assignment_id, started_at = excluded.started_at, "
    "completed_at = excluded.completed_at, retry_at = excluded.retry_at, "
    "deadline = excluded.deadline, attempt_base = excluded.attempt_base";
const char* const kUpsertAttempt =
    "INSERT INTO attempts (execution_id, step_id, attempt, status, assignment_id, error, "
    "started_at, completed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
    "ON CONFLICT (execution_id, step_id, attempt) DO UPDATE SET status = excluded.status, "
    "assignment_id = excluded.assignment_id, error = excluded.error, "
    "started_at = excluded.started_at, completed_at = excluded.completed_at";
const char* const kInsertEvent =
    "INSERT INTO events (execution_id, seq, type, step_id, data, time, attempt, position) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

const char* const kUpsertToken =
    "INSERT INTO tokens (id, ns, name, scopes, secret_hash, created_at, revoked_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
    "ON CONFLICT (id) DO UPDATE SET ns = excluded.ns, name = excluded.name, "
    "scopes = excluded.scopes, secret_hash = excluded.secret_hash, "
    "created_at = excluded.created_at, revoked_at = excluded.revoked_at";

const char* const kUpsertSchedule =
    "INSERT INTO schedules (id, ns, name, workflow, version, cron, timezone, input, overlap, "
    "catchup, next_fire_at, last_fire_at, last_execution_id, created_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
    "ON CONFLICT (id) DO UPDATE SET ns = excluded.ns, name = excluded.name, "
    "workflow = excluded.workflow, version = excluded.version, cron = excluded.cron, "
    "timezone = excluded.timezone, input = excluded.input, overlap = excluded.overlap, "
    "catchup = excluded.catchup, next_fire_at = excluded.next_fire_at, "
    "last_fire_at = excluded.last_fire_at, last_execution_id = excluded.last_execution_id, "
    "created_at = excluded.created_at";
const char* const kSelectSchedules =
    "SELECT id, ns, name, workflow, version, cron, timezone, input, overlap, catchup, "
    "next_fire_at, last_fire_at, last_execution_id, created_at FROM schedules";

const char* const kSelectWorkflows =
    "SELECT name, version, definition, created_at, ns FROM workflows";
const char* const kSelectExecutions =
    "SELECT id, workflow, version, definition, input, status, priority, output, error, "
    "parent_id, created_at, started_at, completed_at, deadline, ns, idempotency_key, vars, "
    "parent_step, parent_attempt FROM executions";
const char* const kSelectSteps =
    "SELECT execution_id, step_id, idx, status, attempts, progress, output, error, exit_code, "
    "stderr_tail, assignment_id, started_at, completed_at, retry_at, deadline, attempt_base "
    "FROM steps";
const char* const kSelectAttempts =
    "SELECT execution_id, step_id, attempt, status, assignment_id, error, started_at, "
    "completed_at FROM attempts";
const char* const kSelectEvents =
    "SELECT execution_id, seq, type, step_id, data, time, attempt, position FROM events";
const char* const kSelectTokens =
    "SELECT id, ns, name, scopes, secret_hash, created_at, revoked_at FROM tokens";

// Context strings are built only on failure: they would cost more than the row.
Status Write(Stmt& q, const WorkflowRecord& w) {
  q.Bind(1, w.name);
  q.Bind(2, w.version);
  q.BindJson(3, w.definition);
  q.Bind(4, w.created_at);
  q.Bind(5, w.ns);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "writing workflow " + w.name);
}

Status Write(Stmt& q, const ExecutionRecord& e) {
  q.Bind(1, e.id);
  q.Bind(2, e.workflow);
  q.Bind(3, e.version);
  if (e.definition && !e.definition->empty()) {
    q.Bind(4, std::string_view(*e.definition));
  } else {
    q.BindNull(4);
  }
  q.BindJson(5, e.input);
  q.Bind(6, std::string_view(ToString(e.status)));
  q.Bind(7, e.priority);
  q.BindJson(8, e.output);
  q.BindJson(9, e.error);
  q.Bind(10, e.parent_id);
  q.Bind(11, e.created_at);
  q.Bind(12, e.started_at);
  q.Bind(13, e.completed_at);
  q.Bind(14, e.deadline);
  q.Bind(15, e.ns);
  q.Bind(16, e.idempotency_key);
  q.BindJson(17, e.vars);
  q.Bind(18, e.parent_step);
  q.Bind(19, e.parent_attempt);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "writing execution " + e.id);
}

Status Write(Stmt& q, const StepRecord& r) {
  q.Bind(1, r.execution_id);
  q.Bind(2, r.step_id);
  q.Bind(3, r.index);
  q.Bind(4, std::string_view(ToString(r.status)));
  q.Bind(5, r.attempts);
  q.Bind(6, r.progress);
  q.BindJson(7, r.output);
  q.BindJson(8, r.error);
  q.Bind(9, r.exit_code);
  q.Bind(10, r.stderr_tail);
  q.Bind(11, r.assignment_id);
  q.Bind(12, r.started_at);
  q.Bind(13, r.completed_at);
  q.Bind(14, r.retry_at);
  q.Bind(15, r.deadline);
  q.Bind(16, r.attempt_base);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "writing step " + r.execution_id + "/" + r.step_id);
}

Status Write(Stmt& q, const AttemptRecord& a) {
  q.Bind(1, a.execution_id);
  q.Bind(2, a.step_id);
  q.Bind(3, a.attempt);
  q.Bind(4, std::string_view(ToString(a.status)));
  q.Bind(5, a.assignment_id);
  q.BindJson(6, a.error);
  q.Bind(7, a.started_at);
  q.Bind(8, a.completed_at);
  Status s = q.Run();
  if (s.ok()) return s;
  return Context(s, "writing attempt " + std::to_string(a.attempt) + " of " + a.execution_id + "/" +
                        a.step_id);
}

Status Write(Stmt& q, const EventRecord& e) {
  q.Bind(1, e.execution_id);
  q.Bind(2, e.seq);
  q.Bind(3, e.type);
  q.Bind(4, e.step_id);
  q.BindJson(5, e.data);
  q.Bind(6, e.time);
  q.Bind(7, e.attempt);
  q.Bind(8, e.position);
  Status s = q.Run();
  if (s.ok()) return s;
  return Context(s,
                 "writing event seq " + std::to_string(e.seq) + " of execution " + e.execution_id);
}

Status Write(Stmt& q, const TokenRecord& t) {
  q.Bind(1, t.id);
  q.Bind(2, t.ns);
  q.Bind(3, t.name);
  const std::string scopes = StringsJson(t.scopes);  // bound without a copy: keep it alive
  q.Bind(4, scopes);
  q.Bind(5, t.secret_hash);
  q.Bind(6, t.created_at);
  q.Bind(7, t.revoked_at);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "writing token " + t.id);
}

Status Write(Stmt& q, const ScheduleRecord& r) {
  q.Bind(1, r.id);
  q.Bind(2, r.ns);
  q.Bind(3, r.name);
  q.Bind(4, r.workflow);
  q.Bind(5, r.version);
  q.Bind(6, r.cron);
  q.Bind(7, r.timezone);
  q.BindJson(8, r.input);
  q.Bind(9, r.overlap);
  q.Bind(10, r.catchup);
  q.Bind(11, r.next_fire_at);
  q.Bind(12, r.last_fire_at);
  q.Bind(13, r.last_execution_id);
  q.Bind(14, r.created_at);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "writing schedule " + r.id);
}

bool Read(const Stmt& q, ScheduleRecord* r) {
  r->id = q.Text(0);
  r->ns = q.Text(1);
  r->name = q.Text(2);
  r->workflow = q.Text(3);
  r->version = static_cast<int>(q.Int(4));
  r->cron = q.Text(5);
  r->timezone = q.Text(6);
  r->overlap = q.Text(8);
  r->catchup = q.Text(9);
  r->next_fire_at = q.Int(10);
  r->last_fire_at = q.Int(11);
  r->last_execution_id = q.Text(12);
  r->created_at = q.Int(13);
  return q.JsonAt(7, &r->input);
}

bool Read(const Stmt& q, WorkflowRecord* w) {
  w->ns = q.Text(4);
  w->name = q.Text(0);
  w->version = static_cast<int>(q.Int(1));
  w->created_at = q.Int(3);
  return q.JsonAt(2, &w->definition);
}

bool Read(const Stmt& q, ExecutionRecord* e) {
  e->id = q.Text(0);
  e->workflow = q.Text(1);
  e->version = static_cast<int>(q.Int(2));
  auto status = ParseExecutionStatus(q.Text(5));
  if (!status) return false;
  e->status = *status;
  e->priority = static_cast<int>(q.Int(6));
  e->parent_id = q.Text(9);
  e->created_at = q.Int(10);
  e->started_at = q.Int(11);
  e->completed_at = q.Int(12);
  e->deadline = q.Int(13);
  e->ns = q.Text(14);
  e->idempotency_key = q.Text(15);
  e->parent_step = q.Text(17);
  e->parent_attempt = static_cast<int>(q.Int(18));
  // Kept as text: WorkflowFromSnapshot reads it when the execution is resumed.
  if (!q.IsNull(3)) e->definition = std::make_shared<const std::string>(q.Text(3));
  return q.JsonAt(4, &e->input) && q.JsonAt(7, &e->output) && q.JsonAt(8, &e->error) &&
         q.JsonAt(16, &e->vars);
}

bool Read(const Stmt& q, StepRecord* s) {
  s->execution_id = q.Text(0);
  s->step_id = q.Text(1);
  s->index = static_cast<int>(q.Int(2));
  auto status = ParseStepStatus(q.Text(3));
  if (!status) return false;
  s->status = *status;
  s->attempts = static_cast<int>(q.Int(4));
  s->progress = static_cast<int>(q.Int(5));
  s->exit_code = static_cast<int>(q.Int(8));
  s->stderr_tail = q.Text(9);
  s->assignment_id = q.Text(10);
  s->started_at = q.Int(11);
  s->completed_at = q.Int(12);
  s->retry_at = q.Int(13);
  s->deadline = q.Int(14);
  s->attempt_base = static_cast<int>(q.Int(15));
  return q.JsonAt(6, &s->output) && q.JsonAt(7, &s->error);
}

bool Read(const Stmt& q, AttemptRecord* a) {
  a->execution_id = q.Text(0);
  a->step_id = q.Text(1);
  a->attempt = static_cast<int>(q.Int(2));
  auto status = ParseStepStatus(q.Text(3));
  if (!status) return false;
  a->status = *status;
  a->assignment_id = q.Text(4);
  a->started_at = q.Int(6);
  a->completed_at = q.Int(7);
  return q.JsonAt(5, &a->error);
}

bool Read(const Stmt& q, EventRecord* e) {
  e->execution_id = q.Text(0);
  e->seq = q.Int(1);
  e->type = q.Text(2);
  e->step_id = q.Text(3);
  e->time = q.Int(5);
  e->attempt = static_cast<int>(q.Int(6));
  e->position = q.Int(7);
  return q.JsonAt(4, &e->data);
}

}  // namespace baton::sqlite

namespace baton::sqlite {

bool Read(const Stmt& q, TokenRecord* t) {
  t->id = q.Text(0);
  t->ns = q.Text(1);
  t->name = q.Text(2);
  t->secret_hash = q.Text(4);
  t->created_at = q.Int(5);
  t->revoked_at = q.Int(6);
  return ReadStrings(q, 3, &t->scopes);
}

std::string StringsJson(const std::vector<std::string>& strings) {
  return Json(strings).dump(-1, ' ', false, Json::error_handler_t::replace);
}

bool ReadStrings(const Stmt& q, int col, std::vector<std::string>* out) {
  Json array;
  if (!q.JsonAt(col, &array) || !array.is_array()) return false;
  out->clear();
  for (const Json& s : array) {
    if (!s.is_string()) return false;
    out->push_back(s.get<std::string>());
  }
  return true;
}

}  // namespace baton::sqlite
