// SharedPools on PostgreSQL: a pool's slots held in `pool_holds` (migration 6), each hold
// taken by baton_pool_hold() under the pool's advisory lock, so two instances never both
// see the last free slot, and renewed with the instance's leases (PgStore::Renew).
#include "store/postgres/pg_store.h"

namespace baton::pg {

Result<bool> PgStore::HoldSlots(const PoolHold& hold, int64_t limit, bool force) {
  auto rows =
      Read("SELECT baton_pool_hold($1, $2, $3, $4, $5, $6, $7, $8)",
           {hold.ns, hold.pool, hold.holder, instance_, std::to_string(hold.slots),
            std::to_string(limit), std::to_string(lease_.count()), force ? "true" : "false"},
           "holding pool slots");
  if (!rows.ok()) return rows.status();
  return rows->size() == 1 && rows->at(0, 0).value_or("") == "t";
}

Status PgStore::ReleaseSlots(const PoolHold& hold) {
  return Read("DELETE FROM pool_holds WHERE ns = $1 AND pool = $2 AND holder = $3 AND owner = $4",
              {hold.ns, hold.pool, hold.holder, instance_}, "giving pool slots back")
      .status();
}

Status PgStore::ReleaseAllSlots() {
  return Read("DELETE FROM pool_holds WHERE owner = $1", {instance_},
              "giving every pool slot of this instance back")
      .status();
}

Result<int64_t> PgStore::SlotsHeld(const std::string& ns, const std::string& pool) {
  auto rows = Read(
      "SELECT COALESCE(SUM(slots), 0) FROM pool_holds "
      "WHERE ns = $1 AND pool = $2 AND lease_until >= baton_now_ms()",
      {ns, pool}, "counting the slots held in a pool");
  if (!rows.ok()) return rows.status();
  if (rows->size() != 1 || !rows->at(0, 0)) return Status(errc::kStore, "no count of slots");
  return std::stoll(*rows->at(0, 0));
}

Result<std::vector<std::string>> PgStore::Holders(const std::string& ns, const std::string& pool) {
  auto rows = Read(
      "SELECT holder FROM pool_holds WHERE ns = $1 AND pool = $2 AND lease_until >= "
      "baton_now_ms() ORDER BY held_since, holder",
      {ns, pool}, "listing the holders of a pool");
  if (!rows.ok()) return rows.status();
  std::vector<std::string> out;
  out.reserve(rows->size());
  for (size_t i = 0; i < rows->size(); ++i) out.push_back(rows->at(i, 0).value_or(""));
  return out;
}

}  // namespace baton::pg
