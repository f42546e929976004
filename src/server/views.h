// JSON shapes of stored records, shared by the CLI (`--json`, DESIGN.md §8) and the
// server's API, so both print the same thing.
#pragma once

#include <baton/engine.h>
#include <baton/store.h>

#include <string>

namespace baton {

std::string IsoTime(TimeMs t);  // "2026-11-21T10:00:00.123Z"; "" for 0
// Reads "2026-11-21T10:00:00Z" (fraction optional) or plain milliseconds since the epoch.
Result<TimeMs> ParseTime(const std::string& text);

// {"id","workflow","status","progress","output","error","steps":[{"id","status",
//  "attempts","output","error":{"code","message"}|null,"started_at","completed_at"}]}
Result<Json> ExecutionJson(ExecutionStore* store, const std::string& execution_id);
// ExecutionJson plus what the API adds: namespace, priority, parent, idempotency key,
// timing (created_at, duration_ms), every step's attempts, and the layer view
// ({"layers": [{"index", "steps", "done"}], "current_layer"}), and the child workflows
// its steps started ({"children": [{"id", "workflow", "status", "parent_step",
// "parent_attempt", ...}]}, oldest first, at most kMaxChildrenListed).
inline constexpr size_t kMaxChildrenListed = 1000;
Result<Json> ExecutionDetailJson(ExecutionStore* store, const ExecutionRecord& execution);
// One line of a list: no steps.
Json ExecutionSummaryJson(const ExecutionRecord& e);
Json EventJson(const EventRecord& e);
Json SignalJson(const SignalRecord& s);
// A dead-letter entry: {id, status, execution_id, workflow, version, step_id, code,
// fingerprint, error (the last), errors, input, attempts {first, last}, first_failed_at,
// last_failed_at, created_at, resolved_at, replay {attempt}|null}.
Json DeadLetterJson(const DeadLetterRecord& d);
// A circuit breaker: {key, namespace, state, failures, successes, trips, opened_at,
// probe_at (open or half_open, else null), last_error, failure_threshold,
// recovery_timeout, success_threshold, updated_at}.
Json BreakerJson(const BreakerRecord& b);
// A cached step result: {key, namespace, workflow, step_id, execution_id, bytes,
// created_at, expires_at, last_hit_at, hits} and, `with_output`, its output.
Json CacheEntryJson(const CacheEntryRecord& e, bool with_output);
// One step of GET /executions/{id}/why: {step_id, status, kind, reason, since, until,
// steps?, signal?}. `no_worker`: the coordinator's account of why no worker takes the step
// ("" when it is not waiting for one); it overrides the engine's kind ("worker").
Json StepWaitJson(const StepWait& w, const std::string& execution_id, const std::string& no_worker);
Json WorkflowJson(const WorkflowRecord& w, bool with_definition);

// Exit code for a final status: 0 completed, 1 otherwise.
int ExitCodeFor(ExecutionStatus status);

}  // namespace baton
