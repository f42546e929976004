// In-memory state of executions, owned by the engine thread.
#pragma once

#include <baton/clock.h>
#include <baton/runner.h>
#include <baton/store.h>
#include <baton/workflow.h>

#include "expr/condition.h"

#include <array>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace baton::engine {

// The last kSize successful attempt durations of one step of one workflow, in ms.
struct DurationHistory {
  static constexpr size_t kSize = 64;
  static constexpr size_t kMinSamples = 5;  // fewer say nothing about "usual"
  std::array<int64_t, kSize> ms{};
  size_t count = 0;  // samples held, at most kSize
  size_t next = 0;   // where the next one goes
};

// A for_each attempt in progress: one runner instance per item.
struct FanOut {
  Json items;                                    // the rendered for_each array
  Json outputs;                                  // one per item, in item order
  size_t next = 0;                               // next item to start
  size_t done = 0;                               // items completed
  std::unordered_map<std::string, size_t> live;  // running instance assignment -> item
};

// What circuit breakers, caching, pools, child workflows, for_each and failed attempts
// track per step: apart, and only for steps that use them, so that the common step stays
// small (every execution holds one per step).
struct StepGuards {
  // The circuit breaker the running attempt passed (empty = none): told how it ends.
  std::string breaker_key;
  // The cache key of the running attempt's run (empty = none): stored when it succeeds.
  std::string cache_key;
  bool cache_waiting = false;  // ready, waiting for an identical step's run (cache.cpp)
  // The next retry may not start before this (an open breaker's probe time); 0 = none.
  TimeMs retry_floor = 0;
  // Slots of the step's pool its attempt holds (0 = none), and whether it waits for them.
  int pool_held = 0;
  bool pool_waiting = false;
  // A `type: workflow` step's running child execution (empty = none, or not linked yet
  // after a restart).
  std::string child_id;
  // Every attempt's error, an array (null until the first attempt fails).
  Json attempt_errors;
  std::unique_ptr<FanOut> fan;  // set while a for_each attempt runs
};

struct StepState {
  // What the store has (or will have once the turn commits), but for the keys: the
  // execution's id and def->id.
  StepRecordFields rec;
  const StepDef* def = nullptr;
  // The retry timer (a loop TimerId, 0 = none) or, while timer_is_deadline, the attempt
  // timeout's place in the engine's StepDeadlines (never both: step_deadlines.h).
  TimerId timer = 0;
  // While heartbeat_armed: the place of the running attempt's heartbeat_timeout deadline in
  // the engine's StepDeadlines. While slow_armed: the place of its slow watch (when it
  // counts as slow, slow_steps.cpp) there. (Places in a heap, not loop timer ids: 32 bits.)
  uint32_t heartbeat_deadline = 0;
  uint32_t slow_watch = 0;
  // While slow_armed: the monotonic reading (Clock::MonotonicMs) at which the watched run
  // began, so that a step of the wall clock neither makes it slow early nor late.
  int64_t slow_since = 0;
  // (The ints and the flags sit together: 224 bytes is a jemalloc size class.)
  int pending_deps = 0;            // upstream steps not yet terminal
  int engine_restarts = 0;         // attempts lost to engine restarts (not counted by retry)
  bool in_flight : 1 = false;      // dispatched and counted against limits
  bool uses_capacity : 1 = false;  // counted against the local worker capacity
  bool dirty : 1 = false;          // changed in the open turn
  // The running attempt's runner says when its work begins (Runner::ReportsStart): the
  // slow watch starts at its step.started, not at its dispatch.
  bool slow_watch_from_start : 1 = false;
  // The current attempt's assignment id is the engine's usual one for rec.attempts
  // (AssignmentIdFor(execution id, def->id, rec.attempts)), and rec.assignment_id is left
  // empty: a 32-byte copy per waiting step saved. Read and set it only through
  // AssignmentOf(), IsCurrentAssignment(), SetAssignment(), ClearAssignment() and
  // PinAssignment().
  bool assignment_implied : 1 = false;
  bool timer_is_deadline : 1 = false;  // `timer` is a StepDeadlines position
  bool heartbeat_armed : 1 = false;    // heartbeat_deadline is one
  bool slow_armed : 1 = false;         // slow_watch is one
  // How far the current attempt got, for the observers' step durations (Engine::Impl::
  // AttemptBegan): kNotBegun, kDispatchedOnly, or the ms from its dispatch
  // (rec.started_at) to its step.started, saturated at INT32_MAX (24 days). An int in the
  // flags' padding: StepState stays in its size class.
  static constexpr int32_t kNotBegun = -2;
  static constexpr int32_t kDispatchedOnly = -1;
  int32_t run_delay_ms = kNotBegun;
  // The rendered spec of the latest attempt (for the DLQ), shared with its runner; null:
  // the definition's own.
  SpecPtr resolved_input;
  std::unique_ptr<StepGuards> guards;  // null until one of its fields is needed
  StepGuards& Guards() {
    if (!guards) guards = std::make_unique<StepGuards>();
    return *guards;
  }
  FanOut* Fan() const { return guards ? guards->fan.get() : nullptr; }
  const Json& AttemptErrors() const { return guards ? guards->attempt_errors : kNull; }
  const std::string& BreakerKey() const { return guards ? guards->breaker_key : kNone; }
  const std::string& CacheKey() const { return guards ? guards->cache_key : kNone; }
  bool CacheWaiting() const { return guards && guards->cache_waiting; }
  const std::string& ChildId() const { return guards ? guards->child_id : kNone; }

 private:
  static inline const std::string kNone;
  static inline const Json kNull;
};

// A circuit breaker as the engine holds it: the stored record, and the half-open probe
// in flight (its attempt, "execution/step/attempt"), which is not stored: after a restart
// the next attempt probes.
struct Breaker {
  BreakerRecord rec;
  std::string probe;
};

// Ready steps held back, first in first out. A vector and a read position rather than a
// std::deque, which allocates ~600 bytes as soon as it is constructed: every execution
// holds one, and nearly all of them stay empty.
class StepFifo {
 public:
  bool empty() const { return head_ == items_.size(); }
  void push_back(int step) { items_.push_back(step); }
  int pop_front() {
    int step = items_[head_++];
    if (empty()) clear();
    return step;
  }
  void clear() {
    items_.clear();
    head_ = 0;
  }
  // Takes every held step, in order, leaving this empty.
  std::vector<int> TakeAll() {
    std::vector<int> out(items_.begin() + static_cast<std::ptrdiff_t>(head_), items_.end());
    clear();
    return out;
  }

 private:
  std::vector<int> items_;
  size_t head_ = 0;
};

struct ExecState;
// Executions waiting for a concurrency slot: highest priority (negated) first, then
// first come first served.
using WaitQueue = std::set<std::tuple<int, uint64_t, std::shared_ptr<ExecState>>>;

// What only some executions use (steps held back, signals, a concurrency group or a wait
// for a slot, a failed step, a plan of their own): apart, so that the common execution
// stays small (every live one holds an ExecState, and each waiting step of a one-step
// workflow is one execution).
struct ExecExtras {
  StepFifo parked;  // ready steps held back by pause or max_parallel
  // Signals sent to the execution, by seq (taken ones keep consumed_by); see signals.cpp.
  std::vector<SignalRecord> signals;
  size_t pending_signals = 0;
  // Concurrency (concurrency.cpp): the group (namespace, workflow, rendered key; empty =
  // none), and the queue it waits in (null = none) at queue_seq.
  std::string concurrency_group;
  WaitQueue* waiting_in = nullptr;
  uint64_t queue_seq = 0;
  // The error of the first step that failed for good (ExecState::had_failure), with its
  // id as "step".
  Json first_failure;
  // ExecState::Plan() when the definition came without one (built in code, or edited
  // since): compiled for this execution alone.
  std::shared_ptr<const WorkflowPlan> own_plan;
};

// An execution's record as the engine holds it while it runs: ExecutionRecordFields, but
// for what is set only when it ends or rarely (its output, error and end time, variables
// its steps set), which is in `late` (null until one is set). Every live execution holds
// one, and each waiting step of a one-step workflow is an execution.
struct HeldRecord {
  std::string id;
  Json input;  // null when the input is an empty object (ExecState::Input)
  ExecutionStatus status = ExecutionStatus::kPending;
  int priority = 1;
  TimeMs created_at = 0;
  TimeMs started_at = 0;
  TimeMs deadline = 0;  // execution timeout, 0 = none
  std::string ns = kDefaultNamespace;
  struct Late {
    Json output;
    Json error;
    Json vars;  // see ExecutionRecordFields::vars
    TimeMs completed_at = 0;
  };
  std::unique_ptr<Late> late;

  const Json& output() const { return late ? late->output : kNull; }
  const Json& error() const { return late ? late->error : kNull; }
  const Json& vars() const { return late ? late->vars : kNull; }
  TimeMs completed_at() const { return late ? late->completed_at : 0; }
  Late& Set() {
    if (!late) late = std::make_unique<Late>();
    return *late;
  }

 private:
  static inline const Json kNull;
};

// Where an execution came from, which few say: the parent that started it (a child
// workflow's) and the idempotency key it was submitted with.
struct ExecOrigin {
  std::string parent_id;
  std::string parent_step;
  int parent_attempt = 0;
  std::string idempotency_key;

  // One that says these, or null when they say nothing (no parent, no key).
  static std::unique_ptr<ExecOrigin> Of(const std::string& parent_id,
                                        const std::string& parent_step, int parent_attempt,
                                        const std::string& idempotency_key) {
    if (parent_id.empty() && parent_step.empty() && parent_attempt == 0 &&
        idempotency_key.empty()) {
      return nullptr;
    }
    return std::make_unique<ExecOrigin>(
        ExecOrigin{parent_id, parent_step, parent_attempt, idempotency_key});
  }
};

struct ExecState {
  // What the store has (or will have once the turn commits), but for what def says (the
  // workflow's name, version and text) and origin: Record() is the whole of it.
  HeldRecord rec;
  std::shared_ptr<const WorkflowDef> def;
  std::unique_ptr<ExecOrigin> origin;  // null: no parent, no idempotency key
  const std::string& ParentId() const { return origin ? origin->parent_id : kNone; }
  const std::string& ParentStep() const { return origin ? origin->parent_step : kNone; }
  int ParentAttempt() const { return origin ? origin->parent_attempt : 0; }
  const std::string& IdempotencyKey() const { return origin ? origin->idempotency_key : kNone; }
  // Takes the origin of `r` (kept only when it says something).
  void SetOrigin(const ExecutionRecord& r) {
    origin = ExecOrigin::Of(r.parent_id, r.parent_step, r.parent_attempt, r.idempotency_key);
  }
  // The whole record, into `out` (which may be a record being reused).
  void FillRecord(ExecutionRecord& out) const {
    out.id = rec.id;
    out.input = rec.input;
    out.ns = rec.ns;
    out.output = rec.output();
    out.error = rec.error();
    out.vars = rec.vars();
    out.completed_at = rec.completed_at();
    FillRest(out);
  }
  // Takes `r`'s fields (what def and origin say is theirs: SetOrigin).
  void Adopt(const ExecutionRecord& r) {
    rec.id = r.id;
    SetInput(r.input);
    rec.status = r.status;
    rec.priority = r.priority;
    rec.created_at = r.created_at;
    rec.started_at = r.started_at;
    rec.deadline = r.deadline;
    rec.ns = r.ns;
    rec.late.reset();
    if (!r.output.is_null() || !r.error.is_null() || !r.vars.is_null() || r.completed_at) {
      rec.Set() = {r.output, r.error, r.vars, r.completed_at};
    }
  }
  ExecutionRecord Record() const {
    ExecutionRecord out;
    FillRecord(out);
    return out;
  }
  // Calls f(const ExecutionRecord&) with the whole record, lending it this one's fields
  // for the call instead of copying them (an output may be large), and returns what f
  // returns. f must not reach this execution's rec meanwhile.
  template <class F>
  auto WithRecord(F&& f) {
    ExecutionRecord whole;
    whole.id = std::move(rec.id);
    whole.input = std::move(rec.input);
    whole.ns = std::move(rec.ns);
    whole.completed_at = rec.completed_at();
    if (rec.late) {
      whole.output = std::move(rec.late->output);
      whole.error = std::move(rec.late->error);
      whole.vars = std::move(rec.late->vars);
    }
    FillRest(whole);
    auto result = std::forward<F>(f)(std::as_const(whole));
    rec.id = std::move(whole.id);
    rec.input = input_elided ? Json() : std::move(whole.input);
    rec.ns = std::move(whole.ns);
    if (rec.late) {
      rec.late->output = std::move(whole.output);
      rec.late->error = std::move(whole.error);
      rec.late->vars = std::move(whole.vars);
    }
    return result;
  }
  // The execution's input. One submitted without any (an empty object, a 48-byte map of
  // its own) is held as a null rec.input: SetInput() elides it, and Input() and the
  // records (FillRecord, WithRecord) give the empty object back.
  const Json& Input() const { return input_elided ? kEmptyObject : rec.input; }
  void SetInput(Json input) {
    input_elided = input.is_object() && input.empty();
    rec.input = input_elided ? Json() : std::move(input);
  }
  std::vector<StepState> steps;
  // Step id -> index, built on first use (templates, recovery): a run of template-free
  // steps never pays for it, nor for an empty map's 56 bytes.
  // Step id -> index: the plan's, shared by every execution of it.
  const std::unordered_map<std::string, int>& StepIndex() const { return Plan()->StepIndex(*def); }
  // The definition's compiled graph, layers and conditions: def->plan, shared by every
  // execution of the definition and alive as long as def, or, when def has none (or one
  // of another shape), the one compiled for this execution alone (extras->own_plan).
  const WorkflowPlan* Plan() const {
    return extras && extras->own_plan ? extras->own_plan.get() : def->plan.get();
  }

  // (The ints and the flags sit together, below, and the rare fields are apart in
  // ExecExtras: every live execution holds one of these, and 240 bytes plus make_shared's
  // 16 is a jemalloc size class.)
  int64_t next_seq = 1;
  TimerId deadline_timer = 0;
  int64_t progress_sum = 0;  // sum of per-step progress (terminal = 100)
  // Non-terminal steps per layer (plan->layers of them; null when there are none).
  std::unique_ptr<int[]> layer_open;
  // When its last event was emitted (stalls.cpp); stall_reported below says whether
  // execution.stalled was reported since.
  TimeMs last_activity = 0;

  // Null until one of its fields is needed: More() makes it, the readers below do not.
  std::unique_ptr<ExecExtras> extras;
  ExecExtras& More() {
    if (!extras) extras = std::make_unique<ExecExtras>();
    return *extras;
  }
  bool HasParked() const { return extras && !extras->parked.empty(); }
  // The concurrency group (empty = none); the slots held are the flags below.
  const std::string& ConcurrencyGroup() const { return extras ? extras->concurrency_group : kNone; }
  WaitQueue* WaitingIn() const { return extras ? extras->waiting_in : nullptr; }

  int in_flight = 0;  // dispatched steps counted against max_parallel
  int terminal_steps = 0;
  int current_layer = 0;  // first layer with open steps
  // The number (Engine::Impl::batches_submitted_, its low 32 bits) of the last batch with
  // events of it. A finished execution leaves memory when that batch is durable, not an
  // earlier one: were the last one (the one that finished it, or a later one) refused,
  // the execution must still be in memory to be dropped and re-adopted from the store.
  uint32_t last_batch = 0;
  // (Flags as bits: with last_batch they fit where the bools were.)
  bool had_failure : 1 = false;  // a non-optional step failed for good
  bool failing_fast : 1 = false;
  bool finished : 1 = false;  // reached a terminal status in memory
  bool stopping : 1 = false;  // cancelling everything: no natural finish
  bool dirty : 1 = false;     // record changed in the open turn
  bool stall_reported : 1 = false;
  bool holds_group_slot : 1 = false;
  bool holds_global_slot : 1 = false;
  bool input_elided : 1 = false;  // see Input()
  // What Engine::LiveCounts() counts it as (Engine::Impl::LiveKind), 0: not counted.
  uint8_t live = 0;

  bool paused() const { return rec.status == ExecutionStatus::kPaused; }

 private:
  // What the record says beyond rec's strings and Json.
  void FillRest(ExecutionRecord& out) const {
    out.status = rec.status;
    out.priority = rec.priority;
    out.created_at = rec.created_at;
    out.started_at = rec.started_at;
    out.deadline = rec.deadline;
    if (input_elided) out.input = Json::object();
    out.workflow = def->name;
    out.version = def->version;
    out.definition = def->source;
    out.parent_id = ParentId();
    out.parent_step = ParentStep();
    out.parent_attempt = ParentAttempt();
    out.idempotency_key = IdempotencyKey();
  }
  static inline const std::string kNone;
  static inline const Json kEmptyObject = Json::object();
};

// A step's current assignment id (empty: none), the one its runner reports against.
std::string AssignmentOf(const ExecState& ex, const StepState& st);
// Whether `assignment` is the step's current assignment id (nothing copied).
bool IsCurrentAssignment(const ExecState& ex, const StepState& st, std::string_view assignment);
// Makes `id` the step's current assignment id, for its current rec.attempts.
void SetAssignment(const ExecState& ex, StepState& st, std::string id);
// Makes the usual id for its current rec.attempts the step's current assignment id.
void ImplyAssignment(StepState& st);
// Whether the step has a current assignment id.
inline bool HasAssignment(const StepState& st) {
  return st.assignment_implied || !st.rec.assignment_id.empty();
}
// No assignment (a dispatch begins).
void ClearAssignment(StepState& st);
// Keeps the current assignment id as it is while rec.attempts changes (an attempt that
// fails before any dispatch).
void PinAssignment(const ExecState& ex, StepState& st);

#if defined(__GLIBCXX__) && defined(__x86_64__)
// Each waiting step of a one-step workflow holds one of each: a field added past these
// sizes moves the structure up a jemalloc size class (and ~20 % more memory per waiting
// step). Keep the rare ones apart (ExecExtras, StepGuards) instead of raising the bound.
// FillRecord, WithRecord and Adopt copy ExecutionRecordFields field by field: a field added
// to it changes its size, and must be copied there too (and held in HeldRecord).
static_assert(sizeof(ExecutionRecordFields) == 168, "a new record field: copy it as well");
static_assert(sizeof(ExecState) <= 240, "ExecState + make_shared's block must fit 256 bytes");
static_assert(sizeof(StepState) <= 224, "StepState must fit 224 bytes");
#endif

}  // namespace baton::engine
