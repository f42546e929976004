// The records a Store keeps (<baton/store.h>): executions, their steps, attempts and
// events, the catalog (workflows, tokens, schedules, hooks, triggers, deliveries), remote
// workers and their assignments, and the guards (breakers, pools, cache entries, dead
// letters, signals), with the filters that list them.
//
// Plain values: copyable, no behaviour beyond their fields. Times are TimeMs
// (<baton/clock.h>); Json fields round-trip exactly through every store.
#pragma once

#include <baton/clock.h>
#include <baton/json.h>
#include <baton/status.h>

#include <cstdint>
#include <memory>
#include <optional>
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
  // Starts with "<execution_id>/" (the engine's "<execution>/<step>/<attempt>"): an
  // assignment is filed under its execution by this prefix, and a listing by execution
  // (AssignmentFilter::execution_id) finds only assignments whose dispatch id has it.
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
  std::string execution_id;  // and the dispatch id under "<execution_id>/"
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

}  // namespace baton
