// The description (record_table.h) of every record a SQL backend stores, one per record
// kind: TableOf<ExecutionRecord>() and so on. The column names and order are those of the
// schema's tables; a backend selects and binds columns in exactly this order.
#pragma once

#include <baton/store.h>

#include "store/record_table.h"

namespace baton::rows {

template <class R>
const Table<R>& TableOf();

template <>
const Table<WorkflowRecord>& TableOf<WorkflowRecord>();
template <>
const Table<ExecutionRecord>& TableOf<ExecutionRecord>();
template <>
const Table<StepRecord>& TableOf<StepRecord>();
template <>
const Table<AttemptRecord>& TableOf<AttemptRecord>();
template <>
const Table<EventRecord>& TableOf<EventRecord>();
template <>
const Table<DeadLetterRecord>& TableOf<DeadLetterRecord>();
template <>
const Table<TokenRecord>& TableOf<TokenRecord>();
template <>
const Table<ScheduleRecord>& TableOf<ScheduleRecord>();
template <>
const Table<HookRecord>& TableOf<HookRecord>();
template <>
const Table<TriggerRecord>& TableOf<TriggerRecord>();
template <>
const Table<DeliveryRecord>& TableOf<DeliveryRecord>();
template <>
const Table<WorkerRecord>& TableOf<WorkerRecord>();
template <>
const Table<AssignmentRecord>& TableOf<AssignmentRecord>();
template <>
const Table<ReassignmentRecord>& TableOf<ReassignmentRecord>();
template <>
const Table<SignalRecord>& TableOf<SignalRecord>();
template <>
const Table<BreakerRecord>& TableOf<BreakerRecord>();
template <>
const Table<PoolRecord>& TableOf<PoolRecord>();
template <>
const Table<CacheEntryRecord>& TableOf<CacheEntryRecord>();

// "SELECT <columns> FROM <table>", the columns in the description's order.
template <class R>
std::string SelectFrom(const Table<R>& t) {
  std::string sql = "SELECT ";
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (i != 0) sql += ", ";
    sql += t.columns[i].name;
  }
  return sql + " FROM " + t.name;
}

}  // namespace baton::rows
