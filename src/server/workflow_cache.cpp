#include "server/workflow_cache.h"

namespace baton::server {

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

void WorkflowCache::Forget(const std::string& ns, const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = entries_.lower_bound(Key{ns, name, 0});
  while (it != entries_.end() && std::get<0>(it->first) == ns && std::get<1>(it->first) == name) {
    it = entries_.erase(it);
  }
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
