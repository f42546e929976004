// Keeps this instance's share of the executions when several servers run on one
// database (ExecutionLeases in <baton/store.h>): a thread that renews the leases held,
// drops from the engine what was lost, claims executions whose holder stopped renewing
// (recovering them from the store), holds the leader role that one instance at a time
// performs (the cron scheduler), and brings in the circuit breakers other instances
// changed (Engine::MergeBreakers) and the results they cached or deleted
// (Engine::MergeCache), every turn.
//
// Threading: its own thread talks to the database; everything that touches the engine is
// posted to the engine's thread. leading() may be called from any thread.
#pragma once

#include <baton/store.h>

#include "server/engine_host.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace baton::server {

class LeaseKeeper {
 public:
  // Claims at most this many executions per turn; a turn that claims as many claims again
  // at once.
  static constexpr size_t kClaimBatch = 100;

  // Neither is owned; both outlive the keeper.
  LeaseKeeper(ExecutionLeases* leases, EngineHost* host) : leases_(leases), host_(host) {}
  ~LeaseKeeper() { Stop(); }
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  // Renews, then takes back what this instance's name held before a restart, then runs a
  // turn every quarter lease.
  void Start();
  void Stop();
  // Whether this instance holds the cron role now (renewed within the trust window).
  bool leading() const { return leading_.load(std::memory_order_acquire); }

 private:
  void Run();
  // One turn; false when claiming should go on at once.
  bool Turn(bool first);
  // Drops `ids` from the engine; the store refuses their writes until every batch
  // submitted before that is settled.
  void Drop(std::vector<std::string> ids);

  ExecutionLeases* leases_;
  EngineHost* host_;
  std::atomic<bool> leading_{false};
  int64_t cache_after_ = 0;  // the shared cache's position read up to (keeper thread only)
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace baton::server
