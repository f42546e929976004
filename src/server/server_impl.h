// Server::Impl: what a running server owns. server.cpp builds it part by part in
// Server::Open; server_wiring.cpp connects the parts that call each other (the scheduler,
// the deliverer and the coordinator to the engine and the submitter);
// server_housekeeping.cpp runs its periodic tick on the engine thread. Private to the
// server module.
//
// Members are destroyed in reverse order: each comment that says "outlives" or
// "destroyed after" is why a member sits where it does.
#pragma once

#include "server/api.h"
#include "server/auth.h"
#include "server/completion_waits.h"
#include "server/dashboard/activity.h"
#include "server/dlq_replayer.h"
#include "server/engine_host.h"
#include "server/event_hub.h"
#include "server/feed_tail.h"
#include "server/instance_exchange.h"
#include "server/io_pool.h"
#include "server/lease_keeper.h"
#include "server/listener.h"
#include "server/metrics.h"
#include "server/rate_limiter.h"
#include "server/router.h"
#include "server/server.h"
#include "server/submitter.h"
#include "server/triggers/deliverer.h"
#include "server/triggers/follow_ups.h"
#include "server/triggers/scheduler.h"
#include "server/workflow_cache.h"
#include "workers/coordinator.h"

#include <baton/clock.h>
#include <baton/runner.h>
#include <baton/store.h>

#include <memory>
#include <string>

namespace baton::server {

struct Server::Impl {
  ServerOptions options;
  std::unique_ptr<Store> store;
  RealClock clock;
  std::unique_ptr<Runner> refused_shell;  // --no-local-shell; declared first: outlives the engine
  std::unique_ptr<EngineHost> engine;
  std::unique_ptr<TokenAuthority> auth;
  WorkflowCache workflows;
  std::unique_ptr<Submitter> submitter;
  std::unique_ptr<FollowUps> follow_ups;      // engine thread; outlives the engine
  CompletionWaits waits;                      // engine thread: submits waiting for their end
  std::unique_ptr<FinishHooks> finish_hooks;  // the follow-ups, then the waits
  std::unique_ptr<Deliverer> deliverer;       // engine thread; destroyed after the engine stops
  std::unique_ptr<Scheduler> scheduler;       // engine thread; destroyed after the engine stops
  std::unique_ptr<DlqReplayer> replayer;      // its timers run on the engine thread
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

// server_wiring.cpp. How the scheduler starts, inspects and cancels executions (called on
// the engine thread).
Scheduler::Hooks ScheduleHooks(Server::Impl& impl);
// How the deliverer sends notifications (through the http step runner) and starts
// triggered executions (through the submitter).
Deliverer::Hooks DeliveryHooks(Server::Impl& impl);
// Connects the coordinator to the engine: a worker's stale messages and reassignments go
// into the execution's log; with several instances, the instance exchange (offers of
// steps and relayed control requests) is made and connected too.
void WireCoordinator(Server::Impl& impl);

// server_housekeeping.cpp. Every 500 ms on the engine thread: the cron role's schedule
// reloads and pending deliveries, re-adoption of executions a refused batch dropped, and
// the figures /metrics reports.
void StartHousekeeping(Server::Impl& impl);

}  // namespace baton::server
