#include "server/workflow_cache.h"

namespace baton::server {

namespace {

// Every version's entry of workflow `name` (keys are ns, name, version: adjacent).
template <class Map>
void EraseVersions(Map& kept, const std::string& ns, const std::string& name) {
  auto it = kept.lower_bound({ns, name, 0});
  while (it != kept.end() && std::get<0>(it->first) == ns && std::get<1>(it->first) == name) {
    it = kept.erase(it);
  }
}

}  // namespace

Result<std::shared_ptr<const WorkflowDef>> WorkflowCache::Get(const WorkflowRecord& record) {
  Key key{record.ns, record.name, record.version};
  {
    std::lock_guard lock(mu_);
    if (auto it = entries_.find(key);
        it != entries_.end() && it->second.created_at == record.created_at) {
      return it->second.def;
    }
  }
  // Parsed outside the lock: two first submits may both parse; the result is the same.
  auto def = WorkflowFromSnapshot(record.definition, "workflow " + record.name);
  if (!def.ok()) return def.status();
  def->version = record.version;
  auto shared = std::make_shared<const WorkflowDef>(std::move(def.value()));
  std::lock_guard lock(mu_);
  ++parses_;
  if (entries_.size() >= capacity_) entries_.clear();
  entries_[std::move(key)] = Entry{record.created_at, shared};
  return shared;
}

Result<std::shared_ptr<const WorkflowDef>> WorkflowCache::Load(CatalogStore& store,
                                                               const std::string& ns,
                                                               const std::string& name,
                                                               int version) {
  Key key{ns, name, version};
  uint64_t generation = 0;
  {
    std::lock_guard lock(mu_);
    if (remember_versions_) {
      if (auto known = versions_.find(key); known != versions_.end()) {
        auto parsed = entries_.find(Key{ns, name, known->second.version});
        if (parsed != entries_.end() && parsed->second.created_at == known->second.created_at) {
          return parsed->second.def;
        }
      }
    }
    generation = generation_;
  }
  // Read outside the lock; remembered only if no Forget() came meanwhile (it may have
  // been for a change this read did not see).
  auto record = store.GetWorkflow(ns, name, version);
  if (!record.ok()) return record.status();
  auto def = Get(*record);
  if (!def.ok()) return def;
  std::lock_guard lock(mu_);
  if (remember_versions_ && generation == generation_) {
    if (versions_.size() >= capacity_) versions_.clear();
    versions_[std::move(key)] = Identity{record->version, record->created_at};
  }
  return def;
}

void WorkflowCache::RememberVersions(bool on) {
  std::lock_guard lock(mu_);
  remember_versions_ = on;
  if (!on) versions_.clear();
}

void WorkflowCache::Forget(const std::string& ns, const std::string& name) {
  std::lock_guard lock(mu_);
  ++generation_;
  EraseVersions(entries_, ns, name);
  EraseVersions(versions_, ns, name);
}

size_t WorkflowCache::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

uint64_t WorkflowCache::parses() const {
  std::lock_guard lock(mu_);
  return parses_;
}

}  // namespace baton::server
