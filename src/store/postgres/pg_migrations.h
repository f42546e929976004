// The PostgreSQL schema as numbered migrations, applied in order when a store opens.
//
// Migrate() runs in one transaction under an advisory lock: instances that start together
// on one database migrate it once (the others wait, then find nothing to do), and a
// migration that fails leaves nothing half-applied (PostgreSQL's DDL is transactional).
// A database whose schema is newer than this build is refused, naming both versions.
#pragma once

#include <baton/status.h>

#include "store/postgres/pg_connection.h"

namespace baton::pg {

// What a store runs to take the session advisory lock it holds on its schema while it
// runs as the only server of the schema; answers t or f.
// Keyed by the schema, so databases shared by several schemas hold one server in each.
inline constexpr const char* kTakeOwnerLock =
    "SELECT pg_try_advisory_lock(452166128, hashtext(current_schema()))";
// Instances (servers with an instance name) share the owner lock, so none runs beside a
// single server, and each holds its name's lock ($1: the name), so no two run as one.
inline constexpr const char* kShareOwnerLock =
    "SELECT pg_try_advisory_lock_shared(452166128, hashtext(current_schema()))";
inline constexpr const char* kTakeInstanceLock =
    "SELECT pg_try_advisory_lock(452166129, hashtext(current_schema() || '/' || $1))";

// The version this build writes: the number of the last migration.
int LatestSchemaVersion();

// Brings the database up to LatestSchemaVersion(). errc::kStore with the migration's
// number when one fails, or when the database's version is newer than this build's.
Status Migrate(Connection& c);

// The version the database is at (0 before the first migration).
Result<int> SchemaVersion(Connection& c);

}  // namespace baton::pg
