// The dead-letter queue's filtered listing and its grouping by workflow, step and
// fingerprint.
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
