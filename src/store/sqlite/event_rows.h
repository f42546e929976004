// How the SQLite store keeps the event log: several events of one execution in one row.
//
// A turn of the engine usually appends a run of events to one execution: a noop job's
// start is execution.started, step.ready, step.started, step.completed and
// execution.completed, one after the other. One row per event made each of them a
// statement and two b-tree inserts (the table and events_position); for short jobs the
// events were half of every commit's rows. So a run of events of one execution whose
// seqs follow on and whose positions are all 0 or positive and contiguous is stored as
// one row (migration 17, kPackedEventsVersion):
//
// - the row's columns hold the run's *last* event, so its key (execution_id, seq) and
//   its position are those of the last event: MAX(seq), MAX(position) and "rows with
//   seq (or position) > N, in order" keep working on the existing indexes. Runs never
//   interleave: their positions are contiguous, and positions are unique
//   (EventRecord::position);
// - `span` is the number of events in the row (1 for rows written before);
// - `earlier` is NULL, or a JSON array of the run's other events, oldest first, each
//   [type, step_id, attempt, time, data]; event i of n has seq = seq - (n - 1 - i), and
//   position likewise (0 stays 0).
//
// A run ends at kMaxEventsPerRow events, where `earlier` would pass kMaxEarlierBytes (so
// that a row of small events keeps to its b-tree page; a last event with large data
// overflows it, as a row of one event did before), and before an event whose type or
// step id is not ASCII (JSON text would not keep invalid UTF-8 byte for byte; the row's
// own columns do). The PostgreSQL store and the memory store keep one record per event;
// what the Store interface returns is the same.
#pragma once

#include <baton/status.h>
#include <baton/store.h>

#include "store/sqlite/statement.h"

#include <span>
#include <string>
#include <vector>

namespace baton::sqlite {

// Inserts one row: the record's 8 columns, then span and earlier as ?9 and ?10.
extern const std::string kInsertEventRow;
// The first seq of the first row of execution ?1 whose last seq is ?2 or more. The primary
// key only sees each row's last seq, so a seq stored inside another row is found with
// this before each insert: a row holding seqs a..b may go in only when that row, if any,
// starts after b. (A trigger could say the same, but a statement that may abort after a
// write makes SQLite journal every page it changes: it cost more than the rows saved.)
extern const std::string kFirstSeqOfEventRowFrom;
// "SELECT <the record's columns>, span, earlier FROM events", for ReadEventRow.
extern const std::string kSelectEventRows;

// The most events one row holds, and the most bytes of `earlier` text.
inline constexpr size_t kMaxEventsPerRow = 16;
inline constexpr size_t kMaxEarlierBytes = 768;

// Writes `events` in order through kInsertEventRow, runs of one execution as one row,
// each checked first with kFirstSeqOfEventRowFrom (`find`). A seq stored already fails
// (errc::kStore) naming the events; the caller rolls back.
Status WriteEvents(Stmt& insert, Stmt& find, std::span<const EventRecord> events);

// Appends the events of the current row of a kSelectEventRows query to `out`, oldest
// first, leaving out those with seq <= after_seq or position <= after_position (the
// first row of a range may start before it). False when the row is not valid.
bool ReadEventRow(const Stmt& q, int64_t after_seq, int64_t after_position,
                  std::vector<EventRecord>* out);

}  // namespace baton::sqlite
