// Server::Open builds a server part by part (server_impl.h says what it owns); Run and
// Stop serve and end it.
#include "server/server.h"

#include <baton/postgres_store.h>
#include <baton/sqlite_store.h>

#include "runners/refusing_runner.h"
#include "server/server_impl.h"
#include "server/websocket_session.h"
#include "server/workers/worker_session.h"
#include "store/fault_injection.h"

#include <boost/asio/ip/address.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace baton::server {

namespace net = boost::asio;

std::string DefaultCredentialsPath() {
  if (const char* p = std::getenv("BATON_CREDENTIALS"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) {
    return std::string(x) + "/baton/credentials.json";
  }
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.config/baton/credentials.json";
}

namespace {

Result<net::ip::tcp::endpoint> ParseListen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return Status(errc::kInvalidArgument, "--listen must be HOST:PORT, got '" + listen + "'");
  }
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  std::string port = listen.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535) {
    return Status(errc::kInvalidArgument, "--listen: bad port '" + port + "'");
  }
  if (host.empty() || host == "localhost") host = "127.0.0.1";
  boost::system::error_code ec;
  auto addr = net::ip::make_address(host, ec);
  if (ec) {
    return Status(errc::kInvalidArgument,
                  "--listen: '" + host + "' is not an IP address (e.g. 127.0.0.1 or 0.0.0.0)");
  }
  return net::ip::tcp::endpoint(addr, static_cast<uint16_t>(std::stoi(port)));
}

// The file the CLI reads: {"server": URL, "token": SECRET}. Written 0600.
Status WriteCredentials(const std::string& path, const std::string& url, const std::string& token) {
  Json j = Json::object();
  if (std::ifstream in(path); in) {
    j = Json::parse(in, nullptr, false);
    if (!j.is_object()) j = Json::object();
  }
  j["server"] = url;
  if (!token.empty()) j["token"] = token;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status(errc::kIo, "cannot write " + tmp);
    ::chmod(tmp.c_str(), 0600);
    out << j.dump(2) << "\n";
    if (!out.flush()) return Status(errc::kIo, "cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status(errc::kIo, "cannot write " + path + ": " + ec.message());
  return Status::Ok();
}

// The configured database: PostgreSQL when a URL is given, else the SQLite file; wrapped
// in the fault injector that BATON_FAULTS asks for (tests only).
Result<std::unique_ptr<Store>> OpenConfiguredStore(const ServerOptions& options) {
  Result<std::unique_ptr<Store>> store = Status(errc::kStore, "no store");
  if (!options.postgres_url.empty()) {
    PostgresOptions postgres;
    postgres.readers = std::max(2, options.io_threads);  // one per thread that serves reads
    postgres.instance = options.instance;
    postgres.lease = options.lease;
    store = OpenPostgresStore(options.postgres_url, postgres);
  } else {
    SqliteOptions sqlite;
    sqlite.synchronous_full = !options.sync_normal;
    store = OpenSqliteStore(options.db_path, sqlite);
  }
  if (!store.ok()) return store.status();
  return WithFaultsFromEnv(std::move(store.value()));  // tests only
}

// The engine on its thread (not started yet), with what it calls when an execution ends
// and the observers that watch it: metrics, the dashboard's activity and the live feed.
// `out` gets the options it was made with (the local worker is made from them).
Status BuildEngine(Server::Impl& impl, const HttpRunnerOptions& http, EngineOptions* out) {
  // Follow-ups are written with each terminal state and handed to the deliverer once
  // durable (both live on the engine thread; the deliverer exists before any finish).
  Server::Impl* raw = &impl;
  impl.follow_ups = std::make_unique<FollowUps>(
      [raw](std::vector<DeliveryRecord> records) { raw->deliverer->Add(std::move(records)); });
  auto triggers = impl.store->ListTriggers("");
  if (!triggers.ok()) return triggers.status();
  impl.follow_ups->SetTriggers(std::move(triggers.value()));
  EngineOptions& engine_options = *out;
  const ServerOptions& options = impl.options;
  engine_options.parallel = options.parallel;
  engine_options.stall_after = options.stall_after;
  engine_options.max_running_executions = options.max_running_executions;
  engine_options.cache = options.cache;
  impl.finish_hooks =
      std::make_unique<FinishHooks>(std::vector<FinishHook*>{impl.follow_ups.get(), &impl.waits});
  engine_options.finish_hook = impl.finish_hooks.get();
  // `concurrency: cancel_oldest` over several instances: the oldest may run on another
  // (the submitter forwards the cancel to it; the new execution waits for the slot).
  engine_options.cancel_elsewhere = [raw](const std::string& id, const std::string& reason) {
    if (raw->submitter) raw->submitter->Control(id, ControlOp::kCancel, reason, [](Status) {});
  };
  // A `type: workflow` step starts a workflow of the caller's namespace, by name.
  engine_options.child_workflows = [store = impl.store.get(), cache = &impl.workflows](
                                       const std::string& ns, const std::string& name,
                                       int version) {
    return LoadStoredWorkflow(store, ns, name, version, cache);
  };
  impl.engine = std::make_unique<EngineHost>(impl.store.get(), engine_options, http, impl.clock);
  impl.waits.SetLoop(impl.engine->loop());
  if (impl.options.postgres_url.empty()) impl.engine->CommitWhenIdle();
  impl.engine->UseShortSlices(std::chrono::microseconds(impl.options.thread_slice_us));
  impl.engine->AddObserver(&impl.metrics);
  impl.engine->AddObserver(&impl.activity);
  // A waited submit's answer goes out from the committing thread, as the feed's events.
  impl.engine->AddObserver(&impl.waits, ObserverThread::kCommit);
  if (SharedFeed* feed = impl.store->feed(); feed != nullptr) {
    impl.feed_tail = std::make_unique<FeedTail>(feed, &impl.hub);
    impl.engine->AddObserver(impl.feed_tail.get());
  } else {
    // The feed hears of events on the committing thread, as the submit's answer does: a
    // client waiting for execution.completed gets it without a hop through the engine.
    impl.engine->AddObserver(&impl.hub, ObserverThread::kCommit);
  }
  // The only writer of its catalog remembers which version a name stands for
  // (workflow_cache.h).
  impl.workflows.RememberVersions(impl.store->leases() == nullptr);
  impl.submitter = std::make_unique<Submitter>(impl.engine.get(), &impl.workflows);
  return Status::Ok();
}

// Command steps go to remote workers; shell and http steps to the in-process local
// worker, through the same coordinator. Also the deliverer of notifications and triggers.
Status BuildCoordinator(Server::Impl& impl, const EngineOptions& engine_options) {
  const ServerOptions& options = impl.options;
  // What workers held when the previous process stopped is loaded before recovery,
  // which re-attaches their steps.
  impl.coordinator = std::make_unique<workers::Coordinator>(
      impl.engine->loop(), impl.engine->joining_committer(), options.coordinator);
  if (Status s = impl.coordinator->Load(impl.store.get()); !s.ok()) return s;
  WireCoordinator(impl);
  impl.engine->SetRunner(StepType::kCommand, impl.coordinator->runner());
  // Shell and http steps: the same dispatch path, on the in-process local worker; with
  // --no-local-shell its shell runner fails each attempt at once, saying why.
  Runner* shell = impl.engine->shell_runner();
  if (!impl.options.local_shell) {
    impl.refused_shell = runners::MakeRefusingRunner(
        Status(errc::kUnsupportedStepType,
               "shell steps do not run on this server (started with --no-local-shell); use a "
               "`command` step for a remote worker"));
    shell = impl.refused_shell.get();
  }
  impl.coordinator->AddLocalWorker(
      workers::LocalWorkerFor(engine_options, shell, impl.engine->http_runner()));
  impl.engine->SetRunner(StepType::kShell, impl.coordinator->local_runner());
  impl.engine->SetRunner(StepType::kHttp, impl.coordinator->local_runner());
  Deliverer::Options delivery;
  delivery.base_delay = impl.options.delivery_retry_base;
  delivery.max_attempts = impl.options.delivery_attempts;
  impl.deliverer = std::make_unique<Deliverer>(impl.engine->loop(), impl.engine->committer(),
                                               DeliveryHooks(impl), delivery);
  return Status::Ok();
}

// What the HTTP routes reach (ApiContext), the scheduler and the DLQ replayer they
// drive, and the router with every route.
void BuildApi(Server::Impl& impl) {
  ApiContext& ctx = impl.ctx;
  const ServerOptions& options = impl.options;
  ctx.store = impl.store.get();
  ctx.engine = impl.engine.get();
  ctx.auth = impl.auth.get();
  ctx.submitter = impl.submitter.get();
  ctx.workflows = &impl.workflows;
  ctx.metrics = &impl.metrics;
  ctx.activity = &impl.activity;
  ctx.limits = options.limits;
  impl.scheduler =
      std::make_unique<Scheduler>(impl.engine->loop(), impl.store.get(), ScheduleHooks(impl));
  ctx.scheduler = impl.scheduler.get();
  ctx.follow_ups = impl.follow_ups.get();
  ctx.waits = &impl.waits;
  ctx.deliverer = impl.deliverer.get();
  ctx.coordinator = impl.coordinator.get();
  impl.replayer = std::make_unique<DlqReplayer>(impl.engine.get(), impl.submitter.get());
  ctx.replayer = impl.replayer.get();
  impl.limiter = std::make_unique<RateLimiter>(
      &impl.clock, RateLimit{options.limits.rate_per_second, options.limits.rate_burst});
  impl.router = std::make_unique<Router>(impl.auth.get(), impl.limiter.get());
  impl.router->CountUnhandledIn(impl.metrics.handler_exceptions());
  AddSystemRoutes(*impl.router, ctx);
  AddWorkflowRoutes(*impl.router, ctx);
  AddExecutionBulkRoutes(*impl.router, ctx);
  AddExecutionRoutes(*impl.router, ctx);
  AddTokenRoutes(*impl.router, ctx);
  AddScheduleRoutes(*impl.router, ctx);
  AddHookRoutes(*impl.router, ctx);
  AddTriggerRoutes(*impl.router, ctx);
  AddDeadLetterRoutes(*impl.router, ctx);
  AddBreakerRoutes(*impl.router, ctx);
  AddCacheRoutes(*impl.router, ctx);
  AddPoolRoutes(*impl.router, ctx);
  AddWorkerRoutes(*impl.router, ctx);
  AddDashboardRoutes(*impl.router, ctx);
}

// The I/O threads and the listener, bound to `endpoint` (not accepting until Run()).
Status OpenListener(Server::Impl& impl, const net::ip::tcp::endpoint& endpoint) {
  const ServerOptions& options = impl.options;
  auto shared = std::make_shared<SessionShared>();
  shared->router = impl.router.get();
  shared->metrics = &impl.metrics;
  shared->limits = options.limits;
  shared->websocket = std::make_shared<WebSocketContext>();
  shared->websocket->hub = &impl.hub;
  shared->websocket->store = impl.store.get();
  shared->websocket->auth = impl.auth.get();
  shared->workers = std::make_shared<WorkerSessionContext>();
  shared->workers->auth = impl.auth.get();
  shared->workers->engine = impl.engine.get();
  shared->workers->coordinator = impl.coordinator.get();
  shared->workers->wire = impl.metrics.worker_wire();
  shared->workers->max_queued = options.limits.max_worker_queue;
  impl.io = std::make_unique<IoPool>(options.io_threads,
                                     std::chrono::microseconds(options.thread_slice_us));
  impl.listener = std::make_shared<Listener>(*impl.io, shared);
  return impl.listener->Open(endpoint);
}

// Starts the engine (recovering what the last process left unless several instances
// share the database: then the lease keeper claims executions), then loads schedules and
// hands the deliverer what was still pending.
Status StartEngine(Server::Impl& impl) {
  // Deliveries still pending from before the restart, read before recovery can add
  // new ones (those arrive through follow_ups).
  DeliveryFilter pending;
  pending.status = DeliveryStatus::kPending;
  pending.limit = 0;
  ExecutionLeases* leases = impl.store->leases();
  // Several instances: the one that takes the cron role sends what is pending instead
  // (below), once, not every instance at its start.
  auto unsent = leases == nullptr
                    ? impl.store->ListDeliveries(pending)
                    : Result<std::vector<DeliveryRecord>>(std::vector<DeliveryRecord>{});
  if (!unsent.ok()) return unsent.status();
  auto recovered = impl.engine->Start(/*recover=*/leases == nullptr);
  if (!recovered.ok()) return recovered.status();
  if (*recovered > 0) {
    std::fprintf(stderr, "baton: recovered %zu unfinished execution(s)\n", *recovered);
  }
  EngineHost* host = impl.engine.get();
  Scheduler* scheduler = impl.scheduler.get();
  // Made before anything posted to the engine thread reads it (the scheduler asks it
  // whether this instance fires schedules).
  if (leases != nullptr) impl.keeper = std::make_unique<LeaseKeeper>(leases, host);
  host->Post([scheduler](Engine&) {
    if (Status s = scheduler->Load(); !s.ok()) {
      std::fprintf(stderr, "baton: loading schedules: %s\n", s.message().c_str());
    }
  });
  Deliverer* deliverer = impl.deliverer.get();
  host->Post([deliverer, unsent = std::move(unsent.value())](Engine&) mutable {
    deliverer->Add(std::move(unsent));
  });
  if (leases != nullptr) {
    // Several instances: this one takes back what its name held before a restart and
    // what others stopped renewing; the one that holds the cron role fires schedules,
    // reloading them from the store when it takes the role.
    impl.keeper->Start();
    if (impl.exchange) impl.exchange->Start();
    if (impl.feed_tail) impl.feed_tail->Start();
    std::fprintf(stderr, "baton: instance %s of a shared PostgreSQL database (lease %lld ms)\n",
                 leases->instance().c_str(), static_cast<long long>(leases->lease().count()));
  }
  return Status::Ok();
}

}  // namespace

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  Stop();
  if (impl_->keeper) impl_->keeper->Stop();
  if (impl_->exchange) impl_->exchange->Stop();
  if (impl_->engine) impl_->engine->Stop();
  if (impl_->feed_tail) impl_->feed_tail->Stop();
  // Submits still waiting hold their HTTP sessions: let them go while the I/O contexts
  // (destroyed before the waits) still exist.
  impl_->waits.DropAll();
}

Result<std::unique_ptr<Server>> Server::Open(const ServerOptions& options) {
  auto endpoint = ParseListen(options.listen);
  if (!endpoint.ok()) return endpoint.status();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (options.clock_start != 0) impl->clock = RealClock(options.clock_start, options.clock_rate);
  impl->host = endpoint->address().to_string();
  if (endpoint->address().is_unspecified()) impl->host = "127.0.0.1";
  auto store = OpenConfiguredStore(options);
  if (!store.ok()) return store.status();
  impl->store = std::move(store.value());

  impl->auth = std::make_unique<TokenAuthority>(impl->store.get(), &impl->clock);
  auto admin = impl->auth->EnsureAdmin();
  if (!admin.ok()) return admin.status();
  // The http steps' egress allow-list comes from BATON_HTTP_ALLOW.
  Result<HttpRunnerOptions> http = HttpRunnerOptionsFromEnv();
  if (!http.ok()) return http.status();
  EngineOptions engine_options;
  if (Status s = BuildEngine(*impl, *http, &engine_options); !s.ok()) return s;
  if (Status s = BuildCoordinator(*impl, engine_options); !s.ok()) return s;
  BuildApi(*impl);
  if (Status s = OpenListener(*impl, *endpoint); !s.ok()) return s;
  if (Status s = StartEngine(*impl); !s.ok()) return s;
  StartHousekeeping(*impl);
  // Start() has just come back from the engine's thread, after recovery: alive as of
  // now, should /health be asked before the first periodic report above has run.
  impl->metrics.NoteEngineAlive(impl->clock.Now());

  std::unique_ptr<Server> server(new Server(std::move(impl)));
  const std::string creds =
      options.credentials_path.empty() ? DefaultCredentialsPath() : options.credentials_path;
  if (admin->has_value()) {
    if (Status s = WriteCredentials(creds, server->url(), (*admin)->secret); !s.ok()) return s;
    std::fprintf(stderr, "baton: created the first admin token (id %s); stored in %s for the CLI\n",
                 (*admin)->record.id.c_str(), creds.c_str());
  } else if (std::filesystem::exists(creds)) {
    (void)WriteCredentials(creds, server->url(), "");  // keep the CLI pointed at this port
  }
  return server;
}

uint16_t Server::port() const {
  return impl_->listener->port();
}

std::string Server::url() const {
  std::string host = impl_->host;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return "http://" + host + ":" + std::to_string(port());
}

void Server::Run() {
  impl_->listener->Start();
  impl_->io->Run();
  if (impl_->keeper) impl_->keeper->Stop();
  if (impl_->exchange) impl_->exchange->Stop();
  impl_->engine->Stop();
  if (impl_->feed_tail) impl_->feed_tail->Stop();
}

void Server::Handle(std::shared_ptr<const HttpRequest> request, Responder respond) const {
  impl_->router->Handle(std::move(request), std::move(respond));
}

void Server::Stop() {
  impl_->listener->Close();
  impl_->io->Stop();
}

}  // namespace baton::server
