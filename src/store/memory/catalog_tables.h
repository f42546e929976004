// The MemoryStore's catalog: workflows, tokens, schedules, hooks, triggers, deliveries,
// and the per-namespace state of caches, pools and circuit breakers. Private to the
// memory store, which guards every call with its mutex.
#pragma once

#include <baton/status.h>
#include <baton/store.h>

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace baton::memory {

class CatalogTables {
 public:
  // The catalog records of a batch: copied from one the caller keeps, moved out of one
  // it handed over (workflow definitions are the large ones).
  void Apply(const WriteBatch& b);
  void Apply(WriteBatch& b);

  // As Store's methods of the same names.
  Result<WorkflowRecord> GetWorkflow(const std::string& ns, const std::string& name,
                                     int version) const;
  Result<std::vector<WorkflowRecord>> ListWorkflows(const std::string& ns,
                                                    const std::string& name) const;
  Status DeleteWorkflow(const std::string& ns, const std::string& name);
  Result<std::vector<TokenRecord>> ListTokens(const std::string& ns) const;
  Result<TokenRecord> FindToken(const std::string& secret_hash) const;
  Result<std::vector<ScheduleRecord>> ListSchedules(const std::string& ns) const;
  Status DeleteSchedule(const std::string& ns, const std::string& id);
  Result<std::vector<HookRecord>> ListHooks(const std::string& ns) const;
  Result<HookRecord> GetHook(const std::string& name) const;
  Status DeleteHook(const std::string& ns, const std::string& name);
  Result<std::vector<TriggerRecord>> ListTriggers(const std::string& ns) const;
  Status DeleteTrigger(const std::string& ns, const std::string& id);
  Result<std::vector<DeliveryRecord>> ListDeliveries(const DeliveryFilter& f) const;
  Result<DeliveryRecord> GetDelivery(const std::string& id) const;
  Result<std::vector<CacheEntryRecord>> ListCacheEntries(const std::string& ns) const;
  Result<std::vector<PoolRecord>> ListPools(const std::string& ns) const;
  Status DeletePool(const std::string& ns, const std::string& name);
  Result<std::vector<BreakerRecord>> ListBreakers(const std::string& ns) const;

 private:
  template <class Batch>
  void ApplyBatch(Batch& b);
  static std::string WorkflowKey(const std::string& ns, const std::string& name) {
    return ns + '\0' + name;
  }

  // Keyed by WorkflowKey(); versions in ascending order.
  std::unordered_map<std::string, std::map<int, WorkflowRecord>> workflows_;
  std::unordered_map<std::string, TokenRecord> tokens_;
  std::vector<std::string> token_order_;
  std::unordered_map<std::string, ScheduleRecord> schedules_;
  std::vector<std::string> schedule_order_;
  std::map<std::string, HookRecord> hooks_;  // by name: the listing order
  std::unordered_map<std::string, TriggerRecord> triggers_;
  std::vector<std::string> trigger_order_;
  std::unordered_map<std::string, DeliveryRecord> deliveries_;
  std::map<std::pair<std::string, std::string>, BreakerRecord> breakers_;  // by ns, key
  std::map<std::pair<std::string, std::string>, PoolRecord> pools_;        // by ns, name
  std::map<std::pair<std::string, std::string>, CacheEntryRecord> cache_;  // by ns, key
};

}  // namespace baton::memory
