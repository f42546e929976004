// Agent: the connection loop of `baton worker` (docs/worker-protocol.md). It registers
// with the server, heartbeats, runs the commands it is sent through a HandlerRunner and
// reports their progress and results, reconnecting when the connection is lost.
//
//   - Connect (Connector), send `register` (commands: HandlerRunner::Commands()), wait
//     for `registered` (at most registration_timeout), then send `heartbeat` every
//     heartbeatInterval the server gave: currentLoad = commands running here, status
//     ONLINE, or DRAINING once Drain() was called.
//   - A failed connect or registration, or a lost connection: reconnect after a backoff
//     (the first reconnect_brisk attempts every reconnect_initial, so that a server
//     restart costs seconds; then doubling up to reconnect_max; each delay jittered to
//     between half and all of it; reset by a successful registration) and register
//     again.
//     Handlers keep running across reconnects. A refusal IsFatalConnectError (401, 403)
//     ends Run() with that error instead.
//   - `command`: rejected (`command.ack` rejected) while draining or at capacity; else
//     acked accepted and started. A command for an assignment already running here is
//     acked again and not started twice. Its progress goes out as `command.progress`,
//     its end as `command.result`.
//   - What is to be sent waits in an outbox, in order, until the connection takes it:
//     acks, results, and for each assignment only its latest unsent progress. When the
//     connection is lost, its acks are dropped; the results and progress left are sent
//     once the next registration succeeds, so no result is lost (duplicates are
//     harmless: the server fences them).
//   - Busy (two or more commands running, and a server that reads batch frames): the
//     outbox waits up to batch_window from its oldest message, so that what the handlers
//     answer meanwhile leaves in the same frame, and a result replaces its command's ack
//     if that is still waiting (a result stands for its ack). With one command running
//     or none, everything leaves at once: an idle worker adds no latency.
//   - `command.cancel`, or an `error` STALE_ASSIGNMENT naming an assignment running
//     here: the handler is cancelled and nothing more of that assignment is sent. Other
//     `error` messages are logged.
//   - Drain(): a DRAINING heartbeat at once, new commands rejected, running ones finish
//     and their results are sent; then `deregister`, close, and Run() returns ok. (Not
//     connected and nothing left to send: Run() returns without deregistering.)
//   - Stop(): running handlers are cancelled (HandlerRunner::Shutdown), the connection
//     closed, and Run() returns ok; nothing more is sent.
//
// Threading: Run() blocks the calling thread and may be called once. Drain() and Stop()
// are thread-safe and return at once (safe from a signal-watching thread). The log sink
// is called from Run()'s thread and the handler runner's thread, one line at a time.
#pragma once

#include <baton/clock.h>
#include <baton/status.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "worker/connection.h"
#include "worker/handler_runner.h"

namespace baton::worker {

struct AgentOptions {
  std::string worker_id;  // required: [A-Za-z0-9._-], 1..100 characters
  std::string node_id;    // empty: worker_id
  std::string host;       // informational
  int capacity = 1;       // commands run at once
  std::vector<std::string> tags;
  HandlerRunnerOptions handlers;
  Duration reconnect_initial{500};
  Duration reconnect_max{30000};
  int reconnect_brisk = 8;  // attempts at reconnect_initial before the delay doubles
  Duration registration_timeout{10000};
  // How long a busy worker's outbox may wait to fill a batch frame (see above); zero:
  // every message leaves as soon as the loop can send it. The wait ends early when the
  // batch is full or when at most one command is left running.
  Duration batch_window{2};
  // One line per event (connected, reconnecting, command started/finished, drain).
  std::function<void(const std::string&)> log;
  // False: no line for a command that starts or finishes successfully (at thousands of
  // commands a second those lines cost the worker more than the commands); rejections,
  // failures, cancels and connection changes are still logged.
  bool log_commands = true;
};

class Agent {
 public:
  explicit Agent(AgentOptions options);
  ~Agent();  // Stop(); the handler runner's Shutdown
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Connects through `connect` and serves until drained or stopped (ok), or until a
  // fatal refusal (that error).
  Status Run(const Connector& connect);
  void Drain();
  void Stop();

  // The commands the agent registers.
  std::vector<std::string> Commands() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace baton::worker
