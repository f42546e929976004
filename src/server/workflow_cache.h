// Workflow definitions of the catalog, shared by every submit that starts them.
//
// A stored definition is immutable once written (a change is a new version), so the
// parse of (namespace, name, version) is kept and reused; the record's created_at is
// part of the key, so a workflow deleted and created again is parsed anew.
//
// With RememberVersions(true), Load() also remembers which stored version a name (and
// "the latest") stands for, so that a submit reads neither the database nor the
// definition's JSON: for a server that is the catalog's only writer (SQLite), whose every
// change of a workflow calls Forget(). Only the identity is remembered (version and
// created_at), never a second copy of a definition. Several instances on one PostgreSQL
// database change the catalog behind each other's backs, so they read it each time.
//
// Bounded: past `capacity` entries of either kind that kind starts over.
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
  // The definition of workflow `name` at `version` (0: the latest): Get() of its stored
  // record, read from `store` unless remembered. Errors are the store's (kNotFound ...)
  // or the parse's, never remembered.
  Result<std::shared_ptr<const WorkflowDef>> Load(CatalogStore& store, const std::string& ns,
                                                  const std::string& name, int version);
  void RememberVersions(bool on);
  // Drops what is kept of the workflow: it was deleted, or a version was added. Call it
  // after the change is in the store: a Load() read that began before is then not kept.
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
  bool remember_versions_ = false;
  struct Identity {
    int version = 0;
    TimeMs created_at = 0;
  };
  std::map<Key, Identity> versions_;  // (ns, name, version asked; 0: the latest)
  uint64_t generation_ = 0;           // counts Forget() calls: a read older than one is not kept
};

}  // namespace baton::server
