// How each record kind maps to its table: the SQL, built from the record's description
// (store/record_tables.h), the binding of a record to it, and the reading of a SELECTed
// row. Private to the SQLite store.
#pragma once

#include <baton/status.h>
#include <baton/store.h>

#include "store/record_tables.h"
#include "store/sqlite/statement.h"

#include <string>
#include <string_view>
#include <vector>

namespace baton::sqlite {

// Upserts replace every field (ON CONFLICT DO UPDATE keeps the rowid, so first-insertion
// order survives updates); reassignments are plain inserts, so a duplicate key is an
// error. Events have their own rows (event_rows.h). A dead letter without an id (NULL) is numbered
// by AUTOINCREMENT.
extern const std::string kUpsertWorkflow;
extern const std::string kUpsertExecution;
// The usual update of an execution changes its state, not what it is filed under
// (rows::NarrowUpsertSql); when it writes nothing the caller runs kUpsertExecution.
extern const std::string kUpsertExecutionState;
extern const std::string kUpsertStep;
extern const std::string kUpsertAttempt;
extern const std::string kUpsertDeadLetter;
extern const std::string kUpsertToken;
extern const std::string kUpsertSchedule;
extern const std::string kUpsertHook;
extern const std::string kUpsertTrigger;
extern const std::string kUpsertDelivery;
extern const std::string kUpsertWorker;
extern const std::string kUpsertAssignment;
// An assignment moves through its statuses under one worker: like kUpsertExecutionState.
extern const std::string kUpsertAssignmentState;
extern const std::string kSelectAssignmentById;  // ?1: a dispatch or worker-facing id
extern const std::string kInsertReassignment;
extern const std::string kUpsertSignal;
extern const std::string kUpsertBreaker;
extern const std::string kUpsertPool;
extern const std::string kUpsertCacheEntry;
extern const char* const kTouchCacheEntry;  // cache_rows.cpp, with the one below
extern const char* const kDeleteCacheEntry;

// "SELECT <columns> FROM <table>" in the column order Read() expects.
extern const std::string kSelectWorkflows;
extern const std::string kSelectExecutions;
extern const std::string kSelectSteps;
extern const std::string kSelectAttempts;
extern const std::string kSelectDeadLetters;
extern const std::string kSelectTokens;
extern const std::string kSelectSchedules;
extern const std::string kSelectHooks;
extern const std::string kSelectTriggers;
extern const std::string kSelectDeliveries;
extern const std::string kSelectWorkers;
extern const std::string kSelectAssignments;
extern const std::string kSelectReassignments;
extern const std::string kSelectSignals;
extern const std::string kSelectBreakers;
extern const std::string kSelectPools;
extern const std::string kSelectCacheEntries;

// Binds a row's cells (parameters 1..n) to `q` and runs it; a failure names `what()`,
// built only then.
Status Run(Stmt& q, const rows::RowOut& row);

// Binds the record to the matching statement above and runs it; errors name the record.
template <class R>
Status Write(Stmt& q, const R& r) {
  const rows::Table<R>& table = rows::TableOf<R>();
  thread_local rows::RowOut row;  // reused: its buffers stay allocated
  row.Clear();
  table.Write(r, row);
  Status s = Run(q, row);
  return s.ok() ? s : Context(s, "writing " + table.describe(r));
}
Status Write(Stmt& q, const CacheTouch& r);
Status Write(Stmt& q, const CacheKey& r);

// A statement's current row, as a description reads it.
class StmtRow final : public rows::RowIn {
 public:
  explicit StmtRow(const Stmt& q) : q_(q) {}
  bool IsNull(int col) const override { return q_.IsNull(col); }
  bool Int(int col, int64_t* out) const override {
    *out = q_.Int(col);
    return true;
  }
  std::string_view Text(int col) const override { return q_.TextView(col); }

 private:
  const Stmt& q_;
};

// Reads the current row of the matching SELECT; false when a stored value is invalid
// (unknown status name, text that is not JSON).
template <class R>
bool Read(const Stmt& q, R* r) {
  return rows::TableOf<R>().Read(StmtRow(q), r);
}

// The filtered, ordered and limited SELECTs of ListAssignments and ListReassignments,
// and the binding of their parameters (worker_rows.cpp).
std::string SelectAssignments(const AssignmentFilter& f);
void Bind(Stmt& q, const AssignmentFilter& f);
std::string SelectReassignments(const ReassignmentFilter& f);
void Bind(Stmt& q, const ReassignmentFilter& f);

// The dead-letter queue's listing and its counts by workflow, step and fingerprint, and
// the binding of their filter (`paged`: the listing's cursor and limit too)
// (dead_letter_rows.cpp).
std::string SelectDeadLetters(const DeadLetterFilter& f);
std::string CountDeadLettersSql(const DeadLetterFilter& f);
void Bind(Stmt& q, const DeadLetterFilter& f, bool paged);
bool Read(const Stmt& q, DeadLetterGroup* g);

}  // namespace baton::sqlite
