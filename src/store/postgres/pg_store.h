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
#include "store/postgres/pg_offer_board.h"
#include "store/record_tables.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
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

// The shared feed's condition "after position `after`, and listable now" on the events
// table (pg_feed.cpp): its parameters go to `p`.
std::string FeedAfterSql(int64_t after, Params& p);

// The locks the writing connection holds for the store's life (released with the
// connection, or the process): without an instance name, the schema's owner lock (one
// server); with one, a share of it (instances, never beside a single server) and the
// lock of the name (no two processes with one name).
Status TakeOwnerLock(Connection& c, const std::string& url, const std::string& instance);

class PgStore final : public Store,
                      public ExecutionLeases,
                      public SharedFeed,
                      public SharedCache,
                      public SharedPools {
 public:
  // `readers`: at least one connection. `instance`: empty for one server per database;
  // otherwise this instance's name, and executions are leased (ExecutionLeases).
  // `fence_epoch`: a number no other store of the database got (baton_fence_epochs).
  PgStore(std::string url, Connection::Options options, Connection writer,
          std::vector<Connection> readers, std::string instance = "",
          Duration lease = Duration(10'000), int64_t fence_epoch = 0)
      : url_(std::move(url)),
        options_(options),
        writer_(std::move(writer)),
        instance_(std::move(instance)),
        lease_(lease),
        next_fence_(fence_epoch << 32) {
    for (Connection& c : readers) readers_.push_back(std::make_unique<Reader>(std::move(c)));
    if (!instance_.empty())
      board_ = std::make_unique<PgOfferBoard>(url_, options_, instance_, lease_);
  }

  Status Commit(std::span<const WriteBatch* const> batches) override;
  ExecutionLeases* leases() override { return instance_.empty() ? nullptr : this; }
  OfferBoard* offers() override { return board_.get(); }
  ControlRelay* relay() override { return board_.get(); }
  SharedFeed* feed() override { return instance_.empty() ? nullptr : this; }
  SharedCache* shared_cache() override { return instance_.empty() ? nullptr : this; }
  SharedPools* shared_pools() override { return instance_.empty() ? nullptr : this; }

  // SharedFeed (pg_feed.cpp). With an instance name, every event read returns its feed
  // position in EventRecord::position, and ListEvents() lists by it.
  Result<std::vector<FeedEntry>> FeedAfter(int64_t after, size_t limit) override;
  // SharedCache (pg_reads.cpp).
  Result<CacheChanges> CacheChangesAfter(int64_t after) override;
  // SharedPools (pg_pools.cpp). Holds are renewed by Renew().
  Result<bool> HoldSlots(const PoolHold& hold, int64_t limit, bool force) override;
  Status ReleaseSlots(const PoolHold& hold) override;
  Status ReleaseAllSlots() override;
  Result<int64_t> SlotsHeld(const std::string& ns, const std::string& pool) override;
  Result<std::vector<std::string>> Holders(const std::string& ns, const std::string& pool) override;
  Result<int64_t> FeedEnd() override;

  // ExecutionLeases (pg_leases.cpp).
  const std::string& instance() const override { return instance_; }
  Duration lease() const override { return lease_; }
  Result<std::vector<std::string>> Renew() override;
  Result<std::vector<std::string>> Claim(size_t limit, bool mine) override;
  Status Release(const std::string& execution_id) override;
  void Forget(const std::vector<std::string>& execution_ids) override;
  bool Holds(const std::string& execution_id) const override;
  std::vector<std::string> Held() const override;
  Result<std::string> HolderOf(const std::string& execution_id) override;
  bool Trusted() const override;
  Result<bool> Lead(const std::string& role) override;

  Result<ExecutionRecord> GetExecution(const std::string& id) override;
  Result<std::vector<ExecutionRecord>> ListExecutions(const ExecutionFilter& f) override;
  Result<std::vector<ExecutionCount>> CountExecutions(const ExecutionFilter& f) override;
  Result<std::vector<ExecutionRecord>> ListUnfinishedExecutions() override;
  Result<std::vector<StepRecord>> GetSteps(const std::string& execution_id) override;
  Result<std::vector<AttemptRecord>> GetAttempts(const std::string& execution_id) override;
  Result<std::vector<EventRecord>> GetEvents(const std::string& execution_id, int64_t after_seq,
                                             size_t limit) override;
  Result<std::vector<EventRecord>> ListEvents(const EventQuery& q) override;
  Result<int64_t> LastEventPosition() override;
  Result<int64_t> LastEventSeq(const std::string& execution_id) override;
  Result<std::vector<AttemptRecord>> GetFailedAttempts(const std::string& execution_id) override;
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
  // The same from another SELECT of the description's columns (and maybe more after them).
  template <class R>
  Result<std::vector<R>> QueryWith(const std::string& select, const std::string& tail,
                                   const Params& p, Rows* answer = nullptr);
  // Events with their feed positions (an instance name), or as written (none).
  Result<std::vector<EventRecord>> QueryEvents(const std::string& tail, const Params& p);
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
  // With an instance name, the first statement of a commit: the leases of the
  // executions the batches write (baton_check_leases), or a refusal without a round trip
  // when one is known lost or the leases are not trusted. What the commit changes in the
  // held set once it succeeded goes to `fresh` and `done`.
  struct LeaseChanges {
    std::vector<std::pair<std::string, int64_t>> fresh;
    std::vector<std::string> done;
  };
  Status SendLeaseCheck(std::span<const WriteBatch* const> batches, LeaseChanges* changes);
  // A commit the database refused because a lease held was lost (taken since the last
  // renewal): that execution counts as lost at once, so it is not read back and written
  // again before the next renewal; the next Renew() reports it.
  void NoteLostLease(const Status& refused);
  // A record's key columns as one string.
  template <class R>
  std::string KeyOf(const rows::Table<R>& table, const R& r);

  // A connection that is gone is opened again, at most once per backoff period (doubling
  // from 100 ms to 5 s while attempts fail); until then each call fails at once -- unless
  // another connection of this store opened since this one's last failed attempt: the
  // database is back, so every connection tries again at once instead of failing reads
  // and commits for up to its remaining backoff. The writer takes the owner lock again: a
  // server that lost it to another gives up.
  struct Reconnect {
    std::chrono::steady_clock::time_point next{};
    std::chrono::steady_clock::time_point failed_at{};
    std::chrono::milliseconds delay{100};
  };
  Status Reconnected(Connection& c, Reconnect& r, bool writer);
  Status WriterReady() { return Reconnected(writer_, writer_again_, true); }
  // Runs a read on a reader of the pool: a free connected one, else a free one, else the
  // next in turn. A read whose connection broke (the database restarted since that
  // connection was last used) is sent once more on a new connection: reads are
  // idempotent.
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
  // When a connection of this store last opened (steady clock ticks; see Reconnect).
  std::atomic<int64_t> connected_at_{0};
  // When deletions older than an hour were last removed (steady clock ticks).
  std::atomic<int64_t> cache_swept_at_{0};
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

  // Leases (with an instance name). held_ changes only under write_mu_ (commits, Renew,
  // Claim, Release), so a commit sees it stable; lease_mu_ guards it for readers.
  const std::string instance_;
  const Duration lease_;
  mutable std::mutex lease_mu_;
  std::unordered_map<std::string, int64_t> held_;  // execution -> the fence this instance set
  std::unordered_set<std::string> lost_;           // reported by Renew, not yet forgotten
  std::vector<std::string> lost_in_commit_;        // NoteLostLease's, for the next Renew
  std::chrono::steady_clock::time_point trusted_until_{};
  int64_t next_fence_;                   // the fence epoch in the high half, a count in the low
  std::unique_ptr<PgOfferBoard> board_;  // with an instance name
};

}  // namespace baton::pg
