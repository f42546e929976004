// `baton server`: serve the API until SIGINT/SIGTERM.
#include <baton/postgres_store.h>

#include <algorithm>
#include <cctype>

#include "cli/commands.h"
#include "cli/signals.h"
#include "common/json_parse.h"
#include "server/server.h"
#include "server/views.h"

#include <CLI/CLI.hpp>

#include <filesystem>

namespace baton::cli {
namespace {

struct ServerArgs {
  server::ServerOptions options;
  size_t max_body_kib = 4096;
  size_t max_json_depth = 128;
  size_t max_payload_kib = 256;
  std::string delivery_retry = "1s";
  std::string test_clock_start;
  std::string heartbeat_interval = "30s";
  std::string lease = "10s";
  std::string heartbeat_timeout = "60s";
  std::string reassignment_grace = "0s";
  std::string drain_timeout = "5m";
  std::string stall_after = "1h";
  std::string cache_max_bytes = "64MiB";
  std::string cache_eviction = "lru";
};

// A duration flag: false (with the message printed) when it is not one.
bool DurationFlag(const char* flag, const std::string& text, bool allow_zero, Duration* out) {
  auto d = ParseDuration(Json(text));
  if (!d.ok() || d->count() < 0 || (!allow_zero && d->count() == 0)) {
    std::fprintf(stderr, "baton server: %s: expected a duration such as 30s or 500ms, got '%s'\n",
                 flag, text.c_str());
    return false;
  }
  *out = *d;
  return true;
}

int ServerMain(ServerArgs& args) {
  SignalCatcher::BlockInThisAndFutureThreads();
  server::ServerOptions& o = args.options;
  if (o.db_path.empty() && o.postgres_url.empty()) o.db_path = DefaultDbPath();
  if (!o.db_path.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(o.db_path).parent_path(), ec);
  }
  o.limits.max_body_bytes = args.max_body_kib << 10;
  SetDefaultMaxJsonDepth(args.max_json_depth);
  o.limits.max_payload_bytes = args.max_payload_kib << 10;
  auto retry = ParseDuration(Json(args.delivery_retry));
  if (!retry.ok() || retry->count() <= 0) {
    std::fprintf(
        stderr,
        "baton server: --delivery-retry: expected a duration such as 1s or 250ms, got '%s'\n",
        args.delivery_retry.c_str());
    return 2;
  }
  o.delivery_retry_base = *retry;
  if (o.delivery_attempts < 1) {
    std::fprintf(stderr, "baton server: --delivery-attempts must be at least 1\n");
    return 2;
  }
  workers::CoordinatorOptions& c = o.coordinator;
  if (!DurationFlag("--heartbeat-interval", args.heartbeat_interval, false,
                    &c.heartbeat_interval) ||
      !DurationFlag("--heartbeat-timeout", args.heartbeat_timeout, false, &c.heartbeat_timeout) ||
      !DurationFlag("--lease", args.lease, false, &o.lease) ||
      !DurationFlag("--reassignment-grace", args.reassignment_grace, true, &c.reassignment_grace) ||
      !DurationFlag("--drain-timeout", args.drain_timeout, true, &c.drain_timeout) ||
      !DurationFlag("--stall-after", args.stall_after, true, &o.stall_after)) {
    return 2;
  }
  if (!o.instance.empty()) {
    if (o.postgres_url.empty()) {
      std::fprintf(stderr,
                   "baton server: --instance names one of several servers sharing a "
                   "PostgreSQL database; give --postgres too\n");
      return 2;
    }
    const bool named =
        o.instance.size() <= 64 && std::all_of(o.instance.begin(), o.instance.end(), [](char ch) {
          return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' ||
                 ch == '.';
        });
    if (!named) {
      std::fprintf(stderr,
                   "baton server: --instance: up to 64 letters, digits, '-', '_' or '.', got "
                   "'%s'\n",
                   o.instance.substr(0, 80).c_str());
      return 2;
    }
  }
  if (auto bytes = ParseByteSize(Json(args.cache_max_bytes)); bytes.ok()) {
    o.cache.max_bytes = *bytes;
  } else {
    std::fprintf(stderr, "baton server: --cache-max-bytes: %s\n", bytes.status().message().c_str());
    return 2;
  }
  if (auto eviction = ParseCacheEviction(args.cache_eviction)) {
    o.cache.eviction = *eviction;
  } else {
    std::fprintf(stderr, "baton server: --cache-eviction: expected lru, lfu or ttl, got '%s'\n",
                 args.cache_eviction.c_str());
    return 2;
  }
  if (c.heartbeat_timeout <= c.heartbeat_interval) {
    std::fprintf(stderr,
                 "baton server: --heartbeat-timeout (%s) must be longer than "
                 "--heartbeat-interval (%s)\n",
                 args.heartbeat_timeout.c_str(), args.heartbeat_interval.c_str());
    return 2;
  }
  if (c.max_reassignments < 0) {
    std::fprintf(stderr, "baton server: --max-reassignments must be 0 or more\n");
    return 2;
  }
  if (!args.test_clock_start.empty()) {
    auto start = ParseTime(args.test_clock_start);
    if (!start.ok() || o.clock_rate <= 0) {
      std::fprintf(stderr,
                   "baton server: --test-clock-start takes an ISO time such as "
                   "2030-01-01T00:00:00Z and --test-clock-rate a positive number\n");
      return 2;
    }
    o.clock_start = *start;
  }
  auto srv = server::Server::Open(o);
  if (!srv.ok()) {
    std::fprintf(stderr, "baton server: %s\n", srv.status().message().c_str());
    return srv.status().code() == errc::kInvalidArgument ? 2 : 1;
  }
  const std::string database =
      o.postgres_url.empty() ? o.db_path : RedactedPostgresUrl(o.postgres_url);
  std::fprintf(stderr, "baton: serving %s (database %s)\n", (*srv)->url().c_str(),
               database.c_str());
  server::Server* s = srv->get();
  SignalCatcher signals([s](int sig) {
    std::fprintf(stderr, "baton: %s, stopping (unfinished executions resume on the next start)\n",
                 sig == SIGINT ? "interrupted" : "terminated");
    s->Stop();
  });
  s->Run();
  return 0;
}

}  // namespace

void AddServerCommand(CLI::App& app, std::function<int()>* action) {
  auto args = std::make_shared<ServerArgs>();
  auto* cmd = app.add_subcommand("server", "Serve the REST API, live events and metrics");
  cmd->add_option("--listen", args->options.listen, "HOST:PORT to listen on (port 0: any free)")
      ->capture_default_str();
  auto* db =
      cmd->add_option("--db", args->options.db_path, "SQLite database (default: as for run)");
  cmd->add_option("--postgres", args->options.postgres_url,
                  "PostgreSQL database instead of SQLite: postgresql://user:password@host:port/db "
                  "(or $BATON_POSTGRES); the schema is created or migrated at start")
      ->envname("BATON_POSTGRES")
      ->excludes(db);
  cmd->add_option("--instance", args->options.instance,
                  "With --postgres: this server's name among several sharing the database "
                  "(or $BATON_INSTANCE). Each unfinished execution is leased to one instance; "
                  "when an instance dies, the others take its executions over once their "
                  "leases expire. Workers, control requests and an execution's live feed "
                  "work through any instance (docs/scaling.md). Without it, one server per "
                  "database")
      ->envname("BATON_INSTANCE");
  cmd->add_option("--lease", args->lease,
                  "With --instance: how long a lease lasts unless renewed (renewed every "
                  "quarter of it): how long a dead instance's executions wait")
      ->capture_default_str();
  cmd->add_option("--io-threads", args->options.io_threads, "Threads serving HTTP")
      ->capture_default_str();
  cmd->add_option("--thread-slice-us", args->options.thread_slice_us,
                  "Time slice, in microseconds, that the engine and HTTP threads ask the "
                  "kernel for (Linux 6.12 on; older kernels ignore it): a request then gets a "
                  "core as soon as it arrives instead of waiting for another program's slice "
                  "to end. 0: the kernel's default")
      ->capture_default_str()
      ->check(CLI::Range(0, 100'000));
  cmd->add_option("-p,--parallel", args->options.parallel,
                  "Capacity of the in-process local worker: shell and http steps running at once "
                  "(default: number of cores)");
  cmd->add_flag("--no-local-shell{false}", args->options.local_shell,
                "Run no shell step on this host: each one fails at once with "
                "UNSUPPORTED_STEP_TYPE (use `command` steps and remote workers instead)");
  cmd->add_option("--max-body", args->max_body_kib, "Largest request body, KiB")
      ->capture_default_str();
  cmd->add_option("--max-payload", args->max_payload_kib, "Largest execution input, KiB")
      ->capture_default_str();
  cmd->add_option("--max-connections", args->options.limits.max_connections,
                  "Open connections at most; more get 503")
      ->capture_default_str();
  cmd->add_option("--worker-queue", args->options.limits.max_worker_queue,
                  "Messages waiting to be written to one WebSocket worker at most; a worker "
                  "that falls further behind is disconnected and its work goes to others")
      ->capture_default_str()
      ->check(CLI::Range(1, 1'000'000));
  cmd->add_option("--request-timeout", args->options.limits.request_timeout_s,
                  "Seconds to read one request (from its first byte, header included) or "
                  "write one response")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  cmd->add_option("--idle-timeout", args->options.limits.idle_timeout_s,
                  "Seconds a connection may wait for its next request")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  cmd->add_option("--max-json-depth", args->max_json_depth,
                  "Deepest nesting accepted in a JSON or YAML document (request bodies, "
                  "workflows, worker messages, step output parsed as JSON)")
      ->capture_default_str()
      ->check(CLI::Range(8, 10000));
  cmd->add_option("--credentials", args->options.credentials_path,
                  "Where to write the first admin token for the CLI "
                  "(default: ~/.config/baton/credentials.json)");
  cmd->add_option("--rate-limit", args->options.limits.rate_per_second,
                  "Requests per second per token (webhook calls: per client address); "
                  "0 = no limit. Past it: 429 with Retry-After")
      ->capture_default_str();
  cmd->add_option("--rate-burst", args->options.limits.rate_burst,
                  "Requests a token may make at once before --rate-limit applies")
      ->capture_default_str();
  cmd->add_option("--delivery-retry", args->delivery_retry,
                  "First retry delay of a failed notification or trigger start; doubles "
                  "after each failure (at most 5m)")
      ->capture_default_str();
  cmd->add_option("--delivery-attempts", args->options.delivery_attempts,
                  "Attempts per notification or trigger start before it is marked failed")
      ->capture_default_str();
  cmd->add_option("--heartbeat-interval", args->heartbeat_interval,
                  "How often workers send a heartbeat (told to them at registration)")
      ->capture_default_str();
  cmd->add_option("--heartbeat-timeout", args->heartbeat_timeout,
                  "A worker silent this long is UNHEALTHY")
      ->capture_default_str();
  cmd->add_option("--reassignment-grace", args->reassignment_grace,
                  "How long an UNHEALTHY worker keeps its work before it moves to another")
      ->capture_default_str();
  cmd->add_option("--max-reassignments", args->options.coordinator.max_reassignments,
                  "Moves per attempt; one more worker loss fails it WORKER_LOST")
      ->capture_default_str();
  cmd->add_option("--drain-timeout", args->drain_timeout,
                  "How long a draining worker may keep its work before it moves")
      ->capture_default_str();
  cmd->add_option("--stall-after", args->stall_after,
                  "A running execution with no event for this long (not one waiting only for a "
                  "signal, a timer or a retry) gets an execution.stalled event; 0 = never")
      ->capture_default_str();
  cmd->add_option("--max-running-executions", args->options.max_running_executions,
                  "Top-level executions running at once; more wait `queued`, highest priority "
                  "first, then in order (child workflows are not counted); 0 = no limit. With "
                  "several instances, each counts its own")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--cache-max-entries", args->options.cache.max_entries,
                  "Cached step results kept (steps with `cache:`); past it entries are evicted")
      ->capture_default_str();
  cmd->add_option("--cache-max-bytes", args->cache_max_bytes,
                  "Bytes of cached outputs kept (e.g. 64MiB, 1GB); past it entries are evicted")
      ->capture_default_str();
  cmd->add_option("--cache-eviction", args->cache_eviction,
                  "Which cached result goes first when over: lru (least recently used), lfu "
                  "(least often used) or ttl (soonest to expire)")
      ->capture_default_str();
  // For tests (hidden): a shifted, faster clock.
  cmd->add_option("--test-clock-start", args->test_clock_start)->group("");
  cmd->add_option("--test-clock-rate", args->options.clock_rate)->group("");
  cmd->add_flag("--sync-normal", args->options.sync_normal,
                "SQLite synchronous=NORMAL (see docs/storage.md)");
  cmd->footer(
      "On its first start the server creates an admin token and writes it, with the\n"
      "server's URL, to the credentials file, where the client commands find it.\n"
      "Unfinished executions are recovered at every start.");
  cmd->callback([action, args] { *action = [args] { return ServerMain(*args); }; });
}

}  // namespace baton::cli
