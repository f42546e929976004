// PgStore reads: each query is the record description's SELECT plus its filter and order.
#include "store/postgres/pg_store.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace baton::pg {

namespace {

std::string Limit(size_t limit) {
  return limit == 0 ? "" : " LIMIT " + std::to_string(limit);
}

}  // namespace

Result<Rows> PgStore::Read(const std::string& sql,
                           const std::vector<std::optional<std::string>>& params,
                           std::string_view what) {
  const size_t n = readers_.size();
  const size_t first = next_reader_.fetch_add(1, std::memory_order_relaxed) % n;
  Reader* reader = nullptr;
  std::unique_lock<std::mutex> lock;
  // First a free reader that is connected, then any free one (which reconnects).
  for (bool connected_only : {true, false}) {
    for (size_t i = 0; i < n && reader == nullptr; ++i) {
      Reader* r = readers_[(first + i) % n].get();
      std::unique_lock<std::mutex> held(r->mu, std::try_to_lock);
      if (held.owns_lock() && (!connected_only || r->conn.ok())) {
        reader = r;
        lock = std::move(held);
      }
    }
  }
  if (reader == nullptr) {  // all busy: wait for this turn's
    reader = readers_[first].get();
    lock = std::unique_lock<std::mutex>(reader->mu);
  }
  if (Status s = Reconnected(reader->conn, reader->again, false); !s.ok()) return s;
  Result<Rows> rows = reader->conn.Exec(sql, params, what);
  if (rows.ok() || reader->conn.ok()) return rows;
  if (!Reconnected(reader->conn, reader->again, false).ok()) return rows;
  return reader->conn.Exec(sql, params, what);
}

template <class R>
Result<std::vector<R>> PgStore::Query(const std::string& tail, const Params& p) {
  static const std::string select = rows::SelectFrom(rows::TableOf<R>());
  return QueryWith<R>(select, tail, p);
}

template <class R>
Result<std::vector<R>> PgStore::QueryWith(const std::string& select, const std::string& tail,
                                          const Params& p, Rows* kept) {
  const rows::Table<R>& table = rows::TableOf<R>();
  auto answer = Read(select + tail, p.values(), std::string("reading ") + table.name);
  if (!answer.ok()) return answer.status();
  std::vector<R> out(answer->size());
  for (size_t i = 0; i < answer->size(); ++i) {
    if (!table.Read(RowOfRows(*answer, i), &out[i])) {
      return Status(errc::kStore, std::string("reading ") + table.name + ": row " +
                                      std::to_string(i + 1) + " holds a value out of range");
    }
  }
  if (kept != nullptr) *kept = std::move(answer).value();
  return out;
}

template <class R>
Result<R> PgStore::QueryOne(const std::string& tail, const Params& p, const std::string& what) {
  auto rows = Query<R>(tail, p);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status(errc::kNotFound, what);
  return std::move(rows->front());
}

template <class R>
Result<std::vector<R>> PgStore::ListByNs(const std::string& ns, const std::string& order) {
  Params p;
  return Query<R>((ns.empty() ? "" : " WHERE ns = " + p.Add(ns)) + " ORDER BY " + order, p);
}

Status PgStore::DeleteOne(const std::string& sql, const std::string& ns, const std::string& key,
                          const std::string& what) {
  std::lock_guard lock(write_mu_);
  if (Status s = WriterReady(); !s.ok()) return s;
  auto done = writer_.Exec(sql, {ns, key}, "deleting " + what);
  if (!done.ok()) return done.status();
  if (done->affected() == 0) return Status(errc::kNotFound, what);
  return Status::Ok();
}

Result<ExecutionRecord> PgStore::GetExecution(const std::string& id) {
  Params p;
  return QueryOne<ExecutionRecord>(" WHERE id = " + p.Add(id), p, "execution " + id);
}

namespace {
// The WHERE clause of an execution filter; `counting` leaves out the status and the page.
std::string FilterSql(const ExecutionFilter& f, bool counting, Params& p) {
  std::string sql = " WHERE TRUE";
  if (f.status && !counting) sql += " AND status = " + p.Add(ToString(*f.status));
  if (!f.workflow.empty()) sql += " AND workflow = " + p.Add(f.workflow);
  if (!f.ns.empty()) sql += " AND ns = " + p.Add(f.ns);
  if (!f.parent_id.empty()) sql += " AND parent_id = " + p.Add(f.parent_id);
  if (!f.idempotency_key.empty()) sql += " AND idempotency_key = " + p.Add(f.idempotency_key);
  if (f.created_from != 0) sql += " AND created_at >= " + p.Add(f.created_from);
  if (f.created_until != 0) sql += " AND created_at < " + p.Add(f.created_until);
  if (f.after && !counting) {
    sql += " AND (created_at, id) < (" + p.Add(f.after->created_at) + "::BIGINT, " +
           p.Add(f.after->id) + ")";
  }
  // The text: in the id, or in the input or output as stored (compact JSON text).
  if (!f.text.empty()) {
    const std::string n = p.Add(f.text);
    sql += " AND (strpos(id, " + n + ") > 0 OR strpos(COALESCE(input, ''), " + n +
           ") > 0 OR strpos(COALESCE(output, ''), " + n + ") > 0)";
  }
  return sql;
}
}  // namespace

Result<std::vector<ExecutionRecord>> PgStore::ListExecutions(const ExecutionFilter& f) {
  Params p;
  const std::string sql = FilterSql(f, /*counting=*/false, p);
  return Query<ExecutionRecord>(sql + " ORDER BY created_at DESC, id DESC" + Limit(f.limit), p);
}

Result<std::vector<ExecutionCount>> PgStore::CountExecutions(const ExecutionFilter& f) {
  Params p;
  const std::string sql =
      "SELECT status, COUNT(*) FROM executions" + FilterSql(f, /*counting=*/true, p);
  auto rows = Read(sql + " GROUP BY status", p.values(), "counting executions");
  if (!rows.ok()) return rows.status();
  std::vector<ExecutionCount> out;
  for (size_t i = 0; i < rows->size(); ++i) {
    std::optional<ExecutionStatus> status = ParseExecutionStatus(rows->at(i, 0).value_or(""));
    if (!status) return Status(errc::kStore, "executions: an unknown status");
    out.push_back({*status, std::stoll(rows->at(i, 1).value_or("0"))});
  }
  return out;
}

Result<std::vector<ExecutionRecord>> PgStore::ListUnfinishedExecutions() {
  return Query<ExecutionRecord>(
      " WHERE status IN ('pending', 'running', 'paused', 'queued') ORDER BY created_at, row_order",
      {});
}

Result<std::vector<StepRecord>> PgStore::GetSteps(const std::string& execution_id) {
  Params p;
  return Query<StepRecord>(
      " WHERE execution_id = " + p.Add(execution_id) + " ORDER BY idx, step_id", p);
}

Result<std::vector<AttemptRecord>> PgStore::GetAttempts(const std::string& execution_id) {
  Params p;
  return Query<AttemptRecord>(
      " WHERE execution_id = " + p.Add(execution_id) + " ORDER BY step_id, attempt", p);
}

Result<std::vector<EventRecord>> PgStore::GetEvents(const std::string& execution_id,
                                                    int64_t after_seq, size_t limit) {
  Params p;
  return QueryEvents(" WHERE execution_id = " + p.Add(execution_id) + " AND seq > " +
                         p.Add(after_seq) + " ORDER BY seq" + Limit(limit),
                     p);
}

Result<std::vector<EventRecord>> PgStore::ListEvents(const EventQuery& q) {
  // Events carry no namespace: their execution's row decides. Events without a position
  // (0) are never listed.
  Params p;
  std::string sql = instance_.empty() ? " WHERE position > " + p.Add(std::max<int64_t>(q.after, 0))
                                      : " WHERE " + FeedAfterSql(std::max<int64_t>(q.after, 0), p);
  if (!q.execution_id.empty()) sql += " AND execution_id = " + p.Add(q.execution_id);
  sql += " AND EXISTS (SELECT 1 FROM executions x WHERE x.id = events.execution_id AND x.ns = " +
         p.Add(q.ns);
  if (!q.workflow.empty()) sql += " AND x.workflow = " + p.Add(q.workflow);
  sql += instance_.empty() ? ") ORDER BY position" : ") ORDER BY feed_xid, feed_ord";
  return QueryEvents(sql + Limit(q.limit), p);
}

Result<std::vector<AttemptRecord>> PgStore::GetFailedAttempts(const std::string& execution_id) {
  Params p;
  return Query<AttemptRecord>(" WHERE execution_id = " + p.Add(execution_id) +
                                  " AND error IS NOT NULL ORDER BY step_id, attempt",
                              p);
}

Result<int64_t> PgStore::LastEventSeq(const std::string& execution_id) {
  auto answer = Read("SELECT COALESCE(MAX(seq), 0) FROM events WHERE execution_id = $1",
                     {execution_id}, "reading the last event of " + execution_id);
  if (!answer.ok()) return answer.status();
  int64_t seq = 0;
  if (answer->size() != 1 || !RowOfRows(*answer, 0).Int(0, &seq)) {
    return Status(errc::kStore, "reading the last event of " + execution_id + ": no number");
  }
  return seq;
}

Result<int64_t> PgStore::LastEventPosition() {
  auto answer = Read("SELECT COALESCE(MAX(position), 0) FROM events", {}, "reading the last event");
  if (!answer.ok()) return answer.status();
  int64_t position = 0;
  if (answer->size() != 1 || !RowOfRows(*answer, 0).Int(0, &position)) {
    return Status(errc::kStore, "reading the last event position: no number");
  }
  return position;
}

namespace {

std::string Where(const DeadLetterFilter& f, Params& p) {
  std::string sql = " WHERE TRUE";
  if (!f.ns.empty()) sql += " AND ns = " + p.Add(f.ns);
  if (!f.execution_id.empty()) sql += " AND execution_id = " + p.Add(f.execution_id);
  if (!f.workflow.empty()) sql += " AND workflow = " + p.Add(f.workflow);
  if (!f.step_id.empty()) sql += " AND step_id = " + p.Add(f.step_id);
  if (!f.code.empty()) sql += " AND code = " + p.Add(f.code);
  if (!f.fingerprint.empty()) sql += " AND fingerprint = " + p.Add(f.fingerprint);
  if (!f.status.empty()) sql += " AND status = " + p.Add(f.status);
  if (f.since != 0) sql += " AND last_failed_at >= " + p.Add(f.since);
  return sql;
}

}  // namespace

Result<std::vector<DeadLetterRecord>> PgStore::ListDeadLetters(const DeadLetterFilter& f) {
  Params p;
  std::string sql = Where(f, p);
  sql += " AND id > " + p.Add(f.after_id);
  return Query<DeadLetterRecord>(sql + " ORDER BY id" + Limit(f.limit), p);
}

Result<DeadLetterRecord> PgStore::GetDeadLetter(int64_t id) {
  Params p;
  return QueryOne<DeadLetterRecord>(" WHERE id = " + p.Add(id), p,
                                    "dead letter " + std::to_string(id));
}

Result<std::vector<DeadLetterGroup>> PgStore::CountDeadLetters(const DeadLetterFilter& f) {
  Params p;
  // A fingerprint begins with its code, so the entries of a group share one.
  const std::string sql =
      "SELECT workflow, step_id, fingerprint, MAX(code), COUNT(*), MIN(first_failed_at), "
      "MAX(last_failed_at), MAX(id) FROM dead_letters" +
      Where(f, p) +
      " GROUP BY workflow, step_id, fingerprint "
      "ORDER BY COUNT(*) DESC, workflow, step_id, fingerprint";
  auto answer = Read(sql, p.values(), "counting dead letters");
  if (!answer.ok()) return answer.status();
  std::vector<DeadLetterGroup> out(answer->size());
  for (size_t i = 0; i < answer->size(); ++i) {
    const RowOfRows row(*answer, i);
    DeadLetterGroup& g = out[i];
    g.workflow = std::string(row.Text(0));
    g.step_id = std::string(row.Text(1));
    g.fingerprint = std::string(row.Text(2));
    g.code = std::string(row.Text(3));
    if (!row.Int(4, &g.count) || !row.Int(5, &g.first_failed_at) ||
        !row.Int(6, &g.last_failed_at) || !row.Int(7, &g.last_id)) {
      return Status(errc::kStore, "counting dead letters: a count is not a number");
    }
  }
  return out;
}

Result<std::vector<SignalRecord>> PgStore::ListSignals(const std::string& execution_id) {
  Params p;
  return Query<SignalRecord>(" WHERE execution_id = " + p.Add(execution_id) + " ORDER BY seq", p);
}

Result<std::vector<BreakerRecord>> PgStore::ListBreakers(const std::string& ns) {
  return ListByNs<BreakerRecord>(ns, "ns, key");
}

Result<std::vector<PoolRecord>> PgStore::ListPools(const std::string& ns) {
  return ListByNs<PoolRecord>(ns, "ns, name");
}

Status PgStore::DeletePool(const std::string& ns, const std::string& name) {
  return DeleteOne("DELETE FROM pools WHERE ns = $1 AND name = $2", ns, name, "pool " + name);
}

Result<std::vector<CacheEntryRecord>> PgStore::ListCacheEntries(const std::string& ns) {
  return ListByNs<CacheEntryRecord>(ns, "ns, key");
}

Result<CacheChanges> PgStore::CacheChangesAfter(int64_t after) {
  // Every transaction below the horizon has ended, so the rows below it are all visible
  // to the reads that follow, on whichever connection, and none can appear there later.
  auto horizon = Read("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint", {},
                      "reading the shared cache's horizon");
  if (!horizon.ok()) return horizon.status();
  CacheChanges out;
  if (horizon->size() != 1 || !RowOfRows(*horizon, 0).Int(0, &out.next)) {
    return Status(errc::kStore, "reading the shared cache's horizon: no number");
  }
  if (after == SharedCache::kCacheNow) return out;
  Params p;
  const std::string range = " BETWEEN " + p.Add(std::max<int64_t>(after, 0)) + "::text::xid8 AND " +
                            p.Add(out.next - 1) + "::text::xid8";
  auto deleted = Read("SELECT ns, key FROM cache_deletions WHERE deleted_xid" + range, p.values(),
                      "reading deleted cache entries");
  if (!deleted.ok()) return deleted.status();
  for (size_t i = 0; i < deleted->size(); ++i) {
    out.deleted.push_back({deleted->at(i, 0).value_or(""), deleted->at(i, 1).value_or("")});
  }
  auto entries = Query<CacheEntryRecord>(" WHERE changed_xid" + range, p);
  if (!entries.ok()) return entries.status();
  out.entries = std::move(entries).value();
  // Deletions are kept an hour: an instance that has not read for that long has lost its
  // leases too, and reads the whole cache again when it starts.
  const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
  const int64_t minute =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::minutes(1))
          .count();
  if (int64_t swept = cache_swept_at_.load(); now - swept > minute) {
    if (cache_swept_at_.compare_exchange_strong(swept, now)) {
      (void)Read("DELETE FROM cache_deletions WHERE deleted_at < now() - interval '1 hour'", {},
                 "removing old cache deletions");
    }
  }
  return out;
}

Result<WorkflowRecord> PgStore::GetWorkflow(const std::string& ns, const std::string& name,
                                            int version) {
  Params p;
  std::string sql = " WHERE ns = " + p.Add(ns) + " AND name = " + p.Add(name);
  sql += version == 0 ? " ORDER BY version DESC LIMIT 1" : " AND version = " + p.Add(version);
  return QueryOne<WorkflowRecord>(
      sql, p, "workflow " + name + (version == 0 ? "" : " version " + std::to_string(version)));
}

Result<std::vector<WorkflowRecord>> PgStore::ListWorkflows(const std::string& ns,
                                                           const std::string& name) {
  Params p;
  if (!name.empty()) {
    return Query<WorkflowRecord>(
        " WHERE ns = " + p.Add(ns) + " AND name = " + p.Add(name) + " ORDER BY version DESC", p);
  }
  // The latest version of each name.
  return Query<WorkflowRecord>(" WHERE ns = " + p.Add(ns) +
                                   " AND version = (SELECT MAX(version) FROM workflows w "
                                   "WHERE w.ns = workflows.ns AND w.name = workflows.name) "
                                   "ORDER BY name",
                               p);
}

Status PgStore::DeleteWorkflow(const std::string& ns, const std::string& name) {
  return DeleteOne("DELETE FROM workflows WHERE ns = $1 AND name = $2", ns, name,
                   "workflow " + name);
}

Result<std::vector<TokenRecord>> PgStore::ListTokens(const std::string& ns) {
  return ListByNs<TokenRecord>(ns, "row_order");
}

Result<TokenRecord> PgStore::FindToken(const std::string& secret_hash) {
  Params p;
  return QueryOne<TokenRecord>(" WHERE secret_hash = " + p.Add(secret_hash), p, "token");
}

Result<std::vector<ScheduleRecord>> PgStore::ListSchedules(const std::string& ns) {
  return ListByNs<ScheduleRecord>(ns, "row_order");
}

Status PgStore::DeleteSchedule(const std::string& ns, const std::string& id) {
  return DeleteOne("DELETE FROM schedules WHERE ns = $1 AND id = $2", ns, id, "schedule " + id);
}

Result<std::vector<HookRecord>> PgStore::ListHooks(const std::string& ns) {
  return ListByNs<HookRecord>(ns, "name");
}

Result<HookRecord> PgStore::GetHook(const std::string& name) {
  Params p;
  return QueryOne<HookRecord>(" WHERE name = " + p.Add(name), p, "hook " + name);
}

Status PgStore::DeleteHook(const std::string& ns, const std::string& name) {
  return DeleteOne("DELETE FROM hooks WHERE ns = $1 AND name = $2", ns, name, "hook " + name);
}

Result<std::vector<TriggerRecord>> PgStore::ListTriggers(const std::string& ns) {
  return ListByNs<TriggerRecord>(ns, "row_order");
}

Status PgStore::DeleteTrigger(const std::string& ns, const std::string& id) {
  return DeleteOne("DELETE FROM triggers WHERE ns = $1 AND id = $2", ns, id, "trigger " + id);
}

Result<std::vector<DeliveryRecord>> PgStore::ListDeliveries(const DeliveryFilter& f) {
  Params p;
  std::string sql = " WHERE TRUE";
  if (!f.ns.empty()) sql += " AND ns = " + p.Add(f.ns);
  if (!f.execution_id.empty()) sql += " AND execution_id = " + p.Add(f.execution_id);
  if (f.status) sql += " AND status = " + p.Add(ToString(*f.status));
  return Query<DeliveryRecord>(sql + " ORDER BY created_at, id" + Limit(f.limit), p);
}

Result<DeliveryRecord> PgStore::GetDelivery(const std::string& id) {
  Params p;
  return QueryOne<DeliveryRecord>(" WHERE id = " + p.Add(id), p, "delivery " + id);
}

Result<std::vector<WorkerRecord>> PgStore::ListWorkers(const std::string& ns) {
  return ListByNs<WorkerRecord>(ns, "id");
}

Result<std::vector<AssignmentRecord>> PgStore::ListAssignments(const AssignmentFilter& f) {
  Params p;
  std::string sql = " WHERE TRUE";
  if (!f.ns.empty()) sql += " AND ns = " + p.Add(f.ns);
  if (!f.worker_id.empty()) sql += " AND worker_id = " + p.Add(f.worker_id);
  if (!f.execution_id.empty()) {
    // Filed under the execution by the dispatch id's prefix (records.h), as in SQLite.
    sql += " AND execution_id = " + p.Add(f.execution_id) + " AND starts_with(dispatch_id, " +
           p.Add(f.execution_id + "/") + ")";
  }
  // The assignments_active index's condition, as written in the schema.
  if (f.active_only) sql += " AND status IN ('waiting', 'dispatched', 'accepted', 'running')";
  return Query<AssignmentRecord>(sql + " ORDER BY created_at, dispatch_id" + Limit(f.limit), p);
}

Result<AssignmentRecord> PgStore::GetAssignment(const std::string& id) {
  // A dispatch id wins over a worker-facing one; among assignments sharing a
  // worker-facing id the lowest dispatch id wins.
  Params p;
  const std::string key = p.Add(id);
  return QueryOne<AssignmentRecord>(" WHERE dispatch_id = " + key + " OR (id = " + key +
                                        " AND id <> dispatch_id) ORDER BY dispatch_id <> " + key +
                                        ", dispatch_id LIMIT 1",
                                    p, "assignment " + id);
}

Result<std::vector<ReassignmentRecord>> PgStore::ListReassignments(const ReassignmentFilter& f) {
  Params p;
  std::string sql = " WHERE TRUE";
  if (!f.ns.empty()) sql += " AND ns = " + p.Add(f.ns);
  if (!f.dispatch_id.empty()) sql += " AND dispatch_id = " + p.Add(f.dispatch_id);
  if (!f.worker_id.empty()) {
    const std::string w = p.Add(f.worker_id);
    sql += " AND (from_worker = " + w + " OR to_worker = " + w + ")";
  }
  return Query<ReassignmentRecord>(sql + " ORDER BY at DESC, id DESC" + Limit(f.limit), p);
}

// pg_feed.cpp reads events through it.
template Result<std::vector<EventRecord>> PgStore::QueryWith<EventRecord>(const std::string&,
                                                                          const std::string&,
                                                                          const Params&, Rows*);

}  // namespace baton::pg
