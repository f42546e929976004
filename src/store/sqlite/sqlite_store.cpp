// SqliteStore: the default durable Store, one SQLite file in WAL mode.
//
// One connection guarded by one mutex: SQLite allows a single writer anyway, and the
// engine batches its writes (group commit), so a connection pool would buy nothing but
// lock contention inside SQLite. The connection is opened NOMUTEX because our mutex
// already serialises every call.
#include <baton/store.h>

#include "common/crash_point.h"
#include "store/sqlite/coalesce.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/owner_lock.h"
#include "store/sqlite/rows.h"
#include "store/sqlite/statement.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace baton {
namespace {

using sqlite::Context;
using sqlite::SqlLimit;
using sqlite::Stmt;

Status Corrupt(const std::string& what) {
  return Status(errc::kStore, "corrupt row in " + what);
}

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using DbPtr = std::unique_ptr<sqlite3, DbCloser>;

class SqliteStore final : public Store {
 public:
  // `reader` is a second connection to the same file for reads; null when there is
  // none (an in-memory database), and then `db` serves both.
  SqliteStore(DbPtr db, DbPtr reader, std::optional<sqlite::OwnerLock> owner)
      : mu_(reader ? read_mu_ : write_mu_), owner_(std::move(owner)) {
    writer_.db = std::move(db);
    reader_.db = std::move(reader);
  }

  Status Commit(std::span<const WriteBatch* const> batches) override {
    bool any = false;
    for (const WriteBatch* b : batches) any = any || !b->empty();
    if (!any) return Status::Ok();
    std::lock_guard lock(write_mu_);
    Stmt *begin, *commit, *wf, *ex, *st, *at, *ev, *dl, *tk, *sc, *hk, *tg, *dv, *wk, *as, *rs, *sg,
        *br, *ce, *ct, *cd, *pl;
    for (auto [stmt, sql] :
         {std::pair{&begin, "BEGIN IMMEDIATE"}, {&commit, "COMMIT"},
          {&wf, sqlite::kUpsertWorkflow},       {&ex, sqlite::kUpsertExecution},
          {&st, sqlite::kUpsertStep},           {&at, sqlite::kUpsertAttempt},
          {&ev, sqlite::kInsertEvent},          {&dl, sqlite::kUpsertDeadLetter},
          {&tk, sqlite::kUpsertToken},          {&sc, sqlite::kUpsertSchedule},
          {&hk, sqlite::kUpsertHook},           {&tg, sqlite::kUpsertTrigger},
          {&dv, sqlite::kUpsertDelivery},       {&wk, sqlite::kUpsertWorker},
          {&as, sqlite::kUpsertAssignment},     {&rs, sqlite::kInsertReassignment},
          {&sg, sqlite::kUpsertSignal},         {&br, sqlite::kUpsertBreaker},
          {&ce, sqlite::kUpsertCacheEntry},     {&ct, sqlite::kTouchCacheEntry},
          {&cd, sqlite::kDeleteCacheEntry},     {&pl, sqlite::kUpsertPool}}) {
      if (Status s = Cached(writer_, sql, stmt); !s.ok()) return Context(s, "commit");
    }
    const bool coalesce = batches.size() > 1;
    if (coalesce) {
      workflows_.Clear();
      executions_.Clear();
      steps_.Clear();
      attempts_.Clear();
      assignments_.Clear();
      for (const WriteBatch* b : batches) {
        workflows_.Add(b->workflows);
        executions_.Add(b->executions);
        steps_.Add(b->steps);
        attempts_.Add(b->attempts);
        assignments_.Add(b->assignments);
      }
    }
    // IMMEDIATE takes the write lock up front, so a concurrent writer (another process)
    // makes us wait busy_timeout here instead of failing mid-transaction.
    if (Status s = begin->Run(); !s.ok()) return Context(s, "commit: begin");
    Status s;
    for (const WriteBatch* b : batches) {
      if (!(s = WriteAll(*wf, b->workflows, coalesce ? &workflows_ : nullptr)).ok() ||
          !(s = WriteAll(*ex, b->executions, coalesce ? &executions_ : nullptr)).ok() ||
          !(s = WriteAll(*st, b->steps, coalesce ? &steps_ : nullptr)).ok() ||
          !(s = WriteAll(*at, b->attempts, coalesce ? &attempts_ : nullptr)).ok() ||
          !(s = AppendAll(*ev, b->events)).ok() || !(s = AppendAll(*dl, b->dead_letters)).ok() ||
          !(s = AppendAll(*tk, b->tokens)).ok() || !(s = AppendAll(*sc, b->schedules)).ok() ||
          !(s = AppendAll(*hk, b->hooks)).ok() || !(s = AppendAll(*tg, b->triggers)).ok() ||
          !(s = AppendAll(*dv, b->deliveries)).ok() || !(s = AppendAll(*wk, b->workers)).ok() ||
          !(s = WriteAll(*as, b->assignments, coalesce ? &assignments_ : nullptr)).ok() ||
          !(s = AppendAll(*rs, b->reassignments)).ok() || !(s = AppendAll(*sg, b->signals)).ok() ||
          !(s = AppendAll(*br, b->breakers)).ok() || !(s = AppendAll(*ce, b->cache_entries)).ok() ||
          !(s = AppendAll(*ct, b->cache_touches)).ok() ||
          !(s = AppendAll(*cd, b->cache_deletes)).ok() || !(s = AppendAll(*pl, b->pools)).ok()) {
        break;
      }
    }
    if (s.ok()) {
      CrashPoint("store.before_commit");  // recovery tests: rows written, not committed
      s = commit->Run();
    }
    if (!s.ok()) {
      // A failed COMMIT (e.g. SQLITE_BUSY) leaves the transaction open; a failed
      // statement may already have rolled it back. Either way end with nothing applied.
      if (sqlite3_get_autocommit(writer_.db.get()) == 0) sqlite::Exec(writer_.db.get(), "ROLLBACK");
      return Context(s, "commit");
    }
    return Status::Ok();
  }

  Result<ExecutionRecord> GetExecution(const std::string& id) override {
    std::lock_guard lock(mu_);
    auto rows = Query<ExecutionRecord>(std::string(sqlite::kSelectExecutions) + " WHERE id = ?1",
                                       "executions", [&](Stmt& q) { q.Bind(1, id); });
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return Status(errc::kNotFound, "execution " + id);
    return std::move(rows->front());
  }

  Result<std::vector<ExecutionRecord>> ListExecutions(const ExecutionFilter& f) override {
    // The SQL names only the filters that are set, so each shape can use its index;
    // parameters keep fixed numbers whatever the shape.
    std::string sql = std::string(sqlite::kSelectExecutions) + " WHERE 1";
    if (f.status) sql += " AND status = ?1";
    if (!f.workflow.empty()) sql += " AND workflow = ?2";
    if (!f.ns.empty()) sql += " AND ns = ?4";
    if (!f.parent_id.empty()) sql += " AND parent_id = ?5";
    if (!f.idempotency_key.empty()) sql += " AND idempotency_key = ?6";
    if (f.created_from != 0) sql += " AND created_at >= ?7";
    if (f.created_until != 0) sql += " AND created_at < ?8";
    if (f.after) sql += " AND (created_at < ?9 OR (created_at = ?9 AND id < ?10))";
    sql += " ORDER BY created_at DESC, id DESC LIMIT ?3";
    std::lock_guard lock(mu_);
    return Query<ExecutionRecord>(sql, "executions", [&](Stmt& q) {
      if (f.status) q.Bind(1, std::string_view(ToString(*f.status)));
      if (!f.workflow.empty()) q.Bind(2, f.workflow);
      q.Bind(3, SqlLimit(f.limit));
      if (!f.ns.empty()) q.Bind(4, f.ns);
      if (!f.parent_id.empty()) q.Bind(5, f.parent_id);
      if (!f.idempotency_key.empty()) q.Bind(6, f.idempotency_key);
      if (f.created_from != 0) q.Bind(7, f.created_from);
      if (f.created_until != 0) q.Bind(8, f.created_until);
      if (f.after) {
        q.Bind(9, f.after->created_at);
        q.Bind(10, f.after->id);
      }
    });
  }

  Result<std::vector<ExecutionRecord>> ListUnfinishedExecutions() override {
    std::lock_guard lock(mu_);
    return Query<ExecutionRecord>(std::string(sqlite::kSelectExecutions) +
                                      " WHERE status IN ('pending', 'running', 'paused', 'queued')"
                                      " ORDER BY created_at, rowid",
                                  "executions", [](Stmt&) {});
  }

  Result<std::vector<StepRecord>> GetSteps(const std::string& execution_id) override {
    std::lock_guard lock(mu_);
    return Query<StepRecord>(
        std::string(sqlite::kSelectSteps) + " WHERE execution_id = ?1 ORDER BY idx, step_id",
        "steps", [&](Stmt& q) { q.Bind(1, execution_id); });
  }

  Result<std::vector<AttemptRecord>> GetAttempts(const std::string& execution_id) override {
    std::lock_guard lock(mu_);
    return Query<AttemptRecord>(
        std::string(sqlite::kSelectAttempts) + " WHERE execution_id = ?1 ORDER BY step_id, attempt",
        "attempts", [&](Stmt& q) { q.Bind(1, execution_id); });
  }

  Result<std::vector<EventRecord>> GetEvents(const std::string& execution_id, int64_t after_seq,
                                             size_t limit) override {
    std::lock_guard lock(mu_);
    return Query<EventRecord>(std::string(sqlite::kSelectEvents) +
                                  " WHERE execution_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
                              "events", [&](Stmt& q) {
                                q.Bind(1, execution_id);
                                q.Bind(2, after_seq);
                                q.Bind(3, SqlLimit(limit));
                              });
  }

  Result<std::vector<EventRecord>> ListEvents(const EventQuery& q) override {
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
      return Query<EventRecord>(
          std::string(sqlite::kSelectEvents) + " WHERE execution_id = ?6 AND +position > ?1" +
              whose + " ORDER BY +position LIMIT ?3",
          "events", [&](Stmt& st) { bind(st, from, nullptr, SqlLimit(q.limit)); });
    }
    // Any execution: the position index from `after` on, in windows of kScanWindow
    // entries, the lock released between them -- a selective filter over a long log
    // must not hold every commit back for the whole scan.
    const std::string sql = std::string(sqlite::kSelectEvents) +
                            " WHERE position > ?1 AND position <= ?2" + whose +
                            " ORDER BY position LIMIT ?3";
    std::vector<EventRecord> out;
    for (int64_t after = from;;) {
      std::lock_guard lock(mu_);
      auto upto = WindowEnd(after);
      if (!upto.ok()) return upto.status();
      const int64_t want =
          q.limit == 0 ? -1 : static_cast<int64_t>(q.limit) - static_cast<int64_t>(out.size());
      auto rows =
          Query<EventRecord>(sql, "events", [&](Stmt& st) { bind(st, after, &*upto, want); });
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

  Result<int64_t> LastEventPosition() override {
    std::lock_guard lock(mu_);
    Stmt* q = nullptr;
    if (Status s = Cached(reader(), "SELECT COALESCE(MAX(position), 0) FROM events", &q); !s.ok()) {
      return s;
    }
    sqlite::ResetOnExit reset(*q);
    if (q->Step() != SQLITE_ROW) return sqlite::Error(db(), "reading the last event position");
    return q->Int(0);
  }

  Result<std::vector<DeadLetterRecord>> ListDeadLetters(const DeadLetterFilter& f) override {
    std::lock_guard lock(mu_);
    return Query<DeadLetterRecord>(sqlite::SelectDeadLetters(f), "dead_letters",
                                   [&](Stmt& q) { sqlite::Bind(q, f, true); });
  }
  Result<DeadLetterRecord> GetDeadLetter(int64_t id) override {
    std::lock_guard lock(mu_);
    auto rows = Query<DeadLetterRecord>(std::string(sqlite::kSelectDeadLetters) + " WHERE id = ?1",
                                        "dead_letters", [&](Stmt& q) { q.Bind(1, id); });
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return Status(errc::kNotFound, "dead letter " + std::to_string(id));
    return std::move(rows->front());
  }
  Result<std::vector<DeadLetterGroup>> CountDeadLetters(const DeadLetterFilter& f) override {
    std::lock_guard lock(mu_);
    return Query<DeadLetterGroup>(sqlite::CountDeadLettersSql(f), "dead_letters",
                                  [&](Stmt& q) { sqlite::Bind(q, f, false); });
  }

  Result<WorkflowRecord> GetWorkflow(const std::string& ns, const std::string& name,
                                     int version) override {
    std::lock_guard lock(mu_);
    auto rows = Query<WorkflowRecord>(
        std::string(sqlite::kSelectWorkflows) +
            (version == 0 ? " WHERE ns = ?3 AND name = ?1 ORDER BY version DESC LIMIT 1"
                          : " WHERE ns = ?3 AND name = ?1 AND version = ?2"),
        "workflows", [&](Stmt& q) {
          q.Bind(1, name);
          if (version != 0) q.Bind(2, version);
          q.Bind(3, ns);
        });
    if (!rows.ok()) return rows.status();
    if (rows->empty()) {
      return Status(
          errc::kNotFound,
          "workflow " + name + (version == 0 ? "" : " version " + std::to_string(version)));
    }
    return std::move(rows->front());
  }

  Result<std::vector<WorkflowRecord>> ListWorkflows(const std::string& ns,
                                                    const std::string& name) override {
    std::lock_guard lock(mu_);
    if (!name.empty()) {
      return Query<WorkflowRecord>(std::string(sqlite::kSelectWorkflows) +
                                       " WHERE ns = ?1 AND name = ?2 ORDER BY version DESC",
                                   "workflows", [&](Stmt& q) {
                                     q.Bind(1, ns);
                                     q.Bind(2, name);
                                   });
    }
    // SQLite returns the other columns of the row holding MAX() (a documented
    // guarantee for bare columns in an aggregate query).
    return Query<WorkflowRecord>(
        "SELECT name, MAX(version), definition, created_at, ns FROM workflows WHERE ns = ?1 "
        "GROUP BY name ORDER BY name",
        "workflows", [&](Stmt& q) { q.Bind(1, ns); });
  }

  Status DeleteWorkflow(const std::string& ns, const std::string& name) override {
    return DeleteOne("DELETE FROM workflows WHERE ns = ?1 AND name = ?2", ns, name,
                     "workflow " + name);
  }

  Result<std::vector<TokenRecord>> ListTokens(const std::string& ns) override {
    std::lock_guard lock(mu_);
    if (ns.empty()) {
      return Query<TokenRecord>(std::string(sqlite::kSelectTokens) + " ORDER BY rowid", "tokens",
                                [](Stmt&) {});
    }
    return Query<TokenRecord>(std::string(sqlite::kSelectTokens) + " WHERE ns = ?1 ORDER BY rowid",
                              "tokens", [&](Stmt& q) { q.Bind(1, ns); });
  }

  Result<std::vector<ScheduleRecord>> ListSchedules(const std::string& ns) override {
    std::lock_guard lock(mu_);
    if (ns.empty()) {
      return Query<ScheduleRecord>(std::string(sqlite::kSelectSchedules) + " ORDER BY rowid",
                                   "schedules", [](Stmt&) {});
    }
    return Query<ScheduleRecord>(
        std::string(sqlite::kSelectSchedules) + " WHERE ns = ?1 ORDER BY rowid", "schedules",
        [&](Stmt& q) { q.Bind(1, ns); });
  }

  Status DeleteSchedule(const std::string& ns, const std::string& id) override {
    return DeleteOne("DELETE FROM schedules WHERE ns = ?1 AND id = ?2", ns, id, "schedule " + id);
  }

  Result<std::vector<HookRecord>> ListHooks(const std::string& ns) override {
    return ListByNs<HookRecord>(sqlite::kSelectHooks, "hooks", ns, "name");
  }
  Result<HookRecord> GetHook(const std::string& name) override {
    std::lock_guard lock(mu_);
    auto rows = Query<HookRecord>(std::string(sqlite::kSelectHooks) + " WHERE name = ?1", "hooks",
                                  [&](Stmt& q) { q.Bind(1, name); });
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return Status(errc::kNotFound, "hook " + name);
    return std::move(rows->front());
  }
  Status DeleteHook(const std::string& ns, const std::string& name) override {
    return DeleteOne("DELETE FROM hooks WHERE ns = ?1 AND name = ?2", ns, name, "hook " + name);
  }

  Result<std::vector<TriggerRecord>> ListTriggers(const std::string& ns) override {
    return ListByNs<TriggerRecord>(sqlite::kSelectTriggers, "triggers", ns, "rowid");
  }
  Status DeleteTrigger(const std::string& ns, const std::string& id) override {
    return DeleteOne("DELETE FROM triggers WHERE ns = ?1 AND id = ?2", ns, id, "trigger " + id);
  }

  Result<std::vector<DeliveryRecord>> ListDeliveries(const DeliveryFilter& f) override {
    std::string sql = std::string(sqlite::kSelectDeliveries) + " WHERE 1";
    if (!f.ns.empty()) sql += " AND ns = ?1";
    if (!f.execution_id.empty()) sql += " AND execution_id = ?2";
    if (f.status) sql += " AND status = ?3";
    sql += " ORDER BY created_at, id LIMIT ?4";
    std::lock_guard lock(mu_);
    return Query<DeliveryRecord>(sql, "deliveries", [&](Stmt& q) {
      if (!f.ns.empty()) q.Bind(1, f.ns);
      if (!f.execution_id.empty()) q.Bind(2, f.execution_id);
      if (f.status) q.Bind(3, std::string_view(ToString(*f.status)));
      q.Bind(4, SqlLimit(f.limit));
    });
  }
  Result<DeliveryRecord> GetDelivery(const std::string& id) override {
    std::lock_guard lock(mu_);
    auto rows = Query<DeliveryRecord>(std::string(sqlite::kSelectDeliveries) + " WHERE id = ?1",
                                      "deliveries", [&](Stmt& q) { q.Bind(1, id); });
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return Status(errc::kNotFound, "delivery " + id);
    return std::move(rows->front());
  }

  Result<TokenRecord> FindToken(const std::string& secret_hash) override {
    std::lock_guard lock(mu_);
    auto rows = Query<TokenRecord>(std::string(sqlite::kSelectTokens) + " WHERE secret_hash = ?1",
                                   "tokens", [&](Stmt& q) { q.Bind(1, secret_hash); });
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return Status(errc::kNotFound, "token");
    return std::move(rows->front());
  }

  Result<std::vector<WorkerRecord>> ListWorkers(const std::string& ns) override {
    return ListByNs<WorkerRecord>(sqlite::kSelectWorkers, "workers", ns, "id");
  }
  Result<std::vector<AssignmentRecord>> ListAssignments(const AssignmentFilter& f) override {
    std::lock_guard lock(mu_);
    return Query<AssignmentRecord>(sqlite::SelectAssignments(f), "assignments",
                                   [&](Stmt& q) { sqlite::Bind(q, f); });
  }
  // A dispatch id wins over a worker-facing one; among assignments sharing a
  // worker-facing id (which the engine never writes) the lowest dispatch id wins.
  Result<AssignmentRecord> GetAssignment(const std::string& id) override {
    std::lock_guard lock(mu_);
    auto rows = Query<AssignmentRecord>(
        std::string(sqlite::kSelectAssignments) +
            " WHERE dispatch_id = ?1 OR id = ?1 ORDER BY dispatch_id != ?1, dispatch_id LIMIT 1",
        "assignments", [&](Stmt& q) { q.Bind(1, id); });
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return Status(errc::kNotFound, "assignment " + id);
    return std::move(rows->front());
  }
  Result<std::vector<ReassignmentRecord>> ListReassignments(const ReassignmentFilter& f) override {
    std::lock_guard lock(mu_);
    return Query<ReassignmentRecord>(sqlite::SelectReassignments(f), "reassignments",
                                     [&](Stmt& q) { sqlite::Bind(q, f); });
  }
  Result<std::vector<SignalRecord>> ListSignals(const std::string& execution_id) override {
    std::lock_guard lock(mu_);
    return Query<SignalRecord>(
        std::string(sqlite::kSelectSignals) + " WHERE execution_id = ?1 ORDER BY seq", "signals",
        [&](Stmt& q) { q.Bind(1, execution_id); });
  }
  Result<std::vector<CacheEntryRecord>> ListCacheEntries(const std::string& ns) override {
    return ListByNs<CacheEntryRecord>(sqlite::kSelectCacheEntries, "cache_entries", ns, "ns, key");
  }
  Result<std::vector<BreakerRecord>> ListBreakers(const std::string& ns) override {
    return ListByNs<BreakerRecord>(sqlite::kSelectBreakers, "breakers", ns, "ns, key");
  }
  Result<std::vector<PoolRecord>> ListPools(const std::string& ns) override {
    return ListByNs<PoolRecord>(sqlite::kSelectPools, "pools", ns, "ns, name");
  }
  Status DeletePool(const std::string& ns, const std::string& name) override {
    return DeleteOne("DELETE FROM pools WHERE ns = ?1 AND name = ?2", ns, name, "pool " + name);
  }

 private:
  // One connection and the statements prepared on it.
  struct Connection {
    DbPtr db;  // declared before cache: statements are finalized before the close
    std::unordered_map<std::string, std::unique_ptr<Stmt>> cache;
  };
  // The connection reads use, under mu_.
  Connection& reader() { return reader_.db ? reader_ : writer_; }
  sqlite3* db() { return reader().db.get(); }

  // Rows of one namespace (every namespace when `ns` is empty) in `order`.
  template <class T>
  Result<std::vector<T>> ListByNs(const char* select, const char* table, const std::string& ns,
                                  const char* order) {
    std::lock_guard lock(mu_);
    const std::string where = ns.empty() ? "" : " WHERE ns = ?1";
    return Query<T>(std::string(select) + where + " ORDER BY " + order, table, [&](Stmt& q) {
      if (!ns.empty()) q.Bind(1, ns);
    });
  }

  // Runs a "DELETE ... WHERE ns = ?1 AND <key> = ?2"; NOT_FOUND (naming `what`) when no
  // row matched.
  Status DeleteOne(const char* sql, const std::string& ns, const std::string& key,
                   const std::string& what) {
    std::lock_guard lock(write_mu_);
    Stmt* q = nullptr;
    if (Status s = Cached(writer_, sql, &q); !s.ok()) return s;
    q->Bind(1, ns);
    q->Bind(2, key);
    if (Status s = q->Run(); !s.ok()) return Context(s, "deleting " + what);
    if (sqlite3_changes(writer_.db.get()) == 0) return Status(errc::kNotFound, what);
    return Status::Ok();
  }

  // Statements are prepared on first use and kept for the store's lifetime.
  static Status Cached(Connection& c, const std::string& sql, Stmt** out) {
    auto it = c.cache.find(sql);
    if (it == c.cache.end()) {
      auto stmt = std::make_unique<Stmt>();
      if (Status s = stmt->Prepare(c.db.get(), sql.c_str()); !s.ok()) return s;
      it = c.cache.emplace(sql, std::move(stmt)).first;
    }
    *out = it->second.get();
    return Status::Ok();
  }

  template <class T, class BindFn>
  Result<std::vector<T>> Query(const std::string& sql, const char* table, BindFn bind) {
    Stmt* q = nullptr;
    if (Status s = Cached(reader(), sql, &q); !s.ok()) return s;
    sqlite::ResetOnExit reset(*q);
    bind(*q);
    std::vector<T> out;
    int rc;
    while ((rc = q->Step()) == SQLITE_ROW) {
      T row;
      if (!sqlite::Read(*q, &row)) return Corrupt(table);
      out.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE) return sqlite::Error(db(), std::string("reading ") + table);
    return out;
  }

  // The position kScanWindow index entries after `after` (kNoEnd: fewer remain).
  static constexpr int64_t kScanWindow = 4096;
  static constexpr int64_t kNoEnd = std::numeric_limits<int64_t>::max();
  Result<int64_t> WindowEnd(int64_t after) {
    Stmt* q = nullptr;
    if (Status s = Cached(
            reader(),
            "SELECT position FROM events WHERE position > ?1 ORDER BY position LIMIT 1 OFFSET ?2",
            &q);
        !s.ok()) {
      return s;
    }
    sqlite::ResetOnExit reset(*q);
    q->Bind(1, after);
    q->Bind(2, kScanWindow - 1);
    const int rc = q->Step();
    if (rc == SQLITE_ROW) return q->Int(0);
    if (rc != SQLITE_DONE) return sqlite::Error(db(), "reading events by position");
    return kNoEnd;
  }

  // Upserts go through `latest` when coalescing (nullptr: write every record).
  template <class Record>
  static Status WriteAll(Stmt& q, const std::vector<Record>& records,
                         sqlite::LastWriteWins<Record>* latest) {
    for (const Record& r : records) {
      const Record* w = latest != nullptr ? latest->Take(r) : &r;
      if (w == nullptr) continue;  // this key's last value was written already
      if (Status s = sqlite::Write(q, *w); !s.ok()) return s;
    }
    return Status::Ok();
  }
  template <class Record>
  static Status AppendAll(Stmt& q, const std::vector<Record>& records) {
    for (const Record& r : records) {
      if (Status s = sqlite::Write(q, r); !s.ok()) return s;
    }
    return Status::Ok();
  }

  // Commits hold write_mu_ and reads hold mu_: with two connections (WAL lets a reader
  // go on while the writer commits) a read does not wait for a commit's fsync. mu_ is
  // read_mu_, or write_mu_ when one connection serves both.
  std::mutex write_mu_;
  std::mutex read_mu_;
  std::mutex& mu_;
  std::optional<sqlite::OwnerLock> owner_;  // released after the database is closed
  Connection writer_;
  Connection reader_;
  sqlite::LastWriteWins<WorkflowRecord> workflows_;
  sqlite::LastWriteWins<ExecutionRecord> executions_;
  sqlite::LastWriteWins<StepRecord> steps_;
  sqlite::LastWriteWins<AttemptRecord> attempts_;
  sqlite::LastWriteWins<AssignmentRecord> assignments_;
};

}  // namespace

Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path,
                                               const SqliteOptions& options) {
  const std::string what = "opening SQLite database " + path;
  std::optional<sqlite::OwnerLock> owner;
  if (options.exclusive && path != ":memory:" && !path.empty()) {
    Result<sqlite::OwnerLock> lock = sqlite::OwnerLock::Acquire(path);
    if (!lock.ok()) return lock.status();
    owner.emplace(std::move(lock).value());
  }
  sqlite3* raw = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  DbPtr db(raw);  // closes even a handle whose open failed, as SQLite requires
  if (rc != SQLITE_OK) {
    return Status(errc::kStore, what + ": " + (raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_extended_result_codes(db.get(), 1);
  sqlite3_busy_timeout(db.get(), options.busy_timeout_ms);
  // The first statement reads the file header: a file that is not a database fails here
  // ("file is not a database").
  const char* pragmas = options.synchronous_full
                            ? "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
                            : "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;";
  if (Status s = sqlite::Exec(db.get(), pragmas); !s.ok()) return Context(s, what);
  if (Status s = sqlite::Migrate(db.get()); !s.ok()) return Context(s, what);
  // The reading connection: WAL gives it the last committed state without waiting for a
  // commit in progress. An in-memory database is private to its connection: no second.
  DbPtr reader;
  if (!path.empty() && path != ":memory:") {
    sqlite3* raw_reader = nullptr;
    rc = sqlite3_open_v2(path.c_str(), &raw_reader, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                         nullptr);
    reader.reset(raw_reader);
    if (rc != SQLITE_OK) {
      return Status(
          errc::kStore,
          what + " for reading: " + (raw_reader ? sqlite3_errmsg(raw_reader) : sqlite3_errstr(rc)));
    }
    sqlite3_extended_result_codes(reader.get(), 1);
    sqlite3_busy_timeout(reader.get(), options.busy_timeout_ms);
    if (Status s = sqlite::Exec(reader.get(), "PRAGMA query_only = 1;"); !s.ok()) {
      return Context(s, what + " for reading");
    }
  }
  return std::unique_ptr<Store>(
      std::make_unique<SqliteStore>(std::move(db), std::move(reader), std::move(owner)));
}

}  // namespace baton
