// Thin RAII helpers over the SQLite C API, private to the SQLite store.
//
// Not thread-safe: the owning store serialises every use behind its mutex.
#pragma once

#include <baton/json.h>
#include <baton/status.h>

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace baton::sqlite {

inline Status Error(sqlite3* db, std::string_view what) {
  return Status(errc::kStore, std::string(what) + ": " + sqlite3_errmsg(db));
}

// Prefixes a failed status with what was being done.
inline Status Context(const Status& s, std::string_view what) {
  return Status(s.code(), std::string(what) + ": " + s.message());
}

// SQLite's LIMIT takes -1 for "no limit"; ours takes 0.
inline int64_t SqlLimit(size_t limit) {
  return limit == 0 ? -1 : static_cast<int64_t>(limit);
}

// Runs SQL without results (one or more statements).
inline Status Exec(sqlite3* db, const char* sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
    Status s(errc::kStore, msg != nullptr ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return s;
  }
  return Status::Ok();
}

// A prepared statement, prepared once and reused: preparing costs more than executing
// the small upserts a commit consists of.
class Stmt {
 public:
  Stmt() = default;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() { sqlite3_finalize(stmt_); }

  Status Prepare(sqlite3* db, const char* sql) {
    db_ = db;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) != SQLITE_OK) {
      return Error(db, std::string("preparing ") + sql);
    }
    return Status::Ok();
  }

  // Binding copies nothing for strings owned by the caller (SQLITE_STATIC): they must
  // outlive the Step() calls, which they do since a statement is bound and run in one go.
  void Bind(int i, std::string_view s) {
    Check(sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_STATIC));
  }
  // For a string built for the binding, which does not outlive it: SQLite copies it.
  void BindCopy(int i, std::string_view s) {
    Check(sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT));
  }
  void Bind(int i, int64_t v) { Check(sqlite3_bind_int64(stmt_, i, v)); }
  void Bind(int i, int v) { Check(sqlite3_bind_int(stmt_, i, v)); }
  void BindNull(int i) { Check(sqlite3_bind_null(stmt_, i)); }
  // Null Json is SQL NULL; anything else its compact text. Invalid UTF-8 is replaced
  // rather than thrown: a commit must not fail on a worker's odd output bytes.
  void BindJson(int i, const Json& j) {
    if (j.is_null()) {
      Check(sqlite3_bind_null(stmt_, i));
      return;
    }
    std::string text = j.dump(-1, ' ', false, Json::error_handler_t::replace);
    Check(sqlite3_bind_text64(stmt_, i, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }

  // Rows inserted, updated or deleted by this connection's last finished statement.
  int Changes() const { return sqlite3_changes(db_); }

  // SQLITE_ROW, SQLITE_DONE, or an error code (including the first failed bind).
  int Step() {
    if (bind_rc_ != SQLITE_OK) return bind_rc_;
    return sqlite3_step(stmt_);
  }
  // Runs a statement that returns no rows; resets it either way. The error carries
  // only SQLite's message: callers add context on failure, not on every row.
  Status Run() {
    int rc = Step();
    Status s = rc == SQLITE_DONE ? Status::Ok() : Status(errc::kStore, sqlite3_errmsg(db_));
    Reset();
    return s;
  }
  // Ends the current use. A SELECT left un-reset would hold its read transaction open
  // and stop WAL checkpoints.
  void Reset() {
    sqlite3_reset(stmt_);
    bind_rc_ = SQLITE_OK;
  }

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  std::string Text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p == nullptr ? std::string() : std::string(p, sqlite3_column_bytes(stmt_, col));
  }
  // Valid until the statement steps or resets.
  std::string_view TextView(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p == nullptr ? std::string_view()
                        : std::string_view(p, sqlite3_column_bytes(stmt_, col));
  }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  // NULL reads back as null Json. Returns false when the stored text is not JSON.
  bool JsonAt(int col, Json* out) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) {
      *out = Json();
      return true;
    }
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    *out = Json::parse(p, p + sqlite3_column_bytes(stmt_, col), nullptr,
                       /*allow_exceptions=*/false);
    return !out->is_discarded();
  }

 private:
  void Check(int rc) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  }

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  int bind_rc_ = SQLITE_OK;
};

// Resets a statement when a read goes out of scope, on every return path.
class ResetOnExit {
 public:
  explicit ResetOnExit(Stmt& s) : s_(s) {}
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;
  ~ResetOnExit() { s_.Reset(); }

 private:
  Stmt& s_;
};

}  // namespace baton::sqlite
