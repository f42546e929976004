// Parsed workflow definitions of the catalog, shared by every submit that starts them.
//
// A stored definition is immutable once written (a change is a new version), so the
// parse of (namespace, name, version) is kept and reused; the record's created_at is
// part of the key, so a workflow deleted and created again is parsed anew. Bounded:
// past `capacity` entries the cache starts over.
//
// Threading: thread-safe.
#pragma once

#include <baton/status.h>
#include <baton/store.h>
#include <baton/workflow.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

namespace baton::server {

class WorkflowCache {
 public:
  explicit WorkflowCache(size_t capacity = 512) : capacity_(capacity) {}

  // The definition of `record`, parsed on the first call for it. A definition that no
  // longer parses (stored by an older build) is an error each time, never cached.
  Result<std::shared_ptr<const WorkflowDef>> Get(const WorkflowRecord& record);
  // Drops every version of the workflow (it was deleted).
  void Forget(const std::string& ns, const std::string& name);

  size_t size() const;
  uint64_t parses() const;  // definitions parsed so far (for tests)

 private:
  using Key = std::tuple<std::string, std::string, int>;  // ns, name, version
  struct Entry {
    TimeMs created_at = 0;
    std::shared_ptr<const WorkflowDef> def;
  };
  const size_t capacity_;
  mutable std::mutex mu_;
  std::map<Key, Entry> entries_;
  uint64_t parses_ = 0;
};

}  // namespace baton::server
