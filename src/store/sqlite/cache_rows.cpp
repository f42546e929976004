// The cache_entries table's updates other than upserts: a hit recorded, an entry dropped.
#include "store/sqlite/rows.h"

#include <string>

namespace baton::sqlite {

const char* const kTouchCacheEntry =
    "UPDATE cache_entries SET last_hit_at = ?3, hits = ?4 WHERE ns = ?1 AND key = ?2";
const char* const kDeleteCacheEntry = "DELETE FROM cache_entries WHERE ns = ?1 AND key = ?2";
Status Write(Stmt& q, const CacheTouch& r) {
  q.Bind(1, r.ns);
  q.Bind(2, r.key);
  q.Bind(3, r.last_hit_at);
  q.Bind(4, r.hits);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "updating cache entry " + r.key + " of namespace " + r.ns);
}

Status Write(Stmt& q, const CacheKey& r) {
  q.Bind(1, r.ns);
  q.Bind(2, r.key);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "deleting cache entry " + r.key + " of namespace " + r.ns);
}

}  // namespace baton::sqlite
