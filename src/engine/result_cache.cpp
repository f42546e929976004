#include "engine/result_cache.h"

#include <algorithm>
#include <limits>

namespace baton::engine {

ResultCache::Rank ResultCache::RankOf(Node& n) const {
  const CacheEntryRecord& e = n.rec;
  const int64_t used = std::max(e.created_at, e.last_hit_at);
  switch (options_.eviction) {
    case CacheEviction::kLfu:
      return {e.hits, used, n.seq, &n};
    case CacheEviction::kTtl:
      return {e.expires_at ? e.expires_at : std::numeric_limits<int64_t>::max(), e.created_at,
              n.seq, &n};
    case CacheEviction::kLru:
      break;
  }
  return {used, 0, n.seq, &n};
}

void ResultCache::Index(Node& n) {
  eviction_.insert(RankOf(n));
  if (n.rec.expires_at) expiry_.insert({n.rec.expires_at, n.seq, &n});
  bytes_ += n.rec.bytes;
}

void ResultCache::Unindex(Node& n) {
  eviction_.erase(RankOf(n));
  if (n.rec.expires_at) expiry_.erase({n.rec.expires_at, n.seq, &n});
  bytes_ -= n.rec.bytes;
}

void ResultCache::Remove(Node* n, std::vector<CacheKey>* removed) {
  Unindex(*n);
  if (removed) removed->push_back({n->rec.ns, n->rec.key});
  entries_.erase(IdOf(n->rec.ns, n->rec.key));
}

void ResultCache::Shrink(TimeMs now, std::vector<CacheKey>* removed, const Node* keep) {
  while (!expiry_.empty() && std::get<0>(*expiry_.begin()) <= now) {
    Remove(std::get<2>(*expiry_.begin()), removed);
  }
  while (entries_.size() > options_.max_entries || bytes_ > options_.max_bytes) {
    auto victim = eviction_.begin();
    // What was just inserted is not its own victim (else LFU would never keep a new
    // entry once the cache is full of used ones).
    if (victim != eviction_.end() && std::get<3>(*victim) == keep) ++victim;
    if (victim == eviction_.end()) break;
    Remove(std::get<3>(*victim), removed);
  }
}

void ResultCache::Load(std::vector<CacheEntryRecord> entries, TimeMs now,
                       std::vector<CacheKey>* removed) {
  entries_.clear();
  eviction_.clear();
  expiry_.clear();
  bytes_ = 0;
  entries_.reserve(entries.size());
  for (CacheEntryRecord& e : entries) {
    Node& n = entries_[IdOf(e.ns, e.key)];
    n.rec = std::move(e);
    n.seq = ++next_seq_;
    Index(n);
  }
  Shrink(now, removed, nullptr);
}

const CacheEntryRecord* ResultCache::Find(const std::string& ns, const std::string& key, TimeMs now,
                                          std::vector<CacheKey>* removed) {
  auto it = entries_.find(IdOf(ns, key));
  if (it == entries_.end()) return nullptr;
  if (it->second.rec.expires_at && it->second.rec.expires_at <= now) {
    Remove(&it->second, removed);
    return nullptr;
  }
  return &it->second.rec;
}

CacheTouch ResultCache::Hit(const std::string& ns, const std::string& key, TimeMs now) {
  auto it = entries_.find(IdOf(ns, key));
  if (it == entries_.end()) return {ns, key, now, 0};
  Node& n = it->second;
  // Only the eviction rank moves: expiry and size stay.
  eviction_.erase(RankOf(n));
  n.rec.hits += 1;
  n.rec.last_hit_at = now;
  eviction_.insert(RankOf(n));
  return {ns, key, now, n.rec.hits};
}

bool ResultCache::Insert(CacheEntryRecord entry, TimeMs now, std::vector<CacheKey>* removed) {
  if (entry.bytes > options_.max_bytes || options_.max_entries == 0) return false;
  auto [it, fresh] = entries_.try_emplace(IdOf(entry.ns, entry.key));
  Node& n = it->second;
  if (!fresh) Unindex(n);
  n.rec = std::move(entry);
  n.seq = ++next_seq_;
  Index(n);
  Shrink(now, removed, &n);
  return true;
}

const CacheEntryRecord* ResultCache::Peek(const std::string& ns, const std::string& key) const {
  auto it = entries_.find(IdOf(ns, key));
  return it == entries_.end() ? nullptr : &it->second.rec;
}

bool ResultCache::Erase(const std::string& ns, const std::string& key) {
  auto it = entries_.find(IdOf(ns, key));
  if (it == entries_.end()) return false;
  Remove(&it->second, nullptr);
  return true;
}

std::vector<const CacheEntryRecord*> ResultCache::List(const std::string& ns,
                                                       const std::string& workflow,
                                                       const std::string& step_id) const {
  std::vector<const CacheEntryRecord*> out;
  for (const auto& [id, n] : entries_) {
    const CacheEntryRecord& e = n.rec;
    if ((ns.empty() || e.ns == ns) && (workflow.empty() || e.workflow == workflow) &&
        (step_id.empty() || e.step_id == step_id)) {
      out.push_back(&e);
    }
  }
  std::sort(out.begin(), out.end(), [](const CacheEntryRecord* a, const CacheEntryRecord* b) {
    return a->ns != b->ns ? a->ns < b->ns : a->key < b->key;
  });
  return out;
}

}  // namespace baton::engine
