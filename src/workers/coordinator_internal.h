// What the coordinator's source files share: the state of one dispatch.
#pragma once

#include "workers/coordinator.h"

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace baton::workers {

// Where a dispatch is. The first four are active, the rest final (AssignmentRecord's
// status strings, which ToString gives).
enum class DispatchStatus : uint8_t {
  kWaiting,     // in a queue (or on offer), no worker
  kDispatched,  // placed on a worker; its command goes out once durable
  kAccepted,    // the worker acked it
  kRunning,     // the worker reported progress
  kCompleted,
  kFailed,
  kCancelled,
  kLost,  // past max_reassignments
};
const char* ToString(DispatchStatus s);
// An AssignmentRecord's status; nullopt for a string that is none of them.
std::optional<DispatchStatus> ParseDispatchStatus(std::string_view s);

// The engine's RunRequest as a dispatch keeps it: without its execution id, which is
// where the assignment id begins (Dispatch::execution_id()).
struct DispatchRequest {
  std::string assignment_id;  // the dispatch id
  std::string ns;
  SpecPtr spec = EmptySpec();
  Duration timeout{0};
  int attempt = 1;
  int priority = 1;
  int step_index = 0;
  StepType type = StepType::kNoop;
};

// One attempt of a `command` step (or a local worker's step), from Prepare() (or
// Start()) until its end.
struct Coordinator::Dispatch {
  explicit Dispatch(const RunRequest& r);
  DispatchRequest request;
  RunCallbacks callbacks;
  DispatchStatus status = DispatchStatus::kWaiting;
  // A step of the local worker (shell, http), run by its built-in runner for
  // request.type (Coordinator::LocalRunnerFor).
  bool local = false;
  bool placed = false;   // on a worker (current_id() is its worker-facing id)
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
  // The execution id's length at the start of request.assignment_id; 0: it is in the
  // extras. The step id's length, after that and a '/' ("<execution>/<step>/<attempt>",
  // the engine's form); 0: in the extras. (The status, the flags and the ints sit
  // together: one waiting dispatch per pending step makes its size count; 192 bytes is a
  // jemalloc size class.)
  uint16_t execution_id_size = 0;
  uint16_t step_id_size = 0;
  int progress = 0;
  int reassignments = 0;
  // For a prepared dispatch, the time from Prepare() to `started` (microseconds, up to
  // INT32_MAX): the second latency metric counts from Prepare().
  int32_t prepared_lead_us = 0;
  TimeMs created_at = 0, updated_at = 0;
  std::chrono::steady_clock::time_point started;  // for the dispatch latency metric
  // What only some dispatches have: one that was refused, lost or moved, one with a
  // checkpoint, one whose assignment id does not begin with its execution and step ids. Apart, so
  // that every other one (nearly all, and each waiting one is a pending step's cost)
  // stays small.
  struct Extras {
    std::set<std::string> refused_by;  // workers that rejected it or lost it
    std::string previous_worker;       // set while a reassigned dispatch waits
    std::string reassign_reason;
    // Its worker-facing id once reassigned ("<dispatch id>.r<n>"); empty otherwise.
    std::string current_id;
    Json checkpoint;           // the last one reported; given to the next holder
    std::string execution_id;  // when execution_id_size is 0
    std::string step_id;       // when step_id_size is 0
  };
  std::unique_ptr<Extras> extras;  // null: none of those
  Extras& extra() {
    if (!extras) extras = std::make_unique<Extras>();
    return *extras;
  }
  // The holder's id; empty while waiting.
  const std::string& worker_id() const { return holder_ ? *holder_ : kNoId; }
  void SetWorker(const std::string& id) {
    holder_ = id.empty() ? nullptr : std::make_unique<std::string>(id);
  }
  void Unrefuse(const std::string& worker) {
    if (extras) extras->refused_by.erase(worker);
  }
  std::string_view execution_id() const {
    if (execution_id_size == 0 && extras) return extras->execution_id;
    return std::string_view(request.assignment_id).substr(0, execution_id_size);
  }
  std::string_view step_id() const {
    if (step_id_size == 0) return extras ? std::string_view(extras->step_id) : std::string_view();
    return std::string_view(request.assignment_id).substr(execution_id_size + 1u, step_id_size);
  }
  const Json& checkpoint() const { return extras ? extras->checkpoint : kNoCheckpoint; }
  void SetCheckpoint(Json checkpoint) { extra().checkpoint = std::move(checkpoint); }
  // The request as the engine gave it.
  RunRequest FullRequest() const;
  // The worker-facing id of its current placement: the dispatch id on its first worker,
  // "<dispatch id>.r<n>" after n reassignments; empty while waiting. (Not a member of its
  // own: a second copy of the id in every dispatch.)
  const std::string& current_id() const {
    if (!placed) return kNoId;
    return extras && !extras->current_id.empty() ? extras->current_id : request.assignment_id;
  }
  // Placed under `id` (request.assignment_id, or a reassignment's own).
  void PlaceAs(const std::string& id) {
    placed = true;
    if (id != request.assignment_id) {
      extra().current_id = id;
    } else if (extras) {
      extras->current_id.clear();
    }
  }
  void Unplace() {
    placed = false;
    if (extras) extras->current_id.clear();
  }

 private:
  // Out of line: only a placed dispatch has a holder (as many as the workers have slots),
  // and every waiting one is a pending step's cost.
  std::unique_ptr<std::string> holder_;
  static inline const std::string kNoId;
  static inline const Json kNoCheckpoint;
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
