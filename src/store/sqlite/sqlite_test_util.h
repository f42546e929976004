// Helpers of the SQLite store's own tests: the raw file, as another program sees it.
#pragma once

#include <baton/status.h>

#include "store/sqlite/migrations.h"

#include <sqlite3.h>

#include <string>

namespace baton::testing {

// Runs a query on the raw file and returns the first column of the first row.
inline std::string RawQuery(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_stmt* q = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &q, nullptr) == SQLITE_OK &&
        sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0) != nullptr) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
    }
    sqlite3_finalize(q);
  }
  sqlite3_close(db);
  return out;
}

// Makes `path` a database as the build of schema `version` left it, holding `rows` (SQL
// statements). Returns what failed; empty when nothing did.
inline std::string MakeOldDatabase(const std::string& path, int version, const char* rows) {
  sqlite3* db = nullptr;
  std::string error;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    error = sqlite3_errmsg(db);
  } else if (Status s = sqlite::Migrate(db, version); !s.ok()) {
    error = s.ToString();
  } else if (sqlite3_exec(db, rows, nullptr, nullptr, nullptr) != SQLITE_OK) {
    error = sqlite3_errmsg(db);
  }
  sqlite3_close(db);
  return error;
}

}  // namespace baton::testing
