// `baton server`: the REST API, metrics and health on one port, over one engine.
//
// Open() opens the store, recovers every unfinished execution, creates the first admin
// token when the store has none, and binds the port; Run() serves until Stop().
#pragma once

#include "server/api.h"
#include "workers/coordinator.h"

#include <baton/status.h>

#include <memory>
#include <string>

namespace baton::server {

struct ServerOptions {
  std::string listen = "127.0.0.1:8080";  // host:port; port 0 picks a free one
  std::string db_path;                    // SQLite file
  // PostgreSQL instead of SQLite (a postgresql:// URL or libpq key=value string).
  std::string postgres_url;
  // With PostgreSQL: this server's name among several instances sharing the database
  // (empty: the only server). Executions are leased to instances (lease_keeper.h).
  std::string instance;
  Duration lease{10'000};    // how long an instance's lease lasts unless renewed
  bool sync_normal = false;  // SQLite synchronous=NORMAL (see docs/storage.md)
  int io_threads = 2;
  // The time slice the engine and I/O threads ask the kernel for (common/thread_slice.h):
  // short, so that a request gets a core when it arrives. 0: the kernel's default.
  int thread_slice_us = 100;
  int parallel = 0;  // local shell steps at once; 0 = cores
  // False: shell steps never run on this host; each attempt fails at once with
  // UNSUPPORTED_STEP_TYPE (a server that only dispatches to remote workers).
  bool local_shell = true;
  ServerLimits limits;
  // Notifications and trigger starts that fail are tried again after 1, 2, 4 ... times
  // this, up to `delivery_attempts` attempts in all (triggers/deliverer.h).
  Duration delivery_retry_base{1000};
  int delivery_attempts = 8;
  // A running execution with no event for this long gets an `execution.stalled` event
  // (EngineOptions::stall_after); 0 = never.
  Duration stall_after{3'600'000};
  // Top-level executions running at once; more wait `queued` (0 = no limit;
  // EngineOptions::max_running_executions).
  int max_running_executions = 0;
  // Cached step results: bounds and eviction (EngineOptions::cache).
  CacheOptions cache{};
  // Remote workers: heartbeats, failure detection, reassignment (workers/coordinator.h).
  workers::CoordinatorOptions coordinator;
  // Tests only: the server's clock starts at this time (0 = the system clock) and runs
  // `clock_rate` times as fast, so schedules fire within seconds.
  TimeMs clock_start = 0;
  double clock_rate = 1;
  // Where the first admin token and this server's URL are written for the CLI.
  std::string credentials_path;
};

// $BATON_CREDENTIALS, else $XDG_CONFIG_HOME/baton/credentials.json, else
// ~/.config/baton/credentials.json.
std::string DefaultCredentialsPath();

class Server {
 public:
  static Result<std::unique_ptr<Server>> Open(const ServerOptions& options);
  ~Server();

  uint16_t port() const;
  std::string url() const;
  // Serves until Stop(); then stops the engine (unfinished executions stay stored).
  void Run();
  void Stop();  // thread-safe, async-signal-unsafe

  // Answers `request` as if it had arrived on a connection, through the same router,
  // authentication and handlers, without a socket: for the HTTP fuzz target. Thread-safe
  // once Open() returned; `respond` may be called later, from another thread.
  void Handle(std::shared_ptr<const HttpRequest> request, Responder respond) const;

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton::server
