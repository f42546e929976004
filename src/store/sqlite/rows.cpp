#include "store/sqlite/rows.h"

#include <string>

namespace baton::sqlite {

namespace {

template <class R>
std::string Upsert() {
  return rows::UpsertSql(rows::TableOf<R>(), '?');
}
template <class R>
std::string Select() {
  return rows::SelectFrom(rows::TableOf<R>());
}

}  // namespace

const std::string kUpsertWorkflow = Upsert<WorkflowRecord>();
const std::string kUpsertExecution = Upsert<ExecutionRecord>();
const std::string kUpsertExecutionState =
    rows::NarrowUpsertSql(rows::TableOf<ExecutionRecord>(), '?');
const std::string kUpsertStep = Upsert<StepRecord>();
const std::string kUpsertAttempt = Upsert<AttemptRecord>();
const std::string kUpsertDeadLetter = Upsert<DeadLetterRecord>();
const std::string kUpsertToken = Upsert<TokenRecord>();
const std::string kUpsertSchedule = Upsert<ScheduleRecord>();
const std::string kUpsertHook = Upsert<HookRecord>();
const std::string kUpsertTrigger = Upsert<TriggerRecord>();
const std::string kUpsertDelivery = Upsert<DeliveryRecord>();
const std::string kUpsertWorker = Upsert<WorkerRecord>();
const std::string kUpsertAssignment = Upsert<AssignmentRecord>();
const std::string kUpsertAssignmentState =
    rows::NarrowUpsertSql(rows::TableOf<AssignmentRecord>(), '?');
const std::string kInsertReassignment = Upsert<ReassignmentRecord>();
const std::string kUpsertSignal = Upsert<SignalRecord>();
const std::string kUpsertBreaker = Upsert<BreakerRecord>();
const std::string kUpsertPool = Upsert<PoolRecord>();
const std::string kUpsertCacheEntry = Upsert<CacheEntryRecord>();

const std::string kSelectWorkflows = Select<WorkflowRecord>();
const std::string kSelectExecutions = Select<ExecutionRecord>();
const std::string kSelectSteps = Select<StepRecord>();
const std::string kSelectAttempts = Select<AttemptRecord>();
const std::string kSelectDeadLetters = Select<DeadLetterRecord>();
const std::string kSelectTokens = Select<TokenRecord>();
const std::string kSelectSchedules = Select<ScheduleRecord>();
const std::string kSelectHooks = Select<HookRecord>();
const std::string kSelectTriggers = Select<TriggerRecord>();
const std::string kSelectDeliveries = Select<DeliveryRecord>();
const std::string kSelectWorkers = Select<WorkerRecord>();
const std::string kSelectAssignments = Select<AssignmentRecord>();
const std::string kSelectReassignments = Select<ReassignmentRecord>();
const std::string kSelectSignals = Select<SignalRecord>();
const std::string kSelectBreakers = Select<BreakerRecord>();
const std::string kSelectPools = Select<PoolRecord>();
const std::string kSelectCacheEntries = Select<CacheEntryRecord>();

// A dispatch id wins over a worker-facing one; among assignments sharing a worker-facing
// id (which the engine never writes) the lowest dispatch id wins. An id equal to its
// row's dispatch id is found by the first term: the second one carries the condition of
// the partial index assignments_moved_id, so that SQLite can use it.
const std::string kSelectAssignmentById =
    kSelectAssignments +
    " WHERE dispatch_id = ?1 OR (id = ?1 AND id != dispatch_id) "
    "ORDER BY dispatch_id != ?1, dispatch_id LIMIT 1";

Status Run(Stmt& q, const rows::RowOut& row) {
  int i = 1;
  for (const rows::Cell& c : row.cells()) {
    switch (c.kind) {
      case rows::Cell::Kind::kNull:
        q.BindNull(i);
        break;
      case rows::Cell::Kind::kInt:
        q.Bind(i, c.integer);
        break;
      case rows::Cell::Kind::kText:
        q.Bind(i, c.text);  // the row outlives the run
        break;
    }
    ++i;
  }
  return q.Run();
}

}  // namespace baton::sqlite
