// Rows of the trigger tables: webhooks, event triggers and the delivery outbox.
#include "store/sqlite/rows.h"

#include <string>

namespace baton::sqlite {

const char* const kUpsertHook =
    "INSERT INTO hooks (name, ns, workflow, version, secret, created_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
    "ON CONFLICT (name) DO UPDATE SET ns = excluded.ns, workflow = excluded.workflow, "
    "version = excluded.version, secret = excluded.secret, created_at = excluded.created_at";
const char* const kSelectHooks =
    "SELECT name, ns, workflow, version, secret, created_at FROM hooks";

const char* const kUpsertTrigger =
    "INSERT INTO triggers (id, ns, name, source, statuses, workflow, version, input, "
    "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
    "ON CONFLICT (id) DO UPDATE SET ns = excluded.ns, name = excluded.name, "
    "source = excluded.source, statuses = excluded.statuses, workflow = excluded.workflow, "
    "version = excluded.version, input = excluded.input, created_at = excluded.created_at";
const char* const kSelectTriggers =
    "SELECT id, ns, name, source, statuses, workflow, version, input, created_at FROM triggers";

const char* const kUpsertDelivery =
    "INSERT INTO deliveries (id, ns, execution_id, event, kind, target, payload, status, "
    "attempts, next_attempt_at, last_error, result, created_at, updated_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
    "ON CONFLICT (id) DO UPDATE SET ns = excluded.ns, execution_id = excluded.execution_id, "
    "event = excluded.event, kind = excluded.kind, target = excluded.target, "
    "payload = excluded.payload, status = excluded.status, attempts = excluded.attempts, "
    "next_attempt_at = excluded.next_attempt_at, last_error = excluded.last_error, "
    "result = excluded.result, created_at = excluded.created_at, "
    "updated_at = excluded.updated_at";
const char* const kSelectDeliveries =
    "SELECT id, ns, execution_id, event, kind, target, payload, status, attempts, "
    "next_attempt_at, last_error, result, created_at, updated_at FROM deliveries";

Status Write(Stmt& q, const HookRecord& h) {
  q.Bind(1, h.name);
  q.Bind(2, h.ns);
  q.Bind(3, h.workflow);
  q.Bind(4, h.version);
  q.Bind(5, h.secret);
  q.Bind(6, h.created_at);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "writing hook " + h.name);
}

bool Read(const Stmt& q, HookRecord* h) {
  h->name = q.Text(0);
  h->ns = q.Text(1);
  h->workflow = q.Text(2);
  h->version = static_cast<int>(q.Int(3));
  h->secret = q.Text(4);
  h->created_at = q.Int(5);
  return true;
}

Status Write(Stmt& q, const TriggerRecord& t) {
  q.Bind(1, t.id);
  q.Bind(2, t.ns);
  q.Bind(3, t.name);
  q.Bind(4, t.source);
  const std::string statuses = StringsJson(t.on);  // bound without a copy: keep it alive
  q.Bind(5, statuses);
  q.Bind(6, t.workflow);
  q.Bind(7, t.version);
  q.BindJson(8, t.input);
  q.Bind(9, t.created_at);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "writing trigger " + t.id);
}

bool Read(const Stmt& q, TriggerRecord* t) {
  t->id = q.Text(0);
  t->ns = q.Text(1);
  t->name = q.Text(2);
  t->source = q.Text(3);
  t->workflow = q.Text(5);
  t->version = static_cast<int>(q.Int(6));
  t->created_at = q.Int(8);
  return ReadStrings(q, 4, &t->on) && q.JsonAt(7, &t->input);
}

Status Write(Stmt& q, const DeliveryRecord& d) {
  q.Bind(1, d.id);
  q.Bind(2, d.ns);
  q.Bind(3, d.execution_id);
  q.Bind(4, d.event);
  q.Bind(5, d.kind);
  q.Bind(6, d.target);
  q.BindJson(7, d.payload);
  q.Bind(8, ToString(d.status));
  q.Bind(9, d.attempts);
  q.Bind(10, d.next_attempt_at);
  q.BindJson(11, d.last_error);
  q.Bind(12, d.result);
  q.Bind(13, d.created_at);
  q.Bind(14, d.updated_at);
  Status s = q.Run();
  return s.ok() ? s : Context(s, "writing delivery " + d.id);
}

bool Read(const Stmt& q, DeliveryRecord* d) {
  d->id = q.Text(0);
  d->ns = q.Text(1);
  d->execution_id = q.Text(2);
  d->event = q.Text(3);
  d->kind = q.Text(4);
  d->target = q.Text(5);
  auto status = ParseDeliveryStatus(q.Text(7));
  if (!status) return false;
  d->status = *status;
  d->attempts = static_cast<int>(q.Int(8));
  d->next_attempt_at = q.Int(9);
  d->result = q.Text(11);
  d->created_at = q.Int(12);
  d->updated_at = q.Int(13);
  return q.JsonAt(6, &d->payload) && q.JsonAt(10, &d->last_error);
}

}  // namespace baton::sqlite
