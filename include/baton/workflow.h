// The workflow definition: what a workflow file says, parsed and validated.
//
// Describing a graph is separate from running it: nothing here runs anything. A
// WorkflowDef is immutable once parsed; executions keep a snapshot of its source.
#pragma once

#include <baton/clock.h>
#include <baton/json.h>
#include <baton/plan.h>
#include <baton/status.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton {

enum class StepType { kNoop, kShell, kHttp, kWait, kCommand, kWorkflow };
enum class TriggerRule {
  kAllSuccess,
  kAllDone,
  kAllFailed,
  kOneSuccess,
  kOneFailed,
  kNoneFailed,
  kNoneSkipped,
  kAlways
};
enum class Priority { kLow = 0, kNormal = 1, kHigh = 2, kCritical = 3 };

const char* ToString(StepType t);
const char* ToString(TriggerRule r);
const char* ToString(Priority p);
std::optional<StepType> ParseStepType(std::string_view s);
std::optional<TriggerRule> ParseTriggerRule(std::string_view s);
std::optional<Priority> ParsePriority(std::string_view s);

struct RetryPolicy {
  int max_attempts = 1;  // 1 = no retry
  Duration initial_delay{1000};
  Duration max_delay{60'000};
  double multiplier = 2.0;
  bool jitter = false;
  // Error codes that are retried. Empty = every code except TEMPLATE_ERROR,
  // VALIDATION and CANCELLED.
  std::vector<std::string> retry_on;

  bool IsRetryable(std::string_view code) const;
  // Delay before attempt `next_attempt` (2 = first retry), without jitter:
  // min(max_delay, initial_delay * multiplier^(next_attempt-2)); 0 for attempt 1.
  Duration DelayBefore(int next_attempt) const;
};

struct InputDecl {
  std::string name;
  std::string type = "string";  // string|integer|number|boolean|object|array
  bool required = false;
  std::optional<Json> default_value;
  std::string description;
};

struct CacheSpec {
  std::optional<Duration> ttl;  // none = never expires
  Json key;                     // null = derived from the resolved step inputs
};

// `circuit_breaker:` (DESIGN.md §3): after `failure_threshold` consecutive failed attempts
// against `key`, attempts fail fast with CIRCUIT_OPEN until `recovery_timeout` has
// passed; then one probe goes through, and `success_threshold` successful probes close
// the breaker again. Shared by every step and execution of a namespace using the key.
struct CircuitBreakerSpec {
  // May hold templates. Empty: the host of an http step's URL, or a command step's
  // command (other step types must name one).
  std::string key;
  int failure_threshold = 5;
  Duration recovery_timeout{30'000};
  int success_threshold = 1;
};

// A workflow's `concurrency:`: at most `limit` of its executions with the same key run
// at once (per namespace). Over it, a new execution waits `queued` (priority, then
// first come first served), is cancelled (cancel_newest), or cancels the oldest running
// one of the key (cancel_oldest).
enum class ConcurrencyPolicy { kQueue, kCancelNewest, kCancelOldest };
const char* ToString(ConcurrencyPolicy p);
struct ConcurrencySpec {
  int limit = 1;
  std::string key;  // may hold templates over `inputs`; empty = one key for the workflow
  ConcurrencyPolicy policy = ConcurrencyPolicy::kQueue;
};

// The fields few steps set, kept apart so that a plain step stays small: a 100,000-step
// workflow holds 100,000 StepDefs.
struct StepExtras {
  std::string description;
  std::optional<Duration> heartbeat_timeout;
  // How long an attempt should take: past it a `step.slow` event says so (the attempt
  // goes on). Unset: three times the p95 of the step's recent successful attempts.
  std::optional<Duration> expected_duration;
  std::optional<CacheSpec> cache;
  std::optional<CircuitBreakerSpec> circuit_breaker;
  // A named pool of the namespace (empty = none): each attempt runs only while
  // `pool_slots` of its slots are free, and holds them until it ends.
  std::string pool;
  int pool_slots = 1;
  // null, or {name: value-or-template}: when the step completes, each value is rendered
  // (the step's own output is `steps.<id>.output`) and becomes the execution variable
  // `vars.<name>` for the steps that start after it.
  Json set_vars;
};

struct StepDef {
  std::string id;
  std::string name;
  StepType type = StepType::kNoop;
  TriggerRule trigger_rule = TriggerRule::kAllSuccess;
  Priority priority = Priority::kNormal;
  bool optional = false;
  int line = 0;  // line in the source file, 0 when unknown (e.g. rebuilt from a snapshot)
  std::vector<std::string> depends_on;  // resolved once per definition: WorkflowPlan::graph
  Json when;  // null, an expression string, or a structured condition object
  std::optional<Duration> timeout;
  RetryPolicy retry;
  // Type-specific fields, kept as written (templates unresolved): run, env, cwd, stdin,
  // max_output, memory, cpu_time (shell); request, accept (http); duration, until
  // (wait); command, resource, target (command); workflow, input (workflow); with (all).
  // Byte sizes (max_output, memory) go through ParseByteSize, durations (cpu_time,
  // request.timeout, duration) through ParseDuration; both may also be templates.
  Json spec = Json::object();
  Json for_each;  // null, or a template string that yields an array
  // The rarely set fields; null when all are at their defaults. Copies of the definition
  // share them: change them through edit_extra() only.
  std::shared_ptr<StepExtras> extras;

  const StepExtras& extra() const;
  // extras, made (or copied, when shared) for a change.
  StepExtras& edit_extra();
};

struct WorkflowDef {
  std::string name;
  int version = 1;
  std::string description;
  std::vector<InputDecl> inputs;
  std::optional<Duration> timeout;
  int max_parallel = 0;  // 0 = no limit of its own
  Priority priority = Priority::kNormal;
  bool fail_fast = false;
  std::optional<ConcurrencySpec> concurrency;
  Json vars = Json::object();
  std::vector<StepDef> steps;
  Json output;              // null or a template value rendered at completion
  Json notify;              // null or a list (sent by the server)
  std::string source_name;  // file name, for messages
  // The whole document as JSON text: the snapshot executions keep and stores write as it
  // is. Valid JSON text read by the step-at-a-time path (ParseWorkflow of JSON, a stored
  // snapshot) is kept as written; any other document (YAML, the catalog's JSON, JSON
  // with `defaults` after `steps`) as compact JSON (Json::dump()). Two texts may differ
  // for the same document. Set by every parse; shared, never copied.
  std::shared_ptr<const std::string> source;
  // The compiled form every execution runs from (ParseWorkflow, WorkflowFromSnapshot and
  // AttachPlan set it). Copies of the definition share it: whoever edits `steps` after
  // must call AttachPlan again.
  std::shared_ptr<const WorkflowPlan> plan;

  // Index of the step with this id, or -1. A linear scan: callers on hot paths keep
  // their own index.
  int FindStep(std::string_view id) const;
};

// One problem found in a workflow file. ToString():
//   "deploy.yaml:12: step 'start': field 'timeout': bad duration '5x' (expected ...)"
// Empty parts are left out ("deploy.yaml: cannot read file: ..."). A field of a step
// without a usable id is named from the document root ("steps[2].id").
struct Diagnostic {
  std::string file;
  int line = 0;
  std::string step;   // empty when not about a step
  std::string field;  // dotted, e.g. "retry.max_attempts"; empty when not about a field
  std::string message;
  std::string ToString() const;
};

struct ParseOutcome {
  std::optional<WorkflowDef> workflow;  // set only when diagnostics is empty
  std::vector<Diagnostic> diagnostics;
  bool ok() const { return diagnostics.empty(); }
  // All diagnostics, one per line; a Status with code VALIDATION when not ok.
  Status ToStatus() const;
};

// Parses YAML or JSON text (JSON is detected by its first non-space character, '{') and
// validates it fully: schema, types, durations, ids, dependencies, cycles, templates,
// conditions. Never throws. Every problem is reported (sorted by line), not just the
// first. YAML follows the 1.2 core schema (`yes` is a string; quoted scalars are always
// strings); duplicate keys are errors. Some notable messages:
//   "duplicate step id 'x' (first defined at line 3)"
//   "depends on unknown step 'y'"
//   "cycle: a -> c -> b -> a"      (each arrow reads "depends on")
//   "template references step 'z', which is not upstream of 'x' (add it to depends_on)"
// Shorthands accepted besides DESIGN.md §3: `depends_on: a` (one id), `retry: 3`
// (max_attempts), an input declared as just its type (`n: integer`), and an input
// without a type taking its default's type.
ParseOutcome ParseWorkflow(std::string_view text, std::string_view source_name);
// Reads the file and parses it; an unreadable file is one diagnostic.
ParseOutcome LoadWorkflowFile(const std::string& path);
// Rebuilds a definition from its stored snapshot (WorkflowDef::source): the same
// WorkflowDef as the original parse, except that StepDef::line is 0. Errors are
// VALIDATION with the diagnostics as message.
Result<WorkflowDef> WorkflowFromSnapshot(const Json& source, std::string_view source_name);
// The same from the snapshot's text, which the definition then shares as its `source`.
Result<WorkflowDef> WorkflowFromSnapshot(std::shared_ptr<const std::string> source,
                                         std::string_view source_name);

// "250ms", "30s", "5m", "2h", "1h30m", or an integer number of seconds (JSON number or
// digit string). Errors name what was expected.
Result<Duration> ParseDuration(const Json& value);
// The shortest text ParseDuration reads back: "250ms", "1h30m", "1s500ms", "0s".
std::string FormatDuration(Duration d);

// Byte sizes (shell `max_output`, `memory`): a non-negative integer number of bytes (JSON
// number or digit string) or an integer with a unit: B, KB, MB, GB, TB (powers of 1000)
// or KiB, MiB, GiB, TiB (powers of 1024), e.g. "512KiB", "1MiB", "2GB". Step specs keep
// the value as written; runners call this.
Result<int64_t> ParseByteSize(const Json& value);

// Builds the execution input: declared defaults, then `provided` (a JSON object), then
// `key=value` pairs converted to the declared type. A workflow that declares inputs takes
// only those; one that declares none takes any (a pair's value is then JSON if it parses,
// else a string). Undeclared names, missing required inputs and type mismatches are
// VALIDATION errors naming the input (and the type, or the inputs declared).
Result<Json> ResolveInputs(const WorkflowDef& wf, const Json& provided,
                           const std::vector<std::pair<std::string, std::string>>& pairs);

// Static DAG analysis (seed 002's Kahn layers, seed 004's optimizer).
struct DagAnalysis {
  std::vector<std::vector<int>> layers;  // step indexes per Kahn layer
  std::vector<int> layer_of;             // layer of each step
  std::vector<int> critical_path;        // step indexes, source to sink
  Duration critical_path_estimate{0};    // sum of estimates along critical_path
  Duration sequential_estimate{0};       // sum of all estimates
  size_t max_parallelism = 0;            // widest layer
  double estimated_speedup = 1.0;        // sequential / critical path
};
// Step duration estimates: a wait step's literal duration, else the step timeout's tenth,
// else 1 s. Layer members are in step order; critical-path ties go to the first listed
// dependency. Requires an acyclic workflow (ParseWorkflow guarantees it); steps on a
// cycle are left out (layer_of -1).
DagAnalysis AnalyzeDag(const WorkflowDef& wf);

}  // namespace baton
