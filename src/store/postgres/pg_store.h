// PgStore: the Store over PostgreSQL. Private to the module; <baton/postgres_store.h>
// opens one.
//
// Threading: Commit() and the reads may be called from any thread. Commits are
// serialised on the writing connection; reads go to a small pool of other connections
// (a free one if any), so a long commit never holds a read back and reads from several
// threads run side by side (PostgreSQL's MVCC gives them the last committed state).
//
// Every record is written and read through its description (store/record_tables.h):
// this file holds only the queries, their filters and their order.
#pragma once

#include <baton/store.h>

#include "store/postgres/pg_arrays.h"
#include "store/postgres/pg_connection.h"
#include "store/record_tables.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace baton::pg {

// Prefixes a failed status with what was being done.
inline Status Context(const Status& s, std::string_view what) {
  return Status(s.code(), std::string(what) + ": " + s.message());
}

// A statement's parameters, numbered as they are added: Add() returns "$n" to paste into
// the SQL, so a query names only the filters that are set.
class Params {
 public:
  std::string Add(std::string v) {
    values_.emplace_back(std::move(v));
    return "$" + std::to_string(values_.size());
  }
  std::string Add(int64_t v) { return Add(std::to_string(v)); }
  const std::vector<std::optional<std::string>>& values() const { return values_; }

 private:
  std::vector<std::optional<std::string>> values_;
};

// One row of an answer, read through a record's description.
class RowOfRows final : public rows::RowIn {
 public:
  RowOfRows(const Rows& rows, size_t row) : rows_(rows), row_(row) {}
  bool IsNull(int col) const override { return !rows_.at(row_, static_cast<size_t>(col)); }
  bool Int(int col, int64_t* out) const override;
  std::string_view Text(int col) const override {
    const auto& v = rows_.at(row_, static_cast<size_t>(col));
    return v ? std::string_view(*v) : std::string_view();
  }

 private:
  const Rows& rows_;
  size_t row_;
};

class PgStore final : public Store {
 public:
  // `readers`: at least one connection.
  PgStore(std::string url, Connection::Options options, Connection writer,
          std::vector<Connection> readers)
      : url_(std::move(url)), options_(options), writer_(std::move(writer)) {
    for (Connection& c : readers) readers_.push_back(std::make_unique<Reader>(std::move(c)));
  }

  Status Commit(std::span<const WriteBatch* const> batches) override;

  Result<ExecutionRecord> GetExecution(const std::string& id) override;
  Result<std::vector<ExecutionRecord>> ListExecutions(const ExecutionFilter& f) override;
  Result<std::vector<ExecutionRecord>> ListUnfinishedExecutions() override;
  Result<std::vector<StepRecord>> GetSteps(const std::string& execution_id) override;
  Result<std::vector<AttemptRecord>> GetAttempts(const std::string& execution_id) override;
  Result<std::vector<EventRecord>> GetEvents(const std::string& execution_id, int64_t after_seq,
                                             size_t limit) override;
  Result<std::vector<EventRecord>> ListEvents(const EventQuery& q) override;
  Result<int64_t> LastEventPosition() override;
  Result<std::vector<DeadLetterRecord>> ListDeadLetters(const DeadLetterFilter& f) override;
  using Store::ListDeadLetters;
  Result<DeadLetterRecord> GetDeadLetter(int64_t id) override;
  Result<std::vector<DeadLetterGroup>> CountDeadLetters(const DeadLetterFilter& f) override;
  Result<std::vector<SignalRecord>> ListSignals(const std::string& execution_id) override;
  Result<std::vector<BreakerRecord>> ListBreakers(const std::string& ns) override;
  Result<std::vector<PoolRecord>> ListPools(const std::string& ns) override;
  Status DeletePool(const std::string& ns, const std::string& name) override;
  Result<std::vector<CacheEntryRecord>> ListCacheEntries(const std::string& ns) override;

  Result<WorkflowRecord> GetWorkflow(const std::string& ns, const std::string& name,
                                     int version) override;
  Result<std::vector<WorkflowRecord>> ListWorkflows(const std::string& ns,
                                                    const std::string& name) override;
  Status DeleteWorkflow(const std::string& ns, const std::string& name) override;
  Result<std::vector<TokenRecord>> ListTokens(const std::string& ns) override;
  Result<TokenRecord> FindToken(const std::string& secret_hash) override;
  Result<std::vector<ScheduleRecord>> ListSchedules(const std::string& ns) override;
  Status DeleteSchedule(const std::string& ns, const std::string& id) override;
  Result<std::vector<HookRecord>> ListHooks(const std::string& ns) override;
  Result<HookRecord> GetHook(const std::string& name) override;
  Status DeleteHook(const std::string& ns, const std::string& name) override;
  Result<std::vector<TriggerRecord>> ListTriggers(const std::string& ns) override;
  Status DeleteTrigger(const std::string& ns, const std::string& id) override;
  Result<std::vector<DeliveryRecord>> ListDeliveries(const DeliveryFilter& f) override;
  Result<DeliveryRecord> GetDelivery(const std::string& id) override;

  Result<std::vector<WorkerRecord>> ListWorkers(const std::string& ns) override;
  Result<std::vector<AssignmentRecord>> ListAssignments(const AssignmentFilter& f) override;
  Result<AssignmentRecord> GetAssignment(const std::string& id) override;
  Result<std::vector<ReassignmentRecord>> ListReassignments(const ReassignmentFilter& f) override;

 private:
  // The rows of `sql` (the description's SELECT plus a tail), read into records; a stored
  // value the record cannot hold fails naming the table.
  template <class R>
  Result<std::vector<R>> Query(const std::string& tail, const Params& p);
  // The first row of Query(), or NOT_FOUND naming `what`.
  template <class R>
  Result<R> QueryOne(const std::string& tail, const Params& p, const std::string& what);
  // Rows of one namespace (all when `ns` is empty), in `order`.
  template <class R>
  Result<std::vector<R>> ListByNs(const std::string& ns, const std::string& order);
  // A DELETE of one row keyed by (ns, key): NOT_FOUND naming `what` when none matched.
  Status DeleteOne(const std::string& sql, const std::string& ns, const std::string& key,
                   const std::string& what);

  // Commit's pipeline: queues one statement with values_ as its parameters; `record` and
  // `describe` name it if it fails.
  Status Send(const char* name, const std::string& sql, const void* record,
              std::string (*describe)(const void*));
  // Sends what is queued and reads the answers; an error names the record that failed.
  Status SyncSent();
  // Row by row (a statement per record).
  template <class R>
  Status SendAll(const std::vector<R>& records);
  // The table's records of every batch in one statement, each key once.
  template <class R>
  Status SendBulk(std::span<const WriteBatch* const> batches, std::vector<R> WriteBatch::*member);
  Status SendGroup(std::span<const WriteBatch* const> batches);
  // A record's key columns as one string.
  template <class R>
  std::string KeyOf(const rows::Table<R>& table, const R& r);

  // A connection that is gone is opened again, at most once per backoff period (doubling
  // from 100 ms to 5 s while attempts fail); until then each call fails at once. The
  // writer takes the owner lock again: a server that lost it to another gives up.
  struct Reconnect {
    std::chrono::steady_clock::time_point next{};
    std::chrono::milliseconds delay{100};
  };
  Status Reconnected(Connection& c, Reconnect& r, bool writer);
  Status WriterReady() { return Reconnected(writer_, writer_again_, true); }
  // Runs a read on a reader of the pool: a free one, else the next in turn.
  Result<Rows> Read(const std::string& sql, const std::vector<std::optional<std::string>>& params,
                    std::string_view what);

  const std::string url_;
  const Connection::Options options_;
  std::mutex write_mu_;
  Connection writer_;
  Reconnect writer_again_;
  struct Reader {
    explicit Reader(Connection c) : conn(std::move(c)) {}
    std::mutex mu;
    Connection conn;
    Reconnect again;
  };
  std::vector<std::unique_ptr<Reader>> readers_;
  std::atomic<size_t> next_reader_{0};
  rows::RowOut row_;                    // reused by each written record
  std::vector<const char*> values_;     // its cells as libpq parameters
  std::vector<std::string> formatted_;  // its integers and repaired texts, as text
  struct Sent {
    const void* record = nullptr;
    std::string (*describe)(const void*) = nullptr;
  };
  std::vector<Sent> sent_;  // the statements of the commit in progress, in order
  size_t synced_ = 0;       // how many of them were answered
  rows::RowOut key_row_;    // KeyOf's
  std::unordered_map<std::string, size_t> keys_;  // SendBulk's: where each key's row is
  std::vector<ArrayLiteral> arrays_;              // SendBulk's columns
  static constexpr size_t kSyncEvery = 1024;
};

}  // namespace baton::pg
