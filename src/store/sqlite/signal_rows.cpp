// Rows of the signals table: signals sent to executions and the step that took each.
#include "store/sqlite/rows.h"

#include <string>

namespace baton::sqlite {

const char* const kUpsertSignal =
    "INSERT INTO signals (execution_id, seq, ns, name, payload, sent_at, consumed_by, "
    "consumed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
    "ON CONFLICT (execution_id, seq) DO UPDATE SET ns = excluded.ns, name = excluded.name, "
    "payload = excluded.payload, sent_at = excluded.sent_at, "
    "consumed_by = excluded.consumed_by, consumed_at = excluded.consumed_at";
const char* const kSelectSignals =
    "SELECT execution_id, seq, ns, name, payload, sent_at, consumed_by, consumed_at "
    "FROM signals";

Status Write(Stmt& q, const SignalRecord& r) {
  q.Bind(1, r.execution_id);
  q.Bind(2, r.seq);
  q.Bind(3, r.ns);
  q.Bind(4, r.name);
  q.BindJson(5, r.payload);
  q.Bind(6, r.sent_at);
  q.Bind(7, r.consumed_by);
  q.Bind(8, r.consumed_at);
  Status s = q.Run();
  return s.ok() ? s
                : Context(s, "writing signal " + std::to_string(r.seq) + " of execution " +
                                 r.execution_id);
}

bool Read(const Stmt& q, SignalRecord* r) {
  r->execution_id = q.Text(0);
  r->seq = q.Int(1);
  r->ns = q.Text(2);
  r->name = q.Text(3);
  r->sent_at = q.Int(5);
  r->consumed_by = q.Text(6);
  r->consumed_at = q.Int(7);
  return q.JsonAt(4, &r->payload);
}

}  // namespace baton::sqlite
