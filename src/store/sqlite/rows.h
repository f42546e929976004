// How each record kind maps to its table: the SQL, the binding of a record to an
// upsert/insert, and the reading of a SELECTed row. Private to the SQLite store.
#pragma once

#include <baton/status.h>
#include <baton/store.h>

#include "store/sqlite/statement.h"

#include <string>
#include <vector>

namespace baton::sqlite {

// Upserts replace every field (ON CONFLICT DO UPDATE keeps the rowid, so first-insertion
// order survives updates); events are plain inserts, and the events primary key turns a
// duplicate (execution, seq) into an error. A dead letter without an id is numbered.
extern const char* const kUpsertWorkflow;
extern const char* const kUpsertExecution;
extern const char* const kUpsertExecutionState;
extern const char* const kUpsertStep;
extern const char* const kUpsertAttempt;
extern const char* const kInsertEvent;
extern const char* const kUpsertDeadLetter;  // dead_letter_rows.cpp
extern const char* const kUpsertToken;
extern const char* const kUpsertSchedule;
extern const char* const kUpsertHook;  // trigger_rows.cpp, with the three below
extern const char* const kUpsertTrigger;
extern const char* const kUpsertDelivery;
extern const char* const kUpsertWorker;  // worker_rows.cpp, with the two below
extern const char* const kUpsertAssignment;
extern const char* const kUpsertAssignmentState;
extern const char* const kSelectAssignmentById;  // ?1: a dispatch or worker-facing id
extern const char* const kInsertReassignment;    // a plain insert: a taken id fails
extern const char* const kUpsertSignal;          // signal_rows.cpp
extern const char* const kUpsertBreaker;         // breaker_rows.cpp
extern const char* const kUpsertPool;            // breaker_rows.cpp
extern const char* const kUpsertCacheEntry;      // cache_rows.cpp, with the two below
extern const char* const kTouchCacheEntry;
extern const char* const kDeleteCacheEntry;

// "SELECT <columns> FROM <table>" in the column order Read() expects.
extern const char* const kSelectWorkflows;
extern const char* const kSelectExecutions;
extern const char* const kSelectSteps;
extern const char* const kSelectAttempts;
extern const char* const kSelectEvents;
extern const char* const kSelectDeadLetters;  // dead_letter_rows.cpp
extern const char* const kSelectTokens;
extern const char* const kSelectSchedules;
extern const char* const kSelectHooks;
extern const char* const kSelectTriggers;
extern const char* const kSelectDeliveries;
extern const char* const kSelectWorkers;
extern const char* const kSelectAssignments;
extern const char* const kSelectReassignments;
extern const char* const kSelectSignals;
extern const char* const kSelectBreakers;
extern const char* const kSelectPools;
extern const char* const kSelectCacheEntries;

// Bind the record to the matching statement above and run it; errors name the record.
Status Write(Stmt& q, const WorkflowRecord& w);
Status Write(Stmt& q, const ExecutionRecord& e);
Status Write(Stmt& q, const StepRecord& s);
Status Write(Stmt& q, const AttemptRecord& a);
Status Write(Stmt& q, const EventRecord& e);
Status Write(Stmt& q, const DeadLetterRecord& d);
Status Write(Stmt& q, const TokenRecord& t);
Status Write(Stmt& q, const ScheduleRecord& r);
Status Write(Stmt& q, const HookRecord& h);
Status Write(Stmt& q, const TriggerRecord& t);
Status Write(Stmt& q, const DeliveryRecord& d);
Status Write(Stmt& q, const WorkerRecord& w);
Status Write(Stmt& q, const AssignmentRecord& a);
Status Write(Stmt& q, const ReassignmentRecord& r);
Status Write(Stmt& q, const SignalRecord& r);
Status Write(Stmt& q, const BreakerRecord& r);
Status Write(Stmt& q, const PoolRecord& r);
Status Write(Stmt& q, const CacheEntryRecord& r);
Status Write(Stmt& q, const CacheTouch& r);
Status Write(Stmt& q, const CacheKey& r);

// Read the current row of the matching SELECT; false when a stored value is invalid
// (unknown status name, text that is not JSON).
bool Read(const Stmt& q, WorkflowRecord* w);
bool Read(const Stmt& q, ExecutionRecord* e);
bool Read(const Stmt& q, StepRecord* s);
bool Read(const Stmt& q, AttemptRecord* a);
bool Read(const Stmt& q, EventRecord* e);
bool Read(const Stmt& q, DeadLetterRecord* d);
bool Read(const Stmt& q, TokenRecord* t);
bool Read(const Stmt& q, ScheduleRecord* r);
bool Read(const Stmt& q, HookRecord* h);
bool Read(const Stmt& q, TriggerRecord* t);
bool Read(const Stmt& q, DeliveryRecord* d);
bool Read(const Stmt& q, WorkerRecord* w);
bool Read(const Stmt& q, AssignmentRecord* a);
bool Read(const Stmt& q, ReassignmentRecord* r);
bool Read(const Stmt& q, SignalRecord* r);
bool Read(const Stmt& q, BreakerRecord* r);
bool Read(const Stmt& q, PoolRecord* r);
bool Read(const Stmt& q, CacheEntryRecord* r);

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

// A list of strings as JSON array text (invalid UTF-8 replaced, as BindJson does), and
// the reading of such a column back; false when it does not hold an array of strings.
std::string StringsJson(const std::vector<std::string>& strings);
bool ReadStrings(const Stmt& q, int col, std::vector<std::string>* out);

}  // namespace baton::sqlite
