// How each record kind maps to its table: the SQL, the binding of a record to an
// upsert/insert, and the reading of a SELECTed row. Private to the SQLite store.
#pragma once

#include <baton/status.h>
#include <baton/store.h>

#include "store/sqlite/statement.h"

namespace baton::sqlite {

// Upserts replace every field (ON CONFLICT DO UPDATE keeps the rowid, so first-insertion
// order survives updates); events and dead letters are plain inserts, and the events
// primary key turns a duplicate (execution, seq) into an error.
extern const char* const kUpsertWorkflow;
extern const char* const kUpsertExecution;
extern const char* const kUpsertStep;
extern const char* const kUpsertAttempt;
extern const char* const kInsertEvent;
extern const char* const kInsertDeadLetter;
extern const char* const kUpsertToken;
extern const char* const kUpsertSchedule;
extern const char* const kUpsertHook;      // trigger_rows.cpp, with the three below
extern const char* const kUpsertTrigger;
extern const char* const kUpsertDelivery;

// "SELECT <columns> FROM <table>" in the column order Read() expects.
extern const char* const kSelectWorkflows;
extern const char* const kSelectExecutions;
extern const char* const kSelectSteps;
extern const char* const kSelectAttempts;
extern const char* const kSelectEvents;
extern const char* const kSelectDeadLetters;
extern const char* const kSelectTokens;
extern const char* const kSelectSchedules;
extern const char* const kSelectHooks;
extern const char* const kSelectTriggers;
extern const char* const kSelectDeliveries;

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

}  // namespace baton::sqlite
