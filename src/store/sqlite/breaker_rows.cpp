// Rows of the breakers and pools tables: what guards work shared by a namespace --
// circuit breakers (one per key) and pools of slots (one per name).
#include "store/sqlite/rows.h"

#include <string>

namespace baton::sqlite {

const char* const kUpsertBreaker =
    "INSERT INTO breakers (ns, key, state, failures, successes, opened_at, probe_at, trips, "
    "last_error, failure_threshold, recovery_timeout_ms, success_threshold, updated_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
    "ON CONFLICT (ns, key) DO UPDATE SET state = excluded.state, "
    "failures = excluded.failures, successes = excluded.successes, "
    "opened_at = excluded.opened_at, probe_at = excluded.probe_at, trips = excluded.trips, "
    "last_error = excluded.last_error, failure_threshold = excluded.failure_threshold, "
    "recovery_timeout_ms = excluded.recovery_timeout_ms, "
    "success_threshold = excluded.success_threshold, updated_at = excluded.updated_at";
const char* const kSelectBreakers =
    "SELECT ns, key, state, failures, successes, opened_at, probe_at, trips, last_error, "
    "failure_threshold, recovery_timeout_ms, success_threshold, updated_at FROM breakers";

Status Write(Stmt& q, const BreakerRecord& r) {
  q.Bind(1, r.ns);
  q.Bind(2, r.key);
  q.Bind(3, r.state);
  q.Bind(4, r.failures);
  q.Bind(5, r.successes);
  q.Bind(6, r.opened_at);
  q.Bind(7, r.probe_at);
  q.Bind(8, r.trips);
  q.BindJson(9, r.last_error);
  q.Bind(10, r.failure_threshold);
  q.Bind(11, r.recovery_timeout_ms);
  q.Bind(12, r.success_threshold);
  q.Bind(13, r.updated_at);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "writing circuit breaker '" + r.key + "' of namespace " + r.ns);
}

bool Read(const Stmt& q, BreakerRecord* r) {
  r->ns = q.Text(0);
  r->key = q.Text(1);
  r->state = q.Text(2);
  r->failures = static_cast<int>(q.Int(3));
  r->successes = static_cast<int>(q.Int(4));
  r->opened_at = q.Int(5);
  r->probe_at = q.Int(6);
  r->trips = q.Int(7);
  r->failure_threshold = static_cast<int>(q.Int(9));
  r->recovery_timeout_ms = q.Int(10);
  r->success_threshold = static_cast<int>(q.Int(11));
  r->updated_at = q.Int(12);
  if (r->state != kBreakerClosed && r->state != kBreakerOpen && r->state != kBreakerHalfOpen) {
    return false;
  }
  return q.JsonAt(8, &r->last_error);
}

const char* const kUpsertPool =
    "INSERT INTO pools (ns, name, slots, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5) "
    "ON CONFLICT (ns, name) DO UPDATE SET slots = excluded.slots, "
    "updated_at = excluded.updated_at";
const char* const kSelectPools = "SELECT ns, name, slots, created_at, updated_at FROM pools";

Status Write(Stmt& q, const PoolRecord& r) {
  q.Bind(1, r.ns);
  q.Bind(2, r.name);
  q.Bind(3, r.slots);
  q.Bind(4, r.created_at);
  q.Bind(5, r.updated_at);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "writing pool '" + r.name + "' of namespace " + r.ns);
}

bool Read(const Stmt& q, PoolRecord* r) {
  r->ns = q.Text(0);
  r->name = q.Text(1);
  r->slots = static_cast<int>(q.Int(2));
  r->created_at = q.Int(3);
  r->updated_at = q.Int(4);
  return true;
}

}  // namespace baton::sqlite
