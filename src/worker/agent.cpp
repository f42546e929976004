// The worker's connection loop (the behaviour: agent.h).
#include "worker/agent.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <utility>
#include <variant>

namespace baton::worker {
namespace {

using SteadyClock = std::chrono::steady_clock;
using protocol::AckStatus;
using protocol::WorkerMessage;

std::string Ms(Duration d) {
  return std::to_string(d.count()) + " ms";
}

// The assignment a message is about; empty for register, heartbeat and deregister.
std::string AssignmentOf(const WorkerMessage& m) {
  if (auto* a = std::get_if<protocol::CommandAck>(&m)) return a->assignment_id;
  if (auto* p = std::get_if<protocol::CommandProgress>(&m)) return p->assignment_id;
  if (auto* r = std::get_if<protocol::CommandResult>(&m)) return r->assignment_id;
  return "";
}

std::string Summary(const protocol::CommandResult& r) {
  if (r.status == protocol::ResultStatus::kSuccess) return "success";
  std::string text = "failure " + r.error.code;
  if (!r.error.message.empty()) text += ": " + r.error.message.substr(0, 200);
  return text;
}

// Why a session ended.
enum class End { kLost, kDrained, kStopped };

}  // namespace

struct Agent::State {
  explicit State(AgentOptions o) : options(std::move(o)), runner(options.handlers) {}

  AgentOptions options;
  HandlerRunner runner;

  struct Running {
    std::string command;
    bool cancelled = false;
  };

  std::mutex mu;
  std::condition_variable cv;  // wakes the backoff wait
  bool stop = false;
  bool draining = false;
  bool heartbeat_now = false;     // send a heartbeat at once (a drain began)
  Connection* current = nullptr;  // the connection in use, for Interrupt
  std::map<std::string, Running> running;
  std::deque<WorkerMessage> outbox;      // acks, progress (the latest per assignment), results
  SteadyClock::time_point outbox_since;  // when the oldest message in the outbox came
  bool server_batches = false;           // the current connection's `registered` said so
  std::mt19937_64 rng{std::random_device{}()};
  // This process's incarnation: the same across reconnects, new at every start.
  const std::string session_id = NewSessionId();

  static std::string NewSessionId() {
    std::random_device rd;
    char buf[33];
    std::snprintf(buf, sizeof buf, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
    return buf;
  }

  std::mutex log_mu;  // one line at a time

  void Log(const std::string& line) {
    if (!options.log) return;
    std::lock_guard lock(log_mu);
    options.log(line);
  }

  // mu held. Wakes the loop, wherever it waits.
  void Wake() {
    if (current) current->Interrupt();
    cv.notify_all();
  }

  // mu held. Whether a drain has nothing left to do even without a connection.
  bool DrainedOffline() const { return draining && running.empty() && outbox.empty(); }

  // mu held. Drops what is queued about `assignment_id` except its ack.
  // mu held. How many messages it dropped.
  size_t Purge(const std::string& assignment_id) {
    return std::erase_if(outbox, [&](const WorkerMessage& m) {
      return !std::holds_alternative<protocol::CommandAck>(m) && AssignmentOf(m) == assignment_id;
    });
  }

  // mu held. Appends to the outbox.
  void Queue(WorkerMessage m) {
    if (outbox.empty()) outbox_since = SteadyClock::now();
    outbox.push_back(std::move(m));
  }

  // mu held. Queues progress, replacing an unsent one of the same assignment in place.
  void QueueProgress(protocol::CommandProgress p) {
    for (WorkerMessage& m : outbox) {
      auto* queued = std::get_if<protocol::CommandProgress>(&m);
      if (queued && queued->assignment_id == p.assignment_id) {
        *queued = std::move(p);
        return;
      }
    }
    Queue(std::move(p));
  }

  // mu held. Queues a result; while batching, it replaces its command's accepted ack if
  // that has not left yet (docs/worker-protocol.md: a result stands for its ack).
  void QueueResult(protocol::CommandResult r) {
    if (server_batches && options.batch_window > Duration::zero()) {
      std::erase_if(outbox, [&](const WorkerMessage& m) {
        const auto* ack = std::get_if<protocol::CommandAck>(&m);
        return ack && ack->status == AckStatus::kAccepted && ack->assignment_id == r.assignment_id;
      });
    }
    Queue(std::move(r));
  }

  // mu held. When the outbox, waiting to fill a batch, must be sent at the latest; nullopt
  // when it should go now (or is empty).
  std::optional<SteadyClock::time_point> BatchDue(SteadyClock::time_point now) const {
    if (!server_batches || options.batch_window <= Duration::zero() || outbox.empty() ||
        running.size() < 2 || outbox.size() >= protocol::kMaxBatch) {
      return std::nullopt;
    }
    const SteadyClock::time_point due = outbox_since + options.batch_window;
    if (now >= due) return std::nullopt;
    return due;
  }

  Duration Jittered(Duration base) {
    std::uniform_int_distribution<int64_t> half(0, base.count() / 2);
    return Duration(base.count() - half(rng));
  }

  Status Validate() const;
  Result<protocol::Registered> Register(Connection& conn);
  std::pair<End, std::string> Serve(Connection& conn, const protocol::Registered& registered);
  void Handle(const protocol::ServerMessage& message);
  void HandleCommand(const protocol::Command& command);
  void CancelLocally(const std::string& assignment_id, const std::string& why);
  HandlerCallbacks Callbacks(const std::string& assignment_id, const std::string& command);
};

Agent::Agent(AgentOptions options) : state_(std::make_unique<State>(std::move(options))) {}

Agent::~Agent() {
  Stop();
  state_->runner.Shutdown();  // before the state its callbacks use goes away
}

std::vector<std::string> Agent::Commands() const {
  return state_->runner.Commands();
}

void Agent::Drain() {
  State& s = *state_;
  size_t running = 0;
  {
    std::lock_guard lock(s.mu);
    if (s.draining || s.stop) return;
    s.draining = true;
    s.heartbeat_now = true;
    running = s.running.size();
    s.Wake();
  }
  s.Log("drain started: no new commands; waiting for " + std::to_string(running) +
        " running command(s) to finish");
}

void Agent::Stop() {
  State& s = *state_;
  std::lock_guard lock(s.mu);
  s.stop = true;
  s.Wake();
}

Status Agent::State::Validate() const {
  if (!protocol::IsValidWorkerId(options.worker_id)) {
    return Status(errc::kInvalidArgument, "worker id '" + options.worker_id +
                                              "' must be 1 to 100 characters of [A-Za-z0-9._-]");
  }
  if (options.capacity < 1 || options.capacity > protocol::kMaxCapacity) {
    return Status(errc::kInvalidArgument, "capacity must be 1 to 10000");
  }
  if (runner.Commands().empty()) {
    return Status(errc::kInvalidArgument, "no handler and no built-in: nothing to run");
  }
  return Status::Ok();
}

Status Agent::Run(const Connector& connect) {
  State& s = *state_;
  if (Status valid = s.Validate(); !valid.ok()) return valid;
  Duration backoff = s.options.reconnect_initial;
  int failures = 0;  // since the last successful registration
  for (;;) {
    {
      std::lock_guard lock(s.mu);
      if (s.stop) break;
      if (s.DrainedOffline()) {
        s.Log("drain finished: nothing left to send (not connected, not deregistered)");
        break;
      }
    }
    std::string failure;
    Result<std::unique_ptr<Connection>> conn = connect();
    if (conn.ok()) {
      {
        std::lock_guard lock(s.mu);
        s.current = conn->get();
        if (s.stop) s.Wake();  // Stop() came while connecting
      }
      Result<protocol::Registered> registered = s.Register(**conn);
      std::pair<End, std::string> end{End::kLost, ""};
      if (registered.ok()) {
        backoff = s.options.reconnect_initial;
        failures = 0;
        end = s.Serve(**conn, *registered);
      } else {
        end.second = "registration failed: " + registered.status().message();
      }
      {
        std::lock_guard lock(s.mu);
        s.current = nullptr;
        // Acks belong to the connection their command came on.
        std::erase_if(s.outbox, [](const WorkerMessage& m) {
          return std::holds_alternative<protocol::CommandAck>(m);
        });
        s.server_batches = false;
      }
      (*conn)->Close();
      if (end.first != End::kLost) break;
      if (!registered.ok() && IsFatalConnectError(registered.status())) {
        s.runner.Shutdown();
        return registered.status();
      }
      failure = end.second;
    } else if (IsFatalConnectError(conn.status())) {
      s.runner.Shutdown();
      return conn.status();
    } else {
      failure = conn.status().message();
    }
    {
      std::lock_guard lock(s.mu);
      if (s.stop) break;
    }
    Duration delay = s.Jittered(backoff);
    // Brisk at first (a restarting server is back in seconds), then backing off.
    if (++failures >= s.options.reconnect_brisk) {
      backoff = std::min(backoff * 2, s.options.reconnect_max);
    }
    s.Log("reconnecting in " + Ms(delay) + " (" + failure + ")");
    std::unique_lock lock(s.mu);
    s.cv.wait_for(lock, delay, [&] { return s.stop || s.DrainedOffline(); });
  }
  s.runner.Shutdown();  // after Stop(): cancels what still runs
  return Status::Ok();
}

Result<protocol::Registered> Agent::State::Register(Connection& conn) {
  protocol::Register m;
  m.worker_id = options.worker_id;
  m.node_id = options.node_id;
  m.host = options.host;
  m.capacity = options.capacity;
  m.commands = runner.Commands();
  m.tags = options.tags;
  m.session_id = session_id;
  m.batching = true;  // Connection::Receive gives a batch's messages one by one
  if (Status sent = conn.Send(m); !sent.ok()) return sent;
  const auto deadline = SteadyClock::now() + options.registration_timeout;
  for (;;) {
    {
      std::lock_guard lock(mu);
      if (stop) return Status(errc::kCancelled, "stopped");
    }
    auto left = std::chrono::ceil<Duration>(deadline - SteadyClock::now());
    if (left <= Duration::zero()) {
      return Status(errc::kTimeout, "no 'registered' within " + Ms(options.registration_timeout));
    }
    Result<std::optional<protocol::ServerMessage>> got = conn.Receive(left);
    if (!got.ok()) return got.status();
    if (!*got) continue;
    if (auto* r = std::get_if<protocol::Registered>(&**got)) return *r;
    if (auto* e = std::get_if<protocol::ProtocolError>(&**got)) return Status(e->code, e->message);
    Log(std::string("ignoring '") + protocol::TypeOf(**got) + "' before 'registered'");
  }
}

std::pair<End, std::string> Agent::State::Serve(Connection& conn,
                                                const protocol::Registered& registered) {
  const Duration interval(registered.heartbeat_interval_ms);
  Log("connected: registered as " + registered.worker_id + " (capacity " +
      std::to_string(options.capacity) + ", heartbeat every " + Ms(interval) + ")");
  auto next_heartbeat = SteadyClock::now() + interval;
  {
    std::lock_guard lock(mu);
    if (draining) heartbeat_now = true;
    server_batches = registered.batching;
  }
  for (;;) {
    std::optional<WorkerMessage> next;
    // When several are waiting (a busy worker) and the server reads batch frames, they go
    // out in one: no wait is added for an idle worker, whose outbox holds one at a time.
    std::vector<WorkerMessage> several;
    bool deregister = false;
    const auto now = SteadyClock::now();
    auto wake_at = next_heartbeat;
    {
      std::lock_guard lock(mu);
      if (stop) return {End::kStopped, ""};
      if (heartbeat_now || now >= next_heartbeat) {
        heartbeat_now = false;
        next_heartbeat = now + interval;
        next = protocol::Heartbeat{
            static_cast<int>(running.size()), options.capacity,
            draining ? protocol::WorkerStatus::kDraining : protocol::WorkerStatus::kOnline};
      } else if (std::optional<SteadyClock::time_point> due = BatchDue(now)) {
        wake_at = std::min(wake_at, *due);  // what the handlers answer meanwhile joins it
      } else if (registered.batching && outbox.size() > 1) {
        const size_t n = std::min(outbox.size(), protocol::kMaxBatch);
        several.assign(std::make_move_iterator(outbox.begin()),
                       std::make_move_iterator(outbox.begin() + static_cast<ptrdiff_t>(n)));
        outbox.erase(outbox.begin(), outbox.begin() + static_cast<ptrdiff_t>(n));
      } else if (!outbox.empty()) {
        next = std::move(outbox.front());
        outbox.pop_front();
      } else {
        deregister = draining && running.empty();
      }
    }
    if (!several.empty()) {
      if (Status sent = conn.SendBatch(several); !sent.ok()) {
        std::lock_guard lock(mu);
        for (auto it = several.rbegin(); it != several.rend(); ++it) {
          if (!AssignmentOf(*it).empty()) outbox.push_front(std::move(*it));
        }
        return {End::kLost, sent.message()};
      }
      continue;
    }
    if (next) {
      if (Status sent = conn.Send(*next); !sent.ok()) {
        if (!AssignmentOf(*next).empty()) {
          std::lock_guard lock(mu);
          outbox.push_front(std::move(*next));  // sent again after the next registration
        }
        return {End::kLost, sent.message()};
      }
      continue;
    }
    if (deregister) {
      Status sent = conn.Send(protocol::Deregister{});
      Log(sent.ok() ? "drain finished: deregistered"
                    : "drain finished; deregister not sent (" + sent.message() + ")");
      return {End::kDrained, ""};
    }
    Result<std::optional<protocol::ServerMessage>> got =
        conn.Receive(std::max(Duration(1), std::chrono::ceil<Duration>(wake_at - now)));
    if (!got.ok()) return {End::kLost, got.status().message()};
    if (!*got) continue;
    Handle(**got);
    // The rest of a batch frame is here already: handle it before sending, so that the
    // acks it causes leave together (Receive does not wait with no time left).
    for (size_t more = 1; more < protocol::kMaxBatch; ++more) {
      got = conn.Receive(Duration(0));
      if (!got.ok()) return {End::kLost, got.status().message()};
      if (!*got) break;
      Handle(**got);
    }
  }
}

void Agent::State::Handle(const protocol::ServerMessage& message) {
  if (auto* c = std::get_if<protocol::Command>(&message)) {
    HandleCommand(*c);
  } else if (auto* cancel = std::get_if<protocol::CommandCancel>(&message)) {
    CancelLocally(cancel->assignment_id, "cancelled by the server" +
                                             (cancel->reason.empty() ? "" : ": " + cancel->reason));
  } else if (auto* e = std::get_if<protocol::ProtocolError>(&message)) {
    bool held = false;
    if (e->code == errc::kStaleAssignment) {
      std::lock_guard lock(mu);
      held = running.count(e->assignment_id) > 0;
    }
    if (held) {
      CancelLocally(e->assignment_id, "the server no longer wants it (" + e->message + ")");
    } else {
      Log("server error " + e->code +
          (e->assignment_id.empty() ? "" : " (" + e->assignment_id + ")") + ": " + e->message);
    }
  } else {
    Log("ignoring a second 'registered'");
  }
}

void Agent::State::HandleCommand(const protocol::Command& c) {
  const std::string& id = c.assignment_id;
  std::string refusal;
  bool start = false;
  {
    std::lock_guard lock(mu);
    auto it = running.find(id);
    if (it != running.end()) {
      if (it->second.cancelled) refusal = "it is being cancelled";
    } else if (draining) {
      refusal = "draining";
    } else if (running.size() >= static_cast<size_t>(options.capacity)) {
      refusal = "at capacity (" + std::to_string(running.size()) + "/" +
                std::to_string(options.capacity) + ")";
    } else {
      running[id] = {c.command, false};
      start = true;
    }
    Queue(protocol::CommandAck{id, refusal.empty() ? AckStatus::kAccepted : AckStatus::kRejected,
                               std::nullopt});
  }
  if (!refusal.empty()) {
    Log("rejected " + id + " " + c.command + ": " + refusal);
  } else if (start) {
    if (options.log_commands) Log("started " + id + " " + c.command);
    runner.Start(c, Callbacks(id, c.command));
  }
}

HandlerCallbacks Agent::State::Callbacks(const std::string& assignment_id,
                                         const std::string& command) {
  HandlerCallbacks cb;
  cb.on_progress = [this, assignment_id](protocol::CommandProgress p) {
    std::lock_guard lock(mu);
    auto it = running.find(assignment_id);
    if (stop || it == running.end() || it->second.cancelled) return;
    QueueProgress(std::move(p));
    Wake();
  };
  cb.on_done = [this, assignment_id, command](protocol::CommandResult r) {
    bool cancelled = true;
    {
      std::lock_guard lock(mu);
      auto it = running.find(assignment_id);
      if (it != running.end()) {
        cancelled = it->second.cancelled || stop;
        running.erase(it);
      }
      if (!cancelled) QueueResult(r);
      Wake();
    }
    if (!options.log_commands && !cancelled && r.status == protocol::ResultStatus::kSuccess) {
      return;
    }
    Log("finished " + assignment_id + " " + command + ": " +
        (cancelled ? "cancelled (no result sent)" : Summary(r)));
  };
  return cb;
}

void Agent::State::CancelLocally(const std::string& assignment_id, const std::string& why) {
  {
    std::lock_guard lock(mu);
    const size_t dropped = Purge(assignment_id);
    auto it = running.find(assignment_id);
    if (it == running.end() || it->second.cancelled) {
      if (dropped > 0) Log("cancelling " + assignment_id + " (finished; not reported): " + why);
      return;
    }
    it->second.cancelled = true;
  }
  Log("cancelling " + assignment_id + ": " + why);
  runner.Cancel(assignment_id);
}

}  // namespace baton::worker
