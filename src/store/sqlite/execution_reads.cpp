// SqliteStore reads of execution state: executions, steps, attempts, events, dead letters.
#include "store/sqlite/sqlite_store.h"

#include <algorithm>
#include <string>
#include <vector>

namespace baton::sqlite {
namespace {

// The WHERE clause of an execution filter. The SQL names only the filters that are set, so
// each shape can use its index; parameters keep fixed numbers whatever the shape (?3 is
// the caller's LIMIT). `counting` leaves out the status and the page.
std::string FilterSql(const ExecutionFilter& f, bool counting) {
  std::string sql = " WHERE 1";
  if (f.status && !counting) sql += " AND status = ?1";
  if (!f.workflow.empty()) sql += " AND workflow = ?2";
  if (!f.ns.empty()) sql += " AND ns = ?4";
  if (!f.parent_id.empty()) sql += " AND parent_id = ?5";
  if (!f.idempotency_key.empty()) sql += " AND idempotency_key = ?6";
  if (f.created_from != 0) sql += " AND created_at >= ?7";
  if (f.created_until != 0) sql += " AND created_at < ?8";
  if (f.after && !counting) sql += " AND (created_at < ?9 OR (created_at = ?9 AND id < ?10))";
  // The text: in the id, or in the input or output as stored (compact JSON text).
  if (!f.text.empty()) {
    sql +=
        " AND (instr(id, ?11) > 0 OR instr(COALESCE(input, ''), ?11) > 0 OR "
        "instr(COALESCE(output, ''), ?11) > 0)";
  }
  return sql;
}

void BindFilter(Stmt& q, const ExecutionFilter& f, bool counting) {
  if (f.status && !counting) q.Bind(1, std::string_view(ToString(*f.status)));
  if (!f.workflow.empty()) q.Bind(2, f.workflow);
  if (!f.ns.empty()) q.Bind(4, f.ns);
  if (!f.parent_id.empty()) q.Bind(5, f.parent_id);
  if (!f.idempotency_key.empty()) q.Bind(6, f.idempotency_key);
  if (f.created_from != 0) q.Bind(7, f.created_from);
  if (f.created_until != 0) q.Bind(8, f.created_until);
  if (f.after && !counting) {
    q.Bind(9, f.after->created_at);
    q.Bind(10, f.after->id);
  }
  if (!f.text.empty()) q.Bind(11, f.text);
}

}  // namespace

Result<ExecutionRecord> SqliteStore::GetExecution(const std::string& id) {
  std::lock_guard lock(mu_);
  auto rows = Query<ExecutionRecord>(std::string(kSelectExecutions) + " WHERE id = ?1",
                                     "executions", [&](Stmt& q) { q.Bind(1, id); });
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status(errc::kNotFound, "execution " + id);
  return std::move(rows->front());
}

Result<std::vector<ExecutionRecord>> SqliteStore::ListExecutions(const ExecutionFilter& f) {
  const std::string sql = std::string(kSelectExecutions) + FilterSql(f, /*counting=*/false) +
                          " ORDER BY created_at DESC, id DESC LIMIT ?3";
  std::lock_guard lock(mu_);
  return Query<ExecutionRecord>(sql, "executions", [&](Stmt& q) {
    BindFilter(q, f, /*counting=*/false);
    q.Bind(3, SqlLimit(f.limit));
  });
}

Result<std::vector<ExecutionCount>> SqliteStore::CountExecutions(const ExecutionFilter& f) {
  const std::string sql = "SELECT status, COUNT(*) FROM executions" +
                          FilterSql(f, /*counting=*/true) + " GROUP BY status";
  std::lock_guard lock(mu_);
  Stmt* q = nullptr;
  if (Status s = Cached(reader(), sql, &q); !s.ok()) return s;
  ResetOnExit reset(*q);
  BindFilter(*q, f, /*counting=*/true);
  std::vector<ExecutionCount> out;
  int rc;
  while ((rc = q->Step()) == SQLITE_ROW) {
    std::optional<ExecutionStatus> status = ParseExecutionStatus(q->TextView(0));
    if (!status) return Corrupt("executions");
    out.push_back({*status, q->Int(1)});
  }
  if (rc != SQLITE_DONE) return Error(db(), "counting executions");
  return out;
}

Result<std::vector<ExecutionRecord>> SqliteStore::ListUnfinishedExecutions() {
  std::lock_guard lock(mu_);
  return Query<ExecutionRecord>(std::string(kSelectExecutions) +
                                    " WHERE status IN ('pending', 'running', 'paused', 'queued')"
                                    " ORDER BY created_at, rowid",
                                "executions", [](Stmt&) {});
}

Result<std::vector<StepRecord>> SqliteStore::GetSteps(const std::string& execution_id) {
  auto steps = [&] {
    std::lock_guard lock(mu_);
    // In the primary key's order: "ORDER BY idx, step_id" made SQLite build a temporary
    // b-tree for every read (each recovered execution, each GET of one).
    return Query<StepRecord>(
        std::string(kSelectSteps) + " WHERE execution_id = ?1 ORDER BY step_id", "steps",
        [&](Stmt& q) { q.Bind(1, execution_id); });
  }();
  if (steps.ok()) {
    std::stable_sort(steps->begin(), steps->end(),
                     [](const StepRecord& a, const StepRecord& b) { return a.index < b.index; });
  }
  return steps;
}

Result<std::vector<AttemptRecord>> SqliteStore::GetAttempts(const std::string& execution_id) {
  std::lock_guard lock(mu_);
  return Query<AttemptRecord>(
      std::string(kSelectAttempts) + " WHERE execution_id = ?1 ORDER BY step_id, attempt",
      "attempts", [&](Stmt& q) { q.Bind(1, execution_id); });
}

Result<std::vector<AttemptRecord>> SqliteStore::GetFailedAttempts(const std::string& execution_id) {
  std::lock_guard lock(mu_);
  // A success stores no error (NULL): the rows of successes are skipped, not read.
  return Query<AttemptRecord>(std::string(kSelectAttempts) +
                                  " WHERE execution_id = ?1 AND error IS NOT NULL"
                                  " ORDER BY step_id, attempt",
                              "attempts", [&](Stmt& q) { q.Bind(1, execution_id); });
}

Result<std::vector<EventRecord>> SqliteStore::GetEvents(const std::string& execution_id,
                                                        int64_t after_seq, size_t limit) {
  std::lock_guard lock(mu_);
  // A row's seq is its last event's: the rows with seq > after_seq hold every event
  // after it (the first of them may hold some before it too).
  return QueryEvents(
      kSelectEventRows + " WHERE execution_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
      [&](Stmt& q) {
        q.Bind(1, execution_id);
        q.Bind(2, after_seq);
        q.Bind(3, SqlLimit(limit));
      },
      after_seq, /*after_position=*/0, limit);
}

Result<std::vector<EventRecord>> SqliteStore::ListEvents(const EventQuery& q) {
  // Parameters: ?1 after, ?2 end of the window, ?3 limit, ?4 ns, ?5 workflow,
  // ?6 execution. Events carry no namespace: their execution's row decides (see
  // migration 5 for why).
  const std::string whose =
      std::string(
          " AND EXISTS (SELECT 1 FROM executions x WHERE x.id = events.execution_id"
          " AND x.ns = ?4") +
      (q.workflow.empty() ? ")" : " AND x.workflow = ?5)");
  // Events without a position (0) are never listed.
  const int64_t from = std::max<int64_t>(q.after, 0);
  auto bind = [&](Stmt& st, int64_t after, const int64_t* upto, int64_t limit) {
    st.Bind(1, after);
    if (upto != nullptr) st.Bind(2, *upto);
    st.Bind(3, limit);
    st.Bind(4, q.ns);
    if (!q.workflow.empty()) st.Bind(5, q.workflow);
    if (!q.execution_id.empty()) st.Bind(6, q.execution_id);
  };
  if (!q.execution_id.empty()) {
    // One execution: its primary-key range, sorted. (The unary + keeps the planner off
    // the position index, which would walk every execution's events after `after`.)
    std::lock_guard lock(mu_);
    return QueryEvents(
        kSelectEventRows + " WHERE execution_id = ?6 AND +position > ?1" + whose +
            " ORDER BY +position LIMIT ?3",
        [&](Stmt& st) { bind(st, from, nullptr, SqlLimit(q.limit)); }, /*after_seq=*/0, from,
        q.limit);
  }
  // Any execution: the position index from `after` on, in windows of kScanWindow
  // entries, the lock released between them -- a selective filter over a long log
  // must not hold every commit back for the whole scan.
  // A row's position is its last event's, and the events of a row have contiguous
  // positions: rows in position order are events in position order.
  const std::string sql = kSelectEventRows + " WHERE position > ?1 AND position <= ?2" + whose +
                          " ORDER BY position LIMIT ?3";
  std::vector<EventRecord> out;
  for (int64_t after = from;;) {
    std::lock_guard lock(mu_);
    auto upto = WindowEnd(after);
    if (!upto.ok()) return upto.status();
    const int64_t want =
        q.limit == 0 ? -1 : static_cast<int64_t>(q.limit) - static_cast<int64_t>(out.size());
    const size_t wanted = want < 0 ? 0 : static_cast<size_t>(want);
    auto rows = QueryEvents(
        sql, [&](Stmt& st) { bind(st, after, &*upto, want); }, /*after_seq=*/0, after, wanted);
    if (!rows.ok()) return rows.status();
    if (out.empty()) {
      out = std::move(rows.value());
    } else {
      out.insert(out.end(), std::make_move_iterator(rows->begin()),
                 std::make_move_iterator(rows->end()));
    }
    if ((q.limit != 0 && out.size() >= q.limit) || *upto == kNoEnd) return out;
    after = *upto;
  }
}

Result<int64_t> SqliteStore::LastEventSeq(const std::string& execution_id) {
  std::lock_guard lock(mu_);
  Stmt* q = nullptr;
  // The primary key's last entry under the execution: one b-tree descent.
  if (Status s =
          Cached(reader(), "SELECT COALESCE(MAX(seq), 0) FROM events WHERE execution_id = ?1", &q);
      !s.ok()) {
    return s;
  }
  ResetOnExit reset(*q);
  q->Bind(1, execution_id);
  if (q->Step() != SQLITE_ROW) return Error(db(), "reading the last event of " + execution_id);
  return q->Int(0);
}

Result<int64_t> SqliteStore::LastEventPosition() {
  std::lock_guard lock(mu_);
  Stmt* q = nullptr;
  if (Status s = Cached(reader(), "SELECT COALESCE(MAX(position), 0) FROM events", &q); !s.ok()) {
    return s;
  }
  ResetOnExit reset(*q);
  if (q->Step() != SQLITE_ROW) return Error(db(), "reading the last event position");
  return q->Int(0);
}

Result<std::vector<DeadLetterRecord>> SqliteStore::ListDeadLetters(const DeadLetterFilter& f) {
  std::lock_guard lock(mu_);
  return Query<DeadLetterRecord>(SelectDeadLetters(f), "dead_letters",
                                 [&](Stmt& q) { Bind(q, f, true); });
}

Result<DeadLetterRecord> SqliteStore::GetDeadLetter(int64_t id) {
  std::lock_guard lock(mu_);
  auto rows = Query<DeadLetterRecord>(std::string(kSelectDeadLetters) + " WHERE id = ?1",
                                      "dead_letters", [&](Stmt& q) { q.Bind(1, id); });
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status(errc::kNotFound, "dead letter " + std::to_string(id));
  return std::move(rows->front());
}

Result<std::vector<DeadLetterGroup>> SqliteStore::CountDeadLetters(const DeadLetterFilter& f) {
  std::lock_guard lock(mu_);
  return Query<DeadLetterGroup>(CountDeadLettersSql(f), "dead_letters",
                                [&](Stmt& q) { Bind(q, f, false); });
}

}  // namespace baton::sqlite
