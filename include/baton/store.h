// The Store: where every state change goes before it is acted on.
//
// The engine produces WriteBatches (state changes and events of one decide step);
// Commit() writes a group of them in one transaction and returns only when they are
// durable (per the implementation's sync setting). Implementations, each its own module
// and target: the memory store (<baton/memory_store.h>: tests, --ephemeral) and the
// SQLite store (<baton/sqlite_store.h>: the default). Every implementation passes the
// conformance suite in src/store/conformance_test.cpp.
//
// Threading: implementations are thread-safe; Commit() calls are serialised inside.
// Errors: store failures are Status values with code errc::kStore (the backend's message
// included); lookups of absent records return errc::kNotFound. Nothing throws.
// JSON: every Json field round-trips exactly, including null (stored as "absent").
// Strings inside Json must be valid UTF-8; a durable store replaces invalid bytes with
// U+FFFD rather than failing the commit.
//
// The records are in <baton/records.h>; what several servers sharing one database use
// (leases, offers, relayed requests, the shared feed, cache and pools) in
// <baton/shared_store.h>.
#pragma once

#include <baton/clock.h>
#include <baton/json.h>
#include <baton/records.h>
#include <baton/shared_store.h>
#include <baton/status.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace baton {

// Everything one decide step changes. Records are upserts keyed by their identity
// (workflow name + version; execution id; execution + step; execution + step + attempt)
// that replace every field; events and reassignments are appended, dead letters appended
// (id 0) or replaced (their id), and an event whose (execution, seq) exists -- stored,
// or earlier in the same Commit -- fails the whole Commit, as does a reassignment whose
// id exists. Steps, attempts and events
// do not require their execution record to exist.
struct WriteBatch {
  std::vector<WorkflowRecord> workflows;
  std::vector<ExecutionRecord> executions;
  std::vector<StepRecord> steps;
  std::vector<AttemptRecord> attempts;
  std::vector<EventRecord> events;
  std::vector<DeadLetterRecord> dead_letters;
  std::vector<TokenRecord> tokens;                // upserts keyed by id
  std::vector<ScheduleRecord> schedules;          // upserts keyed by id
  std::vector<HookRecord> hooks;                  // upserts keyed by name
  std::vector<TriggerRecord> triggers;            // upserts keyed by id
  std::vector<DeliveryRecord> deliveries;         // upserts keyed by id
  std::vector<WorkerRecord> workers;              // upserts keyed by id
  std::vector<AssignmentRecord> assignments;      // upserts keyed by dispatch_id
  std::vector<ReassignmentRecord> reassignments;  // appended (ids are unique)
  std::vector<SignalRecord> signals;              // upserts keyed by execution + seq
  std::vector<BreakerRecord> breakers;            // upserts keyed by ns + key
  std::vector<PoolRecord> pools;                  // upserts keyed by ns + name
  // Cache entries: upserts keyed by ns + key, then touches (of entries that exist; one
  // that does not is ignored), then deletions (absent ones ignored), in that order.
  std::vector<CacheEntryRecord> cache_entries;
  std::vector<CacheTouch> cache_touches;
  std::vector<CacheKey> cache_deletes;
  bool empty() const {
    return workflows.empty() && executions.empty() && steps.empty() && attempts.empty() &&
           events.empty() && dead_letters.empty() && tokens.empty() && schedules.empty() &&
           hooks.empty() && triggers.empty() && deliveries.empty() && workers.empty() &&
           assignments.empty() && reassignments.empty() && signals.empty() && breakers.empty() &&
           pools.empty() && cache_entries.empty() && cache_touches.empty() && cache_deletes.empty();
  }
};

// Events of one namespace after a position (the live feed's replay). Every set field
// narrows the list.
struct EventQuery {
  std::string ns;            // required: the executions' namespace
  std::string workflow;      // empty = any
  std::string execution_id;  // empty = any
  int64_t after = 0;         // position > after
  size_t limit = 100;        // 0 = no limit
};

// Where a page of ListExecutions ended: the next page starts after it.
struct ExecutionCursor {
  TimeMs created_at = 0;
  std::string id;
};

// Every set field narrows the list; empty strings and zero times mean "any".
struct ExecutionFilter {
  std::optional<ExecutionStatus> status;
  std::string workflow;
  size_t limit = 100;  // 0 = no limit
  std::string ns;
  std::string parent_id;
  std::string idempotency_key;
  TimeMs created_from = 0;               // created_at >= created_from
  TimeMs created_until = 0;              // created_at < created_until
  std::optional<ExecutionCursor> after;  // only executions listed after this one
  // Only executions whose id, or input or output as compact JSON text, holds this text
  // (case-sensitive; a scan of the matching rows, not an index).
  std::string text;
};

// How many executions a filter matches, by status.
struct ExecutionCount {
  ExecutionStatus status;
  int64_t count = 0;
};

// The Store is split by role. Each role is an interface of its own, so that a consumer
// names the part it reads (the coordinator its tables, the token check the catalog) and a
// backend is written and tested role by role; a Store implements all of them over one
// database, because one WriteBatch may span every role and commits in one transaction.

// The engine's state: executions with their steps, attempts, events, signals and dead
// letters, and what executions share in a namespace (breakers, pools, cached results).
class ExecutionStore {
 public:
  virtual ~ExecutionStore() = default;

  virtual Result<ExecutionRecord> GetExecution(const std::string& id) = 0;  // NOT_FOUND
  // Newest first (created_at descending, then id descending).
  virtual Result<std::vector<ExecutionRecord>> ListExecutions(const ExecutionFilter& f) = 0;
  // How many executions match `f`, by status (only statuses with any; `f.status`,
  // `f.limit` and `f.after` are not applied).
  virtual Result<std::vector<ExecutionCount>> CountExecutions(const ExecutionFilter& f) = 0;
  // Executions not in a terminal state (pending, running, paused), oldest first
  // (created_at ascending, then first inserted first).
  virtual Result<std::vector<ExecutionRecord>> ListUnfinishedExecutions() = 0;
  // Ordered by index, then step id.
  virtual Result<std::vector<StepRecord>> GetSteps(const std::string& execution_id) = 0;
  // Ordered by step id (bytewise), then attempt.
  virtual Result<std::vector<AttemptRecord>> GetAttempts(const std::string& execution_id) = 0;
  // Only the attempts with an error, in the same order: all that a recovered or retried
  // execution needs of its past attempts. This default filters GetAttempts; a store that
  // can skip the others as it reads them does.
  virtual Result<std::vector<AttemptRecord>> GetFailedAttempts(const std::string& execution_id) {
    auto attempts = GetAttempts(execution_id);
    if (attempts.ok()) {
      std::erase_if(*attempts, [](const AttemptRecord& a) { return a.error.is_null(); });
    }
    return attempts;
  }
  // Events with seq > after_seq, ascending, at most `limit` (0 = no limit).
  virtual Result<std::vector<EventRecord>> GetEvents(const std::string& execution_id,
                                                     int64_t after_seq, size_t limit) = 0;
  // The seq of the execution's last event (0 when it has none): where its log goes on
  // after a restart. This default pages through GetEvents; a store with an index on
  // (execution_id, seq) answers with one read instead, whatever the log's length.
  virtual Result<int64_t> LastEventSeq(const std::string& execution_id) {
    int64_t last = 0;
    for (;;) {
      auto events = GetEvents(execution_id, last, 10'000);
      if (!events.ok()) return events.status();
      if (events->empty()) return last;
      last = events->back().seq;
    }
  }
  // Events whose execution matches `q` (an event whose execution record is absent
  // matches no namespace), position > q.after, ascending by position, at most q.limit.
  virtual Result<std::vector<EventRecord>> ListEvents(const EventQuery& q) = 0;
  // The highest position stored (0 when none): where an engine over this store
  // continues numbering (SeedEventPositions in engine.h).
  virtual Result<int64_t> LastEventPosition() = 0;
  // Dead letters matching `f`, by id ascending (the order they were written).
  virtual Result<std::vector<DeadLetterRecord>> ListDeadLetters(const DeadLetterFilter& f) = 0;
  // Every dead letter of one execution (empty id = of all executions), by id.
  Result<std::vector<DeadLetterRecord>> ListDeadLetters(const std::string& execution_id) {
    DeadLetterFilter f;
    f.execution_id = execution_id;
    f.limit = 0;
    return ListDeadLetters(f);
  }
  virtual Result<DeadLetterRecord> GetDeadLetter(int64_t id) = 0;  // NOT_FOUND
  // The entries matching `f` (its after_id and limit ignored) grouped by workflow, step
  // and fingerprint, largest group first (then workflow, step, fingerprint).
  virtual Result<std::vector<DeadLetterGroup>> CountDeadLetters(const DeadLetterFilter& f) = 0;
  // The execution's signals, by seq (pending and consumed).
  virtual Result<std::vector<SignalRecord>> ListSignals(const std::string& execution_id) = 0;
  // Circuit breakers of one namespace (empty = all), by namespace, then key.
  virtual Result<std::vector<BreakerRecord>> ListBreakers(const std::string& ns) = 0;
  // Pools of one namespace (empty = all), by namespace, then name.
  virtual Result<std::vector<PoolRecord>> ListPools(const std::string& ns) = 0;
  // NOT_FOUND when `ns` has no pool `name`.
  virtual Status DeletePool(const std::string& ns, const std::string& name) = 0;
  // Cache entries of one namespace (empty = all), by namespace, then key, outputs included.
  virtual Result<std::vector<CacheEntryRecord>> ListCacheEntries(const std::string& ns) = 0;
};

// The catalog: workflow definitions, API tokens, schedules, hooks, triggers and the outbox
// of deliveries.
class CatalogStore {
 public:
  virtual ~CatalogStore() = default;

  // Latest version when version == 0. NOT_FOUND when absent.
  virtual Result<WorkflowRecord> GetWorkflow(const std::string& ns, const std::string& name,
                                             int version) = 0;
  Result<WorkflowRecord> GetWorkflow(const std::string& name, int version) {
    return GetWorkflow(kDefaultNamespace, name, version);
  }
  // Empty name: the latest version of every workflow of the namespace, by name.
  // Otherwise every version of that workflow, newest first (empty when none).
  virtual Result<std::vector<WorkflowRecord>> ListWorkflows(const std::string& ns,
                                                            const std::string& name) = 0;
  // Removes every version; executions keep their snapshots. NOT_FOUND when none.
  virtual Status DeleteWorkflow(const std::string& ns, const std::string& name) = 0;

  // Tokens of one namespace (empty = all), oldest first. Revoked ones included.
  virtual Result<std::vector<TokenRecord>> ListTokens(const std::string& ns) = 0;
  // The token whose secret hashes to `secret_hash` (revoked or not); NOT_FOUND.
  virtual Result<TokenRecord> FindToken(const std::string& secret_hash) = 0;

  // Schedules of one namespace (empty = all), in creation order.
  virtual Result<std::vector<ScheduleRecord>> ListSchedules(const std::string& ns) = 0;
  // NOT_FOUND when `id` is not a schedule of `ns`.
  virtual Status DeleteSchedule(const std::string& ns, const std::string& id) = 0;

  // Hooks of one namespace (empty = all), by name.
  virtual Result<std::vector<HookRecord>> ListHooks(const std::string& ns) = 0;
  virtual Result<HookRecord> GetHook(const std::string& name) = 0;  // NOT_FOUND
  // NOT_FOUND when `name` is not a hook of `ns`.
  virtual Status DeleteHook(const std::string& ns, const std::string& name) = 0;

  // Triggers of one namespace (empty = all), in creation order.
  virtual Result<std::vector<TriggerRecord>> ListTriggers(const std::string& ns) = 0;
  // NOT_FOUND when `id` is not a trigger of `ns`.
  virtual Status DeleteTrigger(const std::string& ns, const std::string& id) = 0;

  virtual Result<std::vector<DeliveryRecord>> ListDeliveries(const DeliveryFilter& f) = 0;
  virtual Result<DeliveryRecord> GetDelivery(const std::string& id) = 0;  // NOT_FOUND
};

// The coordinator's tables: remote workers, their assignments and reassignments.
class WorkerStore {
 public:
  virtual ~WorkerStore() = default;

  // Workers of one namespace (empty = all), by id.
  virtual Result<std::vector<WorkerRecord>> ListWorkers(const std::string& ns) = 0;
  virtual Result<std::vector<AssignmentRecord>> ListAssignments(const AssignmentFilter& f) = 0;
  // By dispatch id or by a worker-facing id (dispatch_id.r<n>): NOT_FOUND otherwise.
  virtual Result<AssignmentRecord> GetAssignment(const std::string& id) = 0;
  virtual Result<std::vector<ReassignmentRecord>> ListReassignments(
      const ReassignmentFilter& f) = 0;
};

class Store : public ExecutionStore, public CatalogStore, public WorkerStore {
 public:
  // The board of work offered between instances; null unless leases() is not.
  virtual OfferBoard* offers() { return nullptr; }
  // Control requests relayed between instances; null unless leases() is not.
  virtual ControlRelay* relay() { return nullptr; }
  // The feed every instance shares; null unless leases() is not.
  virtual SharedFeed* feed() { return nullptr; }
  // The cache every instance shares; null unless leases() is not.
  virtual SharedCache* shared_cache() { return nullptr; }
  // The pools every instance shares; null unless leases() is not.
  virtual SharedPools* shared_pools() { return nullptr; }
  // The leases of executions when the store is shared by several server instances; null
  // when one process owns the store (SQLite, memory, PostgreSQL without an instance name).
  virtual ExecutionLeases* leases() { return nullptr; }
  // Writes all batches in one transaction, in order: all or nothing.
  virtual Status Commit(std::span<const WriteBatch* const> batches) = 0;
  Status Commit(const WriteBatch& batch) {
    const WriteBatch* one[] = {&batch};
    return Commit(one);
  }
  // Commit() of a batch the caller is done with: the store may take records out of it
  // instead of copying them (MemoryStore does), leaving `batch` valid but unspecified.
  virtual Status CommitOwned(WriteBatch&& batch) { return Commit(batch); }
};

// Forwards every call to another store; tests derive from it to intercept a few calls
// (fault injection, gating commits) without repeating the rest.
class StoreWrapper : public Store {
 public:
  explicit StoreWrapper(Store* target) : target_(target) {}
  Store* target() const { return target_; }

  Status Commit(std::span<const WriteBatch* const> batches) override {
    return target_->Commit(batches);
  }
  Status CommitOwned(WriteBatch&& batch) override { return target_->CommitOwned(std::move(batch)); }
  ExecutionLeases* leases() override { return target_->leases(); }
  OfferBoard* offers() override { return target_->offers(); }
  ControlRelay* relay() override { return target_->relay(); }
  SharedFeed* feed() override { return target_->feed(); }
  SharedCache* shared_cache() override { return target_->shared_cache(); }
  SharedPools* shared_pools() override { return target_->shared_pools(); }
  Result<ExecutionRecord> GetExecution(const std::string& id) override {
    return target_->GetExecution(id);
  }
  Result<std::vector<ExecutionRecord>> ListExecutions(const ExecutionFilter& f) override {
    return target_->ListExecutions(f);
  }
  Result<std::vector<ExecutionCount>> CountExecutions(const ExecutionFilter& f) override {
    return target_->CountExecutions(f);
  }
  Result<std::vector<ExecutionRecord>> ListUnfinishedExecutions() override {
    return target_->ListUnfinishedExecutions();
  }
  Result<std::vector<StepRecord>> GetSteps(const std::string& id) override {
    return target_->GetSteps(id);
  }
  Result<std::vector<AttemptRecord>> GetAttempts(const std::string& id) override {
    return target_->GetAttempts(id);
  }
  Result<std::vector<AttemptRecord>> GetFailedAttempts(const std::string& id) override {
    return target_->GetFailedAttempts(id);
  }
  Result<std::vector<EventRecord>> GetEvents(const std::string& id, int64_t after_seq,
                                             size_t limit) override {
    return target_->GetEvents(id, after_seq, limit);
  }
  Result<int64_t> LastEventSeq(const std::string& id) override { return target_->LastEventSeq(id); }
  Result<std::vector<EventRecord>> ListEvents(const EventQuery& q) override {
    return target_->ListEvents(q);
  }
  Result<int64_t> LastEventPosition() override { return target_->LastEventPosition(); }
  Result<std::vector<DeadLetterRecord>> ListDeadLetters(const DeadLetterFilter& f) override {
    return target_->ListDeadLetters(f);
  }
  using Store::ListDeadLetters;
  Result<DeadLetterRecord> GetDeadLetter(int64_t id) override { return target_->GetDeadLetter(id); }
  Result<std::vector<DeadLetterGroup>> CountDeadLetters(const DeadLetterFilter& f) override {
    return target_->CountDeadLetters(f);
  }
  Result<WorkflowRecord> GetWorkflow(const std::string& ns, const std::string& name,
                                     int version) override {
    return target_->GetWorkflow(ns, name, version);
  }
  Result<std::vector<WorkflowRecord>> ListWorkflows(const std::string& ns,
                                                    const std::string& name) override {
    return target_->ListWorkflows(ns, name);
  }
  Status DeleteWorkflow(const std::string& ns, const std::string& name) override {
    return target_->DeleteWorkflow(ns, name);
  }
  Result<std::vector<TokenRecord>> ListTokens(const std::string& ns) override {
    return target_->ListTokens(ns);
  }
  Result<TokenRecord> FindToken(const std::string& hash) override {
    return target_->FindToken(hash);
  }
  Result<std::vector<ScheduleRecord>> ListSchedules(const std::string& ns) override {
    return target_->ListSchedules(ns);
  }
  Status DeleteSchedule(const std::string& ns, const std::string& id) override {
    return target_->DeleteSchedule(ns, id);
  }
  Result<std::vector<HookRecord>> ListHooks(const std::string& ns) override {
    return target_->ListHooks(ns);
  }
  Result<HookRecord> GetHook(const std::string& name) override { return target_->GetHook(name); }
  Status DeleteHook(const std::string& ns, const std::string& name) override {
    return target_->DeleteHook(ns, name);
  }
  Result<std::vector<TriggerRecord>> ListTriggers(const std::string& ns) override {
    return target_->ListTriggers(ns);
  }
  Status DeleteTrigger(const std::string& ns, const std::string& id) override {
    return target_->DeleteTrigger(ns, id);
  }
  Result<std::vector<DeliveryRecord>> ListDeliveries(const DeliveryFilter& f) override {
    return target_->ListDeliveries(f);
  }
  Result<DeliveryRecord> GetDelivery(const std::string& id) override {
    return target_->GetDelivery(id);
  }
  Result<std::vector<WorkerRecord>> ListWorkers(const std::string& ns) override {
    return target_->ListWorkers(ns);
  }
  Result<std::vector<AssignmentRecord>> ListAssignments(const AssignmentFilter& f) override {
    return target_->ListAssignments(f);
  }
  Result<AssignmentRecord> GetAssignment(const std::string& id) override {
    return target_->GetAssignment(id);
  }
  Result<std::vector<ReassignmentRecord>> ListReassignments(const ReassignmentFilter& f) override {
    return target_->ListReassignments(f);
  }
  Result<std::vector<SignalRecord>> ListSignals(const std::string& execution_id) override {
    return target_->ListSignals(execution_id);
  }
  Result<std::vector<BreakerRecord>> ListBreakers(const std::string& ns) override {
    return target_->ListBreakers(ns);
  }
  Result<std::vector<PoolRecord>> ListPools(const std::string& ns) override {
    return target_->ListPools(ns);
  }
  Status DeletePool(const std::string& ns, const std::string& name) override {
    return target_->DeletePool(ns, name);
  }
  Result<std::vector<CacheEntryRecord>> ListCacheEntries(const std::string& ns) override {
    return target_->ListCacheEntries(ns);
  }

 private:
  Store* target_;
};

}  // namespace baton
