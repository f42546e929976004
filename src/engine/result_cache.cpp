#include "engine/result_cache.h"

#include <algorithm>
#include <limits>

namespace baton::engine {

ResultCache::Rank ResultCache::RankOf(const CacheEntryRecord& e) const {
  const int64_t used = std::max(e.created_at, e.last_hit_at);
  switch (options_.eviction) {
    case CacheEviction::kLfu:
      return {e.hits, used, {e.ns, e.key}};
    case CacheEviction::kTtl:
      return {e.expires_at ? e.expires_at : std::numeric_limits<int64_t>::max(),
              e.created_at,
              {e.ns, e.key}};
    case CacheEviction::kLru:
      break;
  }
  return {used, 0, {e.ns, e.key}};
}

void ResultCache::Index(const CacheEntryRecord& e) {
  eviction_.insert(RankOf(e));
  if (e.expires_at) expiry_.insert({e.expires_at, {e.ns, e.key}});
  bytes_ += e.bytes;
}

void ResultCache::Unindex(const CacheEntryRecord& e) {
  eviction_.erase(RankOf(e));
  if (e.expires_at) expiry_.erase({e.expires_at, {e.ns, e.key}});
  bytes_ -= e.bytes;
}

void ResultCache::Remove(std::map<Id, CacheEntryRecord>::iterator it,
                         std::vector<CacheKey>* removed) {
  Unindex(it->second);
  if (removed) removed->push_back({it->first.first, it->first.second});
  entries_.erase(it);
}

void ResultCache::Shrink(TimeMs now, std::vector<CacheKey>* removed, const Id* keep) {
  while (!expiry_.empty() && expiry_.begin()->first <= now) {
    Remove(entries_.find(expiry_.begin()->second), removed);
  }
  while (entries_.size() > options_.max_entries || bytes_ > options_.max_bytes) {
    auto victim = eviction_.begin();
    // What was just inserted is not its own victim (else LFU would never keep a new
    // entry once the cache is full of used ones).
    if (victim != eviction_.end() && keep && std::get<2>(*victim) == *keep) ++victim;
    if (victim == eviction_.end()) break;
    Remove(entries_.find(std::get<2>(*victim)), removed);
  }
}

void ResultCache::Load(std::vector<CacheEntryRecord> entries, TimeMs now,
                       std::vector<CacheKey>* removed) {
  entries_.clear();
  eviction_.clear();
  expiry_.clear();
  bytes_ = 0;
  for (CacheEntryRecord& e : entries) {
    Id id{e.ns, e.key};
    Index(e);
    entries_.emplace(std::move(id), std::move(e));
  }
  Shrink(now, removed, nullptr);
}

const CacheEntryRecord* ResultCache::Find(const std::string& ns, const std::string& key, TimeMs now,
                                          std::vector<CacheKey>* removed) {
  auto it = entries_.find({ns, key});
  if (it == entries_.end()) return nullptr;
  if (it->second.expires_at && it->second.expires_at <= now) {
    Remove(it, removed);
    return nullptr;
  }
  return &it->second;
}

CacheTouch ResultCache::Hit(const std::string& ns, const std::string& key, TimeMs now) {
  auto it = entries_.find({ns, key});
  if (it == entries_.end()) return {ns, key, now, 0};
  Unindex(it->second);
  it->second.hits += 1;
  it->second.last_hit_at = now;
  Index(it->second);
  return {ns, key, now, it->second.hits};
}

bool ResultCache::Insert(CacheEntryRecord entry, TimeMs now, std::vector<CacheKey>* removed) {
  if (entry.bytes > options_.max_bytes || options_.max_entries == 0) return false;
  Id id{entry.ns, entry.key};
  if (auto it = entries_.find(id); it != entries_.end()) {
    Unindex(it->second);
    it->second = std::move(entry);
    Index(it->second);
  } else {
    Index(entry);
    entries_.emplace(id, std::move(entry));
  }
  Shrink(now, removed, &id);
  return true;
}

bool ResultCache::Erase(const std::string& ns, const std::string& key) {
  auto it = entries_.find({ns, key});
  if (it == entries_.end()) return false;
  Remove(it, nullptr);
  return true;
}

std::vector<const CacheEntryRecord*> ResultCache::List(const std::string& ns,
                                                       const std::string& workflow,
                                                       const std::string& step_id) const {
  std::vector<const CacheEntryRecord*> out;
  auto it = ns.empty() ? entries_.begin() : entries_.lower_bound({ns, ""});
  for (; it != entries_.end() && (ns.empty() || it->first.first == ns); ++it) {
    const CacheEntryRecord& e = it->second;
    if ((workflow.empty() || e.workflow == workflow) && (step_id.empty() || e.step_id == step_id)) {
      out.push_back(&e);
    }
  }
  return out;
}

}  // namespace baton::engine
