// SqliteStore reads of the catalog (workflows, tokens, schedules, hooks, triggers,
// deliveries) and of the coordinator's tables (workers, assignments), signals, caches,
// breakers and pools.
#include "store/sqlite/sqlite_store.h"

#include <string>
#include <vector>

namespace baton::sqlite {

Result<WorkflowRecord> SqliteStore::GetWorkflow(const std::string& ns, const std::string& name,
                                                int version) {
  std::lock_guard lock(mu_);
  auto rows = Query<WorkflowRecord>(
      std::string(kSelectWorkflows) +
          (version == 0 ? " WHERE ns = ?3 AND name = ?1 ORDER BY version DESC LIMIT 1"
                        : " WHERE ns = ?3 AND name = ?1 AND version = ?2"),
      "workflows", [&](Stmt& q) {
        q.Bind(1, name);
        if (version != 0) q.Bind(2, version);
        q.Bind(3, ns);
      });
  if (!rows.ok()) return rows.status();
  if (rows->empty()) {
    return Status(errc::kNotFound,
                  "workflow " + name + (version == 0 ? "" : " version " + std::to_string(version)));
  }
  return std::move(rows->front());
}

Result<std::vector<WorkflowRecord>> SqliteStore::ListWorkflows(const std::string& ns,
                                                               const std::string& name) {
  std::lock_guard lock(mu_);
  if (!name.empty()) {
    return Query<WorkflowRecord>(
        std::string(kSelectWorkflows) + " WHERE ns = ?1 AND name = ?2 ORDER BY version DESC",
        "workflows", [&](Stmt& q) {
          q.Bind(1, ns);
          q.Bind(2, name);
        });
  }
  // The latest version of each name.
  return Query<WorkflowRecord>(
      std::string(kSelectWorkflows) +
          " WHERE ns = ?1 AND version = (SELECT MAX(version) FROM workflows w "
          "WHERE w.ns = workflows.ns AND w.name = workflows.name) ORDER BY name",
      "workflows", [&](Stmt& q) { q.Bind(1, ns); });
}

Status SqliteStore::DeleteWorkflow(const std::string& ns, const std::string& name) {
  return DeleteOne("DELETE FROM workflows WHERE ns = ?1 AND name = ?2", ns, name,
                   "workflow " + name);
}

Result<std::vector<TokenRecord>> SqliteStore::ListTokens(const std::string& ns) {
  std::lock_guard lock(mu_);
  if (ns.empty()) {
    return Query<TokenRecord>(std::string(kSelectTokens) + " ORDER BY rowid", "tokens",
                              [](Stmt&) {});
  }
  return Query<TokenRecord>(std::string(kSelectTokens) + " WHERE ns = ?1 ORDER BY rowid", "tokens",
                            [&](Stmt& q) { q.Bind(1, ns); });
}

Result<std::vector<ScheduleRecord>> SqliteStore::ListSchedules(const std::string& ns) {
  std::lock_guard lock(mu_);
  if (ns.empty()) {
    return Query<ScheduleRecord>(std::string(kSelectSchedules) + " ORDER BY rowid", "schedules",
                                 [](Stmt&) {});
  }
  return Query<ScheduleRecord>(std::string(kSelectSchedules) + " WHERE ns = ?1 ORDER BY rowid",
                               "schedules", [&](Stmt& q) { q.Bind(1, ns); });
}

Status SqliteStore::DeleteSchedule(const std::string& ns, const std::string& id) {
  return DeleteOne("DELETE FROM schedules WHERE ns = ?1 AND id = ?2", ns, id, "schedule " + id);
}

Result<std::vector<HookRecord>> SqliteStore::ListHooks(const std::string& ns) {
  return ListByNs<HookRecord>(kSelectHooks, "hooks", ns, "name");
}

Result<HookRecord> SqliteStore::GetHook(const std::string& name) {
  std::lock_guard lock(mu_);
  auto rows = Query<HookRecord>(std::string(kSelectHooks) + " WHERE name = ?1", "hooks",
                                [&](Stmt& q) { q.Bind(1, name); });
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status(errc::kNotFound, "hook " + name);
  return std::move(rows->front());
}

Status SqliteStore::DeleteHook(const std::string& ns, const std::string& name) {
  return DeleteOne("DELETE FROM hooks WHERE ns = ?1 AND name = ?2", ns, name, "hook " + name);
}

Result<std::vector<TriggerRecord>> SqliteStore::ListTriggers(const std::string& ns) {
  return ListByNs<TriggerRecord>(kSelectTriggers, "triggers", ns, "rowid");
}

Status SqliteStore::DeleteTrigger(const std::string& ns, const std::string& id) {
  return DeleteOne("DELETE FROM triggers WHERE ns = ?1 AND id = ?2", ns, id, "trigger " + id);
}

Result<std::vector<DeliveryRecord>> SqliteStore::ListDeliveries(const DeliveryFilter& f) {
  std::string sql = std::string(kSelectDeliveries) + " WHERE 1";
  if (!f.ns.empty()) sql += " AND ns = ?1";
  if (!f.execution_id.empty()) sql += " AND execution_id = ?2";
  if (f.status) sql += " AND status = ?3";
  sql += " ORDER BY created_at, id LIMIT ?4";
  std::lock_guard lock(mu_);
  return Query<DeliveryRecord>(sql, "deliveries", [&](Stmt& q) {
    if (!f.ns.empty()) q.Bind(1, f.ns);
    if (!f.execution_id.empty()) q.Bind(2, f.execution_id);
    if (f.status) q.Bind(3, std::string_view(ToString(*f.status)));
    q.Bind(4, SqlLimit(f.limit));
  });
}

Result<DeliveryRecord> SqliteStore::GetDelivery(const std::string& id) {
  std::lock_guard lock(mu_);
  auto rows = Query<DeliveryRecord>(std::string(kSelectDeliveries) + " WHERE id = ?1", "deliveries",
                                    [&](Stmt& q) { q.Bind(1, id); });
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status(errc::kNotFound, "delivery " + id);
  return std::move(rows->front());
}

Result<TokenRecord> SqliteStore::FindToken(const std::string& secret_hash) {
  std::lock_guard lock(mu_);
  auto rows = Query<TokenRecord>(std::string(kSelectTokens) + " WHERE secret_hash = ?1", "tokens",
                                 [&](Stmt& q) { q.Bind(1, secret_hash); });
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status(errc::kNotFound, "token");
  return std::move(rows->front());
}

Result<std::vector<WorkerRecord>> SqliteStore::ListWorkers(const std::string& ns) {
  return ListByNs<WorkerRecord>(kSelectWorkers, "workers", ns, "id");
}

Result<std::vector<AssignmentRecord>> SqliteStore::ListAssignments(const AssignmentFilter& f) {
  std::lock_guard lock(mu_);
  return Query<AssignmentRecord>(SelectAssignments(f), "assignments", [&](Stmt& q) { Bind(q, f); });
}

Result<AssignmentRecord> SqliteStore::GetAssignment(const std::string& id) {
  std::lock_guard lock(mu_);
  auto rows = Query<AssignmentRecord>(kSelectAssignmentById, "assignments",
                                      [&](Stmt& q) { q.Bind(1, id); });
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return Status(errc::kNotFound, "assignment " + id);
  return std::move(rows->front());
}

Result<std::vector<ReassignmentRecord>> SqliteStore::ListReassignments(
    const ReassignmentFilter& f) {
  std::lock_guard lock(mu_);
  return Query<ReassignmentRecord>(SelectReassignments(f), "reassignments",
                                   [&](Stmt& q) { Bind(q, f); });
}

Result<std::vector<SignalRecord>> SqliteStore::ListSignals(const std::string& execution_id) {
  std::lock_guard lock(mu_);
  return Query<SignalRecord>(std::string(kSelectSignals) + " WHERE execution_id = ?1 ORDER BY seq",
                             "signals", [&](Stmt& q) { q.Bind(1, execution_id); });
}

Result<std::vector<CacheEntryRecord>> SqliteStore::ListCacheEntries(const std::string& ns) {
  return ListByNs<CacheEntryRecord>(kSelectCacheEntries, "cache_entries", ns, "ns, key");
}

Result<std::vector<BreakerRecord>> SqliteStore::ListBreakers(const std::string& ns) {
  return ListByNs<BreakerRecord>(kSelectBreakers, "breakers", ns, "ns, key");
}

Result<std::vector<PoolRecord>> SqliteStore::ListPools(const std::string& ns) {
  return ListByNs<PoolRecord>(kSelectPools, "pools", ns, "ns, name");
}

Status SqliteStore::DeletePool(const std::string& ns, const std::string& name) {
  return DeleteOne("DELETE FROM pools WHERE ns = ?1 AND name = ?2", ns, name, "pool " + name);
}

}  // namespace baton::sqlite
