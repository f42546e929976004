// The PostgreSQL store: several baton servers on one database (issue 14). Its own module
// (src/store/postgres, target baton_store_postgres); see <baton/store.h> for the contract.
#pragma once

#include <baton/store.h>

#include <chrono>
#include <memory>
#include <string>

namespace baton {

struct PostgresOptions {
  // How long to wait for the server to answer a connection attempt.
  std::chrono::seconds connect_timeout{10};
  // Connections serving reads (1 to 64), besides the one that commits: reads from
  // several threads (the server's I/O threads) run side by side.
  int readers = 2;
  // How long to wait for the owner lock that another server holds before refusing: a
  // server restarted at once after a crash finds its predecessor's session still ending.
  std::chrono::milliseconds owner_lock_wait{5000};
  // Empty: this store's process is the database's only server (it holds a lock saying
  // so). Otherwise the name of this instance among several sharing the database: the
  // store leases executions to it (Store::leases(), ExecutionLeases in <baton/store.h>).
  std::string instance;
  // How long an instance's lease of an execution lasts unless renewed (at least 100 ms):
  // how long its executions wait after it dies before another instance takes them.
  std::chrono::milliseconds lease{10'000};
};

// Connects to `url` (postgresql://user:password@host:port/database, or libpq's key=value
// form) and applies pending schema migrations under an advisory lock, so that instances
// starting together migrate once. Fails with errc::kStore, the password redacted, when the
// server cannot be reached, refuses the credentials, or holds a schema newer than this
// build knows.
//
// Text is stored as PostgreSQL text: a NUL byte or invalid UTF-8 in a record's text (a
// command's stderr, say) is replaced by U+FFFD, where SQLite would keep the bytes.
//
// Without an instance name, one server per database (per schema, with search_path): the
// store holds a session advisory lock for its life, and a second store on the same schema
// fails, saying so. With one, several stores (instances) share the schema, each its own
// name, and executions are leased to them.
Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url,
                                                 const PostgresOptions& options = {});

// `url` with its password replaced by "***": what logs and messages may show.
std::string RedactedPostgresUrl(const std::string& url);

}  // namespace baton
