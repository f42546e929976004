// SqliteStore: committing batches (group commit in one transaction), and opening a store.
#include "store/sqlite/sqlite_store.h"

#include <baton/sqlite_store.h>

#include "common/crash_point.h"
#include "store/sqlite/event_rows.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/wal_write_buffer.h"

#include <array>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

namespace baton::sqlite {

void ConfigureLibrary() {
  static std::once_flag once;
  std::call_once(once, [] {
    // SQLite counts every allocation (sqlite3_memory_used) under one global mutex by
    // default: a lock and an unlock per malloc and per free, about a tenth of the commit
    // thread's time. Nothing here reads the counters. sqlite3_config works only before
    // SQLite initialises; in a process that used SQLite first it answers SQLITE_MISUSE
    // and the counting stays on, which is slower but correct.
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  });
}

Status SqliteStore::Commit(std::span<const WriteBatch* const> batches) {
  bool any = false;
  for (const WriteBatch* b : batches) any = any || !b->empty();
  if (!any) return Status::Ok();
  std::lock_guard lock(write_mu_);
  // Prepared on the first commit and kept (the statement cache owns them): a commit no
  // longer hashes two dozen SQL texts to find its statements.
  if (commit_stmts_[0] == nullptr) {
    const char* sqls[] = {"BEGIN IMMEDIATE",
                          "COMMIT",
                          sqlite::kUpsertWorkflow.c_str(),
                          sqlite::kUpsertExecution.c_str(),
                          sqlite::kUpsertExecutionState.c_str(),
                          sqlite::kUpsertStep.c_str(),
                          sqlite::kUpsertAttempt.c_str(),
                          sqlite::kInsertEventRow.c_str(),
                          sqlite::kFirstSeqOfEventRowFrom.c_str(),
                          sqlite::kUpsertDeadLetter.c_str(),
                          sqlite::kUpsertToken.c_str(),
                          sqlite::kUpsertSchedule.c_str(),
                          sqlite::kUpsertHook.c_str(),
                          sqlite::kUpsertTrigger.c_str(),
                          sqlite::kUpsertDelivery.c_str(),
                          sqlite::kUpsertWorker.c_str(),
                          sqlite::kUpsertAssignment.c_str(),
                          sqlite::kUpsertAssignmentState.c_str(),
                          sqlite::kInsertReassignment.c_str(),
                          sqlite::kUpsertSignal.c_str(),
                          sqlite::kUpsertBreaker.c_str(),
                          sqlite::kUpsertCacheEntry.c_str(),
                          sqlite::kTouchCacheEntry,
                          sqlite::kDeleteCacheEntry,
                          sqlite::kUpsertPool.c_str()};
    static_assert(std::size(sqls) == kCommitStatements);
    std::array<Stmt*, kCommitStatements> prepared{};
    for (size_t i = 0; i < prepared.size(); ++i) {
      if (Status s = Cached(writer_, sqls[i], &prepared[i]); !s.ok()) return Context(s, "commit");
    }
    commit_stmts_ = prepared;
  }
  auto [begin, commit, wf, ex, exs, st, at, ev, evf, dl, tk, sc, hk, tg, dv, wk, as, ass, rs, sg,
        br, ce, ct, cd, pl] = commit_stmts_;
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
        !(s = WriteAll(*exs, *ex, b->executions, coalesce ? &executions_ : nullptr)).ok() ||
        !(s = WriteAll(*st, b->steps, coalesce ? &steps_ : nullptr)).ok() ||
        !(s = WriteAll(*at, b->attempts, coalesce ? &attempts_ : nullptr)).ok() ||
        !(s = WriteEvents(*ev, *evf, b->events)).ok() ||
        !(s = AppendAll(*dl, b->dead_letters)).ok() || !(s = AppendAll(*tk, b->tokens)).ok() ||
        !(s = AppendAll(*sc, b->schedules)).ok() || !(s = AppendAll(*hk, b->hooks)).ok() ||
        !(s = AppendAll(*tg, b->triggers)).ok() || !(s = AppendAll(*dv, b->deliveries)).ok() ||
        !(s = AppendAll(*wk, b->workers)).ok() ||
        !(s = WriteAll(*ass, *as, b->assignments, coalesce ? &assignments_ : nullptr)).ok() ||
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
    if (sqlite3_get_autocommit(writer_.db.get()) == 0) Exec(writer_.db.get(), "ROLLBACK");
    return Context(s, "commit");
  }
  return Status::Ok();
}

}  // namespace baton::sqlite

namespace baton {

using sqlite::Context;
using sqlite::DbPtr;
using sqlite::Exec;
using sqlite::SqliteStore;

Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path,
                                               const SqliteOptions& options) {
  const std::string what = "opening SQLite database " + path;
  std::optional<sqlite::OwnerLock> owner;
  if (options.exclusive && path != ":memory:" && !path.empty()) {
    Result<sqlite::OwnerLock> lock = sqlite::OwnerLock::Acquire(path);
    if (!lock.ok()) return lock.status();
    owner.emplace(std::move(lock).value());
  }
  sqlite::ConfigureLibrary();  // before anything below initialises SQLite
  sqlite3* raw = nullptr;
  // The writer gathers each commit's WAL writes into one (wal_write_buffer.h: FULL only).
  const bool file = !path.empty() && path != ":memory:";
  int rc = sqlite3_open_v2(
      path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
      file && options.synchronous_full ? sqlite::WalWriteBufferVfs() : nullptr);
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
  if (Status s = Exec(db.get(), pragmas); !s.ok()) return Context(s, what);
  if (Status s = sqlite::Migrate(db.get()); !s.ok()) return Context(s, what);
  // The reading connection: WAL gives it the last committed state without waiting for a
  // commit in progress. An in-memory database is private to its connection: no second.
  DbPtr reader;
  if (file) {
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
    if (Status s = Exec(reader.get(), "PRAGMA query_only = 1;"); !s.ok()) {
      return Context(s, what + " for reading");
    }
  }
  return std::unique_ptr<Store>(
      std::make_unique<SqliteStore>(std::move(db), std::move(reader), std::move(owner),
                                    file ? path : std::string(), options.busy_timeout_ms));
}

}  // namespace baton
