// Rows of the dead_letters table: the dead-letter queue's entries, their filtered
// listing and their grouping by workflow, step and fingerprint.
#include "store/sqlite/rows.h"

#include <string>

namespace baton::sqlite {
namespace {

// The WHERE clause of a filter; parameters keep fixed numbers whatever the shape, so
// each shape can use its index.
std::string Where(const DeadLetterFilter& f) {
  std::string sql = " WHERE 1";
  if (!f.ns.empty()) sql += " AND ns = ?1";
  if (!f.execution_id.empty()) sql += " AND execution_id = ?2";
  if (!f.workflow.empty()) sql += " AND workflow = ?3";
  if (!f.step_id.empty()) sql += " AND step_id = ?4";
  if (!f.code.empty()) sql += " AND code = ?5";
  if (!f.fingerprint.empty()) sql += " AND fingerprint = ?6";
  if (!f.status.empty()) sql += " AND status = ?7";
  if (f.since != 0) sql += " AND last_failed_at >= ?8";
  return sql;
}

}  // namespace

const char* const kUpsertDeadLetter =
    "INSERT INTO dead_letters (id, execution_id, step_id, input, errors, created_at, ns, "
    "workflow, version, code, fingerprint, first_failed_at, last_failed_at, first_attempt, "
    "last_attempt, status, resolved_at, replay_attempt) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18) "
    "ON CONFLICT (id) DO UPDATE SET execution_id = excluded.execution_id, "
    "step_id = excluded.step_id, input = excluded.input, errors = excluded.errors, "
    "created_at = excluded.created_at, ns = excluded.ns, workflow = excluded.workflow, "
    "version = excluded.version, code = excluded.code, fingerprint = excluded.fingerprint, "
    "first_failed_at = excluded.first_failed_at, last_failed_at = excluded.last_failed_at, "
    "first_attempt = excluded.first_attempt, last_attempt = excluded.last_attempt, "
    "status = excluded.status, resolved_at = excluded.resolved_at, "
    "replay_attempt = excluded.replay_attempt";
const char* const kSelectDeadLetters =
    "SELECT id, execution_id, step_id, input, errors, created_at, ns, workflow, version, code, "
    "fingerprint, first_failed_at, last_failed_at, first_attempt, last_attempt, status, "
    "resolved_at, replay_attempt FROM dead_letters";

Status Write(Stmt& q, const DeadLetterRecord& d) {
  if (d.id == 0) {
    q.BindNull(1);  // numbered by AUTOINCREMENT: never a reused id
  } else {
    q.Bind(1, d.id);
  }
  q.Bind(2, d.execution_id);
  q.Bind(3, d.step_id);
  q.BindJson(4, d.input);
  q.BindJson(5, d.errors);
  q.Bind(6, d.created_at);
  q.Bind(7, d.ns);
  q.Bind(8, d.workflow);
  q.Bind(9, d.version);
  q.Bind(10, d.code);
  q.Bind(11, d.fingerprint);
  q.Bind(12, d.first_failed_at);
  q.Bind(13, d.last_failed_at);
  q.Bind(14, d.first_attempt);
  q.Bind(15, d.last_attempt);
  q.Bind(16, d.status);
  q.Bind(17, d.resolved_at);
  q.Bind(18, d.replay_attempt);
  Status s = q.Run();
  return s.ok() ? s
                : Context(s, "writing dead letter of step " + d.step_id + " of execution " +
                                 d.execution_id);
}

bool Read(const Stmt& q, DeadLetterRecord* d) {
  d->id = q.Int(0);
  d->execution_id = q.Text(1);
  d->step_id = q.Text(2);
  d->created_at = q.Int(5);
  d->ns = q.Text(6);
  d->workflow = q.Text(7);
  d->version = static_cast<int>(q.Int(8));
  d->code = q.Text(9);
  d->fingerprint = q.Text(10);
  d->first_failed_at = q.Int(11);
  d->last_failed_at = q.Int(12);
  d->first_attempt = static_cast<int>(q.Int(13));
  d->last_attempt = static_cast<int>(q.Int(14));
  d->status = q.Text(15);
  d->resolved_at = q.Int(16);
  d->replay_attempt = static_cast<int>(q.Int(17));
  return q.JsonAt(3, &d->input) && q.JsonAt(4, &d->errors);
}

std::string SelectDeadLetters(const DeadLetterFilter& f) {
  return std::string(kSelectDeadLetters) + Where(f) + " AND id > ?9 ORDER BY id LIMIT ?10";
}

std::string CountDeadLettersSql(const DeadLetterFilter& f) {
  // A fingerprint begins with its code, so the entries of a group share one.
  return "SELECT workflow, step_id, fingerprint, MAX(code), COUNT(*), MIN(first_failed_at), "
         "MAX(last_failed_at), MAX(id) FROM dead_letters" +
         Where(f) +
         " GROUP BY workflow, step_id, fingerprint "
         "ORDER BY COUNT(*) DESC, workflow, step_id, fingerprint";
}

void Bind(Stmt& q, const DeadLetterFilter& f, bool paged) {
  if (!f.ns.empty()) q.Bind(1, f.ns);
  if (!f.execution_id.empty()) q.Bind(2, f.execution_id);
  if (!f.workflow.empty()) q.Bind(3, f.workflow);
  if (!f.step_id.empty()) q.Bind(4, f.step_id);
  if (!f.code.empty()) q.Bind(5, f.code);
  if (!f.fingerprint.empty()) q.Bind(6, f.fingerprint);
  if (!f.status.empty()) q.Bind(7, f.status);
  if (f.since != 0) q.Bind(8, f.since);
  if (paged) {
    q.Bind(9, f.after_id);
    q.Bind(10, SqlLimit(f.limit));
  }
}

bool Read(const Stmt& q, DeadLetterGroup* g) {
  g->workflow = q.Text(0);
  g->step_id = q.Text(1);
  g->fingerprint = q.Text(2);
  g->code = q.Text(3);
  g->count = q.Int(4);
  g->first_failed_at = q.Int(5);
  g->last_failed_at = q.Int(6);
  g->last_id = q.Int(7);
  return true;
}

}  // namespace baton::sqlite
