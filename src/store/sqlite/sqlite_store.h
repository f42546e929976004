// SqliteStore: the default durable Store, one SQLite file in WAL mode.
//
// Two connections: the writer commits batches (SQLite allows one writer, and the engine
// batches its writes: group commit), and a reader serves every read, so that a read
// waits for neither a commit nor its fsync (WAL gives the reader the last committed
// state). Each connection has its own mutex; an in-memory database has one connection
// and one mutex. Connections are opened NOMUTEX because these mutexes already serialise
// every call on them.
//
// Internal to the store module: the rest of Baton opens one through OpenSqliteStore().
// The class's methods live in sqlite_store.cpp (commits, opening), execution_reads.cpp
// (executions, steps, attempts, events, dead letters) and catalog_reads.cpp (workflows,
// tokens, schedules, hooks, triggers, deliveries, workers, assignments, signals, caches,
// breakers, pools).
#pragma once

#include <baton/store.h>

#include "store/sqlite/coalesce.h"
#include "store/sqlite/event_rows.h"
#include "store/sqlite/owner_lock.h"
#include "store/sqlite/rows.h"
#include "store/sqlite/statement.h"
#include "store/sqlite/wal_checkpointer.h"

#include <array>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace baton::sqlite {

// Process-wide SQLite settings, applied once, before the first database is opened:
// allocations are not counted (sqlite3_memory_used() stays 0). Thread-safe.
void ConfigureLibrary();

inline Status Corrupt(const std::string& what) {
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
  // `checkpoint_path`, when not empty, is the file a WalCheckpointer opens to take the
  // writer's checkpoints off its commits.
  SqliteStore(DbPtr db, DbPtr reader, std::optional<OwnerLock> owner,
              const std::string& checkpoint_path = "", int busy_timeout_ms = 0)
      : mu_(reader ? read_mu_ : write_mu_), owner_(std::move(owner)) {
    writer_.db = std::move(db);
    reader_.db = std::move(reader);
    if (!checkpoint_path.empty()) {
      checkpointer_ = std::make_unique<WalCheckpointer>(checkpoint_path, writer_.db.get(),
                                                        write_mu_, busy_timeout_ms);
    }
  }

  // Null for an in-memory database (it has no WAL).
  const WalCheckpointer* checkpointer() const { return checkpointer_.get(); }

  Status Commit(std::span<const WriteBatch* const> batches) override;
  Result<ExecutionRecord> GetExecution(const std::string& id) override;
  Result<std::vector<ExecutionRecord>> ListExecutions(const ExecutionFilter& f) override;
  Result<std::vector<ExecutionCount>> CountExecutions(const ExecutionFilter& f) override;
  Result<std::vector<ExecutionRecord>> ListUnfinishedExecutions() override;
  Result<std::vector<StepRecord>> GetSteps(const std::string& execution_id) override;
  Result<std::vector<AttemptRecord>> GetAttempts(const std::string& execution_id) override;
  Result<std::vector<AttemptRecord>> GetFailedAttempts(const std::string& execution_id) override;
  Result<std::vector<EventRecord>> GetEvents(const std::string& execution_id, int64_t after_seq,
                                             size_t limit) override;
  Result<std::vector<EventRecord>> ListEvents(const EventQuery& q) override;
  Result<int64_t> LastEventPosition() override;
  Result<int64_t> LastEventSeq(const std::string& execution_id) override;
  Result<std::vector<DeadLetterRecord>> ListDeadLetters(const DeadLetterFilter& f) override;
  Result<DeadLetterRecord> GetDeadLetter(int64_t id) override;
  Result<std::vector<DeadLetterGroup>> CountDeadLetters(const DeadLetterFilter& f) override;
  Result<WorkflowRecord> GetWorkflow(const std::string& ns, const std::string& name,
                                     int version) override;
  Result<std::vector<WorkflowRecord>> ListWorkflows(const std::string& ns,
                                                    const std::string& name) override;
  Status DeleteWorkflow(const std::string& ns, const std::string& name) override;
  Result<std::vector<TokenRecord>> ListTokens(const std::string& ns) override;
  Result<std::vector<ScheduleRecord>> ListSchedules(const std::string& ns) override;
  Status DeleteSchedule(const std::string& ns, const std::string& id) override;
  Result<std::vector<HookRecord>> ListHooks(const std::string& ns) override;
  Result<HookRecord> GetHook(const std::string& name) override;
  Status DeleteHook(const std::string& ns, const std::string& name) override;
  Result<std::vector<TriggerRecord>> ListTriggers(const std::string& ns) override;
  Status DeleteTrigger(const std::string& ns, const std::string& id) override;
  Result<std::vector<DeliveryRecord>> ListDeliveries(const DeliveryFilter& f) override;
  Result<DeliveryRecord> GetDelivery(const std::string& id) override;
  Result<TokenRecord> FindToken(const std::string& secret_hash) override;
  Result<std::vector<WorkerRecord>> ListWorkers(const std::string& ns) override;
  Result<std::vector<AssignmentRecord>> ListAssignments(const AssignmentFilter& f) override;
  // A dispatch id wins over a worker-facing one; among assignments sharing a
  // worker-facing id (which the engine never writes) the lowest dispatch id wins.
  Result<AssignmentRecord> GetAssignment(const std::string& id) override;
  Result<std::vector<ReassignmentRecord>> ListReassignments(const ReassignmentFilter& f) override;
  Result<std::vector<SignalRecord>> ListSignals(const std::string& execution_id) override;
  Result<std::vector<CacheEntryRecord>> ListCacheEntries(const std::string& ns) override;
  Result<std::vector<BreakerRecord>> ListBreakers(const std::string& ns) override;
  Result<std::vector<PoolRecord>> ListPools(const std::string& ns) override;
  Status DeletePool(const std::string& ns, const std::string& name) override;

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
  Result<std::vector<T>> ListByNs(const std::string& select, const char* table,
                                  const std::string& ns, const char* order) {
    std::lock_guard lock(mu_);
    const std::string where = ns.empty() ? "" : " WHERE ns = ?1";
    return Query<T>(select + where + " ORDER BY " + order, table, [&](Stmt& q) {
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

  // Runs `sql` on the reader, bound by `bind`, and hands each row to `read` (false: the
  // row is not valid, and the table is named corrupt).
  template <class BindFn, class ReadFn>
  Status ForEachRow(const std::string& sql, const char* table, BindFn bind, ReadFn read) {
    Stmt* q = nullptr;
    if (Status s = Cached(reader(), sql, &q); !s.ok()) return s;
    ResetOnExit reset(*q);
    bind(*q);
    int rc;
    while ((rc = q->Step()) == SQLITE_ROW) {
      if (!read(*q)) return Corrupt(table);
    }
    if (rc != SQLITE_DONE) return Error(db(), std::string("reading ") + table);
    return Status::Ok();
  }

  template <class T, class BindFn>
  Result<std::vector<T>> Query(const std::string& sql, const char* table, BindFn bind) {
    std::vector<T> out;
    Status s = ForEachRow(sql, table, bind, [&](const Stmt& q) {
      T row;
      if (!Read(q, &row)) return false;
      out.push_back(std::move(row));
      return true;
    });
    if (!s.ok()) return s;
    return out;
  }

  // Events from rows of a kSelectEventRows query (event_rows.h), oldest first: those
  // after `after_seq` and `after_position`, at most `limit` (0: all). Each row holds at
  // least one event past both, so a query limited to `limit` rows yields enough.
  template <class BindFn>
  Result<std::vector<EventRecord>> QueryEvents(const std::string& sql, BindFn bind,
                                               int64_t after_seq, int64_t after_position,
                                               size_t limit) {
    std::vector<EventRecord> out;
    Status s = ForEachRow(sql, "events", bind, [&](const Stmt& q) {
      return ReadEventRow(q, after_seq, after_position, &out);
    });
    if (!s.ok()) return s;
    if (limit != 0 && out.size() > limit) out.resize(limit);
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
    ResetOnExit reset(*q);
    q->Bind(1, after);
    q->Bind(2, kScanWindow - 1);
    const int rc = q->Step();
    if (rc == SQLITE_ROW) return q->Int(0);
    if (rc != SQLITE_DONE) return Error(db(), "reading events by position");
    return kNoEnd;
  }

  // Upserts go through `latest` when coalescing (nullptr: write every record).
  template <class Record>
  static Status WriteAll(Stmt& q, const std::vector<Record>& records,
                         LastWriteWins<Record>* latest) {
    for (const Record& r : records) {
      const Record* w = latest != nullptr ? latest->Take(r) : &r;
      if (w == nullptr) continue;  // this key's last value was written already
      if (Status s = Write(q, *w); !s.ok()) return s;
    }
    return Status::Ok();
  }
  // The same through `narrow`, an upsert that changes no indexed column and writes nothing
  // when the row exists with other values there; `full` then writes the record.
  template <class Record>
  static Status WriteAll(Stmt& narrow, Stmt& full, const std::vector<Record>& records,
                         LastWriteWins<Record>* latest) {
    for (const Record& r : records) {
      const Record* w = latest != nullptr ? latest->Take(r) : &r;
      if (w == nullptr) continue;
      if (Status s = Write(narrow, *w); !s.ok()) return s;
      if (narrow.Changes() != 0) continue;
      if (Status s = Write(full, *w); !s.ok()) return s;
    }
    return Status::Ok();
  }
  template <class Record>
  static Status AppendAll(Stmt& q, const std::vector<Record>& records) {
    for (const Record& r : records) {
      if (Status s = Write(q, r); !s.ok()) return s;
    }
    return Status::Ok();
  }

  // Commits hold write_mu_ and reads hold mu_: with two connections (WAL lets a reader
  // go on while the writer commits) a read does not wait for a commit's fsync. mu_ is
  // read_mu_, or write_mu_ when one connection serves both.
  std::mutex write_mu_;
  std::mutex read_mu_;
  std::mutex& mu_;
  std::optional<OwnerLock> owner_;  // released after the database is closed
  Connection writer_;
  Connection reader_;
  // The statements of Commit(), in its order; null until the first commit.
  static constexpr size_t kCommitStatements = 25;
  std::array<Stmt*, kCommitStatements> commit_stmts_{};
  LastWriteWins<WorkflowRecord> workflows_;
  LastWriteWins<ExecutionRecord> executions_;
  LastWriteWins<StepRecord> steps_;
  LastWriteWins<AttemptRecord> attempts_;
  LastWriteWins<AssignmentRecord> assignments_;
  // Declared after the connections: stopped before the writer it hooks is closed.
  std::unique_ptr<WalCheckpointer> checkpointer_;
};

}  // namespace baton::sqlite
