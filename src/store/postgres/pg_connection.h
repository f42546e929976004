// A PostgreSQL connection through libpq: RAII over PGconn and PGresult, parameterised
// statements (text in, text out), and errors as Status values that say what failed in
// words a user can act on, never with the password.
//
// The first piece of the PostgreSQL store (issue 14); the store itself builds on it.
//
// Threading: a Connection is used by one thread at a time (libpq's rule); distinct
// connections are independent. Errors: Status with errc::kStore; nothing throws.
#pragma once

#include <baton/status.h>

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

struct pg_conn;
struct pg_result;

namespace baton::pg {

// `url` with its password replaced by "***" (postgresql://user:pw@host/db and the
// key=value form's password=pw): what error messages and logs may show.
std::string RedactedUrl(std::string_view url);

// The rows of one statement's answer, as text; a NULL is nullopt.
class Rows {
 public:
  size_t size() const { return rows_.size(); }
  size_t columns() const { return columns_; }
  const std::optional<std::string>& at(size_t row, size_t column) const {
    return rows_[row][column];
  }
  // The number of rows the statement changed (UPDATE, DELETE, INSERT), 0 otherwise.
  int64_t affected() const { return affected_; }

 private:
  friend class Connection;
  size_t columns_ = 0;
  int64_t affected_ = 0;
  std::vector<std::vector<std::optional<std::string>>> rows_;
};

class Connection {
 public:
  struct Options {
    // How long to wait for the server to answer a connection attempt.
    std::chrono::seconds connect_timeout{10};
  };

  // Connects to `url` (a postgresql:// URL or a libpq key=value string). The error says
  // which server could not be reached or why it refused (unreachable, authentication,
  // no such database), with the password redacted.
  static Result<Connection> Open(const std::string& url, const Options& options);
  static Result<Connection> Open(const std::string& url) { return Open(url, Options{}); }

  Connection(Connection&&) noexcept = default;
  Connection& operator=(Connection&&) noexcept = default;
  ~Connection() = default;

  // Runs one statement with positional parameters ($1, $2, ...; nullopt is NULL).
  // `what` names it in an error ("reading executions").
  Result<Rows> Exec(std::string_view sql, const std::vector<std::optional<std::string>>& params,
                    std::string_view what);
  // The same with parameters as NUL-terminated text (nullptr is NULL), which must stay
  // valid for the call: how the store binds a record without copying its fields.
  Result<Rows> ExecBound(std::string_view sql, std::span<const char* const> values,
                         std::string_view what);
  // Runs statements without parameters (a migration, BEGIN, ...).
  Status Script(std::string_view sql, std::string_view what);

  // Statements sent without waiting for each answer and answered together at Sync():
  // libpq's pipeline mode, one round trip for many statements. Statements with a name are
  // prepared once per connection, on first use. Between Begin() and End() the connection
  // runs nothing else.
  Status BeginPipeline();
  // Queues `sql` with `values` (NUL-terminated text, nullptr for NULL; copied at once).
  // `name`: a prepared statement's (its text must never change), or nullptr.
  Status Send(const char* name, const std::string& sql, std::span<const char* const> values);
  // Sends what is queued and reads every answer. On an error, the statements after it are
  // skipped by the server, and `*failed` is the failing statement's number (counting the
  // Send() calls since BeginPipeline(), from 0).
  Status Sync(std::string_view what, size_t* failed);
  void EndPipeline();

  // Whether the connection is still usable (false after the server went away).
  bool ok() const;
  // The server's version as a number (150018 for 15.18).
  int server_version() const;
  // The socket, for poll() while waiting for a notification (LISTEN); -1 when closed.
  int socket() const;
  // Reads what the server sent and drops the notifications received (after LISTEN): how
  // many there were. Never blocks.
  Result<size_t> TakeNotifications(std::string_view what);

 private:
  struct Closer {
    void operator()(pg_conn* c) const;
  };
  explicit Connection(pg_conn* c, std::string redacted)
      : conn_(c), redacted_url_(std::move(redacted)) {}
  Status Failure(pg_result* r, std::string_view what) const;

  std::unique_ptr<pg_conn, Closer> conn_;
  std::string redacted_url_;
  std::unordered_set<std::string> prepared_;  // statement names prepared on this connection
  // The pipeline's commands awaiting an answer, in order: a statement's number, or the
  // preparation of the statement `preparing`.
  struct Awaiting {
    size_t statement = 0;
    std::string preparing;
  };
  std::vector<Awaiting> awaiting_;
  size_t sent_ = 0;
};

}  // namespace baton::pg
