// ResultCache: the engine's cached step results, bounded in count and bytes, evicted by
// policy. A lookup is one hash probe; an insert, a hit or an eviction is O(log n) in two
// ordered indexes of integers (eviction rank, expiry), so nothing scans the cache.
//
// Not thread-safe: the engine uses it on its loop. It holds what the store holds (the
// engine writes every change it reports into its turn's batch).
#pragma once

#include <baton/engine.h>
#include <baton/store.h>

#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
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
  // The entry as held, expired or not, without removing anything; nullptr when absent.
  const CacheEntryRecord* Peek(const std::string& ns, const std::string& key) const;
  // Counts a hit on an entry Find just returned; the change to store.
  CacheTouch Hit(const std::string& ns, const std::string& key, TimeMs now);
  // Adds or replaces the entry, then removes expired entries and evicts by policy until
  // within limits (their keys appended to `removed`). False, and nothing changes, when
  // the entry alone is larger than max_bytes.
  bool Insert(CacheEntryRecord entry, TimeMs now, std::vector<CacheKey>* removed);
  bool Erase(const std::string& ns, const std::string& key);
  // Entries of `ns` (empty = all), optionally of one workflow and step, by ns, then key
  // (sorted per call: for listings, not for the hot path).
  std::vector<const CacheEntryRecord*> List(const std::string& ns, const std::string& workflow,
                                            const std::string& step_id) const;

  size_t size() const { return entries_.size(); }
  int64_t bytes() const { return bytes_; }
  const CacheOptions& options() const { return options_; }

 private:
  struct Node {
    CacheEntryRecord rec;
    uint64_t seq = 0;  // unique: ties in the indexes break on it, never on the pointer
  };
  // Lowest goes first; the node is found again from the index without a lookup.
  using Rank = std::tuple<int64_t, int64_t, uint64_t, Node*>;
  using Expiry = std::tuple<TimeMs, uint64_t, Node*>;
  static std::string IdOf(const std::string& ns, const std::string& key) { return ns + '\n' + key; }

  Rank RankOf(Node& n) const;
  void Index(Node& n);
  void Unindex(Node& n);
  void Remove(Node* n, std::vector<CacheKey>* removed);
  // Removes expired entries, then evicts by policy until within limits, sparing `keep`.
  void Shrink(TimeMs now, std::vector<CacheKey>* removed, const Node* keep);

  CacheOptions options_;
  std::unordered_map<std::string, Node> entries_;  // by IdOf(ns, key); nodes never move
  std::set<Rank> eviction_;
  std::set<Expiry> expiry_;  // entries that expire, soonest first
  int64_t bytes_ = 0;
  uint64_t next_seq_ = 0;
};

}  // namespace baton::engine
