#include "store/postgres/pg_connection.h"

#include <libpq-fe.h>

#include <algorithm>
#include <string>
#include <vector>

namespace baton::pg {

namespace {

// libpq's messages end in a newline and may span lines ("connection to server at ...
// failed: Connection refused\n\tIs the server running ..."): one line for a Status.
std::string OneLine(const char* message) {
  std::string out;
  bool space = false;
  for (const char* p = message; p != nullptr && *p != '\0'; ++p) {
    const char c = *p;
    if (c == '\n' || c == '\t' || c == '\r' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace

std::string RedactedUrl(std::string_view url) {
  std::string out(url);
  // postgresql://user:password@host...: the password is between the first ':' after the
  // scheme's "//" and the '@' that ends the user info.
  if (const size_t scheme = out.find("://"); scheme != std::string::npos) {
    const size_t info = scheme + 3;
    const size_t at = out.find('@', info);
    const size_t slash = out.find('/', info);
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) {
      const size_t colon = out.find(':', info);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // key=value form (and a URL's ?password=... parameter).
  for (size_t pos = 0; (pos = out.find("password=", pos)) != std::string::npos;) {
    const bool starts_word = pos == 0 || out[pos - 1] == ' ' || out[pos - 1] == '?' ||
                             out[pos - 1] == '&' || out[pos - 1] == '\t';
    pos += 9;
    if (!starts_word) continue;
    size_t end = pos;
    if (end < out.size() && out[end] == '\'') {  // quoted value: up to the closing quote
      ++end;
      while (end < out.size() && out[end] != '\'') end += out[end] == '\\' ? 2 : 1;
      end = std::min(end + 1, out.size());
    } else {
      while (end < out.size() && out[end] != ' ' && out[end] != '&' && out[end] != '\t') ++end;
    }
    out.replace(pos, end - pos, "***");
  }
  return out;
}

void Connection::Closer::operator()(pg_conn* c) const {
  PQfinish(c);
}

Result<Connection> Connection::Open(const std::string& url, const Options& options) {
  const std::string redacted = RedactedUrl(url);
  // libpq reads connect_timeout from the string; passing it as an expanded parameter
  // keeps the user's URL as it is (either form).
  const std::string timeout = std::to_string(options.connect_timeout.count());
  const char* keys[] = {"dbname", "connect_timeout", "client_encoding", nullptr};
  const char* values[] = {url.c_str(), timeout.c_str(), "UTF8", nullptr};
  pg_conn* raw = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  std::unique_ptr<pg_conn, Closer> conn(raw);
  if (raw == nullptr) {
    return Status(errc::kStore, "connecting to PostgreSQL at " + redacted + ": out of memory");
  }
  if (PQstatus(raw) != CONNECTION_OK) {
    return Status(errc::kStore,
                  "connecting to PostgreSQL at " + redacted + ": " + OneLine(PQerrorMessage(raw)));
  }
  // The server's notices ("relation already exists, skipping" when instances migrate
  // together) are not errors; libpq would print them to stderr.
  PQsetNoticeProcessor(
      raw, [](void*, const char*) {}, nullptr);
  return Connection(conn.release(), redacted);
}

bool Connection::ok() const {
  return conn_ && PQstatus(conn_.get()) == CONNECTION_OK;
}

int Connection::server_version() const {
  return conn_ ? PQserverVersion(conn_.get()) : 0;
}

int Connection::socket() const {
  return conn_ ? PQsocket(conn_.get()) : -1;
}

Result<size_t> Connection::TakeNotifications(std::string_view what) {
  if (!conn_ || PQconsumeInput(conn_.get()) == 0) {
    return Status(errc::kStore, std::string(what) + ": " +
                                    OneLine(conn_ ? PQerrorMessage(conn_.get()) : "no connection"));
  }
  size_t n = 0;
  while (PGnotify* note = PQnotifies(conn_.get())) {
    PQfreemem(note);
    ++n;
  }
  return n;
}

Status Connection::Failure(pg_result* r, std::string_view what) const {
  std::string message = OneLine(r != nullptr ? PQresultErrorMessage(r) : "");
  if (message.empty()) message = OneLine(PQerrorMessage(conn_.get()));
  if (r != nullptr) {
    // The SQLSTATE lets a caller (and a reader of the log) tell a lost connection from
    // a constraint violation; libpq sets none when the connection itself failed.
    if (const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE); state != nullptr) {
      message += " (SQLSTATE " + std::string(state) + ")";
    }
  }
  if (!ok()) message += " (the connection to " + redacted_url_ + " is lost)";
  return Status(errc::kStore, std::string(what) + ": " + message);
}

Result<Rows> Connection::Exec(std::string_view sql,
                              const std::vector<std::optional<std::string>>& params,
                              std::string_view what) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  return ExecBound(sql, std::span<const char* const>(values), what);
}

Result<Rows> Connection::ExecBound(std::string_view sql, std::span<const char* const> values,
                                   std::string_view what) {
  const std::string text(sql);
  std::unique_ptr<pg_result, decltype(&PQclear)> r(
      PQexecParams(conn_.get(), text.c_str(), static_cast<int>(values.size()), nullptr,
                   values.data(), nullptr, nullptr, /*resultFormat=*/0),
      &PQclear);
  const ExecStatusType status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) return Failure(r.get(), what);
  Rows rows;
  rows.columns_ = static_cast<size_t>(PQnfields(r.get()));
  const int n = PQntuples(r.get());
  rows.rows_.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    auto& row = rows.rows_[static_cast<size_t>(i)];
    row.resize(rows.columns_);
    for (int c = 0; c < static_cast<int>(rows.columns_); ++c) {
      if (PQgetisnull(r.get(), i, c)) continue;
      row[static_cast<size_t>(c)].emplace(PQgetvalue(r.get(), i, c),
                                          static_cast<size_t>(PQgetlength(r.get(), i, c)));
    }
  }
  if (const char* affected = PQcmdTuples(r.get()); affected != nullptr && *affected != '\0') {
    rows.affected_ = std::stoll(affected);
  }
  return rows;
}

Status Connection::BeginPipeline() {
  awaiting_.clear();
  sent_ = 0;
  if (PQenterPipelineMode(conn_.get()) != 1) return Failure(nullptr, "entering pipeline mode");
  return Status::Ok();
}

Status Connection::Send(const char* name, const std::string& sql,
                        std::span<const char* const> values) {
  const int n = static_cast<int>(values.size());
  if (name != nullptr && prepared_.count(name) == 0) {
    if (PQsendPrepare(conn_.get(), name, sql.c_str(), n, nullptr) != 1) {
      return Failure(nullptr, "preparing a statement");
    }
    prepared_.insert(name);
    awaiting_.push_back({0, name});
  }
  const int sent = name != nullptr
                       ? PQsendQueryPrepared(conn_.get(), name, n, values.data(), nullptr, nullptr,
                                             /*resultFormat=*/0)
                       : PQsendQueryParams(conn_.get(), sql.c_str(), n, nullptr, values.data(),
                                           nullptr, nullptr, /*resultFormat=*/0);
  if (sent != 1) return Failure(nullptr, "sending a statement");
  awaiting_.push_back({sent_++, {}});
  return Status::Ok();
}

Status Connection::Sync(std::string_view what, size_t* failed) {
  if (PQpipelineSync(conn_.get()) != 1) return Failure(nullptr, what);
  Status first;
  size_t next = 0;  // the command whose answer comes next
  for (;;) {
    std::unique_ptr<pg_result, decltype(&PQclear)> r(PQgetResult(conn_.get()), &PQclear);
    if (!r) {
      // The end of one command's answer; or, with the connection gone, of everything.
      if (!ok()) return first.ok() ? Failure(nullptr, what) : first;
      continue;
    }
    const ExecStatusType status = PQresultStatus(r.get());
    if (status == PGRES_PIPELINE_SYNC) break;
    const Awaiting command = next < awaiting_.size() ? awaiting_[next] : Awaiting{};
    ++next;
    // A statement that failed to prepare, or whose preparation was skipped after an
    // earlier error, is not prepared: its next use prepares it again.
    if (!command.preparing.empty() && status != PGRES_COMMAND_OK) {
      prepared_.erase(command.preparing);
    }
    if (status == PGRES_PIPELINE_ABORTED || status == PGRES_COMMAND_OK ||
        status == PGRES_TUPLES_OK) {
      continue;
    }
    if (first.ok()) {
      first = Failure(r.get(), what);
      if (failed != nullptr) *failed = command.statement;
    }
  }
  awaiting_.clear();
  return first;
}

void Connection::EndPipeline() {
  PQexitPipelineMode(conn_.get());
}

Status Connection::Script(std::string_view sql, std::string_view what) {
  const std::string text(sql);
  std::unique_ptr<pg_result, decltype(&PQclear)> r(PQexec(conn_.get(), text.c_str()), &PQclear);
  const ExecStatusType status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) return Failure(r.get(), what);
  return Status::Ok();
}

}  // namespace baton::pg
