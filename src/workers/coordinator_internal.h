// What the coordinator's source files share: the state of one dispatch.
#pragma once

#include "workers/coordinator.h"

#include <chrono>
#include <memory>
#include <set>
#include <string>

namespace baton::workers {

// One attempt of a `command` step (or a local worker's step), from Prepare() (or
// Start()) until its end.
struct Coordinator::Dispatch {
  RunRequest request;
  RunCallbacks callbacks;
  Runner* local = nullptr;  // the built-in runner, for a step of the local worker
  std::string current_id;   // worker-facing id; empty while waiting
  std::string worker_id;    // holder; empty while waiting
  // waiting | dispatched (placed; sent once durable) | accepted | running
  std::string status = "waiting";
  bool durable = false;  // its assignment record is committed: the command may go out
  // Prepared, Start() not called yet: the engine's batch that records the dispatch may not
  // be durable and there are no callbacks, so the command must not go out (Start sends it).
  bool awaiting_start = false;
  // Its current placement was recorded in the engine's batch: durable once Start() comes.
  bool durable_at_start = false;
  bool sent = false;      // the command went out on the holder's current channel
  bool prepared = false;  // given to Prepare() (the second metric)
  bool latency_recorded = false;
  // On offer to the other instances (DispatchExchange): out of the queue, no worker here.
  bool offered = false;
  // Another instance's, taken from the board: never offered on; its callbacks report back.
  bool foreign = false;
  // (The flags and the two ints sit together: one waiting dispatch per pending step makes
  // its size count; 448 bytes is a jemalloc size class.)
  int progress = 0;
  int reassignments = 0;
  Json checkpoint;  // the last one reported; given to the next holder
  TimeMs created_at = 0, updated_at = 0;
  std::chrono::steady_clock::time_point started;  // for the dispatch latency metric
  std::chrono::steady_clock::time_point prepared_at;
  // What only a dispatch that was refused, lost or moved has. Apart, so that every other
  // one (nearly all, and each waiting one is a pending step's cost) stays small.
  struct Moves {
    std::set<std::string> refused_by;  // workers that rejected it or lost it
    std::string previous_worker;       // set while a reassigned dispatch waits
    std::string reassign_reason;
  };
  std::unique_ptr<Moves> moves;  // null: never refused, lost or moved
  Moves& moved() {
    if (!moves) moves = std::make_unique<Moves>();
    return *moves;
  }
  void Unrefuse(const std::string& worker) {
    if (moves) moves->refused_by.erase(worker);
  }
};

// The Runner of the local worker's step types (coordinator_local.cpp).
class Coordinator::LocalRunner final : public Runner {
 public:
  explicit LocalRunner(Coordinator* c) : c_(c) {}
  void Start(const RunRequest& request, RunCallbacks callbacks) override;
  void Cancel(const std::string& dispatch_id) override;
  // Local work dies with the process: the default Reattach (ENGINE_RESTART) is the truth.
  bool CanReattach() const override { return false; }
  // A step may wait for a free slot of the local worker first.
  bool ReportsStart() const override { return true; }

 private:
  Coordinator* c_;
};

}  // namespace baton::workers
