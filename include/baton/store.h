// The Store: where every state change goes before it is acted on.
//
// The engine produces WriteBatches (state changes and events of one decide step);
// Commit() writes a group of them in one transaction and returns only when they are
// durable (per the implementation's sync setting). Implementations, each its own module
// and target: the memory store (<baton/memory_store.h>: tests, --ephemeral) and the
// SQLite store (<baton/sqlite_store.h>: the default). Every implementation passes the
// conformance suite in src/store/conformance_test.cpp.
//
// Threading: implementations are thread-safe; Commit() calls are serialised inside.
// Errors: store failures are Status values with code errc::kStore (the backend's message
// included); lookups of absent records return errc::kNotFound. Nothing throws.
// JSON: every Json field round-trips exactly, including null (stored as "absent").
// Strings inside Json must be valid UTF-8; a durable store replaces invalid bytes with
// U+FFFD rather than failing the commit.
#pragma once

#include <baton/clock.h>
#include <baton/json.h>
#include <baton/status.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace baton {

enum class ExecutionStatus {
  kPending,
  kRunning,
  kPaused,
  kCompleted,
  kFailed,
  kTimeout,
  kCancelled,
  // Waiting for a concurrency slot (the workflow's `concurrency`, or the server's
  // --max-running-executions) before it runs.
  kQueued
};
enum class StepStatus {
  kPending,
  kReady,
  kDispatched,
  kRunning,
  kCompleted,
  kFailed,
  kTimeout,
  kSkipped,
  kCached,
  kCancelled,
  kWaitingRetry
};

const char* ToString(ExecutionStatus s);
const char* ToString(StepStatus s);
std::optional<ExecutionStatus> ParseExecutionStatus(std::string_view s);
std::optional<StepStatus> ParseStepStatus(std::string_view s);
bool IsTerminal(ExecutionStatus s);
bool IsTerminal(StepStatus s);  // completed, failed, timeout, skipped, cached, cancelled

// Every workflow and execution belongs to a namespace; the server filters every query
// by the caller's. Records written by `baton run` are in the default one.
inline constexpr const char* kDefaultNamespace = "default";

struct WorkflowRecord {
  std::string name;
  int version = 1;
  Json definition;  // WorkflowDef::source
  TimeMs created_at = 0;
  std::string ns = kDefaultNamespace;
};

// What an execution record says apart from what its definition says and where it came
// from. The engine holds one per running execution and adds the rest (the workflow's
// name, version and text from the definition it runs; the parent and idempotency key,
// which few executions have, from apart) only to the records it writes.
struct ExecutionRecordFields {
  std::string id;
  Json input = Json::object();
  ExecutionStatus status = ExecutionStatus::kPending;
  int priority = 1;
  Json output;  // null until completed
  Json error;   // null or {code, message, step?}
  TimeMs created_at = 0;
  TimeMs started_at = 0;
  TimeMs completed_at = 0;
  TimeMs deadline = 0;  // execution timeout, 0 = none
  std::string ns = kDefaultNamespace;
  // Variables set while it runs (steps' set_vars), by name; null until one is set. They
  // shadow the definition's `vars` of the same name.
  Json vars;
};

struct ExecutionRecord : ExecutionRecordFields {
  std::string workflow;
  int version = 1;
  // The snapshot of the workflow the execution runs (WorkflowDef::source: JSON text,
  // written to a store as it is); null = none. Shared, never copied: every running
  // execution of a workflow version points at the one text.
  std::shared_ptr<const std::string> definition;
  // A child workflow's: the execution, step and attempt that started it (empty / 0 for a
  // top-level execution).
  std::string parent_id;
  std::string parent_step;
  int parent_attempt = 0;
  std::string idempotency_key;  // empty = none; unique per namespace otherwise
};

// What a step record says apart from whose it is. The engine holds one per step of each
// running execution, where the keys are known already (its execution's id, its
// definition's step id), and adds them only to the records it writes.
struct StepRecordFields {
  // (The ints sit together: the engine holds one of these per step of each running
  // execution, and padding between them would move its StepState up a size class.)
  int index = 0;  // position in the definition
  StepStatus status = StepStatus::kPending;
  int attempts = 0;
  // Attempts made before the last retry of the execution: the retry budget counts
  // attempts above it.
  int attempt_base = 0;
  int progress = 0;    // 0..100
  int exit_code = -1;  // shell steps; -1 when not applicable
  Json output;
  Json error;  // null or {code, message, details?}
  std::string stderr_tail;
  std::string assignment_id;  // current attempt's dispatch, empty when none
  TimeMs started_at = 0;
  TimeMs completed_at = 0;
  TimeMs retry_at = 0;  // when waiting_retry ends
  TimeMs deadline = 0;  // current attempt's timeout
};

struct StepRecord : StepRecordFields {
  std::string execution_id;
  std::string step_id;
};

struct AttemptRecord {
  std::string execution_id;
  std::string step_id;
  int attempt = 1;  // 1, 2, 3 ... (numbers below 1 are not stored)
  StepStatus status = StepStatus::kRunning;
  std::string assignment_id;
  Json error;
  TimeMs started_at = 0;
  TimeMs completed_at = 0;
};

struct EventRecord {
  std::string execution_id;
  int64_t seq = 0;  // 1, 2, 3 ... per execution, gap-free
  // The event's place in the whole store: strictly increasing across executions in
  // commit order, with gaps (numbers of refused commits are not reused). The engine
  // assigns it; 0 = none (such an event is never listed by position). A store shared by
  // several instances returns the database's position instead (SharedFeed).
  int64_t position = 0;
  std::string type;     // "step.completed", ...
  std::string step_id;  // empty for execution events
  int attempt = 0;      // step events: the attempt they are about; 0 otherwise
  Json data;            // the rest of the event (error, reason, delay, progress), or null
  TimeMs time = 0;
};

// A step that failed for good (the dead-letter queue): what it was given, how each
// attempt failed, and what became of the entry. The engine writes it in the commit that
// fails the step; replay and discard update it.
struct DeadLetterRecord {
  std::string execution_id;
  std::string step_id;
  Json input;   // the step's resolved input
  Json errors;  // every attempt's error of the step's last run, in order
  TimeMs created_at = 0;
  // 0 in a batch: a new entry, numbered by the store (increasing, never reused);
  // otherwise the entry with that id, every field replaced.
  int64_t id = 0;
  std::string ns = kDefaultNamespace;
  std::string workflow;
  int version = 0;
  std::string code;         // the last attempt's error code
  std::string fingerprint;  // code + normalised message (DeadLetterFingerprint)
  TimeMs first_failed_at = 0;
  TimeMs last_failed_at = 0;
  int first_attempt = 0;  // the attempts of the run that failed
  int last_attempt = 0;
  std::string status = "open";  // open | replayed | discarded (kDeadLetter* below)
  TimeMs resolved_at = 0;       // replayed or discarded at
  // Replayed: the attempt number the replay's run of the step starts at. A later entry
  // of the same execution and step whose first_attempt is this one is that run failing
  // again.
  int replay_attempt = 0;
};
inline constexpr const char* kDeadLetterOpen = "open";
inline constexpr const char* kDeadLetterReplayed = "replayed";
inline constexpr const char* kDeadLetterDiscarded = "discarded";

// Which dead letters to list or count; every set field narrows the list.
struct DeadLetterFilter {
  std::string ns;  // empty = every namespace
  std::string execution_id;
  std::string workflow;
  std::string step_id;
  std::string code;
  std::string fingerprint;
  std::string status;    // empty = any
  TimeMs since = 0;      // last_failed_at >= since
  int64_t after_id = 0;  // id > after_id (the cursor of the previous page)
  size_t limit = 100;    // 0 = no limit (ListDeadLetters only)
};

// Dead letters with the same workflow, step and fingerprint (Store::CountDeadLetters).
struct DeadLetterGroup {
  std::string workflow;
  std::string step_id;
  std::string fingerprint;
  std::string code;
  int64_t count = 0;
  TimeMs first_failed_at = 0;  // the earliest first failure of the group
  TimeMs last_failed_at = 0;   // the latest last failure
  int64_t last_id = 0;         // the newest entry of the group
};

// A signal sent to an execution (a `wait` step with `signal: NAME` takes it as its
// output). Kept from arrival, so a signal sent before its step waits is not lost; the
// step that consumes it is recorded in the same commit as that step's completion.
struct SignalRecord {
  std::string execution_id;
  int64_t seq = 0;  // per execution, from 1, in arrival order
  std::string ns = kDefaultNamespace;
  std::string name;
  Json payload;
  TimeMs sent_at = 0;
  std::string consumed_by;  // the step id that took it; "" while pending
  TimeMs consumed_at = 0;
};

// A named pool of slots shared by the workflows of a namespace (Airflow's pools): a step
// with `pool: NAME` runs only while `pool_slots` of its slots are free.
struct PoolRecord {
  std::string ns = kDefaultNamespace;
  std::string name;
  int slots = 1;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
};

// A circuit breaker (DESIGN.md §3): the health of one dependency, shared by every
// execution of a namespace. The engine writes it in the batch of the attempt that
// changed it, so after a restart a breaker is as open as it was.
struct BreakerRecord {
  std::string ns = kDefaultNamespace;
  std::string key;               // "api.example.com", "train-model", or the step's own key
  std::string state = "closed";  // closed | open | half_open (kBreaker* below)
  int failures = 0;              // consecutive failures counted while closed
  int successes = 0;             // successful probes while half-open
  TimeMs opened_at = 0;          // when it last opened; 0 = never
  TimeMs probe_at = 0;           // open: when the next probe may go; half_open: when a
                                 // probe that never answered stops holding the way
  int64_t trips = 0;             // times it opened
  Json last_error;               // the last counted failure's {code, message}, or null
  // The thresholds of the step that last used it (a key shared by steps with different
  // settings follows the last one).
  int failure_threshold = 5;
  int64_t recovery_timeout_ms = 30'000;
  int success_threshold = 1;
  TimeMs updated_at = 0;
};
inline constexpr const char* kBreakerClosed = "closed";
inline constexpr const char* kBreakerOpen = "open";
inline constexpr const char* kBreakerHalfOpen = "half_open";

// A step's cached result (DESIGN.md §3 caching): the output of a successful attempt,
// found again by key (a SHA-256 of what the step was asked to do) until it expires or is
// evicted. Written in the commit that completes the producing step.
struct CacheEntryRecord {
  std::string ns = kDefaultNamespace;
  std::string key;  // 64 hex digits
  std::string workflow;
  std::string step_id;
  std::string execution_id;  // the execution whose step produced it
  Json output;
  int64_t bytes = 0;  // the output's size as compact JSON
  TimeMs created_at = 0;
  TimeMs expires_at = 0;  // 0 = never
  TimeMs last_hit_at = 0;
  int64_t hits = 0;
};

// Which cache entry a CacheTouch or a deletion is about.
struct CacheKey {
  std::string ns;
  std::string key;
};
// A hit: the entry's use counts change, nothing else (no need to write its output again).
struct CacheTouch {
  std::string ns;
  std::string key;
  TimeMs last_hit_at = 0;
  int64_t hits = 0;
};

// An API token. Only a hash of the secret is stored; the secret is shown once.
struct TokenRecord {
  std::string id;  // public handle, e.g. "tok_01jd3k5x7q4f9a2"
  std::string ns = kDefaultNamespace;
  std::string name;                 // what the token is for
  std::vector<std::string> scopes;  // admin, write, read, worker
  std::string secret_hash;          // hex SHA-256 of the secret
  TimeMs created_at = 0;
  TimeMs revoked_at = 0;  // 0 = valid
};

// A cron schedule that starts a workflow (seed 004's scheduled trigger).
struct ScheduleRecord {
  std::string id;  // "sch_..."
  std::string ns = kDefaultNamespace;
  std::string name;
  std::string workflow;
  int version = 0;  // 0 = the latest at each fire
  std::string cron;
  std::string timezone = "UTC";
  Json input = Json::object();
  std::string overlap = "skip";  // skip | allow | cancel_old: when the last run is still going
  std::string catchup = "skip";  // skip | once: runs missed while the server was down
  TimeMs next_fire_at = 0;
  TimeMs last_fire_at = 0;
  std::string last_execution_id;
  TimeMs created_at = 0;
};

// A webhook: POST /api/v1/hooks/{name} with a body signed by `secret` starts `workflow`
// with the body as input. Names are unique across namespaces (the name is the URL).
struct HookRecord {
  std::string name;
  std::string ns = kDefaultNamespace;
  std::string workflow;
  int version = 0;     // 0 = the latest at each call
  std::string secret;  // the HMAC-SHA256 key; kept in clear because verifying needs it
  TimeMs created_at = 0;
};

// An event trigger: when an execution of `source` ends in one of the statuses `on`, an
// execution of `workflow` starts, with `input` rendered over the finished one
// (`{{ source.output.x }}`). Both workflows are in `ns`.
struct TriggerRecord {
  std::string id;  // "trg_..."
  std::string ns = kDefaultNamespace;
  std::string name;
  std::string source;
  std::vector<std::string> on;  // execution statuses: completed, failed, timeout, cancelled
  std::string workflow;
  int version = 0;  // 0 = the latest at each start
  Json input = Json::object();
  TimeMs created_at = 0;
};

enum class DeliveryStatus { kPending, kDelivered, kFailed };
const char* ToString(DeliveryStatus s);
std::optional<DeliveryStatus> ParseDeliveryStatus(std::string_view s);

// The outbox: follow-up work of a finished execution -- a notification to POST or an
// event trigger's execution to start -- written in the transaction that commits the
// terminal state, then delivered (with retries) until it succeeds or gives up.
struct DeliveryRecord {
  std::string id;  // "dlv_..."
  std::string ns = kDefaultNamespace;
  std::string execution_id;  // the finished execution
  std::string event;         // "execution.completed", "execution.failed", ...
  std::string kind;          // "notification" | "trigger"
  std::string target;        // notification: the URL; trigger: the trigger id
  Json payload;              // notification: the JSON body; trigger: the rendered input
  DeliveryStatus status = DeliveryStatus::kPending;
  int attempts = 0;
  TimeMs next_attempt_at = 0;  // pending: when to try (again)
  Json last_error;             // null or {code, message, http_status?}
  std::string result;          // trigger: the execution it started
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
};

// Every set field narrows the list; ordered by created_at, then id.
struct DeliveryFilter {
  std::string ns;  // empty = every namespace
  std::string execution_id;
  std::optional<DeliveryStatus> status;
  size_t limit = 100;  // 0 = no limit
};

// A remote worker as last registered (docs/coordinator.md). Upserted on register, on a
// status change and on drain -- not on every heartbeat: heartbeats live in memory.
struct WorkerRecord {
  std::string id;
  std::string ns = kDefaultNamespace;
  std::string node;  // the node it runs on (target.node pins it); defaults to the id
  std::string host;
  std::string version;  // the worker's software version, as it reported it
  int capacity = 1;
  std::vector<std::string> commands;
  std::vector<std::string> tags;
  std::string status;  // ONLINE | UNHEALTHY | OFFLINE | DRAINING
  // The registered process's incarnation (its `sessionId`); "" when it sent none. Kept
  // so that after a server restart a new process under the same id is still told apart.
  std::string session;
  TimeMs registered_at = 0;
  TimeMs last_heartbeat = 0;  // as of the last write
  TimeMs updated_at = 0;
};

// One dispatch of a `command` step attempt to workers, keyed by dispatch_id (the engine's
// RunRequest::assignment_id). Written before the command is sent (dispatch persisted
// first); `id` is the worker-facing assignment id: dispatch_id for the first placement,
// dispatch_id + ".r<n>" after the n-th reassignment.
struct AssignmentRecord {
  std::string dispatch_id;
  std::string id;
  std::string ns = kDefaultNamespace;
  std::string execution_id;
  std::string step_id;
  int attempt = 1;
  std::string command;
  std::string worker_id;  // the holder; empty while waiting for a worker
  // waiting | dispatched | accepted | running (active) |
  // completed | failed | cancelled | lost (final)
  std::string status;
  int progress = 0;
  Json checkpoint;  // the last one reported; null when none
  int reassignments = 0;
  TimeMs created_at = 0;
  TimeMs updated_at = 0;
};

// A move of an assignment from one worker to another (seed 003's ReassignmentEvent).
struct ReassignmentRecord {
  std::string id;  // "rsg_..."
  std::string ns = kDefaultNamespace;
  std::string dispatch_id;
  std::string assignment_id;  // the new worker-facing id
  std::string execution_id;
  std::string step_id;
  std::string from_worker;
  std::string to_worker;  // empty when no worker took it (it failed WORKER_LOST)
  std::string reason;
  Json checkpoint;  // what the new holder resumes from; null when none
  TimeMs at = 0;
};

// Every set field narrows the list; ordered by created_at, then dispatch_id.
struct AssignmentFilter {
  std::string ns;  // empty = every namespace
  std::string worker_id;
  std::string execution_id;
  bool active_only = false;  // waiting, dispatched, accepted or running
  size_t limit = 100;        // 0 = no limit
};

// Every set field narrows the list; newest first (at descending, then id descending).
struct ReassignmentFilter {
  std::string ns;  // empty = every namespace
  std::string dispatch_id;
  std::string worker_id;  // from or to this worker
  size_t limit = 100;     // 0 = no limit
};

// Everything one decide step changes. Records are upserts keyed by their identity
// (workflow name + version; execution id; execution + step; execution + step + attempt)
// that replace every field; events and reassignments are appended, dead letters appended
// (id 0) or replaced (their id), and an event whose (execution, seq) exists -- stored,
// or earlier in the same Commit -- fails the whole Commit, as does a reassignment whose
// id exists. Steps, attempts and events
// do not require their execution record to exist.
struct WriteBatch {
  std::vector<WorkflowRecord> workflows;
  std::vector<ExecutionRecord> executions;
  std::vector<StepRecord> steps;
  std::vector<AttemptRecord> attempts;
  std::vector<EventRecord> events;
  std::vector<DeadLetterRecord> dead_letters;
  std::vector<TokenRecord> tokens;                // upserts keyed by id
  std::vector<ScheduleRecord> schedules;          // upserts keyed by id
  std::vector<HookRecord> hooks;                  // upserts keyed by name
  std::vector<TriggerRecord> triggers;            // upserts keyed by id
  std::vector<DeliveryRecord> deliveries;         // upserts keyed by id
  std::vector<WorkerRecord> workers;              // upserts keyed by id
  std::vector<AssignmentRecord> assignments;      // upserts keyed by dispatch_id
  std::vector<ReassignmentRecord> reassignments;  // appended (ids are unique)
  std::vector<SignalRecord> signals;              // upserts keyed by execution + seq
  std::vector<BreakerRecord> breakers;            // upserts keyed by ns + key
  std::vector<PoolRecord> pools;                  // upserts keyed by ns + name
  // Cache entries: upserts keyed by ns + key, then touches (of entries that exist; one
  // that does not is ignored), then deletions (absent ones ignored), in that order.
  std::vector<CacheEntryRecord> cache_entries;
  std::vector<CacheTouch> cache_touches;
  std::vector<CacheKey> cache_deletes;
  bool empty() const {
    return workflows.empty() && executions.empty() && steps.empty() && attempts.empty() &&
           events.empty() && dead_letters.empty() && tokens.empty() && schedules.empty() &&
           hooks.empty() && triggers.empty() && deliveries.empty() && workers.empty() &&
           assignments.empty() && reassignments.empty() && signals.empty() && breakers.empty() &&
           pools.empty() && cache_entries.empty() && cache_touches.empty() && cache_deletes.empty();
  }
};

// Events of one namespace after a position (the live feed's replay). Every set field
// narrows the list.
struct EventQuery {
  std::string ns;            // required: the executions' namespace
  std::string workflow;      // empty = any
  std::string execution_id;  // empty = any
  int64_t after = 0;         // position > after
  size_t limit = 100;        // 0 = no limit
};

// Where a page of ListExecutions ended: the next page starts after it.
struct ExecutionCursor {
  TimeMs created_at = 0;
  std::string id;
};

// Every set field narrows the list; empty strings and zero times mean "any".
struct ExecutionFilter {
  std::optional<ExecutionStatus> status;
  std::string workflow;
  size_t limit = 100;  // 0 = no limit
  std::string ns;
  std::string parent_id;
  std::string idempotency_key;
  TimeMs created_from = 0;               // created_at >= created_from
  TimeMs created_until = 0;              // created_at < created_until
  std::optional<ExecutionCursor> after;  // only executions listed after this one
  // Only executions whose id, or input or output as compact JSON text, holds this text
  // (case-sensitive; a scan of the matching rows, not an index).
  std::string text;
};

// How many executions a filter matches, by status.
struct ExecutionCount {
  ExecutionStatus status;
  int64_t count = 0;
};

// The Store is split by role. Each role is an interface of its own, so that a consumer
// names the part it reads (the coordinator its tables, the token check the catalog) and a
// backend is written and tested role by role; a Store implements all of them over one
// database, because one WriteBatch may span every role and commits in one transaction.

// The engine's state: executions with their steps, attempts, events, signals and dead
// letters, and what executions share in a namespace (breakers, pools, cached results).
class ExecutionStore {
 public:
  virtual ~ExecutionStore() = default;

  virtual Result<ExecutionRecord> GetExecution(const std::string& id) = 0;  // NOT_FOUND
  // Newest first (created_at descending, then id descending).
  virtual Result<std::vector<ExecutionRecord>> ListExecutions(const ExecutionFilter& f) = 0;
  // How many executions match `f`, by status (only statuses with any; `f.status`,
  // `f.limit` and `f.after` are not applied).
  virtual Result<std::vector<ExecutionCount>> CountExecutions(const ExecutionFilter& f) = 0;
  // Executions not in a terminal state (pending, running, paused), oldest first
  // (created_at ascending, then first inserted first).
  virtual Result<std::vector<ExecutionRecord>> ListUnfinishedExecutions() = 0;
  // Ordered by index, then step id.
  virtual Result<std::vector<StepRecord>> GetSteps(const std::string& execution_id) = 0;
  // Ordered by step id (bytewise), then attempt.
  virtual Result<std::vector<AttemptRecord>> GetAttempts(const std::string& execution_id) = 0;
  // Only the attempts with an error, in the same order: all that a recovered or retried
  // execution needs of its past attempts. This default filters GetAttempts; a store that
  // can skip the others as it reads them does.
  virtual Result<std::vector<AttemptRecord>> GetFailedAttempts(const std::string& execution_id) {
    auto attempts = GetAttempts(execution_id);
    if (attempts.ok()) {
      std::erase_if(*attempts, [](const AttemptRecord& a) { return a.error.is_null(); });
    }
    return attempts;
  }
  // Events with seq > after_seq, ascending, at most `limit` (0 = no limit).
  virtual Result<std::vector<EventRecord>> GetEvents(const std::string& execution_id,
                                                     int64_t after_seq, size_t limit) = 0;
  // The seq of the execution's last event (0 when it has none): where its log goes on
  // after a restart. This default pages through GetEvents; a store with an index on
  // (execution_id, seq) answers with one read instead, whatever the log's length.
  virtual Result<int64_t> LastEventSeq(const std::string& execution_id) {
    int64_t last = 0;
    for (;;) {
      auto events = GetEvents(execution_id, last, 10'000);
      if (!events.ok()) return events.status();
      if (events->empty()) return last;
      last = events->back().seq;
    }
  }
  // Events whose execution matches `q` (an event whose execution record is absent
  // matches no namespace), position > q.after, ascending by position, at most q.limit.
  virtual Result<std::vector<EventRecord>> ListEvents(const EventQuery& q) = 0;
  // The highest position stored (0 when none): where an engine over this store
  // continues numbering (SeedEventPositions in engine.h).
  virtual Result<int64_t> LastEventPosition() = 0;
  // Dead letters matching `f`, by id ascending (the order they were written).
  virtual Result<std::vector<DeadLetterRecord>> ListDeadLetters(const DeadLetterFilter& f) = 0;
  // Every dead letter of one execution (empty id = of all executions), by id.
  Result<std::vector<DeadLetterRecord>> ListDeadLetters(const std::string& execution_id) {
    DeadLetterFilter f;
    f.execution_id = execution_id;
    f.limit = 0;
    return ListDeadLetters(f);
  }
  virtual Result<DeadLetterRecord> GetDeadLetter(int64_t id) = 0;  // NOT_FOUND
  // The entries matching `f` (its after_id and limit ignored) grouped by workflow, step
  // and fingerprint, largest group first (then workflow, step, fingerprint).
  virtual Result<std::vector<DeadLetterGroup>> CountDeadLetters(const DeadLetterFilter& f) = 0;
  // The execution's signals, by seq (pending and consumed).
  virtual Result<std::vector<SignalRecord>> ListSignals(const std::string& execution_id) = 0;
  // Circuit breakers of one namespace (empty = all), by namespace, then key.
  virtual Result<std::vector<BreakerRecord>> ListBreakers(const std::string& ns) = 0;
  // Pools of one namespace (empty = all), by namespace, then name.
  virtual Result<std::vector<PoolRecord>> ListPools(const std::string& ns) = 0;
  // NOT_FOUND when `ns` has no pool `name`.
  virtual Status DeletePool(const std::string& ns, const std::string& name) = 0;
  // Cache entries of one namespace (empty = all), by namespace, then key, outputs included.
  virtual Result<std::vector<CacheEntryRecord>> ListCacheEntries(const std::string& ns) = 0;
};

// The catalog: workflow definitions, API tokens, schedules, hooks, triggers and the outbox
// of deliveries.
class CatalogStore {
 public:
  virtual ~CatalogStore() = default;

  // Latest version when version == 0. NOT_FOUND when absent.
  virtual Result<WorkflowRecord> GetWorkflow(const std::string& ns, const std::string& name,
                                             int version) = 0;
  Result<WorkflowRecord> GetWorkflow(const std::string& name, int version) {
    return GetWorkflow(kDefaultNamespace, name, version);
  }
  // Empty name: the latest version of every workflow of the namespace, by name.
  // Otherwise every version of that workflow, newest first (empty when none).
  virtual Result<std::vector<WorkflowRecord>> ListWorkflows(const std::string& ns,
                                                            const std::string& name) = 0;
  // Removes every version; executions keep their snapshots. NOT_FOUND when none.
  virtual Status DeleteWorkflow(const std::string& ns, const std::string& name) = 0;

  // Tokens of one namespace (empty = all), oldest first. Revoked ones included.
  virtual Result<std::vector<TokenRecord>> ListTokens(const std::string& ns) = 0;
  // The token whose secret hashes to `secret_hash` (revoked or not); NOT_FOUND.
  virtual Result<TokenRecord> FindToken(const std::string& secret_hash) = 0;

  // Schedules of one namespace (empty = all), in creation order.
  virtual Result<std::vector<ScheduleRecord>> ListSchedules(const std::string& ns) = 0;
  // NOT_FOUND when `id` is not a schedule of `ns`.
  virtual Status DeleteSchedule(const std::string& ns, const std::string& id) = 0;

  // Hooks of one namespace (empty = all), by name.
  virtual Result<std::vector<HookRecord>> ListHooks(const std::string& ns) = 0;
  virtual Result<HookRecord> GetHook(const std::string& name) = 0;  // NOT_FOUND
  // NOT_FOUND when `name` is not a hook of `ns`.
  virtual Status DeleteHook(const std::string& ns, const std::string& name) = 0;

  // Triggers of one namespace (empty = all), in creation order.
  virtual Result<std::vector<TriggerRecord>> ListTriggers(const std::string& ns) = 0;
  // NOT_FOUND when `id` is not a trigger of `ns`.
  virtual Status DeleteTrigger(const std::string& ns, const std::string& id) = 0;

  virtual Result<std::vector<DeliveryRecord>> ListDeliveries(const DeliveryFilter& f) = 0;
  virtual Result<DeliveryRecord> GetDelivery(const std::string& id) = 0;  // NOT_FOUND
};

// The coordinator's tables: remote workers, their assignments and reassignments.
class WorkerStore {
 public:
  virtual ~WorkerStore() = default;

  // Workers of one namespace (empty = all), by id.
  virtual Result<std::vector<WorkerRecord>> ListWorkers(const std::string& ns) = 0;
  virtual Result<std::vector<AssignmentRecord>> ListAssignments(const AssignmentFilter& f) = 0;
  // By dispatch id or by a worker-facing id (dispatch_id.r<n>): NOT_FOUND otherwise.
  virtual Result<AssignmentRecord> GetAssignment(const std::string& id) = 0;
  virtual Result<std::vector<ReassignmentRecord>> ListReassignments(
      const ReassignmentFilter& f) = 0;
};

// Ownership of executions when several servers share one database (PostgreSQL with an
// instance name): each unfinished execution is held by one instance through a lease that
// the instance renews; an execution whose holder stops renewing is claimed by another
// and recovered there from its stored state.
//
// The store enforces it on every commit: a batch that writes an execution this instance
// does not hold (lost, expired, or held by another) fails as a whole, applying nothing;
// a batch that starts an execution (or runs a finished one again) takes it; one that
// finishes it releases it. Leases are timed by the database's clock; "trusted" is the
// instance's own window, shorter than a lease, within which its leases cannot have
// expired: past it the store refuses commits of held executions until a renewal
// succeeds, so an instance that was frozen (or cut off) never acts on what others may
// have taken meanwhile.
//
// Threading: thread-safe. Errors: errc::kStore.
class ExecutionLeases {
 public:
  virtual ~ExecutionLeases() = default;
  // This instance's name (unique among the instances of the database).
  virtual const std::string& instance() const = 0;
  // How long a lease lasts unless renewed.
  virtual Duration lease() const = 0;
  // Renews every lease held. The executions lost since the last call (another instance
  // took them, or they expired and were taken) are no longer held: the caller drops
  // them from memory without writing, then calls Forget() once the batches it submitted
  // before that are settled (committed or refused).
  virtual Result<std::vector<std::string>> Renew() = 0;
  // Takes up to `limit` unfinished executions nobody holds: their lease expired, or they
  // predate leases. With `mine`, also those this instance's name holds from before a
  // restart. The caller recovers each from the store.
  virtual Result<std::vector<std::string>> Claim(size_t limit, bool mine) = 0;
  // Lets go of a held execution the caller no longer runs (dropped from memory without
  // finishing): any instance may claim it at once. Like a lost one, its writes are
  // refused until Forget().
  virtual Status Release(const std::string& execution_id) = 0;
  // Ends the refusal of commits to executions Renew() reported lost.
  virtual void Forget(const std::vector<std::string>& execution_ids) = 0;
  virtual bool Holds(const std::string& execution_id) const = 0;
  // The executions held now.
  virtual std::vector<std::string> Held() const = 0;
  // The instance that holds `execution_id` now (a child workflow's: its root's holder),
  // read from the database; empty when nobody does (finished, or its lease released).
  virtual Result<std::string> HolderOf(const std::string& execution_id) = 0;
  // Whether the last successful renewal is recent enough that no lease held can have
  // expired.
  virtual bool Trusted() const = 0;
  // Takes, or keeps, the role `role` (one instance at a time, e.g. "cron"), held like a
  // lease: true while this instance has it.
  virtual Result<bool> Lead(const std::string& role) = 0;
};

// Work offered between server instances on one database (PostgreSQL with an instance
// name): a worker connected to any instance runs steps of executions held by any other.
//
// An instance offers a dispatch (a `command` step's attempt) that no worker connected to
// it can take; an instance whose workers can take it takes it, runs it as its own, and
// reports its start and its result; the owner collects them and ends the attempt. A
// taker holds what it took by a lease it renews: one that stops renewing loses it and
// the dispatch is open again, and every report names the taking (`take`), so a taker
// that lost it changes nothing. A new owner of the execution (a takeover) offers it
// again with the same id, which makes it that dispatch's owner in whatever state it is.
// At least once: a dispatch whose taker died runs again elsewhere.
//
// Threading: one thread at a time, except Wake(). Errors: errc::kStore.
struct OfferedDispatch {
  std::string id;      // the dispatch id (RunRequest::assignment_id)
  std::string owner;   // the instance that holds the execution
  int64_t take = 0;    // which taking: a report names it
  std::string status;  // open | taken | running | done
  Json request;        // the RunRequest, as the owner offered it
  Json result;         // done: {ok, output, error{code, message, details}}
};

class OfferBoard {
 public:
  virtual ~OfferBoard() = default;
  // Offers these (id, namespace, priority, request) as this instance's. An id offered
  // before (by an instance that stopped) keeps its state and becomes this instance's.
  struct Offer {
    std::string id, ns;
    int priority = 1;
    Json request;
  };
  virtual Status Publish(const std::vector<Offer>& offers) = 0;
  // This instance no longer wants them (cancelled): gone; a taker finds out at its next
  // renewal.
  virtual Status Withdraw(const std::vector<std::string>& ids) = 0;
  // Up to `limit` open offers of any instance, highest priority first, then oldest; takes
  // whose taker stopped renewing are open again first.
  virtual Result<std::vector<OfferedDispatch>> Open(size_t limit) = 0;
  // Takes those of `ids` still open: what this instance got.
  virtual Result<std::vector<OfferedDispatch>> Take(const std::vector<std::string>& ids) = 0;
  // The taker's report: `running` (again with each progress: `result` {progress, data}),
  // or `done` with the result. False when the take is no longer this instance's (it lost
  // it, or the owner withdrew it).
  virtual Result<bool> Report(const std::string& id, int64_t take, const std::string& status,
                              const Json& result) = 0;
  // The taker lets go: open again for anyone (no worker here can run it any more).
  virtual Status GiveBack(const std::string& id, int64_t take) = 0;
  // The taker is also the owner and runs it itself: the offer is gone.
  virtual Status Drop(const std::string& id, int64_t take) = 0;
  // Renews this instance's takes: (id, take) of those it still holds.
  virtual Result<std::vector<std::pair<std::string, int64_t>>> Renew() = 0;
  // The owner's news of these offers of this instance: those started or that reported
  // progress since the last call (status running, `result` the last progress or null),
  // and those done, each returned once. A done offer stays on the board until the store
  // shows its attempt ended (a later call removes it then): an owner that dies before
  // committing the result leaves it to the instance that takes the execution over,
  // whose Publish() makes it collectable again, so the step does not run twice.
  virtual Result<std::vector<OfferedDispatch>> Collect(const std::vector<std::string>& ids) = 0;
  // Removes what no instance needs any more, of any owner: offers older than
  // `older_than` whose execution finished (or is gone) or whose attempt ended, and
  // control requests older than that (their asker gave up long ago). How many rows went.
  // One instance at a time runs it (ExecutionLeases::Lead).
  virtual Result<size_t> Sweep(Duration older_than) = 0;
  // Waits up to `timeout` for a change on the board (a hint: a change may also come
  // without one) or for Wake(). True when woken that way.
  virtual Result<bool> Wait(Duration timeout) = 0;
  // Ends a Wait() now. Any thread.
  virtual void Wake() = 0;
};

// Control requests between instances on one database: a cancel, pause, resume or signal
// that reaches an instance which does not hold the execution is relayed, through the
// database, to the instance that does; it applies it and answers. The asker waits for
// the answer (a notification wakes it) and gives up after a while.
//
// Threading: one thread at a time. Errors: errc::kStore.
struct ControlRequest {
  int64_t id = 0;  // set by Ask()
  std::string execution_id;
  std::string op;              // cancel | pause | resume | signal
  Json args = Json::object();  // cancel: {reason}; signal: {name, payload}
};

struct ControlAnswer {
  int64_t id = 0;
  Status status;  // the holder's outcome
  Json result;    // signal: {seq}
};

class ControlRelay {
 public:
  virtual ~ControlRelay() = default;
  // Asks `instance` to apply `request`: the request's id.
  virtual Result<int64_t> Ask(const std::string& instance, const ControlRequest& request) = 0;
  // Requests to this instance not taken yet; each is taken as it is returned.
  virtual Result<std::vector<ControlRequest>> Asked() = 0;
  virtual Status Answer(int64_t id, const Status& status, const Json& result) = 0;
  // The answers to these requests that came, each returned (and removed) once.
  virtual Result<std::vector<ControlAnswer>> Answers(const std::vector<int64_t>& ids) = 0;
  // Drops requests nobody will read: never answered, or answered to an asker that gave up.
  virtual Status Forget(const std::vector<int64_t>& ids) = 0;
};

// The events every instance of one database commits, in one order they all share (with
// PostgreSQL and an instance name): what the live feed of a workflow or a namespace reads,
// so that a client sees the same feed, with the same positions, on every instance.
//
// A position here is the one EventRecord::position holds in every event this store
// returns: made by the database from the committing transaction, not by an engine. An
// event is listed only once every transaction that could still add an event before it
// has ended, so a reader that resumes after the last position it saw misses nothing and
// sees nothing twice; an event becomes listable a moment after its commit (longer while
// another transaction on the database stays open).
//
// Threading: thread-safe. Errors: errc::kStore.
struct FeedEntry {
  EventRecord event;
  std::string ns;        // its execution's namespace
  std::string workflow;  // its execution's workflow
};

class SharedFeed {
 public:
  virtual ~SharedFeed() = default;
  // Events of every namespace with position > after, ascending, at most `limit`.
  virtual Result<std::vector<FeedEntry>> FeedAfter(int64_t after, size_t limit) = 0;
  // The position of the last event listable now (0 when none).
  virtual Result<int64_t> FeedEnd() = 0;
};

// The result cache as every instance sees it, when several instances share a database:
// what changed since a position, for each instance to merge into its engine's cache
// (Engine::MergeCache), so a result one instance cached is found by the others, and one
// cleared or evicted anywhere goes everywhere.
struct CacheChanges {
  std::vector<CacheEntryRecord> entries;  // added or replaced since `after`, outputs included
  std::vector<CacheKey> deleted;          // deleted since `after` (before `entries` apply)
  int64_t next = 0;                       // the `after` of the next call
};
class SharedCache {
 public:
  virtual ~SharedCache() = default;
  // Changes committed after position `after` (0: every entry stored) up to a point no
  // commit can appear below later; a deletion is listed for a bounded time (an hour).
  // `after` = kCacheNow lists nothing: `next` is then where to start reading when every
  // entry is read next (ListCacheEntries), so none is missed and few are read twice.
  static constexpr int64_t kCacheNow = INT64_MAX;
  virtual Result<CacheChanges> CacheChangesAfter(int64_t after) = 0;
};

// Pools as every instance sees them, when several instances share a database: a step's
// slots are held in the database, for its instance, and renewed with that instance's
// leases (ExecutionLeases::Renew), so a pool's size bounds its steps across instances,
// and the slots of an instance that died come free once its holds are not renewed.
struct PoolHold {
  std::string ns;
  std::string pool;
  // "EXECUTION/STEP" for a step's pool; "EXECUTION" for a workflow's concurrency limit
  // (pool "concurrency\nWORKFLOW\nKEY", a name no user pool can have).
  std::string holder;
  int64_t slots = 1;
};
class SharedPools {
 public:
  virtual ~SharedPools() = default;
  // Holds `hold.slots` slots if the holds of every instance leave room for them under
  // `limit`, or regardless when `force` (a step that held them before a restart or a
  // failover keeps them); a holder that holds already keeps its hold. True when held.
  virtual Result<bool> HoldSlots(const PoolHold& hold, int64_t limit, bool force) = 0;
  // Gives the holder's slots back (nothing when this instance holds none for it).
  virtual Status ReleaseSlots(const PoolHold& hold) = 0;
  // Gives back every slot this instance holds (its engine dropped them all).
  virtual Status ReleaseAllSlots() = 0;
  // The slots every instance holds in the pool now.
  virtual Result<int64_t> SlotsHeld(const std::string& ns, const std::string& pool) = 0;
  // The holders of the pool on every instance, the longest held first (a workflow's
  // `concurrency: cancel_oldest` replaces the first).
  virtual Result<std::vector<std::string>> Holders(const std::string& ns,
                                                   const std::string& pool) = 0;
};

class Store : public ExecutionStore, public CatalogStore, public WorkerStore {
 public:
  // The board of work offered between instances; null unless leases() is not.
  virtual OfferBoard* offers() { return nullptr; }
  // Control requests relayed between instances; null unless leases() is not.
  virtual ControlRelay* relay() { return nullptr; }
  // The feed every instance shares; null unless leases() is not.
  virtual SharedFeed* feed() { return nullptr; }
  // The cache every instance shares; null unless leases() is not.
  virtual SharedCache* shared_cache() { return nullptr; }
  // The pools every instance shares; null unless leases() is not.
  virtual SharedPools* shared_pools() { return nullptr; }
  // The leases of executions when the store is shared by several server instances; null
  // when one process owns the store (SQLite, memory, PostgreSQL without an instance name).
  virtual ExecutionLeases* leases() { return nullptr; }
  // Writes all batches in one transaction, in order: all or nothing.
  virtual Status Commit(std::span<const WriteBatch* const> batches) = 0;
  Status Commit(const WriteBatch& batch) {
    const WriteBatch* one[] = {&batch};
    return Commit(one);
  }
  // Commit() of a batch the caller is done with: the store may take records out of it
  // instead of copying them (MemoryStore does), leaving `batch` valid but unspecified.
  virtual Status CommitOwned(WriteBatch&& batch) { return Commit(batch); }
};

// Forwards every call to another store; tests derive from it to intercept a few calls
// (fault injection, gating commits) without repeating the rest.
class StoreWrapper : public Store {
 public:
  explicit StoreWrapper(Store* target) : target_(target) {}
  Store* target() const { return target_; }

  Status Commit(std::span<const WriteBatch* const> batches) override {
    return target_->Commit(batches);
  }
  Status CommitOwned(WriteBatch&& batch) override { return target_->CommitOwned(std::move(batch)); }
  ExecutionLeases* leases() override { return target_->leases(); }
  OfferBoard* offers() override { return target_->offers(); }
  ControlRelay* relay() override { return target_->relay(); }
  SharedFeed* feed() override { return target_->feed(); }
  SharedCache* shared_cache() override { return target_->shared_cache(); }
  SharedPools* shared_pools() override { return target_->shared_pools(); }
  Result<ExecutionRecord> GetExecution(const std::string& id) override {
    return target_->GetExecution(id);
  }
  Result<std::vector<ExecutionRecord>> ListExecutions(const ExecutionFilter& f) override {
    return target_->ListExecutions(f);
  }
  Result<std::vector<ExecutionCount>> CountExecutions(const ExecutionFilter& f) override {
    return target_->CountExecutions(f);
  }
  Result<std::vector<ExecutionRecord>> ListUnfinishedExecutions() override {
    return target_->ListUnfinishedExecutions();
  }
  Result<std::vector<StepRecord>> GetSteps(const std::string& id) override {
    return target_->GetSteps(id);
  }
  Result<std::vector<AttemptRecord>> GetAttempts(const std::string& id) override {
    return target_->GetAttempts(id);
  }
  Result<std::vector<AttemptRecord>> GetFailedAttempts(const std::string& id) override {
    return target_->GetFailedAttempts(id);
  }
  Result<std::vector<EventRecord>> GetEvents(const std::string& id, int64_t after_seq,
                                             size_t limit) override {
    return target_->GetEvents(id, after_seq, limit);
  }
  Result<int64_t> LastEventSeq(const std::string& id) override { return target_->LastEventSeq(id); }
  Result<std::vector<EventRecord>> ListEvents(const EventQuery& q) override {
    return target_->ListEvents(q);
  }
  Result<int64_t> LastEventPosition() override { return target_->LastEventPosition(); }
  Result<std::vector<DeadLetterRecord>> ListDeadLetters(const DeadLetterFilter& f) override {
    return target_->ListDeadLetters(f);
  }
  using Store::ListDeadLetters;
  Result<DeadLetterRecord> GetDeadLetter(int64_t id) override { return target_->GetDeadLetter(id); }
  Result<std::vector<DeadLetterGroup>> CountDeadLetters(const DeadLetterFilter& f) override {
    return target_->CountDeadLetters(f);
  }
  Result<WorkflowRecord> GetWorkflow(const std::string& ns, const std::string& name,
                                     int version) override {
    return target_->GetWorkflow(ns, name, version);
  }
  Result<std::vector<WorkflowRecord>> ListWorkflows(const std::string& ns,
                                                    const std::string& name) override {
    return target_->ListWorkflows(ns, name);
  }
  Status DeleteWorkflow(const std::string& ns, const std::string& name) override {
    return target_->DeleteWorkflow(ns, name);
  }
  Result<std::vector<TokenRecord>> ListTokens(const std::string& ns) override {
    return target_->ListTokens(ns);
  }
  Result<TokenRecord> FindToken(const std::string& hash) override {
    return target_->FindToken(hash);
  }
  Result<std::vector<ScheduleRecord>> ListSchedules(const std::string& ns) override {
    return target_->ListSchedules(ns);
  }
  Status DeleteSchedule(const std::string& ns, const std::string& id) override {
    return target_->DeleteSchedule(ns, id);
  }
  Result<std::vector<HookRecord>> ListHooks(const std::string& ns) override {
    return target_->ListHooks(ns);
  }
  Result<HookRecord> GetHook(const std::string& name) override { return target_->GetHook(name); }
  Status DeleteHook(const std::string& ns, const std::string& name) override {
    return target_->DeleteHook(ns, name);
  }
  Result<std::vector<TriggerRecord>> ListTriggers(const std::string& ns) override {
    return target_->ListTriggers(ns);
  }
  Status DeleteTrigger(const std::string& ns, const std::string& id) override {
    return target_->DeleteTrigger(ns, id);
  }
  Result<std::vector<DeliveryRecord>> ListDeliveries(const DeliveryFilter& f) override {
    return target_->ListDeliveries(f);
  }
  Result<DeliveryRecord> GetDelivery(const std::string& id) override {
    return target_->GetDelivery(id);
  }
  Result<std::vector<WorkerRecord>> ListWorkers(const std::string& ns) override {
    return target_->ListWorkers(ns);
  }
  Result<std::vector<AssignmentRecord>> ListAssignments(const AssignmentFilter& f) override {
    return target_->ListAssignments(f);
  }
  Result<AssignmentRecord> GetAssignment(const std::string& id) override {
    return target_->GetAssignment(id);
  }
  Result<std::vector<ReassignmentRecord>> ListReassignments(const ReassignmentFilter& f) override {
    return target_->ListReassignments(f);
  }
  Result<std::vector<SignalRecord>> ListSignals(const std::string& execution_id) override {
    return target_->ListSignals(execution_id);
  }
  Result<std::vector<BreakerRecord>> ListBreakers(const std::string& ns) override {
    return target_->ListBreakers(ns);
  }
  Result<std::vector<PoolRecord>> ListPools(const std::string& ns) override {
    return target_->ListPools(ns);
  }
  Status DeletePool(const std::string& ns, const std::string& name) override {
    return target_->DeletePool(ns, name);
  }
  Result<std::vector<CacheEntryRecord>> ListCacheEntries(const std::string& ns) override {
    return target_->ListCacheEntries(ns);
  }

 private:
  Store* target_;
};

}  // namespace baton
