// Rows of the cache_entries table: cached step results, one per namespace and key.
#include "store/sqlite/rows.h"

#include <string>

namespace baton::sqlite {

const char* const kUpsertCacheEntry =
    "INSERT INTO cache_entries (ns, key, workflow, step_id, execution_id, output, bytes, "
    "created_at, expires_at, last_hit_at, hits) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
    "ON CONFLICT (ns, key) DO UPDATE SET workflow = excluded.workflow, "
    "step_id = excluded.step_id, execution_id = excluded.execution_id, "
    "output = excluded.output, bytes = excluded.bytes, created_at = excluded.created_at, "
    "expires_at = excluded.expires_at, last_hit_at = excluded.last_hit_at, hits = excluded.hits";
const char* const kTouchCacheEntry =
    "UPDATE cache_entries SET last_hit_at = ?3, hits = ?4 WHERE ns = ?1 AND key = ?2";
const char* const kDeleteCacheEntry = "DELETE FROM cache_entries WHERE ns = ?1 AND key = ?2";
const char* const kSelectCacheEntries =
    "SELECT ns, key, workflow, step_id, execution_id, output, bytes, created_at, expires_at, "
    "last_hit_at, hits FROM cache_entries";

Status Write(Stmt& q, const CacheEntryRecord& r) {
  q.Bind(1, r.ns);
  q.Bind(2, r.key);
  q.Bind(3, r.workflow);
  q.Bind(4, r.step_id);
  q.Bind(5, r.execution_id);
  q.BindJson(6, r.output);
  q.Bind(7, r.bytes);
  q.Bind(8, r.created_at);
  q.Bind(9, r.expires_at);
  q.Bind(10, r.last_hit_at);
  q.Bind(11, r.hits);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "writing cache entry " + r.key + " of namespace " + r.ns);
}

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

bool Read(const Stmt& q, CacheEntryRecord* r) {
  r->ns = q.Text(0);
  r->key = q.Text(1);
  r->workflow = q.Text(2);
  r->step_id = q.Text(3);
  r->execution_id = q.Text(4);
  r->bytes = q.Int(6);
  r->created_at = q.Int(7);
  r->expires_at = q.Int(8);
  r->last_hit_at = q.Int(9);
  r->hits = q.Int(10);
  return q.JsonAt(5, &r->output);
}

}  // namespace baton::sqlite
