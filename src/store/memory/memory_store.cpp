// MemoryStore: the Store for tests and --ephemeral runs. The in-memory scheduling
// benchmark commits 100k-step DAGs through it, so Commit() costs O(records in the
// batches) (store/memory/execution_tables.h says how). One mutex guards every table.
#include <baton/memory_store.h>
#include <baton/store.h>

#include "store/memory/catalog_tables.h"
#include "store/memory/dead_letter_table.h"
#include "store/memory/execution_tables.h"
#include "store/memory/worker_tables.h"

#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace baton {
namespace {

class MemoryStore final : public Store {
 public:
  explicit MemoryStore(const MemoryStoreOptions& options)
      : executions_(options.keep_events, options.keep_steps) {}

  Status Commit(std::span<const WriteBatch* const> batches) override {
    std::lock_guard lock(mu_);
    if (Status s = Check(batches); !s.ok()) return s;
    for (const WriteBatch* b : batches) Apply(*b);
    return Status::Ok();
  }

  Status CommitOwned(WriteBatch&& batch) override {
    std::lock_guard lock(mu_);
    const WriteBatch* one[] = {&batch};
    if (Status s = Check(one); !s.ok()) return s;
    Apply(batch);
    return Status::Ok();
  }

  Result<ExecutionRecord> GetExecution(const std::string& id) override {
    std::lock_guard lock(mu_);
    return executions_.GetExecution(id);
  }
  Result<std::vector<ExecutionRecord>> ListExecutions(const ExecutionFilter& f) override {
    std::lock_guard lock(mu_);
    return executions_.ListExecutions(f);
  }
  Result<std::vector<ExecutionCount>> CountExecutions(const ExecutionFilter& f) override {
    std::lock_guard lock(mu_);
    return executions_.CountExecutions(f);
  }
  Result<std::vector<ExecutionRecord>> ListUnfinishedExecutions() override {
    std::lock_guard lock(mu_);
    return executions_.ListUnfinishedExecutions();
  }
  Result<std::vector<StepRecord>> GetSteps(const std::string& execution_id) override {
    std::lock_guard lock(mu_);
    return executions_.GetSteps(execution_id);
  }
  Result<std::vector<AttemptRecord>> GetAttempts(const std::string& execution_id) override {
    std::lock_guard lock(mu_);
    return executions_.GetAttempts(execution_id);
  }
  Result<std::vector<EventRecord>> GetEvents(const std::string& execution_id, int64_t after_seq,
                                             size_t limit) override {
    std::lock_guard lock(mu_);
    return executions_.GetEvents(execution_id, after_seq, limit);
  }
  Result<std::vector<EventRecord>> ListEvents(const EventQuery& q) override {
    std::lock_guard lock(mu_);
    return executions_.ListEvents(q);
  }
  Result<int64_t> LastEventPosition() override {
    std::lock_guard lock(mu_);
    return executions_.LastEventPosition();
  }
  Result<int64_t> LastEventSeq(const std::string& execution_id) override {
    std::lock_guard lock(mu_);
    return executions_.LastEventSeq(execution_id);
  }

  Result<std::vector<DeadLetterRecord>> ListDeadLetters(const DeadLetterFilter& f) override {
    std::lock_guard lock(mu_);
    return dead_letters_.List(f);
  }
  Result<DeadLetterRecord> GetDeadLetter(int64_t id) override {
    std::lock_guard lock(mu_);
    return dead_letters_.Get(id);
  }
  Result<std::vector<DeadLetterGroup>> CountDeadLetters(const DeadLetterFilter& f) override {
    std::lock_guard lock(mu_);
    return dead_letters_.Count(f);
  }

  Result<WorkflowRecord> GetWorkflow(const std::string& ns, const std::string& name,
                                     int version) override {
    std::lock_guard lock(mu_);
    return catalog_.GetWorkflow(ns, name, version);
  }
  Result<std::vector<WorkflowRecord>> ListWorkflows(const std::string& ns,
                                                    const std::string& name) override {
    std::lock_guard lock(mu_);
    return catalog_.ListWorkflows(ns, name);
  }
  Status DeleteWorkflow(const std::string& ns, const std::string& name) override {
    std::lock_guard lock(mu_);
    return catalog_.DeleteWorkflow(ns, name);
  }
  Result<std::vector<TokenRecord>> ListTokens(const std::string& ns) override {
    std::lock_guard lock(mu_);
    return catalog_.ListTokens(ns);
  }
  Result<TokenRecord> FindToken(const std::string& secret_hash) override {
    std::lock_guard lock(mu_);
    return catalog_.FindToken(secret_hash);
  }
  Result<std::vector<ScheduleRecord>> ListSchedules(const std::string& ns) override {
    std::lock_guard lock(mu_);
    return catalog_.ListSchedules(ns);
  }
  Status DeleteSchedule(const std::string& ns, const std::string& id) override {
    std::lock_guard lock(mu_);
    return catalog_.DeleteSchedule(ns, id);
  }
  Result<std::vector<HookRecord>> ListHooks(const std::string& ns) override {
    std::lock_guard lock(mu_);
    return catalog_.ListHooks(ns);
  }
  Result<HookRecord> GetHook(const std::string& name) override {
    std::lock_guard lock(mu_);
    return catalog_.GetHook(name);
  }
  Status DeleteHook(const std::string& ns, const std::string& name) override {
    std::lock_guard lock(mu_);
    return catalog_.DeleteHook(ns, name);
  }
  Result<std::vector<TriggerRecord>> ListTriggers(const std::string& ns) override {
    std::lock_guard lock(mu_);
    return catalog_.ListTriggers(ns);
  }
  Status DeleteTrigger(const std::string& ns, const std::string& id) override {
    std::lock_guard lock(mu_);
    return catalog_.DeleteTrigger(ns, id);
  }
  Result<std::vector<DeliveryRecord>> ListDeliveries(const DeliveryFilter& f) override {
    std::lock_guard lock(mu_);
    return catalog_.ListDeliveries(f);
  }
  Result<DeliveryRecord> GetDelivery(const std::string& id) override {
    std::lock_guard lock(mu_);
    return catalog_.GetDelivery(id);
  }
  Result<std::vector<WorkerRecord>> ListWorkers(const std::string& ns) override {
    std::lock_guard lock(mu_);
    return workers_.ListWorkers(ns);
  }
  Result<std::vector<AssignmentRecord>> ListAssignments(const AssignmentFilter& f) override {
    std::lock_guard lock(mu_);
    return workers_.ListAssignments(f);
  }
  Result<AssignmentRecord> GetAssignment(const std::string& id) override {
    std::lock_guard lock(mu_);
    return workers_.GetAssignment(id);
  }
  Result<std::vector<ReassignmentRecord>> ListReassignments(const ReassignmentFilter& f) override {
    std::lock_guard lock(mu_);
    return workers_.ListReassignments(f);
  }
  Result<std::vector<SignalRecord>> ListSignals(const std::string& execution_id) override {
    std::lock_guard lock(mu_);
    return executions_.ListSignals(execution_id);
  }
  Result<std::vector<CacheEntryRecord>> ListCacheEntries(const std::string& ns) override {
    std::lock_guard lock(mu_);
    return catalog_.ListCacheEntries(ns);
  }
  Result<std::vector<PoolRecord>> ListPools(const std::string& ns) override {
    std::lock_guard lock(mu_);
    return catalog_.ListPools(ns);
  }
  Status DeletePool(const std::string& ns, const std::string& name) override {
    std::lock_guard lock(mu_);
    return catalog_.DeletePool(ns, name);
  }
  Result<std::vector<BreakerRecord>> ListBreakers(const std::string& ns) override {
    std::lock_guard lock(mu_);
    return catalog_.ListBreakers(ns);
  }

 private:
  // Event seqs and reassignment ids are the only records that can be rejected, so
  // checking them first makes the commit all-or-nothing without an undo log.
  Status Check(std::span<const WriteBatch* const> batches) const {
    if (Status s = executions_.Check(batches); !s.ok()) return s;
    return workers_.Check(batches);
  }

  // Batch is WriteBatch (records are moved out) or const WriteBatch (copied).
  template <class Batch>
  void Apply(Batch& b) {
    catalog_.Apply(b);
    executions_.Apply(b);
    for (auto& d : b.dead_letters) {
      if constexpr (std::is_const_v<Batch>) {
        dead_letters_.Add(d);
      } else {
        dead_letters_.Add(std::move(d));
      }
    }
    workers_.Apply(b);
  }

  std::mutex mu_;
  memory::CatalogTables catalog_;       // workflows ... deliveries, caches, pools, breakers
  memory::ExecutionTables executions_;  // executions, steps, attempts, events, signals
  memory::WorkerTables workers_;        // workers, assignments, reassignments
  memory::DeadLetterTable dead_letters_;
};

}  // namespace

std::unique_ptr<Store> NewMemoryStore(MemoryStoreOptions options) {
  return std::make_unique<MemoryStore>(options);
}

}  // namespace baton
