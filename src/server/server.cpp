#include "server/server.h"

#include <baton/postgres_store.h>
#include <baton/sqlite_store.h>

#include "runners/refusing_runner.h"
#include "server/api.h"
#include "server/dashboard/activity.h"
#include "server/dlq_replayer.h"
#include "server/feed_tail.h"
#include "server/instance_exchange.h"
#include "server/io_pool.h"
#include "server/lease_keeper.h"
#include "server/listener.h"
#include "server/metrics.h"
#include "server/submitter.h"
#include "server/triggers/deliverer.h"
#include "server/triggers/follow_ups.h"
#include "server/triggers/scheduler.h"
#include "server/websocket_session.h"
#include "server/workers/worker_session.h"
#include "store/fault_injection.h"
#include "workers/coordinator.h"

#include <boost/asio/ip/address.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unordered_map>

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

}  // namespace

// A refused worker message goes into its execution's log: through the engine while the
// execution runs there; else (it finished: the usual case for a late result) appended to
// the stored log once the engine's batches are durable, after its last event. Rare, so
// the append commits synchronously on the engine thread (no two can race for a seq).
static void LogStaleResult(EngineHost* host, const std::string& execution, const std::string& step,
                           Json details) {
  Engine* engine = host->engine();
  if (engine->RecordStaleResult(execution, step, details)) return;
  engine->WhenDurable([host, engine, execution, step, details](const Status& durable) {
    if (!durable.ok() || engine->RecordStaleResult(execution, step, details)) return;
    Store* store = host->store();
    Result<ExecutionRecord> e = store->GetExecution(execution);
    Result<int64_t> last = store->LastEventSeq(execution);
    if (!e.ok() || !last.ok()) return;  // unknown execution: nothing to log
    if (store->leases() != nullptr && !IsTerminal(e->status)) {
      // Several instances: it runs on another (or will, once claimed), whose log it is;
      // a write of it from here would be refused, and with it everything committed
      // alongside.
      std::fprintf(stderr,
                   "baton: a worker's stale result for execution %s (step %s), which runs on "
                   "another instance, was ignored\n",
                   execution.c_str(), step.c_str());
      return;
    }
    auto batch = std::make_shared<WriteBatch>();
    EventRecord ev;
    ev.execution_id = execution;
    ev.seq = *last + 1;
    ev.position = engine->TakeEventPosition();
    ev.type = "step.stale_result";
    ev.time = host->clock().Now();
    ev.step_id = step;
    ev.data = details;
    batch->events.push_back(std::move(ev));
    host->committer()->Submit(batch, [](const Status& s) {
      if (!s.ok()) {
        std::fprintf(stderr, "baton: logging a stale worker result: %s\n", s.message().c_str());
      }
    });
    host->committer()->Flush();
  });
}

struct Server::Impl {
  ServerOptions options;
  std::unique_ptr<Store> store;
  RealClock clock;
  std::unique_ptr<Runner> refused_shell;  // --no-local-shell; declared first: outlives the engine
  std::unique_ptr<EngineHost> engine;
  std::unique_ptr<TokenAuthority> auth;
  WorkflowCache workflows;
  std::unique_ptr<Submitter> submitter;
  std::unique_ptr<FollowUps> follow_ups;  // engine thread; outlives the engine
  std::unique_ptr<Deliverer> deliverer;   // engine thread; destroyed after the engine stops
  std::unique_ptr<Scheduler> scheduler;   // engine thread; destroyed after the engine stops
  std::unique_ptr<DlqReplayer> replayer;  // its timers run on the engine thread
  // Several instances: before the coordinator, which may call it until it is destroyed;
  // its thread is stopped with the keeper's.
  std::unique_ptr<InstanceExchange> exchange;
  std::unique_ptr<workers::Coordinator>
      coordinator;                      // engine thread; destroyed after the engine stops
  std::unique_ptr<LeaseKeeper> keeper;  // several instances: stopped before the engine
  ServerMetrics metrics;
  ActivityWindow activity;  // the dashboard overview's last hour
  EventHub hub;
  // Several instances: the hub is fed from the database, not from the engine.
  std::unique_ptr<FeedTail> feed_tail;
  ApiContext ctx;
  std::unique_ptr<RateLimiter> limiter;
  std::unique_ptr<Router> router;
  std::unique_ptr<IoPool> io;  // the HTTP threads (options.io_threads)
  std::shared_ptr<Listener> listener;
  std::string host;
};

// A control request another instance relayed to this one (it holds the execution).
static void ApplyRelayed(Engine& engine, Submitter* submitter, workers::Coordinator* coordinator,
                         const ControlRequest& r, std::function<void(Status, Json)> answer) {
  const Json& args = r.args.is_object() ? r.args : Json::object();
  if (r.op == "why") {
    // Not relayed again: an instance that no longer holds it says it does not wait.
    auto steps = WhySteps(engine, coordinator, r.execution_id);
    if (!steps.ok() && steps.status().code() != errc::kNotFound) {
      return answer(steps.status(), Json());
    }
    return answer(Status::Ok(), Json{{"steps", steps.ok() ? *steps : Json::array()}});
  }
  if (r.op == "signal") {
    const Json payload = args.contains("payload") ? args["payload"] : Json();
    return submitter->Signal(
        r.execution_id, args.value("name", ""), payload,
        [answer](Result<SignalRecord> sent) {
          if (!sent.ok()) return answer(sent.status(), Json());
          answer(Status::Ok(), Json{{"seq", sent->seq}});
        },
        /*relayed=*/true);
  }
  ControlOp op;
  if (r.op == "cancel") {
    op = ControlOp::kCancel;
  } else if (r.op == "pause") {
    op = ControlOp::kPause;
  } else if (r.op == "resume") {
    op = ControlOp::kResume;
  } else {
    return answer(Status(errc::kInvalidArgument, "unknown control request '" + r.op + "'"), Json());
  }
  submitter->Control(
      r.execution_id, op, args.value("reason", "cancelled through another instance"),
      [answer](Status st) { answer(std::move(st), Json()); }, /*relayed=*/true);
}

// How the scheduler starts, inspects and cancels executions. Called on the engine thread.
static Scheduler::Hooks ScheduleHooks(Server::Impl& impl) {
  Scheduler::Hooks hooks;
  Store* store = impl.store.get();
  Submitter* submitter = impl.submitter.get();
  EngineHost* host = impl.engine.get();
  hooks.start = [submitter](const ScheduleRecord& s, const std::string& key,
                            std::function<void(Result<std::string>)> done) {
    submitter->SubmitStored(s.ns, s.workflow, s.version, s.input, key,
                            [done](Result<SubmitOutcome> out) {
                              if (!out.ok()) return done(out.status());
                              done(out->execution_id);
                            });
  };
  hooks.running = [store](const std::string& id) {
    auto e = store->GetExecution(id);
    return e.ok() && !IsTerminal(e->status);
  };
  hooks.leading = [raw = &impl, leases = store->leases()] {
    return leases == nullptr || (raw->keeper != nullptr && raw->keeper->leading());
  };
  hooks.cancel = [host](const std::string& id, const std::string& reason) {
    host->Post([id, reason](Engine& engine) { (void)engine.Cancel(id, reason); });
  };
  return hooks;
}

// Notifications are POSTed by the http step runner (its egress guard and limits apply);
// trigger starts go through the submitter with the key "trigger/<delivery id>".
static Deliverer::Hooks DeliveryHooks(Server::Impl& impl) {
  Deliverer::Hooks hooks;
  Runner* http = impl.engine->http_runner();
  hooks.notify = [http](const DeliveryRecord& d, std::function<void(Deliverer::Outcome)> done) {
    RunRequest req;
    req.execution_id = d.execution_id;
    req.step_id = "notify";
    req.assignment_id = d.id + "/" + std::to_string(d.attempts + 1);
    req.type = StepType::kHttp;
    req.spec = MakeSpec({{"request",
                          {{"method", "POST"},
                           {"url", d.target},
                           {"headers",
                            {{"User-Agent", "baton-notify"},
                             {"X-Baton-Event", d.event},
                             {"X-Baton-Delivery", d.id}}},
                           {"body", d.payload},
                           {"timeout", "10s"},
                           {"max_redirects", 0},
                           {"max_output", 65536}}}});
    RunFunctions callbacks;
    callbacks.on_done = [done](RunResult result) {
      Deliverer::Outcome out;
      out.status = result.status;
      if (result.output.is_object() && result.output.contains("status")) {
        out.http_status = result.output["status"].get<int>();
      }
      const std::string& code = result.status.code();
      if (code == errc::kHttpStatus) {
        out.retryable = RetryableHttpStatus(out.http_status);
      } else if (code == errc::kValidation ||
                 result.status.message().find("egress guard") != std::string::npos) {
        out.retryable = false;  // the URL itself is refused: trying again cannot help
      }
      done(std::move(out));
    };
    http->Start(req, std::move(callbacks));
  };
  Submitter* submitter = impl.submitter.get();
  hooks.trigger = [submitter](const DeliveryRecord& d,
                              std::function<void(Deliverer::Outcome)> done) {
    const Json& p = d.payload;
    submitter->SubmitStored(d.ns, p.value("workflow", ""), p.value("version", 0),
                            p.value("input", Json::object()), "trigger/" + d.id,
                            [done](Result<SubmitOutcome> started) {
                              Deliverer::Outcome out;
                              if (started.ok()) {
                                out.result = started->execution_id;
                              } else {
                                out.status = started.status();
                                // A missing workflow or refused input stays so; a store error may
                                // pass.
                                out.retryable = started.status().code() == errc::kStore;
                              }
                              done(std::move(out));
                            });
  };
  return hooks;
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  Stop();
  if (impl_->keeper) impl_->keeper->Stop();
  if (impl_->exchange) impl_->exchange->Stop();
  if (impl_->engine) impl_->engine->Stop();
  if (impl_->feed_tail) impl_->feed_tail->Stop();
}

Result<std::unique_ptr<Server>> Server::Open(const ServerOptions& options) {
  auto endpoint = ParseListen(options.listen);
  if (!endpoint.ok()) return endpoint.status();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (options.clock_start != 0) impl->clock = RealClock(options.clock_start, options.clock_rate);
  impl->host = endpoint->address().to_string();
  if (endpoint->address().is_unspecified()) impl->host = "127.0.0.1";
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
  auto faulty = WithFaultsFromEnv(std::move(store.value()));  // tests only
  if (!faulty.ok()) return faulty.status();
  impl->store = std::move(faulty.value());

  impl->auth = std::make_unique<TokenAuthority>(impl->store.get(), &impl->clock);
  auto admin = impl->auth->EnsureAdmin();
  if (!admin.ok()) return admin.status();

  // The http steps' egress allow-list comes from BATON_HTTP_ALLOW.
  Result<HttpRunnerOptions> http = HttpRunnerOptionsFromEnv();
  if (!http.ok()) return http.status();
  // Follow-ups are written with each terminal state and handed to the deliverer once
  // durable (both live on the engine thread; the deliverer exists before any finish).
  Server::Impl* raw = impl.get();
  impl->follow_ups = std::make_unique<FollowUps>(
      [raw](std::vector<DeliveryRecord> records) { raw->deliverer->Add(std::move(records)); });
  auto triggers = impl->store->ListTriggers("");
  if (!triggers.ok()) return triggers.status();
  impl->follow_ups->SetTriggers(std::move(triggers.value()));
  EngineOptions engine_options;
  engine_options.parallel = options.parallel;
  engine_options.stall_after = options.stall_after;
  engine_options.max_running_executions = options.max_running_executions;
  engine_options.cache = options.cache;
  engine_options.finish_hook = impl->follow_ups.get();
  // `concurrency: cancel_oldest` over several instances: the oldest may run on another
  // (the submitter forwards the cancel to it; the new execution waits for the slot).
  engine_options.cancel_elsewhere = [raw](const std::string& id, const std::string& reason) {
    if (raw->submitter) raw->submitter->Control(id, ControlOp::kCancel, reason, [](Status) {});
  };
  // A `type: workflow` step starts a workflow of the caller's namespace, by name.
  engine_options.child_workflows = [store = impl->store.get(), cache = &impl->workflows](
                                       const std::string& ns, const std::string& name,
                                       int version) {
    return LoadStoredWorkflow(store, ns, name, version, cache);
  };
  impl->engine =
      std::make_unique<EngineHost>(impl->store.get(), engine_options, *http, impl->clock);
  impl->engine->AddObserver(&impl->metrics);
  impl->engine->AddObserver(&impl->activity);
  if (SharedFeed* feed = impl->store->feed(); feed != nullptr) {
    impl->feed_tail = std::make_unique<FeedTail>(feed, &impl->hub);
    impl->engine->AddObserver(impl->feed_tail.get());
  } else {
    // The feed hears of events on the writer's thread, as the submit's answer does: a
    // client waiting for execution.completed gets it without a hop through the engine.
    impl->engine->AddObserver(&impl->hub, ObserverThread::kCommit);
  }
  impl->submitter = std::make_unique<Submitter>(impl->engine.get(), &impl->workflows);
  // Command steps go to remote workers. What workers held when the previous process
  // stopped is loaded before recovery, which re-attaches their steps.
  impl->coordinator = std::make_unique<workers::Coordinator>(
      impl->engine->loop(), impl->engine->joining_committer(), options.coordinator);
  if (Status s = impl->coordinator->Load(impl->store.get()); !s.ok()) return s;
  if (OfferBoard* board = impl->store->offers(); board != nullptr) {
    // Several instances: a step no worker connected here can take is offered to the
    // others, and this instance's workers take theirs; a control request (or a `why`)
    // for an execution another instance holds goes to that one.
    impl->exchange =
        std::make_unique<InstanceExchange>(board, impl->store->relay(), impl->engine.get(),
                                           impl->coordinator.get(), impl->store->leases()->lease());
    impl->coordinator->SetExchange(impl->exchange.get());
    // The instance that fires cron schedules also clears the board.
    impl->exchange->SetLeading([raw] { return raw->keeper && raw->keeper->leading(); });
    InstanceExchange* exchange = impl->exchange.get();
    impl->submitter->SetForward([exchange](const std::string& holder, ControlRequest request,
                                           std::function<void(Status, Json)> done) {
      exchange->Ask(holder, std::move(request), std::move(done));
    });
    impl->exchange->SetApply(
        [submitter = impl->submitter.get(), coordinator = impl->coordinator.get()](
            Engine& engine, const ControlRequest& r, std::function<void(Status, Json)> answer) {
          ApplyRelayed(engine, submitter, coordinator, r, std::move(answer));
        });
  }
  EngineHost* engine_host = impl->engine.get();
  // A worker that keeps sending for work it lost must not grow the event log without
  // bound: a step's log shows its first few stale messages; the metric counts them all.
  auto logged = std::make_shared<std::unordered_map<std::string, int>>();  // engine thread
  impl->coordinator->SetStaleHandler(
      [engine_host, logged](const std::string& execution, const std::string& step, Json details) {
        constexpr int kStaleEventsPerStep = 3;
        constexpr size_t kTrackedSteps = 4096;
        if (logged->size() >= kTrackedSteps) logged->clear();
        int& n = (*logged)[execution + "/" + step];
        if (++n > kStaleEventsPerStep) return;
        if (n == kStaleEventsPerStep) {
          details["note"] =
              "further stale messages for this step are counted in "
              "baton_stale_messages_total, not logged";
        }
        LogStaleResult(engine_host, execution, step, std::move(details));
      });
  impl->coordinator->SetReassignHandler(
      [engine_host](const std::string& execution, const std::string& step, Json details) {
        engine_host->engine()->RecordReassignment(execution, step, std::move(details));
      });
  impl->engine->SetRunner(StepType::kCommand, impl->coordinator->runner());
  // Shell and http steps: the same dispatch path, on the in-process local worker; with
  // --no-local-shell its shell runner fails each attempt at once, saying why.
  Runner* shell = impl->engine->shell_runner();
  if (!options.local_shell) {
    impl->refused_shell = runners::MakeRefusingRunner(
        Status(errc::kUnsupportedStepType,
               "shell steps do not run on this server (started with --no-local-shell); use a "
               "`command` step for a remote worker"));
    shell = impl->refused_shell.get();
  }
  impl->coordinator->AddLocalWorker(
      workers::LocalWorkerFor(engine_options, shell, impl->engine->http_runner()));
  impl->engine->SetRunner(StepType::kShell, impl->coordinator->local_runner());
  impl->engine->SetRunner(StepType::kHttp, impl->coordinator->local_runner());
  Deliverer::Options delivery;
  delivery.base_delay = options.delivery_retry_base;
  delivery.max_attempts = options.delivery_attempts;
  impl->deliverer = std::make_unique<Deliverer>(impl->engine->loop(), impl->engine->committer(),
                                                DeliveryHooks(*impl), delivery);

  ApiContext& ctx = impl->ctx;
  ctx.store = impl->store.get();
  ctx.engine = impl->engine.get();
  ctx.auth = impl->auth.get();
  ctx.submitter = impl->submitter.get();
  ctx.workflows = &impl->workflows;
  ctx.metrics = &impl->metrics;
  ctx.activity = &impl->activity;
  ctx.limits = options.limits;
  impl->scheduler =
      std::make_unique<Scheduler>(impl->engine->loop(), impl->store.get(), ScheduleHooks(*impl));
  ctx.scheduler = impl->scheduler.get();
  ctx.follow_ups = impl->follow_ups.get();
  ctx.deliverer = impl->deliverer.get();
  ctx.coordinator = impl->coordinator.get();
  impl->replayer = std::make_unique<DlqReplayer>(impl->engine.get(), impl->submitter.get());
  ctx.replayer = impl->replayer.get();
  impl->limiter = std::make_unique<RateLimiter>(
      &impl->clock, RateLimit{options.limits.rate_per_second, options.limits.rate_burst});
  impl->router = std::make_unique<Router>(impl->auth.get(), impl->limiter.get());
  impl->router->CountUnhandledIn(impl->metrics.handler_exceptions());
  AddSystemRoutes(*impl->router, ctx);
  AddWorkflowRoutes(*impl->router, ctx);
  AddExecutionBulkRoutes(*impl->router, ctx);
  AddExecutionRoutes(*impl->router, ctx);
  AddTokenRoutes(*impl->router, ctx);
  AddScheduleRoutes(*impl->router, ctx);
  AddHookRoutes(*impl->router, ctx);
  AddTriggerRoutes(*impl->router, ctx);
  AddDeadLetterRoutes(*impl->router, ctx);
  AddBreakerRoutes(*impl->router, ctx);
  AddCacheRoutes(*impl->router, ctx);
  AddPoolRoutes(*impl->router, ctx);
  AddWorkerRoutes(*impl->router, ctx);
  AddDashboardRoutes(*impl->router, ctx);

  auto shared = std::make_shared<SessionShared>();
  shared->router = impl->router.get();
  shared->metrics = &impl->metrics;
  shared->limits = options.limits;
  shared->websocket = std::make_shared<WebSocketContext>();
  shared->websocket->hub = &impl->hub;
  shared->websocket->store = impl->store.get();
  shared->websocket->auth = impl->auth.get();
  shared->workers = std::make_shared<WorkerSessionContext>();
  shared->workers->auth = impl->auth.get();
  shared->workers->engine = impl->engine.get();
  shared->workers->coordinator = impl->coordinator.get();
  shared->workers->wire = impl->metrics.worker_wire();
  shared->workers->max_queued = options.limits.max_worker_queue;
  impl->io = std::make_unique<IoPool>(options.io_threads);
  impl->listener = std::make_shared<Listener>(*impl->io, shared);
  if (Status s = impl->listener->Open(*endpoint); !s.ok()) return s;

  // Deliveries still pending from before the restart, read before recovery can add
  // new ones (those arrive through follow_ups).
  DeliveryFilter pending;
  pending.status = DeliveryStatus::kPending;
  pending.limit = 0;
  ExecutionLeases* leases = impl->store->leases();
  // Several instances: the one that takes the cron role sends what is pending instead
  // (below), once, not every instance at its start.
  auto unsent = leases == nullptr
                    ? impl->store->ListDeliveries(pending)
                    : Result<std::vector<DeliveryRecord>>(std::vector<DeliveryRecord>{});
  if (!unsent.ok()) return unsent.status();
  auto recovered = impl->engine->Start(/*recover=*/leases == nullptr);
  if (!recovered.ok()) return recovered.status();
  if (*recovered > 0) {
    std::fprintf(stderr, "baton: recovered %zu unfinished execution(s)\n", *recovered);
  }
  EngineHost* host = impl->engine.get();
  Scheduler* scheduler = impl->scheduler.get();
  // Made before anything posted to the engine thread reads it (the scheduler asks it
  // whether this instance fires schedules).
  if (leases != nullptr) impl->keeper = std::make_unique<LeaseKeeper>(leases, host);
  host->Post([scheduler](Engine&) {
    if (Status s = scheduler->Load(); !s.ok()) {
      std::fprintf(stderr, "baton: loading schedules: %s\n", s.message().c_str());
    }
  });
  Deliverer* deliverer = impl->deliverer.get();
  host->Post([deliverer, unsent = std::move(unsent.value())](Engine&) mutable {
    deliverer->Add(std::move(unsent));
  });
  if (leases != nullptr) {
    // Several instances: this one takes back what its name held before a restart and
    // what others stopped renewing; the one that holds the cron role fires schedules,
    // reloading them from the store when it takes the role.
    impl->keeper->Start();
    if (impl->exchange) impl->exchange->Start();
    if (impl->feed_tail) impl->feed_tail->Start();
    std::fprintf(stderr, "baton: instance %s of a shared PostgreSQL database (lease %lld ms)\n",
                 leases->instance().c_str(), static_cast<long long>(leases->lease().count()));
  }
  ServerMetrics* metrics = &impl->metrics;
  // Read at each scrape, from the I/O threads (LiveCounts is thread-safe); the engine
  // outlives the listener that serves /metrics.
  metrics->SetLiveSource([engine = impl->engine->engine()] { return engine->LiveCounts(); });
  workers::Coordinator* coordinator = impl->coordinator.get();
  // Executions a refused batch dropped, not read back yet (the store may be unreadable
  // too: a database server that is gone), and whether breakers and pools need reloading.
  struct Readoption {
    std::vector<std::string> pending;
    bool reload_guards = false;
  };
  auto readoption = std::make_shared<Readoption>();
  LeaseKeeper* keeper = impl->keeper.get();
  auto was_leading = std::make_shared<bool>(false);
  auto since_reload = std::make_shared<int>(0);
  host->Every(Duration(500), [host, metrics, deliverer, coordinator, readoption, leases, keeper,
                              scheduler, was_leading, since_reload](Engine& engine) {
    if (keeper != nullptr && keeper->leading() && ++*since_reload >= 10) {
      // Schedules created, changed or deleted through other instances, every 5 s.
      *since_reload = 0;
      if (Status s = scheduler->Load(); !s.ok()) {
        std::fprintf(stderr, "baton: reloading schedules: %s\n", s.message().c_str());
      }
    }
    if (keeper != nullptr && keeper->leading() != *was_leading) {
      *was_leading = keeper->leading();
      if (*was_leading) {
        *since_reload = 0;
        if (Status s = scheduler->Load(); !s.ok()) {
          std::fprintf(stderr, "baton: reloading schedules: %s\n", s.message().c_str());
        }
        // Notifications an instance that died left pending (at least once: one it was
        // sending may go twice).
        DeliveryFilter left;
        left.status = DeliveryStatus::kPending;
        left.limit = 0;
        auto left_unsent = host->store()->ListDeliveries(left);
        if (left_unsent.ok()) {
          deliverer->Add(std::move(left_unsent).value());
        } else {
          std::fprintf(stderr, "baton: reading pending deliveries: %s\n",
                       left_unsent.status().message().c_str());
        }
      }
    }
    // Executions a refused batch dropped come back from their stored state, so the
    // engine heals without a restart once the store takes writes again (a running step
    // was stopped: its attempt ends ENGINE_RESTART and the retry policy decides). One
    // that cannot be read now is tried again at the next tick.
    std::vector<std::string> abandoned = engine.TakeAbandoned();
    Readoption& r = *readoption;
    // A refused batch may have held breaker changes too: the store's breakers are the
    // truth again.
    if (!abandoned.empty()) r.reload_guards = true;
    r.pending.insert(r.pending.end(), abandoned.begin(), abandoned.end());
    if (r.reload_guards) {
      Status breakers = LoadBreakers(host->store(), &engine);
      Status pools = breakers.ok() ? LoadPools(host->store(), &engine) : breakers;
      if (!pools.ok()) {
        std::fprintf(stderr, "baton: reloading circuit breakers and pools: %s\n",
                     pools.message().c_str());
      }
      r.reload_guards = !pools.ok();
    }
    std::vector<std::string> again;
    for (const std::string& id : r.pending) {
      // Several instances: only what this one still holds comes back here (the rest is
      // another's now), and only once a renewal says the leases stand.
      if (leases != nullptr && !leases->Holds(id)) continue;
      if (leases != nullptr && !leases->Trusted()) {
        again.push_back(id);
        continue;
      }
      auto back = RecoverExecutions(host->store(), &engine, id);
      if (back.ok() || back.status().code() == errc::kConflict ||
          back.status().code() == errc::kNotFound) {
        continue;
      }
      std::fprintf(stderr, "baton: re-adopting execution %s (trying again): %s\n", id.c_str(),
                   back.status().message().c_str());
      again.push_back(id);
    }
    r.pending = std::move(again);
    metrics->SetEngineStats(engine.Stats(), host->commit_stats(), host->clock().Now());
    metrics->SetBreakers(engine.Breakers(""));
    metrics->SetDeliveryStats(deliverer->stats());
    std::map<std::string, int> by_state;
    for (const workers::WorkerEntry* w : coordinator->registry().List(""))
      ++by_state[ToString(w->state)];
    metrics->SetCoordinatorStats(coordinator->stats(), std::move(by_state),
                                 coordinator->WaitingCount());
  });

  // Start() has just come back from the engine's thread, after recovery: alive as of
  // now, should /health be asked before the first periodic report above has run.
  metrics->NoteEngineAlive(host->clock().Now());

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
