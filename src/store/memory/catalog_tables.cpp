#include "store/memory/catalog_tables.h"

#include <algorithm>
#include <type_traits>

namespace baton::memory {

void CatalogTables::Apply(const WriteBatch& b) {
  ApplyBatch(b);
}
void CatalogTables::Apply(WriteBatch& b) {
  ApplyBatch(b);
}

// Batch is WriteBatch (records are moved out) or const WriteBatch (copied).
template <class Batch>
void CatalogTables::ApplyBatch(Batch& b) {
  auto take = [](auto& r) -> decltype(auto) {
    if constexpr (std::is_const_v<Batch>) {
      return static_cast<const std::remove_cvref_t<decltype(r)>&>(r);
    } else {
      return std::move(r);
    }
  };
  for (auto& w : b.workflows) workflows_[WorkflowKey(w.ns, w.name)][w.version] = take(w);
  for (const TokenRecord& t : b.tokens) {
    auto [it, inserted] = tokens_.insert_or_assign(t.id, t);
    if (inserted) token_order_.push_back(t.id);
  }
  for (const ScheduleRecord& sc : b.schedules) {
    auto [it, inserted] = schedules_.insert_or_assign(sc.id, sc);
    if (inserted) schedule_order_.push_back(sc.id);
  }
  for (const HookRecord& h : b.hooks) hooks_.insert_or_assign(h.name, h);
  for (const TriggerRecord& t : b.triggers) {
    auto [it, inserted] = triggers_.insert_or_assign(t.id, t);
    if (inserted) trigger_order_.push_back(t.id);
  }
  for (const DeliveryRecord& d : b.deliveries) deliveries_.insert_or_assign(d.id, d);
  for (auto& br : b.breakers) breakers_[{br.ns, br.key}] = take(br);
  for (auto& p : b.pools) pools_[{p.ns, p.name}] = take(p);
  for (auto& c : b.cache_entries) cache_[{c.ns, c.key}] = take(c);
  for (const CacheTouch& t : b.cache_touches) {
    if (auto it = cache_.find({t.ns, t.key}); it != cache_.end()) {
      it->second.last_hit_at = t.last_hit_at;
      it->second.hits = t.hits;
    }
  }
  for (const CacheKey& k : b.cache_deletes) cache_.erase({k.ns, k.key});
}

Result<WorkflowRecord> CatalogTables::GetWorkflow(const std::string& ns, const std::string& name,
                                                  int version) const {
  auto it = workflows_.find(WorkflowKey(ns, name));
  if (it != workflows_.end() && !it->second.empty()) {
    const auto& versions = it->second;
    if (version == 0) return versions.rbegin()->second;
    if (auto v = versions.find(version); v != versions.end()) return v->second;
  }
  return Status(errc::kNotFound,
                "workflow " + name + (version == 0 ? "" : " version " + std::to_string(version)));
}

Result<std::vector<WorkflowRecord>> CatalogTables::ListWorkflows(const std::string& ns,
                                                                 const std::string& name) const {
  std::vector<WorkflowRecord> out;
  if (!name.empty()) {
    auto it = workflows_.find(WorkflowKey(ns, name));
    if (it != workflows_.end()) {
      for (auto v = it->second.rbegin(); v != it->second.rend(); ++v) out.push_back(v->second);
    }
    return out;
  }
  for (const auto& [key, versions] : workflows_) {
    if (!versions.empty() && versions.begin()->second.ns == ns) {
      out.push_back(versions.rbegin()->second);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const WorkflowRecord& a, const WorkflowRecord& b) { return a.name < b.name; });
  return out;
}

Status CatalogTables::DeleteWorkflow(const std::string& ns, const std::string& name) {
  if (workflows_.erase(WorkflowKey(ns, name)) == 0) {
    return Status(errc::kNotFound, "workflow " + name);
  }
  return Status::Ok();
}

Result<std::vector<TokenRecord>> CatalogTables::ListTokens(const std::string& ns) const {
  std::vector<TokenRecord> out;
  for (const std::string& id : token_order_) {
    const TokenRecord& t = tokens_.at(id);
    if (ns.empty() || t.ns == ns) out.push_back(t);
  }
  return out;
}

Result<std::vector<ScheduleRecord>> CatalogTables::ListSchedules(const std::string& ns) const {
  std::vector<ScheduleRecord> out;
  for (const std::string& id : schedule_order_) {
    auto it = schedules_.find(id);
    if (it != schedules_.end() && (ns.empty() || it->second.ns == ns)) out.push_back(it->second);
  }
  return out;
}

Status CatalogTables::DeleteSchedule(const std::string& ns, const std::string& id) {
  auto it = schedules_.find(id);
  if (it == schedules_.end() || it->second.ns != ns) {
    return Status(errc::kNotFound, "schedule " + id);
  }
  schedules_.erase(it);
  schedule_order_.erase(std::find(schedule_order_.begin(), schedule_order_.end(), id));
  return Status::Ok();
}

Result<std::vector<HookRecord>> CatalogTables::ListHooks(const std::string& ns) const {
  std::vector<HookRecord> out;
  for (const auto& [name, h] : hooks_) {
    if (ns.empty() || h.ns == ns) out.push_back(h);
  }
  return out;
}
Result<HookRecord> CatalogTables::GetHook(const std::string& name) const {
  auto it = hooks_.find(name);
  if (it == hooks_.end()) return Status(errc::kNotFound, "hook " + name);
  return it->second;
}
Status CatalogTables::DeleteHook(const std::string& ns, const std::string& name) {
  auto it = hooks_.find(name);
  if (it == hooks_.end() || it->second.ns != ns) return Status(errc::kNotFound, "hook " + name);
  hooks_.erase(it);
  return Status::Ok();
}

Result<std::vector<TriggerRecord>> CatalogTables::ListTriggers(const std::string& ns) const {
  std::vector<TriggerRecord> out;
  for (const std::string& id : trigger_order_) {
    const TriggerRecord& t = triggers_.at(id);
    if (ns.empty() || t.ns == ns) out.push_back(t);
  }
  return out;
}
Status CatalogTables::DeleteTrigger(const std::string& ns, const std::string& id) {
  auto it = triggers_.find(id);
  if (it == triggers_.end() || it->second.ns != ns) {
    return Status(errc::kNotFound, "trigger " + id);
  }
  triggers_.erase(it);
  trigger_order_.erase(std::find(trigger_order_.begin(), trigger_order_.end(), id));
  return Status::Ok();
}

Result<std::vector<DeliveryRecord>> CatalogTables::ListDeliveries(const DeliveryFilter& f) const {
  std::vector<const DeliveryRecord*> match;
  for (const auto& [id, d] : deliveries_) {
    if ((f.ns.empty() || d.ns == f.ns) &&
        (f.execution_id.empty() || d.execution_id == f.execution_id) &&
        (!f.status || d.status == *f.status)) {
      match.push_back(&d);
    }
  }
  std::sort(match.begin(), match.end(), [](const DeliveryRecord* a, const DeliveryRecord* b) {
    return a->created_at != b->created_at ? a->created_at < b->created_at : a->id < b->id;
  });
  if (f.limit != 0 && match.size() > f.limit) match.resize(f.limit);
  std::vector<DeliveryRecord> out;
  out.reserve(match.size());
  for (const DeliveryRecord* d : match) out.push_back(*d);
  return out;
}
Result<DeliveryRecord> CatalogTables::GetDelivery(const std::string& id) const {
  auto it = deliveries_.find(id);
  if (it == deliveries_.end()) return Status(errc::kNotFound, "delivery " + id);
  return it->second;
}

Result<TokenRecord> CatalogTables::FindToken(const std::string& secret_hash) const {
  for (const auto& [id, t] : tokens_) {
    if (t.secret_hash == secret_hash) return t;
  }
  return Status(errc::kNotFound, "token");
}

Result<std::vector<CacheEntryRecord>> CatalogTables::ListCacheEntries(const std::string& ns) const {
  std::vector<CacheEntryRecord> out;
  auto it = ns.empty() ? cache_.begin() : cache_.lower_bound({ns, ""});
  for (; it != cache_.end() && (ns.empty() || it->first.first == ns); ++it) {
    out.push_back(it->second);
  }
  return out;
}
Result<std::vector<PoolRecord>> CatalogTables::ListPools(const std::string& ns) const {
  std::vector<PoolRecord> out;
  auto it = ns.empty() ? pools_.begin() : pools_.lower_bound({ns, ""});
  for (; it != pools_.end() && (ns.empty() || it->first.first == ns); ++it) {
    out.push_back(it->second);
  }
  return out;
}
Status CatalogTables::DeletePool(const std::string& ns, const std::string& name) {
  if (pools_.erase({ns, name}) == 0) return Status(errc::kNotFound, "pool " + name);
  return Status::Ok();
}
Result<std::vector<BreakerRecord>> CatalogTables::ListBreakers(const std::string& ns) const {
  std::vector<BreakerRecord> out;
  auto it = ns.empty() ? breakers_.begin() : breakers_.lower_bound({ns, ""});
  for (; it != breakers_.end() && (ns.empty() || it->first.first == ns); ++it) {
    out.push_back(it->second);
  }
  return out;
}

}  // namespace baton::memory
