#include "store/sqlite/migrations.h"

#include "store/sqlite/statement.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <string>

namespace baton::sqlite {
namespace {

// JSON columns hold compact JSON text, NULL for a null value. Times are milliseconds
// since the Unix epoch, 0 when unset. Statuses are their snake_case names.
constexpr const char* kMigrations[] = {
    // 1: initial schema.
    R"sql(
CREATE TABLE workflows (
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  definition TEXT,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (name, version)
);
CREATE TABLE executions (
  id TEXT NOT NULL PRIMARY KEY,
  workflow TEXT NOT NULL,
  version INTEGER NOT NULL,
  definition TEXT,
  input TEXT,
  status TEXT NOT NULL,
  priority INTEGER NOT NULL,
  output TEXT,
  error TEXT,
  parent_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  completed_at INTEGER NOT NULL,
  deadline INTEGER NOT NULL
);
CREATE INDEX executions_status ON executions (status, created_at);
CREATE INDEX executions_created ON executions (created_at);
CREATE INDEX executions_workflow ON executions (workflow, created_at);
CREATE TABLE steps (
  execution_id TEXT NOT NULL,
  step_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  progress INTEGER NOT NULL,
  output TEXT,
  error TEXT,
  exit_code INTEGER NOT NULL,
  stderr_tail TEXT NOT NULL,
  assignment_id TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  completed_at INTEGER NOT NULL,
  retry_at INTEGER NOT NULL,
  deadline INTEGER NOT NULL,
  PRIMARY KEY (execution_id, step_id)
);
CREATE TABLE attempts (
  execution_id TEXT NOT NULL,
  step_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  status TEXT NOT NULL,
  assignment_id TEXT NOT NULL,
  error TEXT,
  started_at INTEGER NOT NULL,
  completed_at INTEGER NOT NULL,
  PRIMARY KEY (execution_id, step_id, attempt)
) WITHOUT ROWID;
-- Attempts and events are small and read only by primary-key range, so they live in
-- their key's b-tree (WITHOUT ROWID) instead of a table plus a separate key index: one
-- b-tree write per row instead of two.
CREATE TABLE events (
  execution_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  step_id TEXT NOT NULL,
  data TEXT,
  time INTEGER NOT NULL,
  PRIMARY KEY (execution_id, seq)
) WITHOUT ROWID;
CREATE TABLE dead_letters (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  execution_id TEXT NOT NULL,
  step_id TEXT NOT NULL,
  input TEXT,
  errors TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX dead_letters_execution ON dead_letters (execution_id, id);
)sql",
    // 2: the attempt a step event is about, as a column rather than inside `data`.
    R"sql(
ALTER TABLE events ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
)sql",
    // 3: namespaces, idempotency keys, API tokens, step retry bases and cron schedules
    // (the server). Workflows are keyed
    // by namespace too, so their table is rebuilt (SQLite cannot alter a primary key).
    R"sql(
CREATE TABLE workflows_v3 (
  ns TEXT NOT NULL,
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  definition TEXT,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (ns, name, version)
);
INSERT INTO workflows_v3 (ns, name, version, definition, created_at)
  SELECT 'default', name, version, definition, created_at FROM workflows;
DROP TABLE workflows;
ALTER TABLE workflows_v3 RENAME TO workflows;
ALTER TABLE executions ADD COLUMN ns TEXT NOT NULL DEFAULT 'default';
ALTER TABLE executions ADD COLUMN idempotency_key TEXT NOT NULL DEFAULT '';
CREATE INDEX executions_ns_created ON executions (ns, created_at, id);
CREATE INDEX executions_parent ON executions (parent_id) WHERE parent_id != '';
CREATE INDEX executions_idempotency ON executions (ns, idempotency_key)
  WHERE idempotency_key != '';
ALTER TABLE steps ADD COLUMN attempt_base INTEGER NOT NULL DEFAULT 0;
CREATE TABLE tokens (
  id TEXT NOT NULL PRIMARY KEY,
  ns TEXT NOT NULL,
  name TEXT NOT NULL,
  scopes TEXT NOT NULL,
  secret_hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER NOT NULL
);
CREATE TABLE schedules (
  id TEXT NOT NULL PRIMARY KEY,
  ns TEXT NOT NULL,
  name TEXT NOT NULL,
  workflow TEXT NOT NULL,
  version INTEGER NOT NULL,
  cron TEXT NOT NULL,
  timezone TEXT NOT NULL,
  input TEXT,
  overlap TEXT NOT NULL,
  catchup TEXT NOT NULL,
  next_fire_at INTEGER NOT NULL,
  last_fire_at INTEGER NOT NULL,
  last_execution_id TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
)sql",
    // 4: webhooks, event triggers and the delivery outbox (notifications, trigger starts).
    R"sql(
CREATE TABLE hooks (
  name TEXT NOT NULL PRIMARY KEY,
  ns TEXT NOT NULL,
  workflow TEXT NOT NULL,
  version INTEGER NOT NULL,
  secret TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE triggers (
  id TEXT NOT NULL PRIMARY KEY,
  ns TEXT NOT NULL,
  name TEXT NOT NULL,
  source TEXT NOT NULL,
  statuses TEXT NOT NULL,
  workflow TEXT NOT NULL,
  version INTEGER NOT NULL,
  input TEXT,
  created_at INTEGER NOT NULL
);
CREATE TABLE deliveries (
  id TEXT NOT NULL PRIMARY KEY,
  ns TEXT NOT NULL,
  execution_id TEXT NOT NULL,
  event TEXT NOT NULL,
  kind TEXT NOT NULL,
  target TEXT NOT NULL,
  payload TEXT,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  next_attempt_at INTEGER NOT NULL,
  last_error TEXT,
  result TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX deliveries_execution ON deliveries (execution_id, created_at, id);
CREATE INDEX deliveries_ns_created ON deliveries (ns, created_at, id);
-- Only pending rows are read at start and by status; keep that index small.
CREATE INDEX deliveries_pending ON deliveries (created_at, id) WHERE status = 'pending';
)sql",
    // 5 (kEventPositionsVersion): every event's position in the whole store, the live
    // feed's resume point (EventRecord::position). Existing events are numbered in the
    // order of (time, execution_id, seq), from 1. The index serves reads by position
    // ("events after P") and the engine's start (MAX(position)).
    // Events get no ns or workflow columns: a feed read filters them through their
    // execution's row (primary-key lookup per event scanned, in position order). Copying
    // both strings into every event, with an index over them, would widen the hottest
    // write path (about three events per step) for a read that runs only when a client
    // resumes, and whose scan starts at the client's position anyway.
    R"sql(
ALTER TABLE events ADD COLUMN position INTEGER NOT NULL DEFAULT 0;
UPDATE events SET position = numbered.n
  FROM (SELECT execution_id, seq, ROW_NUMBER() OVER (ORDER BY time, execution_id, seq) AS n
        FROM events) AS numbered
  WHERE events.execution_id = numbered.execution_id AND events.seq = numbered.seq;
CREATE INDEX events_position ON events (position);
)sql",
    // 6 (kWorkersVersion): remote workers, the assignments of command steps to them and
    // the history of reassignments (docs/coordinator.md). commands and tags are JSON
    // arrays of strings. A worker-facing assignment id (dispatch_id.r<n>) is looked up
    // through assignments_id; it is not declared unique -- the engine never reuses one,
    // and a UNIQUE constraint would fail commits the memory store accepts. Only active
    // assignments are loaded at start: their partial index stays small.
    R"sql(
CREATE TABLE workers (
  id TEXT NOT NULL PRIMARY KEY,
  ns TEXT NOT NULL,
  node TEXT NOT NULL,
  host TEXT NOT NULL,
  version TEXT NOT NULL,
  capacity INTEGER NOT NULL,
  commands TEXT NOT NULL,
  tags TEXT NOT NULL,
  status TEXT NOT NULL,
  registered_at INTEGER NOT NULL,
  last_heartbeat INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE assignments (
  dispatch_id TEXT NOT NULL PRIMARY KEY,
  id TEXT NOT NULL,
  ns TEXT NOT NULL,
  execution_id TEXT NOT NULL,
  step_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  command TEXT NOT NULL,
  worker_id TEXT NOT NULL,
  status TEXT NOT NULL,
  progress INTEGER NOT NULL,
  checkpoint TEXT,
  reassignments INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX assignments_id ON assignments (id);
CREATE INDEX assignments_worker ON assignments (worker_id, created_at, dispatch_id);
CREATE INDEX assignments_execution ON assignments (execution_id, created_at, dispatch_id);
CREATE INDEX assignments_ns_created ON assignments (ns, created_at, dispatch_id);
CREATE INDEX assignments_active ON assignments (created_at, dispatch_id)
  WHERE status IN ('waiting', 'dispatched', 'accepted', 'running');
CREATE TABLE reassignments (
  id TEXT NOT NULL PRIMARY KEY,
  ns TEXT NOT NULL,
  dispatch_id TEXT NOT NULL,
  assignment_id TEXT NOT NULL,
  execution_id TEXT NOT NULL,
  step_id TEXT NOT NULL,
  from_worker TEXT NOT NULL,
  to_worker TEXT NOT NULL,
  reason TEXT NOT NULL,
  checkpoint TEXT,
  at INTEGER NOT NULL
);
CREATE INDEX reassignments_dispatch ON reassignments (dispatch_id, at, id);
CREATE INDEX reassignments_at ON reassignments (at, id);
)sql",
    // 7 (kWorkerSessionsVersion): each worker's process incarnation, so that a restart
    // of the server does not make a new worker process look like the old one.
    R"sql(
ALTER TABLE workers ADD COLUMN session TEXT NOT NULL DEFAULT '';
)sql",
    // 8 (kSignalsVersion): signals sent to executions, kept until a step consumes them.
    R"sql(
CREATE TABLE signals (
  execution_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  ns TEXT NOT NULL,
  name TEXT NOT NULL,
  payload TEXT,
  sent_at INTEGER NOT NULL,
  consumed_by TEXT NOT NULL,
  consumed_at INTEGER NOT NULL,
  PRIMARY KEY (execution_id, seq)
);
)sql",
    // 9 (kExecutionVarsVersion): variables steps set while an execution runs (set_vars).
    R"sql(
ALTER TABLE executions ADD COLUMN vars TEXT;
)sql",
    // 10 (kDeadLetterQueueVersion): the dead-letter queue's fields. Entries written
    // before take their namespace and workflow from their execution and their code from
    // their last error.
    R"sql(
ALTER TABLE dead_letters ADD COLUMN ns TEXT NOT NULL DEFAULT 'default';
ALTER TABLE dead_letters ADD COLUMN workflow TEXT NOT NULL DEFAULT '';
ALTER TABLE dead_letters ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE dead_letters ADD COLUMN code TEXT NOT NULL DEFAULT '';
ALTER TABLE dead_letters ADD COLUMN fingerprint TEXT NOT NULL DEFAULT '';
ALTER TABLE dead_letters ADD COLUMN first_failed_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE dead_letters ADD COLUMN last_failed_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE dead_letters ADD COLUMN first_attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE dead_letters ADD COLUMN last_attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE dead_letters ADD COLUMN status TEXT NOT NULL DEFAULT 'open';
ALTER TABLE dead_letters ADD COLUMN resolved_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE dead_letters ADD COLUMN replay_attempt INTEGER NOT NULL DEFAULT 0;
UPDATE dead_letters SET
  ns = COALESCE((SELECT e.ns FROM executions e WHERE e.id = dead_letters.execution_id), 'default'),
  workflow = COALESCE((SELECT e.workflow FROM executions e
                       WHERE e.id = dead_letters.execution_id), ''),
  version = COALESCE((SELECT e.version FROM executions e
                      WHERE e.id = dead_letters.execution_id), 0),
  code = COALESCE(CASE WHEN json_valid(errors) THEN json_extract(errors, '$[#-1].code') END, ''),
  fingerprint = COALESCE(CASE WHEN json_valid(errors)
                         THEN json_extract(errors, '$[#-1].code') END, ''),
  first_failed_at = created_at,
  last_failed_at = created_at,
  first_attempt = COALESCE(CASE WHEN json_valid(errors)
                           THEN json_extract(errors, '$[0].attempt') END, 0),
  last_attempt = COALESCE(CASE WHEN json_valid(errors)
                          THEN json_extract(errors, '$[#-1].attempt') END, 0);
CREATE INDEX dead_letters_ns ON dead_letters (ns, id);
CREATE INDEX dead_letters_group ON dead_letters (ns, workflow, step_id, fingerprint);
)sql",
    // 11 (kBreakersVersion): circuit breakers, shared by a namespace's executions.
    R"sql(
CREATE TABLE breakers (
  ns TEXT NOT NULL,
  key TEXT NOT NULL,
  state TEXT NOT NULL,
  failures INTEGER NOT NULL,
  successes INTEGER NOT NULL,
  opened_at INTEGER NOT NULL,
  probe_at INTEGER NOT NULL,
  trips INTEGER NOT NULL,
  last_error TEXT,
  failure_threshold INTEGER NOT NULL,
  recovery_timeout_ms INTEGER NOT NULL,
  success_threshold INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (ns, key)
);
)sql",
    // 12 (kCacheVersion): cached step results.
    R"sql(
CREATE TABLE cache_entries (
  ns TEXT NOT NULL,
  key TEXT NOT NULL,
  workflow TEXT NOT NULL,
  step_id TEXT NOT NULL,
  execution_id TEXT NOT NULL,
  output TEXT,
  bytes INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  last_hit_at INTEGER NOT NULL,
  hits INTEGER NOT NULL,
  PRIMARY KEY (ns, key)
);
)sql",
    // 13 (kChildVersion): a child workflow's execution names the parent step and attempt
    // that started it.
    R"sql(
ALTER TABLE executions ADD COLUMN parent_step TEXT NOT NULL DEFAULT '';
ALTER TABLE executions ADD COLUMN parent_attempt INTEGER NOT NULL DEFAULT 0;
)sql",
    // 14 (kPoolsVersion): named pools of slots.
    R"sql(
CREATE TABLE pools (
  ns TEXT NOT NULL,
  name TEXT NOT NULL,
  slots INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (ns, name)
);
)sql",
    // 15 (kActiveAssignmentsOrVersion): the active-assignments index with its condition
    // written with OR. With `status IN (...)` SQLite builds a temporary b-tree for the
    // list on every write of an assignment (3 OpenEphemeral per upsert), and freeing it
    // is what sent the writer thread's heap back to the kernel over and over.
    R"sql(
DROP INDEX assignments_active;
CREATE INDEX assignments_active ON assignments (created_at, dispatch_id)
  WHERE status = 'waiting' OR status = 'dispatched' OR status = 'accepted'
     OR status = 'running';
)sql",
    // 16 (kMovedAssignmentIdVersion): the worker-facing id is indexed only where it
    // differs from the dispatch id (a reassigned command). Every other assignment is
    // found through its dispatch id, and its insert no longer writes an index entry
    // that repeats the primary key.
    R"sql(
DROP INDEX assignments_id;
CREATE INDEX assignments_moved_id ON assignments (id) WHERE id != dispatch_id;
)sql",
    // 17 (kPackedEventsVersion): a run of events of one execution in one row
    // (event_rows.h): the row's columns are the run's last event, `span` counts its
    // events and `earlier` holds the others.
    R"sql(
ALTER TABLE events ADD COLUMN span INTEGER NOT NULL DEFAULT 1;
ALTER TABLE events ADD COLUMN earlier TEXT;
)sql",
    // 18 (kLeanIndexesVersion): two index entries fewer per execution. Every listing of
    // executions the server makes names a namespace (executions_ns_created serves it),
    // and an execution's assignments are found through the primary key: their dispatch
    // ids are under "<execution>/" (records.h).
    R"sql(
DROP INDEX executions_created;
DROP INDEX assignments_execution;
)sql",
};

int64_t NowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

Status CurrentVersion(sqlite3* db, int* version) {
  Stmt q;
  if (Status s = q.Prepare(db, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
      !s.ok()) {
    return s;
  }
  if (q.Step() != SQLITE_ROW) return Error(db, "reading schema version");
  *version = static_cast<int>(q.Int(0));
  q.Reset();
  return Status::Ok();
}

Status Apply(sqlite3* db, int version, const char* script) {
  const std::string what = "applying schema migration " + std::to_string(version);
  // IMMEDIATE: two processes opening a fresh file at once must not both migrate.
  if (Status s = Exec(db, "BEGIN IMMEDIATE"); !s.ok()) return Context(s, what);
  // Re-check inside the lock: another process may have applied it meanwhile.
  int current = 0;
  Status s = CurrentVersion(db, &current);
  if (s.ok() && current < version) {
    s = Exec(db, script);
    if (s.ok()) {
      Stmt ins;
      s = ins.Prepare(db, "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)");
      if (s.ok()) {
        ins.Bind(1, version);
        ins.Bind(2, NowMs());
        s = ins.Run();
      }
    }
  }
  if (s.ok()) s = Exec(db, "COMMIT");
  if (!s.ok()) {
    Exec(db, "ROLLBACK");
    return Context(s, what);
  }
  return Status::Ok();
}

}  // namespace

int LatestSchemaVersion() {
  return static_cast<int>(std::size(kMigrations));
}

Status Migrate(sqlite3* db, int up_to) {
  if (Status s = Exec(db,
                      "CREATE TABLE IF NOT EXISTS schema_migrations ("
                      "version INTEGER NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL)");
      !s.ok()) {
    return s;
  }
  int current = 0;
  if (Status s = CurrentVersion(db, &current); !s.ok()) return s;
  if (current > LatestSchemaVersion()) {
    return Status(errc::kStore, "database schema version " + std::to_string(current) +
                                    " is newer than this build of baton supports (" +
                                    std::to_string(LatestSchemaVersion()) +
                                    "); upgrade baton to open it");
  }
  for (int v = current + 1; v <= std::min(up_to, LatestSchemaVersion()); ++v) {
    if (Status s = Apply(db, v, kMigrations[v - 1]); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace baton::sqlite
