// Remote worker benchmarks (bench/README.md): a real `baton server` on loopback (SQLite
// synchronous=FULL unless --sync-normal, group commit), workers speaking the WebSocket protocol
// from this process (they ack and answer each command at once: no handler process), load from
// client::ApiClient threads. Each measurement runs on a fresh server and database:
//   1. dispatch latency: a steady 1,000 one-step executions/s; the server's own p50/p99
//      of "dispatch durable (Runner::Start) -> accepted ack processed" read from /metrics
//      after the run (DESIGN.md §9: p50 <= 250 us, p99 <= 1 ms; the issue: p50 <= 1 ms),
//      and the same from Runner::Prepare, which adds the commit that makes the dispatch
//      and its assignment durable. Beside them, what a worker sees: the client's submit
//      to the command's arrival.
//   2. throughput: 20,000 executions submitted as fast as possible while 2 workers
//      serve; completed executions/s, completion seen in /metrics. Then as many queued
//      before the workers connect: the dispatch path without the submissions.
//   3. failover: --heartbeat-interval 200ms --heartbeat-timeout 1s; a worker process
//      holding a task is killed with SIGKILL; the time until another worker receives
//      the reassigned command (<dispatch>.r1). Repeated; min/median/max.
//   4. round trips: one execution at a time, the client's submit -> execution.completed
//      on the live feed (types=: the final events only), with the workers above: what
//      bench/peers' `worker-latency` measures from Node, with a lean client and worker.
// Usage: baton_bench_worker [--baton PATH] [--rate N] [--seconds S] [--tasks N] ...
// (--help lists them).
#include "client/api_client.h"
#include "client/event_stream.h"
#include "protocol/worker_protocol.h"
#include "support/process_util.h"
#include "support/server_process.h"
#include "worker/websocket_connection.h"

#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

namespace baton::bench {
namespace {

using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC: the same in every process
using client::ApiClient;
using testing::ServerProcess;
using testing::WaitUntil;

constexpr const char* kCommand = "bench.noop";
constexpr const char* kWorkflow = R"(name: bench-remote
steps:
  - id: run
    type: command
    command: bench.noop
    retry: {max_attempts: 1}
)";

double Us(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}
double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// The value at quantile q of `v` as the server computes it (the element at q*(n-1)).
double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return NAN;
  auto nth = v.begin() + static_cast<std::ptrdiff_t>(q * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), nth, v.end());
  return *nth;
}

// ---- a worker: the protocol over one WebSocket connection, on its own thread ----

struct Arrival {
  std::string assignment_id;
  std::string execution_id;
  Clock::time_point at;
};

struct WorkerConfig {
  std::string id;
  int capacity = 64;
  bool answer = true;             // false: ack accepted, never send a result (hold it)
  std::function<void()> on_send;  // after each message sent
};

WorkerConfig Answering(std::string id, int capacity) {
  WorkerConfig config;
  config.id = std::move(id);
  config.capacity = capacity;
  return config;
}

class BenchWorker {
 public:
  BenchWorker(client::Endpoint endpoint, WorkerConfig config)
      : endpoint_(std::move(endpoint)), config_(std::move(config)) {}
  ~BenchWorker() { Stop(/*deregister=*/false); }

  // Connects, registers, and serves on a thread of its own.
  Status Start() {
    worker::WebSocketOptions options;
    options.log = [](const std::string& line) {
      std::fprintf(stderr, "worker: %s\n", line.c_str());
    };
    auto conn = worker::OpenWebSocketConnection(endpoint_, options);
    if (!conn.ok()) return conn.status();
    conn_ = std::move(*conn);
    protocol::Register reg;
    reg.worker_id = config_.id;
    reg.capacity = config_.capacity;
    reg.commands = {kCommand};
    if (Status s = Send(reg); !s.ok()) return s;
    auto reply = conn_->Receive(Duration(10'000));
    if (!reply.ok()) return reply.status();
    const auto* registered =
        reply->has_value() ? std::get_if<protocol::Registered>(&**reply) : nullptr;
    if (registered == nullptr) return Status(errc::kIo, config_.id + ": no `registered` reply");
    heartbeat_every_ = std::chrono::milliseconds(registered->heartbeat_interval_ms);
    thread_ = std::thread([this] { Serve(); });
    return Status::Ok();
  }

  // Stops serving; with `deregister`, says goodbye first (else: as if it vanished).
  void Stop(bool deregister) {
    if (!thread_.joinable()) return;
    stop_ = true;
    conn_->Interrupt();
    thread_.join();
    if (deregister) (void)Send(protocol::Deregister{});
    conn_->Close();
  }

  // The first arrival whose assignment id ends with `suffix`, waiting up to `timeout`.
  std::optional<Arrival> WaitFor(const std::string& suffix, Duration timeout) {
    std::unique_lock lock(mu_);
    std::optional<Arrival> found;
    cv_.wait_for(lock, timeout, [&] {
      for (const Arrival& a : arrivals_) {
        if (a.assignment_id.ends_with(suffix)) found = a;
      }
      return found.has_value();
    });
    return found;
  }
  std::vector<Arrival> arrivals() const {
    std::lock_guard lock(mu_);
    return arrivals_;
  }
  bool lost() const { return lost_; }

 private:
  Status Send(const protocol::WorkerMessage& m) {
    Status s = conn_->Send(m);
    if (config_.on_send) config_.on_send();
    return s;
  }

  void Serve() {
    auto next_heartbeat = Clock::now() + heartbeat_every_;
    while (!stop_) {
      auto wait = std::chrono::duration_cast<Duration>(next_heartbeat - Clock::now());
      auto message = conn_->Receive(std::max(wait, Duration(0)));
      if (!message.ok()) {
        if (!stop_)
          std::fprintf(stderr, "%s: %s\n", config_.id.c_str(), message.status().ToString().c_str());
        lost_ = true;
        return;
      }
      if (message->has_value()) {
        if (const auto* c = std::get_if<protocol::Command>(&**message)) Run(*c);
      }
      if (Clock::now() >= next_heartbeat) {
        (void)Send(protocol::Heartbeat{0, config_.capacity, protocol::WorkerStatus::kOnline});
        next_heartbeat += heartbeat_every_;
      }
    }
  }

  void Run(const protocol::Command& c) {
    const auto at = Clock::now();
    (void)Send(protocol::CommandAck{c.assignment_id, protocol::AckStatus::kAccepted, {}});
    if (config_.answer) (void)Send(protocol::CommandResult::Success(c.assignment_id, nullptr));
    {
      std::lock_guard lock(mu_);
      arrivals_.push_back({c.assignment_id, c.execution.execution_id, at});
    }
    cv_.notify_all();
  }

  client::Endpoint endpoint_;
  WorkerConfig config_;
  std::unique_ptr<worker::Connection> conn_;
  Duration heartbeat_every_{30'000};
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> lost_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Arrival> arrivals_;
};

// ---- the server ----

struct Metrics {
  std::string text;
  // The value of the series named exactly `series` (with its labels); NAN when absent.
  double Get(const std::string& series) const {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
          line[series.size()] == ' ') {
        return std::strtod(line.c_str() + series.size() + 1, nullptr);
      }
    }
    return NAN;
  }
  double Completed() const { return Get("baton_executions_finished_total{status=\"completed\"}"); }
  double Failed() const { return Get("baton_executions_finished_total{status=\"failed\"}"); }
  // Dispatches whose accepted ack came within `seconds` (a bucket bound of the histogram).
  double LatencyAtMost(double seconds) const {
    std::ostringstream le;
    le << seconds;
    return Get("baton_dispatch_latency_seconds_bucket{le=\"" + le.str() + "\"}");
  }
};

class BenchServer {
 public:
  explicit BenchServer(std::vector<std::string> extra_args)
      : dir_(testing::MakeTempDir()), process_(dir_, Args(std::move(extra_args))) {}
  ~BenchServer() {
    process_.Terminate();
    std::filesystem::remove_all(dir_);
  }

  // The server serves, the workflow exists and a worker token was made.
  Status Setup() {
    if (!process_.ok()) return Status(errc::kIo, "the server did not start:\n" + process_.log());
    auto token =
        Admin().Call("POST", "/api/v1/tokens", {{"name", "bench"}, {"scopes", {"worker"}}});
    if (!token.ok()) return token.status();
    worker_token_ = (*token)["token"];
    auto r = Admin().Send("POST", "/api/v1/workflows", kWorkflow, "application/yaml");
    if (!r.ok()) return r.status();
    if (r->status / 100 != 2) return client::ReplyError(r->status, r->body);
    return Status::Ok();
  }

  ApiClient Admin() const { return process_.Admin(); }
  client::Endpoint AdminEndpoint() const { return {process_.url(), process_.admin_token()}; }
  client::Endpoint WorkerEndpoint() const { return {process_.url(), worker_token_}; }
  const std::string& dir() const { return dir_; }

  Result<std::string> Submit(const ApiClient& api) const {
    auto r = api.Call("POST", "/api/v1/executions", {{"workflow", "bench-remote"}});
    if (!r.ok()) return r.status();
    return (*r)["id"].get<std::string>();
  }
  Metrics GetMetrics() const {
    auto r = Admin().Send("GET", "/metrics");
    return {r.ok() ? r->body : ""};
  }
  // Polls /metrics until `done` holds (true) or `timeout_ms` passes (false).
  bool WaitMetrics(const std::function<bool(const Metrics&)>& done, Metrics* last,
                   int timeout_ms = 120'000) {
    return WaitUntil(
        [&] {
          *last = GetMetrics();
          return done(*last);
        },
        timeout_ms);
  }
  Json Get(const std::string& target) const {
    auto r = Admin().Call("GET", target);
    return r.ok() ? *r : Json::object();
  }

 private:
  static std::vector<std::string> Args(std::vector<std::string> extra) {
    extra.insert(extra.begin(), {"--rate-limit", "0"});
    return extra;
  }
  std::string dir_;
  ServerProcess process_;
  std::string worker_token_;
};

// What measurements 1 and 2 share.
struct Setting {
  int capacity = 64;    // of each of the 2 workers
  int submitters = 16;  // client threads
  bool sync_normal = false;
  std::vector<std::string> ServerArgs() const {
    return sync_normal ? std::vector<std::string>{"--sync-normal"} : std::vector<std::string>{};
  }
};

// Two answering workers of `capacity`.
Status StartWorkers(const BenchServer& server, int capacity,
                    std::vector<std::unique_ptr<BenchWorker>>* out) {
  for (int i = 0; i < 2; ++i) {
    auto w = std::make_unique<BenchWorker>(server.WorkerEndpoint(),
                                           Answering("w" + std::to_string(i + 1), capacity));
    if (Status s = w->Start(); !s.ok()) return s;
    out->push_back(std::move(w));
  }
  return Status::Ok();
}

// ---- 1. dispatch latency at a steady rate ----

struct LatencyFigures {
  int tasks = 0;
  double achieved_rate = 0;
  int late = 0;  // submissions that started > 5 ms behind their slot
  double server_p50_us = 0, server_p99_us = 0;
  // From the engine's Prepare (before the commit that makes the dispatch durable).
  double prepared_p50_us = 0, prepared_p99_us = 0;
  double placed_at_prepare = 0;             // share of the placements, whole run
  double within_250us = 0, within_1ms = 0;  // fractions over the whole run
  double mean_commit_ms = 0;
  double commits_per_task = 0, batches_per_commit = 0;
  double worker_p50_us = 0, worker_p99_us = 0;  // submit -> command at the worker
};

Result<LatencyFigures> MeasureLatency(int rate, double seconds, const Setting& setting) {
  BenchServer server(setting.ServerArgs());
  if (Status s = server.Setup(); !s.ok()) return s;
  std::vector<std::unique_ptr<BenchWorker>> workers;
  if (Status s = StartWorkers(server, setting.capacity, &workers); !s.ok()) return s;

  LatencyFigures f;
  f.tasks = static_cast<int>(rate * seconds);
  const auto slot = std::chrono::nanoseconds(1'000'000'000LL / rate);
  std::vector<Clock::time_point> submitted(f.tasks);
  std::vector<std::string> ids(f.tasks);
  std::atomic<int> next{0}, late{0}, errors{0};
  const auto t0 = Clock::now() + std::chrono::milliseconds(50);
  std::vector<std::thread> threads;
  for (int t = 0; t < setting.submitters; ++t) {
    threads.emplace_back([&] {
      ApiClient api = server.Admin();
      for (int i = next++; i < f.tasks; i = next++) {
        const auto due = t0 + i * slot;
        std::this_thread::sleep_until(due);
        submitted[i] = Clock::now();
        if (submitted[i] - due > std::chrono::milliseconds(5)) ++late;
        auto id = server.Submit(api);
        if (id.ok()) {
          ids[i] = *id;
        } else if (errors++ == 0) {
          std::fprintf(stderr, "submit: %s\n", id.status().ToString().c_str());
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const auto t_end = *std::max_element(submitted.begin(), submitted.end());
  if (errors > 0) return Status(errc::kIo, std::to_string(errors.load()) + " submissions failed");
  f.achieved_rate = (f.tasks - 1) / std::chrono::duration<double>(t_end - submitted[0]).count();
  f.late = late;

  // The server refreshes /metrics every 500 ms: wait until every ack is counted.
  Metrics m;
  if (!server.WaitMetrics(
          [&](const Metrics& x) {
            return x.Get("baton_dispatch_latency_seconds_count") >= f.tasks &&
                   x.Completed() + x.Failed() >= f.tasks;
          },
          &m)) {
    return Status(errc::kIo, "not every execution finished:\n" + m.text);
  }
  if (m.Failed() > 0) return Status(errc::kIo, "some executions failed");
  f.server_p50_us = m.Get("baton_dispatch_latency_recent_seconds{quantile=\"0.5\"}") * 1e6;
  f.server_p99_us = m.Get("baton_dispatch_latency_recent_seconds{quantile=\"0.99\"}") * 1e6;
  f.prepared_p50_us = m.Get("baton_dispatch_prepared_latency_seconds{quantile=\"0.5\"}") * 1e6;
  f.prepared_p99_us = m.Get("baton_dispatch_prepared_latency_seconds{quantile=\"0.99\"}") * 1e6;
  f.placed_at_prepare =
      m.Get("baton_commands_placed_at_prepare_total") / m.Get("baton_commands_dispatched_total");
  const double count = m.Get("baton_dispatch_latency_seconds_count");
  f.within_250us = m.LatencyAtMost(0.00025) / count;
  f.within_1ms = m.LatencyAtMost(0.001) / count;
  f.mean_commit_ms =
      m.Get("baton_store_commit_seconds_total") * 1e3 / m.Get("baton_store_commits_total");
  f.commits_per_task = m.Get("baton_store_commits_total") / f.tasks;
  f.batches_per_commit =
      m.Get("baton_store_commit_batches_total") / m.Get("baton_store_commits_total");

  std::map<std::string, Clock::time_point> arrived;
  for (auto& w : workers) {
    for (const Arrival& a : w->arrivals()) arrived.emplace(a.execution_id, a.at);
  }
  std::vector<double> seen;
  for (int i = 0; i < f.tasks; ++i) {
    if (auto it = arrived.find(ids[i]); it != arrived.end())
      seen.push_back(Us(it->second - submitted[i]));
  }
  f.worker_p50_us = Quantile(seen, 0.5);
  f.worker_p99_us = Quantile(seen, 0.99);
  for (auto& w : workers) w->Stop(/*deregister=*/true);
  return f;
}

// ---- 4. submit -> completed, one at a time ----

struct RoundTripFigures {
  int samples = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
};

Result<RoundTripFigures> MeasureRoundTrips(int samples) {
  constexpr int kWarmup = 20;
  BenchServer server({});
  if (Status s = server.Setup(); !s.ok()) return s;
  std::vector<std::unique_ptr<BenchWorker>> workers;
  if (Status s = StartWorkers(server, 50, &workers); !s.ok()) return s;
  auto feed = client::EventStream::Open(
      server.AdminEndpoint(),
      "workflow=bench-remote&types=execution.completed,execution.failed,execution.timed_out,"
      "execution.cancelled");
  if (!feed.ok()) return feed.status();
  auto ready = (*feed)->Next(5'000);
  if (!ready.ok() || !ready->has_value() || (**ready)["type"] != "ready") {
    return Status(errc::kIo, "the feed did not say ready");
  }
  ApiClient api = server.Admin();
  std::vector<double> ms;
  for (int i = 0; i < kWarmup + samples; ++i) {
    const auto t0 = Clock::now();
    auto id = server.Submit(api);
    if (!id.ok()) return id.status();
    // The feed's next message is this execution's end: one runs at a time.
    auto m = (*feed)->Next(30'000);
    if (!m.ok()) return m.status();
    if (!m->has_value()) return Status(errc::kIo, "no final event for " + *id + " in 30 s");
    const Json& e = **m;
    if (e.value("execution_id", "") != *id || e.value("type", "") != "execution.completed") {
      return Status(errc::kIo, "expected " + *id + " completed, got " + e.dump());
    }
    if (i >= kWarmup) ms.push_back(Ms(Clock::now() - t0));
  }
  for (auto& w : workers) w->Stop(/*deregister=*/true);
  RoundTripFigures f;
  f.samples = samples;
  f.p50_ms = Quantile(ms, 0.5);
  f.p90_ms = Quantile(ms, 0.9);
  f.p99_ms = Quantile(ms, 0.99);
  f.max_ms = *std::max_element(ms.begin(), ms.end());
  return f;
}

// ---- 2. throughput ----

struct ThroughputFigures {
  int tasks = 0;
  double submit_rate = 0;
  double completed_rate = 0;
  double server_p50_us = 0, server_p99_us = 0;
};

// `backlog`: every execution is submitted (its step waiting for a worker) before the
// workers connect, and the clock starts when they do: the dispatch path alone.
Result<ThroughputFigures> MeasureThroughput(int tasks, const Setting& setting, bool backlog) {
  BenchServer server(setting.ServerArgs());
  if (Status s = server.Setup(); !s.ok()) return s;
  std::vector<std::unique_ptr<BenchWorker>> workers;
  if (!backlog) {
    if (Status s = StartWorkers(server, setting.capacity, &workers); !s.ok()) return s;
  }

  ThroughputFigures f;
  f.tasks = tasks;
  std::atomic<int> next{0}, errors{0};
  const auto submit_start = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < setting.submitters; ++t) {
    threads.emplace_back([&] {
      ApiClient api = server.Admin();
      while (next++ < tasks) {
        if (auto id = server.Submit(api); !id.ok() && errors++ == 0) {
          std::fprintf(stderr, "submit: %s\n", id.status().ToString().c_str());
        }
      }
    });
  }
  std::optional<Clock::time_point> submitted;
  auto join = [&] {
    for (auto& t : threads) t.join();
    submitted = Clock::now();
  };
  Metrics m;
  auto t0 = submit_start;
  if (backlog) {
    join();
    if (!server.WaitMetrics(
            [&](const Metrics& x) { return x.Get("baton_assignments_waiting") >= tasks; }, &m)) {
      return Status(errc::kIo, "the steps are not all waiting for a worker:\n" + m.text);
    }
    t0 = Clock::now();
    if (Status s = StartWorkers(server, setting.capacity, &workers); !s.ok()) return s;
  }
  // Completion as the server counts it, polled every 20 ms.
  const bool finished = server.WaitMetrics(
      [&](const Metrics& x) { return errors > 0 || x.Completed() + x.Failed() >= tasks; }, &m,
      600'000);
  const auto t_done = Clock::now();
  if (!backlog) join();
  if (errors > 0) return Status(errc::kIo, std::to_string(errors.load()) + " submissions failed");
  if (!finished) return Status(errc::kIo, "not every execution finished:\n" + m.text);
  if (m.Failed() > 0) return Status(errc::kIo, "some executions failed");
  f.completed_rate = tasks / std::chrono::duration<double>(t_done - t0).count();
  f.submit_rate =
      tasks / std::chrono::duration<double>(std::min(*submitted, t_done) - submit_start).count();
  server.WaitMetrics(
      [&](const Metrics& x) { return x.Get("baton_dispatch_latency_seconds_count") >= tasks; }, &m);
  f.server_p50_us = m.Get("baton_dispatch_latency_recent_seconds{quantile=\"0.5\"}") * 1e6;
  f.server_p99_us = m.Get("baton_dispatch_latency_recent_seconds{quantile=\"0.99\"}") * 1e6;
  for (auto& w : workers) w->Stop(/*deregister=*/true);
  return f;
}

// ---- 3. failover ----

// The victim: a separate process (this program with --victim) that registers, acks what
// it gets and never answers, heartbeating until it is killed. It appends the
// CLOCK_MONOTONIC time of every message it sends to `send_log`, so the killer knows
// when the server last heard from it.
int VictimMain(const std::string& id, const std::string& send_log) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const char* url = std::getenv("BENCH_SERVER");
  const char* token = std::getenv("BENCH_TOKEN");
  if (url == nullptr || token == nullptr) return 2;
  int fd = ::open(send_log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return 2;
  WorkerConfig config = Answering(id, 1);
  config.answer = false;
  config.on_send = [fd] {
    std::string line = std::to_string(Clock::now().time_since_epoch().count()) + "\n";
    (void)!::write(fd, line.data(), line.size());
  };
  BenchWorker w({url, token}, config);
  if (Status s = w.Start(); !s.ok()) {
    std::fprintf(stderr, "victim %s: %s\n", id.c_str(), s.ToString().c_str());
    return 1;
  }
  for (;;) ::pause();  // until SIGKILL
}

struct FailoverSample {
  double kill_to_command_ms = 0;
  double past_deadline_ms = 0;  // after (last message from the victim + timeout)
};

Result<FailoverSample> FailoverOnce(BenchServer& server, int round, Duration timeout) {
  const std::string victim = "victim-" + std::to_string(round);
  const std::string send_log = server.dir() + "/" + victim + ".sends";
  char self[4096] = {};
  if (::readlink("/proc/self/exe", self, sizeof self - 1) <= 0) {
    return Status(errc::kIo, "cannot find this program");
  }
  const client::Endpoint endpoint = server.WorkerEndpoint();
  pid_t pid = testing::StartProcess(
      {self, "--victim", victim, send_log}, server.dir() + "/" + victim + ".log",
      {"BENCH_SERVER=" + endpoint.server, "BENCH_TOKEN=" + endpoint.token});
  if (pid <= 0) return Status(errc::kIo, "cannot start the victim");
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      if (pid > 0) {
        ::kill(pid, SIGKILL);
        testing::WaitProcess(pid);
      }
    }
  } reaper{pid};
  if (!WaitUntil([&] {
        return server.Get("/api/v1/workers/" + victim).value("status", "") == "ONLINE";
      })) {
    return Status(errc::kIo, victim + " did not come ONLINE");
  }
  auto id = server.Submit(server.Admin());
  if (!id.ok()) return id.status();
  if (!WaitUntil([&] {
        Json list = server.Get("/api/v1/assignments?execution=" + *id)["assignments"];
        return list.size() == 1 && list[0]["status"] == "accepted" && list[0]["workerId"] == victim;
      })) {
    return Status(errc::kIo, victim + " did not accept the task");
  }
  BenchWorker rescuer(endpoint, Answering("rescuer-" + std::to_string(round), 1));
  if (Status s = rescuer.Start(); !s.ok()) return s;

  const auto killed = Clock::now();
  ::kill(pid, SIGKILL);
  testing::WaitProcess(pid);
  reaper.pid = -1;
  auto moved = rescuer.WaitFor(".r1", timeout + Duration(30'000));
  if (!moved) return Status(errc::kIo, "the task was not reassigned");
  FailoverSample sample;
  sample.kill_to_command_ms = Ms(moved->at - killed);
  std::istringstream sends(testing::ReadFile(send_log));
  long long last = 0;
  for (long long t; sends >> t;) last = t;
  const Clock::time_point deadline = Clock::time_point(Clock::duration(last)) + timeout;
  sample.past_deadline_ms = Ms(moved->at - deadline);
  if (!WaitUntil([&] {
        return server.Get("/api/v1/executions/" + *id).value("status", "") == "completed";
      })) {
    return Status(errc::kIo, "the reassigned task did not complete");
  }
  rescuer.Stop(/*deregister=*/true);
  return sample;
}

// ---- output ----

void Row(const std::string& what, const std::string& figure, const std::string& target) {
  std::printf("| %s | %s | %s |\n", what.c_str(), figure.c_str(), target.c_str());
}

std::string Fmt(const char* format, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

std::string LoadAverage() {
  double load[3] = {};
  if (::getloadavg(load, 3) != 3) return "?";
  return Fmt("%.2f %.2f %.2f", load[0], load[1], load[2]);
}

}  // namespace
}  // namespace baton::bench

int main(int argc, char** argv) {
  using namespace baton::bench;
  if (argc == 4 && std::string(argv[1]) == "--victim") return VictimMain(argv[2], argv[3]);

  CLI::App app{"Remote worker benchmarks: dispatch latency, throughput, failover"};
  std::string baton_bin = BATON_BIN_PATH;
  int rate = 1000, tasks = 20'000, backlog_tasks = -1, rounds = 10, round_trips = 2000;
  std::string only = "1234";
  double seconds = 10;
  bool with_normal = true;
  Setting setting;
  app.add_option("--baton", baton_bin, "The baton binary to serve with")->capture_default_str();
  app.add_option("--rate", rate, "1: executions submitted per second")->capture_default_str();
  app.add_option("--seconds", seconds, "1: how long to submit at --rate")->capture_default_str();
  app.add_option("--tasks", tasks, "2: executions submitted at once")->capture_default_str();
  app.add_option("--backlog", backlog_tasks,
                 "2: executions queued before the workers connect (default: --tasks; 0: skip)");
  app.add_option("--capacity", setting.capacity, "1, 2: capacity of each of the 2 workers")
      ->capture_default_str();
  app.add_option("--submitters", setting.submitters, "1, 2: client threads submitting")
      ->capture_default_str();
  app.add_flag("--sync-normal", setting.sync_normal,
               "1, 2: serve with SQLite synchronous=NORMAL instead of FULL");
  app.add_option("--rounds", rounds, "3: kills")->capture_default_str();
  app.add_option("--round-trips", round_trips, "4: samples (after 20 warm-up ones)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--only", only, "The measurements to run, e.g. 4 or 13")->capture_default_str();
  app.add_flag("!--no-normal", with_normal,
               "1: skip the diagnostic rerun with --sync-normal (no fsync per commit)");
  CLI11_PARSE(app, argc, argv);
  ::setenv("BATON_TEST_BIN", baton_bin.c_str(), 1);  // the ServerProcess's binary
  std::setvbuf(stdout, nullptr, _IOLBF, 0);

  if (backlog_tasks < 0) backlog_tasks = tasks;
  with_normal = with_normal && !setting.sync_normal;
  std::printf("remote workers over loopback WebSocket; server %s, SQLite %s + group commit\n",
              baton_bin.c_str(), setting.sync_normal ? "NORMAL" : "FULL");
  std::printf("%u cores, load average before: %s\n\n", std::thread::hardware_concurrency(),
              LoadAverage().c_str());
  int failed = 0;
  auto fail = [&](const char* what, const baton::Status& s) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    ++failed;
  };

  std::printf("| measurement | figure | target |\n| --- | --- | --- |\n");
  auto want = [&](char m) { return only.find(m) != std::string::npos; };
  if (want('1')) {
    auto latency = MeasureLatency(rate, seconds, setting);
    if (latency.ok()) {
      const LatencyFigures& f = *latency;
      Row(Fmt("1. dispatch durable (Start) → accepted ack, server's p50 / p99 (last %d of %d at "
              "%.0f/s, %d late)",
              std::min(f.tasks, 4096), f.tasks, f.achieved_rate, f.late),
          Fmt("%.0f µs / %.0f µs", f.server_p50_us, f.server_p99_us),
          "p50 ≤ 250 µs, p99 ≤ 1 ms (issue: p50 ≤ 1 ms)");
      Row(Fmt("1. … from Prepare (before the one commit of dispatch + assignment), p50 / p99; "
              "%.1f %% placed at Prepare",
              100 * f.placed_at_prepare),
          Fmt("%.0f µs / %.0f µs", f.prepared_p50_us, f.prepared_p99_us), "");
      Row("1. … share within 250 µs / 1 ms (histogram, whole run)",
          Fmt("%.1f %% / %.1f %%", 100 * f.within_250us, 100 * f.within_1ms), "");
      Row("1. … SQLite commits during the run: mean time, per execution, batches each",
          Fmt("%.2f ms, %.2f, %.1f", f.mean_commit_ms, f.commits_per_task, f.batches_per_commit),
          "");
      Row("1. worker's view: client submit → command at the worker, p50 / p99 (not the "
          "figure above)",
          Fmt("%.0f µs / %.0f µs", f.worker_p50_us, f.worker_p99_us), "");
    } else {
      fail("1. latency", latency.status());
    }
    if (with_normal) {
      Setting normal_setting = setting;
      normal_setting.sync_normal = true;
      auto normal = MeasureLatency(rate, seconds, normal_setting);
      if (normal.ok()) {
        Row("1. diagnostic: the same with --sync-normal (no fsync per commit), p50 / p99",
            Fmt("%.0f µs / %.0f µs (commit %.2f ms)", normal->server_p50_us, normal->server_p99_us,
                normal->mean_commit_ms),
            "");
      } else {
        fail("1. latency, --sync-normal", normal.status());
      }
    }
  }
  if (want('2')) {
    auto throughput = MeasureThroughput(tasks, setting, /*backlog=*/false);
    if (throughput.ok()) {
      const ThroughputFigures& f = *throughput;
      Row(Fmt("2. completed executions/s, %d submitted meanwhile by %d threads, 2 workers × "
              "capacity %d",
              f.tasks, setting.submitters, setting.capacity),
          Fmt("%.0f /s (submitted at %.0f /s)", f.completed_rate, f.submit_rate), "");
      Row("2. … dispatch durable (Start) → accepted ack under that load, p50 / p99",
          Fmt("%.0f µs / %.0f µs", f.server_p50_us, f.server_p99_us), "");
    } else {
      fail("2. throughput", throughput.status());
    }
    if (backlog_tasks > 0) {
      auto backlog = MeasureThroughput(backlog_tasks, setting, /*backlog=*/true);
      if (backlog.ok()) {
        Row(Fmt("2. %d submitted first (all waiting), then the workers connect: completed/s",
                backlog_tasks),
            Fmt("%.0f /s", backlog->completed_rate), "");
      } else {
        fail("2. backlog", backlog.status());
      }
    }
  }
  if (want('3')) {
    const baton::Duration timeout(1000);
    BenchServer server({"--heartbeat-interval", "200ms", "--heartbeat-timeout", "1s"});
    std::vector<double> kill_ms, past_ms;
    if (baton::Status s = server.Setup(); !s.ok()) {
      fail("3. failover", s);
    } else {
      for (int round = 1; round <= rounds; ++round) {
        auto sample = FailoverOnce(server, round, timeout);
        if (!sample.ok()) {
          fail("3. failover", sample.status());
          break;
        }
        kill_ms.push_back(sample->kill_to_command_ms);
        past_ms.push_back(sample->past_deadline_ms);
      }
    }
    if (!kill_ms.empty()) {
      std::sort(kill_ms.begin(), kill_ms.end());
      std::sort(past_ms.begin(), past_ms.end());
      const double median = Quantile(kill_ms, 0.5), past_median = Quantile(past_ms, 0.5);
      Row(Fmt("3. SIGKILL → reassigned command at the other worker, min / median / max of %zu "
              "(heartbeat 200 ms, timeout 1 s)",
              kill_ms.size()),
          Fmt("%.0f / %.0f / %.0f ms", kill_ms.front(), median, kill_ms.back()),
          "≤ 1,100 ms (timeout + check interval 0 + 100 ms)");
      Row("3. … of which past the deadline (victim's last message + timeout), min / median / max",
          Fmt("%.1f / %.1f / %.1f ms", past_ms.front(), past_median, past_ms.back()), "≤ 100 ms");
      Row("3. defaults (heartbeat 30 s, timeout 60 s): implied kill → reassigned",
          Fmt("30–60 s (60 s after the last heartbeat) + %.1f ms", past_median), "");
    }
  }
  if (want('4')) {
    auto trips = MeasureRoundTrips(round_trips);
    if (trips.ok()) {
      Row(Fmt("4. client submit → execution.completed on the live feed, one at a time (%d "
              "samples), p50 / p90 / p99 / max",
              trips->samples),
          Fmt("%.2f / %.2f / %.2f / %.2f ms", trips->p50_ms, trips->p90_ms, trips->p99_ms,
              trips->max_ms),
          "p50 ≤ 1 ms, p99 ≤ 3 ms");
    } else {
      fail("4. round trips", trips.status());
    }
  }
  std::printf("\nload average after: %s\n", LoadAverage().c_str());
  return failed == 0 ? 0 : 1;
}
