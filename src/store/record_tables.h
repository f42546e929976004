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

// SQL built from a description, for both backends: `mark` is the parameter's prefix
// ('?' for SQLite's ?1, '$' for PostgreSQL's $1). Parameters follow the column order.

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

// An INSERT of the columns from `first` on (1 leaves a numbered table's number out).
template <class R>
std::string InsertSql(const Table<R>& t, char mark, size_t first = 0) {
  std::string cols, values;
  for (size_t i = first; i < t.columns.size(); ++i) {
    if (i != first) {
      cols += ", ";
      values += ", ";
    }
    cols += t.columns[i].name;
    values += mark + std::to_string(i - first + 1);
  }
  return "INSERT INTO " + std::string(t.name) + " (" + cols + ") VALUES (" + values + ")";
}

// The INSERT, and for a table that is not insert-only, the update of every other column
// when the key is stored already.
template <class R>
std::string UpsertSql(const Table<R>& t, char mark) {
  std::string sql = InsertSql(t, mark);
  if (t.insert_only) return sql;
  std::string keys, sets;
  for (const Column<R>& c : t.columns) {
    if (c.key) {
      keys += (keys.empty() ? "" : ", ") + std::string(c.name);
    } else {
      sets += (sets.empty() ? "" : ", ") + std::string(c.name) + " = excluded." + c.name;
    }
  }
  return sql + " ON CONFLICT (" + keys + ") DO UPDATE SET " + sets;
}

// The upsert of a state change: it leaves the columns the record is filed under alone (an
// index entry is rewritten only when a column of the index is set) and updates nothing
// when one of them differs; the caller then runs UpsertSql. Same parameters.
template <class R>
std::string NarrowUpsertSql(const Table<R>& t, char mark) {
  std::string keys, sets, same;
  for (const Column<R>& c : t.columns) {
    const std::string name = c.name;
    if (c.key) {
      keys += (keys.empty() ? "" : ", ") + name;
    } else if (c.filed) {
      same += (same.empty() ? "" : " AND ") + name + " = excluded." + name;
    } else {
      sets += (sets.empty() ? "" : ", ") + name + " = excluded." + name;
    }
  }
  return InsertSql(t, mark) + " ON CONFLICT (" + keys + ") DO UPDATE SET " + sets + " WHERE " +
         same;
}

}  // namespace baton::rows
