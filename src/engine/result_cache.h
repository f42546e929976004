// ResultCache: the engine's cached step results, bounded in count and bytes, evicted by
// policy. Every operation is O(log n): entries sit in an ordered map and in one ordered
// index per concern (eviction rank, expiry), so an insert never scans the cache.
//
// Not thread-safe: the engine uses it on its loop. It holds what the store holds (the
// engine writes every change it reports into its turn's batch).
#pragma once

#include <baton/engine.h>
#include <baton/store.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace baton::engine {

class ResultCache {
 public:
  explicit ResultCache(CacheOptions options = {}) : options_(options) {}

  // Replaces the contents with stored entries; those beyond the limits (lower limits than
  // when they were written) are dropped, their keys appended to `removed`.
  void Load(std::vector<CacheEntryRecord> entries, TimeMs now, std::vector<CacheKey>* removed);
  // The live entry, or nullptr. An expired entry is removed (its key appended to
  // `removed`) and not returned.
  const CacheEntryRecord* Find(const std::string& ns, const std::string& key, TimeMs now,
                               std::vector<CacheKey>* removed);
  // Counts a hit on an entry Find just returned; the change to store.
  CacheTouch Hit(const std::string& ns, const std::string& key, TimeMs now);
  // Adds or replaces the entry, then removes expired entries and evicts by policy until
  // within limits (their keys appended to `removed`). False, and nothing changes, when
  // the entry alone is larger than max_bytes.
  bool Insert(CacheEntryRecord entry, TimeMs now, std::vector<CacheKey>* removed);
  bool Erase(const std::string& ns, const std::string& key);
  // Entries of `ns` (empty = all), optionally of one workflow and step, by ns, then key.
  std::vector<const CacheEntryRecord*> List(const std::string& ns, const std::string& workflow,
                                            const std::string& step_id) const;

  size_t size() const { return entries_.size(); }
  int64_t bytes() const { return bytes_; }
  const CacheOptions& options() const { return options_; }

 private:
  using Id = std::pair<std::string, std::string>;  // ns, key
  using Rank = std::tuple<int64_t, int64_t, Id>;   // eviction order: lowest goes first

  Rank RankOf(const CacheEntryRecord& e) const;
  void Index(const CacheEntryRecord& e);
  void Unindex(const CacheEntryRecord& e);
  void Remove(std::map<Id, CacheEntryRecord>::iterator it, std::vector<CacheKey>* removed);
  // Removes expired entries, then evicts by policy until within limits, sparing `keep`.
  void Shrink(TimeMs now, std::vector<CacheKey>* removed, const Id* keep);

  CacheOptions options_;
  std::map<Id, CacheEntryRecord> entries_;
  std::set<Rank> eviction_;
  std::set<std::pair<TimeMs, Id>> expiry_;  // entries that expire, soonest first
  int64_t bytes_ = 0;
};

}  // namespace baton::engine
