// The server's periodic tick on the engine thread (server_impl.h).
#include "server/server_impl.h"

#include <cstdio>
#include <map>
#include <vector>

namespace baton::server {

void StartHousekeeping(Server::Impl& impl) {
  EngineHost* host = impl.engine.get();
  ExecutionLeases* leases = impl.store->leases();
  Scheduler* scheduler = impl.scheduler.get();
  Deliverer* deliverer = impl.deliverer.get();
  ServerMetrics* metrics = &impl.metrics;
  // Read at each scrape, from the I/O threads (LiveCounts is thread-safe); the engine
  // outlives the listener that serves /metrics.
  metrics->SetLiveSource([engine = impl.engine->engine()] { return engine->LiveCounts(); });
  workers::Coordinator* coordinator = impl.coordinator.get();
  // Executions a refused batch dropped, not read back yet (the store may be unreadable
  // too: a database server that is gone), and whether breakers and pools need reloading.
  struct Readoption {
    std::vector<std::string> pending;
    bool reload_guards = false;
  };
  auto readoption = std::make_shared<Readoption>();
  LeaseKeeper* keeper = impl.keeper.get();
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
}

}  // namespace baton::server
