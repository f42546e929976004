// Versioned schema migrations of the SQLite store.
//
// Migration N (1-based) is the N-th script of an append-only list; a database records
// the versions applied in schema_migrations(version, applied_at). Never edit a released
// migration -- add a new one.
#pragma once

#include <baton/status.h>

#include <sqlite3.h>

namespace baton::sqlite {

// The newest schema version this build knows.
int LatestSchemaVersion();

// The migration that adds events.position (renumber it with its entry in kMigrations).
inline constexpr int kEventPositionsVersion = 5;
// The migration that adds the workers, assignments and reassignments tables.
inline constexpr int kWorkersVersion = 6;
// The migration that adds workers.session.
inline constexpr int kWorkerSessionsVersion = 7;
// The migration that adds the signals table.
inline constexpr int kSignalsVersion = 8;
// Executions carry the variables their steps set (ExecutionRecord::vars).
inline constexpr int kExecutionVarsVersion = 9;
// Dead letters carry their namespace, workflow, fingerprint, failure times and status.
inline constexpr int kDeadLetterQueueVersion = 10;
// The migration that adds the breakers table.
inline constexpr int kBreakersVersion = 11;
// The migration that adds the cache_entries table.
inline constexpr int kCacheVersion = 12;
// 13: executions record the parent step (and its attempt) that started them.
inline constexpr int kChildVersion = 13;
// 14: the pools table.
inline constexpr int kPoolsVersion = 14;
// The migration that writes the assignments_active index's condition with OR.
inline constexpr int kActiveAssignmentsOrVersion = 15;
// The migration that indexes an assignment's worker-facing id only once it was moved.
inline constexpr int kMovedAssignmentIdVersion = 16;
// The migration that stores a run of events of one execution in one row.
inline constexpr int kPackedEventsVersion = 17;
// The migration that drops executions_created and assignments_execution.
inline constexpr int kLeanIndexesVersion = 18;

// Applies every migration newer than the database's version, each in its own
// transaction. Fails (errc::kStore) when the database is newer than this build.
// `up_to` < latest stops there (tests build databases as older builds left them).
Status Migrate(sqlite3* db, int up_to = LatestSchemaVersion());

}  // namespace baton::sqlite
