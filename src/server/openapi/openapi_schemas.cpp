// The JSON Schemas of the API's records (components/schemas of openapi.json). A record's
// schema lists every field and allows no other: tests/openapi/check.sh checks real
// answers against them, so a field a view adds or drops without its schema fails there.
// The worker protocol's messages (docs/worker-protocol.md) allow more fields than they
// list: the protocol lets a newer peer add some.
#include "server/openapi/openapi.h"

namespace baton::server {
namespace {

constexpr const char* kSchemas = R"json({
  "Error": {
    "type": "object", "additionalProperties": false, "required": ["error"],
    "properties": {"error": {
      "type": "object", "additionalProperties": false, "required": ["code", "message"],
      "properties": {
        "code": {"type": "string", "description": "Stable: NOT_FOUND, VALIDATION, UNAUTHORIZED, FORBIDDEN, CONFLICT, RATE_LIMITED, ..."},
        "message": {"type": "string"},
        "details": {"description": "e.g. the field at fault: {\"field\": \"input.model\"}"}}}}},
  "Time": {"type": ["string", "null"], "format": "date-time", "description": "UTC, milliseconds; null when not yet"},
  "StepError": {
    "type": ["object", "null"], "additionalProperties": false, "required": ["code", "message"],
    "properties": {"code": {"type": "string"}, "message": {"type": "string"}}},
  "Failure": {
    "type": ["object", "null"], "additionalProperties": true, "required": ["code", "message"],
    "description": "Why an execution or attempt failed; null if it did not",
    "properties": {"code": {"type": "string"}, "message": {"type": "string"},
                   "step": {"type": "string", "description": "The step that failed the execution"},
                   "details": {"description": "e.g. a breaker's key, a child's status"}}},
  "ExecutionStatus": {"type": "string", "enum": ["pending", "queued", "running", "paused", "completed", "failed", "timeout", "cancelled"]},
  "StepStatus": {"type": "string", "enum": ["pending", "ready", "dispatched", "running", "completed", "failed", "timeout", "skipped", "cached", "cancelled", "waiting_retry"]},
  "Priority": {"type": "string", "enum": ["low", "normal", "high", "critical"]},
  "SubmitRequest": {
    "type": "object", "additionalProperties": false, "required": ["workflow"],
    "properties": {
      "workflow": {"type": "string", "description": "A stored workflow's name"},
      "version": {"type": "integer", "minimum": 1, "description": "Default: the latest"},
      "input": {"type": "object", "additionalProperties": true, "description": "The workflow's declared inputs"},
      "args": {"type": "array", "items": {"type": "string"}, "description": "\"key=value\" inputs, converted to the declared types"},
      "priority": {"$ref": "#/components/schemas/Priority"},
      "idempotency_key": {"type": "string", "description": "The same key returns the execution it started before (200)"},
      "parent_id": {"type": "string"}}},
  "BatchSubmitRequest": {
    "type": "object", "additionalProperties": false, "required": ["executions"],
    "properties": {"executions": {"type": "array", "minItems": 1, "maxItems": 1000,
                                  "items": {"$ref": "#/components/schemas/SubmitRequest"}}}},
  "BatchSubmitResult": {
    "type": "object", "additionalProperties": false, "required": ["executions"],
    "properties": {"executions": {"type": "array", "items": {
      "type": "object", "additionalProperties": false,
      "properties": {"id": {"type": "string"}, "created": {"type": "boolean"},
                     "error": {"$ref": "#/components/schemas/StepError"}}}}}},
  "ExecutionSummary": {
    "type": "object", "additionalProperties": false,
    "required": ["id", "namespace", "workflow", "version", "status", "priority", "parent_id", "parent_step", "idempotency_key", "error", "created_at", "started_at", "completed_at"],
    "properties": {
      "id": {"type": "string"}, "namespace": {"type": "string"}, "workflow": {"type": "string"},
      "version": {"type": "integer"}, "status": {"$ref": "#/components/schemas/ExecutionStatus"},
      "priority": {"$ref": "#/components/schemas/Priority"},
      "parent_id": {"type": ["string", "null"]}, "parent_step": {"type": ["string", "null"]},
      "idempotency_key": {"type": ["string", "null"]},
      "error": {"$ref": "#/components/schemas/Failure"},
      "created_at": {"$ref": "#/components/schemas/Time"},
      "started_at": {"$ref": "#/components/schemas/Time"},
      "completed_at": {"$ref": "#/components/schemas/Time"},
      "created": {"type": "boolean", "description": "On a submit: false when an idempotency key found an earlier execution"},
      "output": {"description": "On a submit with ?wait: the execution's output, any JSON (null until completed)"}}},
  "ExecutionPage": {
    "type": "object", "additionalProperties": false, "required": ["executions", "next_cursor"],
    "properties": {"executions": {"type": "array", "items": {"$ref": "#/components/schemas/ExecutionSummary"}},
                   "next_cursor": {"type": ["string", "null"], "description": "?cursor= of the next page"}}},
  "Attempt": {
    "type": "object", "additionalProperties": false,
    "required": ["attempt", "status", "assignment_id", "error", "started_at", "completed_at"],
    "properties": {"attempt": {"type": "integer"}, "status": {"type": "string"},
                   "assignment_id": {"type": "string"}, "error": {"$ref": "#/components/schemas/Failure"},
                   "started_at": {"$ref": "#/components/schemas/Time"},
                   "completed_at": {"$ref": "#/components/schemas/Time"}}},
  "Step": {
    "type": "object", "additionalProperties": false,
    "required": ["id", "status", "attempts", "progress", "output", "error", "started_at", "completed_at"],
    "properties": {
      "id": {"type": "string"}, "name": {"type": "string", "description": "The definition's name, when it has one"},
      "status": {"$ref": "#/components/schemas/StepStatus"}, "attempts": {"type": "integer"},
      "progress": {"type": "integer", "minimum": 0, "maximum": 100},
      "output": {"description": "Any JSON; null until completed"},
      "error": {"$ref": "#/components/schemas/StepError"},
      "started_at": {"$ref": "#/components/schemas/Time"},
      "completed_at": {"$ref": "#/components/schemas/Time"},
      "exit_code": {"type": "integer"},
      "stderr": {"type": "string", "description": "The last 4 KiB of the latest attempt's stderr, when it wrote any"},
      "attempt_history": {"type": "array", "items": {"$ref": "#/components/schemas/Attempt"}},
      "waiting": {"type": "string", "description": "Dispatched but queued: why no worker has taken it"}}},
  "ChildExecution": {
    "type": "object", "additionalProperties": false,
    "required": ["id", "workflow", "version", "status", "parent_step", "parent_attempt", "error", "created_at", "completed_at"],
    "properties": {"id": {"type": "string"}, "workflow": {"type": "string"}, "version": {"type": "integer"},
                   "status": {"$ref": "#/components/schemas/ExecutionStatus"},
                   "parent_step": {"type": "string"}, "parent_attempt": {"type": "integer"},
                   "error": {"$ref": "#/components/schemas/Failure"},
                   "created_at": {"$ref": "#/components/schemas/Time"},
                   "completed_at": {"$ref": "#/components/schemas/Time"}}},
  "Execution": {
    "type": "object", "additionalProperties": false,
    "required": ["id", "namespace", "workflow", "version", "status", "priority", "progress", "input", "output", "error", "created_at", "started_at", "completed_at", "duration_ms", "steps", "children", "layers", "current_layer"],
    "properties": {
      "id": {"type": "string"}, "namespace": {"type": "string"}, "workflow": {"type": "string"},
      "version": {"type": "integer"}, "status": {"$ref": "#/components/schemas/ExecutionStatus"},
      "priority": {"$ref": "#/components/schemas/Priority"},
      "parent_id": {"type": ["string", "null"]}, "parent_step": {"type": ["string", "null"]},
      "idempotency_key": {"type": ["string", "null"]},
      "progress": {"type": "integer", "minimum": 0, "maximum": 100},
      "input": {"type": "object", "additionalProperties": true}, "output": {"description": "Any JSON; null until completed"},
      "vars": {"type": "object", "additionalProperties": true, "description": "Variables set by steps' set_vars"},
      "error": {"$ref": "#/components/schemas/Failure"},
      "created_at": {"$ref": "#/components/schemas/Time"},
      "started_at": {"$ref": "#/components/schemas/Time"},
      "completed_at": {"$ref": "#/components/schemas/Time"},
      "duration_ms": {"type": ["integer", "null"]},
      "steps": {"type": "array", "items": {"$ref": "#/components/schemas/Step"}},
      "children": {"type": "array", "items": {"$ref": "#/components/schemas/ChildExecution"}},
      "layers": {"type": "array", "items": {
        "type": "object", "additionalProperties": false, "required": ["index", "steps", "done"],
        "properties": {"index": {"type": "integer"}, "steps": {"type": "array", "items": {"type": "string"}},
                       "done": {"type": "boolean"}}}},
      "current_layer": {"type": ["integer", "null"]},
      "waiting": {"type": "string", "description": "A step waiting for a worker, and why"}}},
  "Event": {
    "type": "object", "additionalProperties": false,
    "required": ["execution_id", "seq", "position", "type", "time", "data"],
    "properties": {"execution_id": {"type": "string"}, "seq": {"type": "integer"},
                   "position": {"type": "integer"}, "type": {"type": "string", "description": "execution.started, step.completed, ..."},
                   "time": {"type": "string", "format": "date-time"}, "data": {},
                   "step_id": {"type": "string"}, "attempt": {"type": "integer"}}},
  "EventPage": {
    "type": "object", "additionalProperties": false, "required": ["events", "next_after"],
    "properties": {"events": {"type": "array", "items": {"$ref": "#/components/schemas/Event"}},
                   "next_after": {"type": ["integer", "null"], "description": "?after= of the next page"}}},
  "StepWait": {
    "type": "object", "required": ["step_id", "status", "kind", "reason"],
    "properties": {"step_id": {"type": "string"}, "status": {"$ref": "#/components/schemas/StepStatus"},
                   "kind": {"type": "string"}, "reason": {"type": "string"},
                   "since": {"$ref": "#/components/schemas/Time"}, "until": {"$ref": "#/components/schemas/Time"}}},
  "Why": {
    "type": "object", "additionalProperties": false, "required": ["execution_id", "status", "steps"],
    "properties": {"execution_id": {"type": "string"}, "status": {"$ref": "#/components/schemas/ExecutionStatus"},
                   "steps": {"type": "array", "items": {"$ref": "#/components/schemas/StepWait"}}}},
  "Signal": {
    "type": "object", "additionalProperties": false,
    "required": ["execution_id", "seq", "name", "payload", "sent_at", "taken_by", "taken_at"],
    "properties": {"execution_id": {"type": "string"}, "seq": {"type": "integer"}, "name": {"type": "string"},
                   "payload": {}, "sent_at": {"type": "string", "format": "date-time"},
                   "taken_by": {"type": ["string", "null"]}, "taken_at": {"$ref": "#/components/schemas/Time"}}},
  "SignalSent": {
    "type": "object", "additionalProperties": false, "required": ["signal"],
    "properties": {"signal": {"$ref": "#/components/schemas/Signal"}}},
  "SignalList": {
    "type": "object", "additionalProperties": false, "required": ["signals"],
    "properties": {"signals": {"type": "array", "items": {"$ref": "#/components/schemas/Signal"}}}},
  "WorkflowDefinition": {
    "type": "object", "additionalProperties": true, "required": ["name", "steps"],
    "description": "A workflow (docs/workflow-format.md); also accepted as YAML",
    "properties": {"name": {"type": "string"}, "steps": {"type": "array", "items": {"type": "object", "additionalProperties": true}}}},
  "Workflow": {
    "type": "object", "additionalProperties": false, "required": ["name", "version", "namespace", "created_at"],
    "properties": {"name": {"type": "string"}, "version": {"type": "integer"}, "namespace": {"type": "string"},
                   "created_at": {"$ref": "#/components/schemas/Time"},
                   "definition": {"type": "object", "additionalProperties": true},
                   "created": {"type": "boolean", "description": "On a create: false when the definition equals the latest version"}}},
  "WorkflowList": {
    "type": "object", "additionalProperties": false, "required": ["workflows"],
    "properties": {"workflows": {"type": "array", "items": {"$ref": "#/components/schemas/Workflow"}}}},
  "WorkflowVersions": {
    "type": "object", "additionalProperties": false, "required": ["versions"],
    "properties": {"versions": {"type": "array", "items": {"$ref": "#/components/schemas/Workflow"}}}},
  "TokenRequest": {
    "type": "object", "additionalProperties": false, "required": ["name", "scopes"],
    "properties": {"name": {"type": "string"}, "namespace": {"type": "string"},
                   "scopes": {"type": "array", "items": {"type": "string", "enum": ["read", "write", "admin", "worker"]}}}},
  "Token": {
    "type": "object", "additionalProperties": false, "required": ["id", "namespace", "name", "scopes", "created_at", "revoked_at"],
    "properties": {"id": {"type": "string"}, "namespace": {"type": "string"}, "name": {"type": "string"},
                   "scopes": {"type": "array", "items": {"type": "string"}},
                   "created_at": {"type": "string", "format": "date-time"},
                   "revoked_at": {"$ref": "#/components/schemas/Time"},
                   "token": {"type": "string", "description": "The secret: only in the answer that creates it"}}},
  "TokenList": {
    "type": "object", "additionalProperties": false, "required": ["tokens"],
    "properties": {"tokens": {"type": "array", "items": {"$ref": "#/components/schemas/Token"}}}},
  "ControlRequest": {
    "type": "object", "additionalProperties": false,
    "properties": {"reason": {"type": "string", "description": "Cancel: why (in the events)"}}},
  "RetryRequest": {
    "type": "object", "additionalProperties": false,
    "properties": {"from": {"type": "string", "description": "A step id: it and everything downstream run again"}}},
  "Health": {
    "type": "object", "required": ["status", "store", "engine"],
    "properties": {"status": {"type": "string", "enum": ["ok", "degraded", "unavailable"]},
                   "store": {"type": "string"}, "engine": {"type": "string"}}},
  "HookStarted": {
    "type": "object", "required": ["id", "status", "hook", "created"],
    "description": "The execution the call started (an ExecutionSummary) and the hook's name",
    "properties": {"id": {"type": "string"}, "status": {"$ref": "#/components/schemas/ExecutionStatus"},
                   "hook": {"type": "string"}, "created": {"type": "boolean"}}},
  "VersionOrLatest": {"type": ["integer", "string"], "description": "A version number, or \"latest\""},
  "Schedule": {
    "type": "object", "additionalProperties": false,
    "required": ["id", "namespace", "name", "workflow", "version", "cron", "timezone", "input", "overlap", "catchup", "next_fire_at", "last_fire_at", "last_execution_id", "created_at"],
    "properties": {"id": {"type": "string"}, "namespace": {"type": "string"}, "name": {"type": "string"},
                   "workflow": {"type": "string"}, "version": {"$ref": "#/components/schemas/VersionOrLatest"},
                   "cron": {"type": "string"}, "timezone": {"type": "string"}, "input": {},
                   "overlap": {"type": "string", "enum": ["skip", "allow", "cancel_previous"]},
                   "catchup": {"type": "string"},
                   "next_fire_at": {"$ref": "#/components/schemas/Time"},
                   "last_fire_at": {"$ref": "#/components/schemas/Time"},
                   "last_execution_id": {"type": ["string", "null"]},
                   "created_at": {"type": "string", "format": "date-time"}}},
  "ScheduleList": {
    "type": "object", "additionalProperties": false, "required": ["schedules"],
    "properties": {"schedules": {"type": "array", "items": {"$ref": "#/components/schemas/Schedule"}}}},
  "Hook": {
    "type": "object", "additionalProperties": false,
    "required": ["name", "namespace", "workflow", "version", "url", "created_at"],
    "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}, "workflow": {"type": "string"},
                   "version": {"$ref": "#/components/schemas/VersionOrLatest"}, "url": {"type": "string"},
                   "created_at": {"type": "string", "format": "date-time"},
                   "secret": {"type": "string", "description": "Only in the answer that creates it"}}},
  "HookList": {
    "type": "object", "additionalProperties": false, "required": ["hooks"],
    "properties": {"hooks": {"type": "array", "items": {"$ref": "#/components/schemas/Hook"}}}},
  "Trigger": {
    "type": "object", "additionalProperties": false,
    "required": ["id", "namespace", "name", "source", "on", "workflow", "version", "input", "created_at"],
    "properties": {"id": {"type": "string"}, "namespace": {"type": "string"}, "name": {"type": "string"},
                   "source": {"type": "string"}, "on": {"type": "array", "items": {"type": "string"}},
                   "workflow": {"type": "string"}, "version": {"$ref": "#/components/schemas/VersionOrLatest"},
                   "input": {}, "created_at": {"type": "string", "format": "date-time"}}},
  "TriggerList": {
    "type": "object", "additionalProperties": false, "required": ["triggers"],
    "properties": {"triggers": {"type": "array", "items": {"$ref": "#/components/schemas/Trigger"}}}},
  "Delivery": {
    "type": "object", "additionalProperties": false,
    "required": ["id", "namespace", "execution_id", "event", "kind", "status", "attempts", "next_attempt_at", "last_error", "payload", "created_at", "updated_at"],
    "properties": {"id": {"type": "string"}, "namespace": {"type": "string"}, "execution_id": {"type": "string"},
                   "event": {"type": "string"}, "kind": {"type": "string", "enum": ["notification", "trigger"]},
                   "status": {"type": "string", "enum": ["pending", "delivered", "failed"]},
                   "attempts": {"type": "integer"}, "next_attempt_at": {"$ref": "#/components/schemas/Time"},
                   "last_error": {"$ref": "#/components/schemas/Failure"}, "payload": {},
                   "created_at": {"$ref": "#/components/schemas/Time"}, "updated_at": {"$ref": "#/components/schemas/Time"},
                   "trigger_id": {"type": "string"}, "started_execution_id": {"type": ["string", "null"]},
                   "url": {"type": "string"}}},
  "DeliveryList": {
    "type": "object", "additionalProperties": false, "required": ["deliveries"],
    "properties": {"deliveries": {"type": "array", "items": {"$ref": "#/components/schemas/Delivery"}}}},
  "DeadLetter": {
    "type": "object", "additionalProperties": false,
    "required": ["id", "status", "execution_id", "workflow", "version", "step_id", "code", "fingerprint", "error", "errors", "input", "attempts", "first_failed_at", "last_failed_at", "created_at", "resolved_at", "replay"],
    "properties": {"id": {"type": "integer"}, "status": {"type": "string"}, "execution_id": {"type": "string"},
                   "workflow": {"type": "string"}, "version": {"type": "integer"}, "step_id": {"type": "string"},
                   "code": {"type": "string"}, "fingerprint": {"type": "string"}, "error": {},
                   "errors": {"type": "array"}, "input": {},
                   "attempts": {"type": "object", "additionalProperties": false, "required": ["first", "last"],
                                "properties": {"first": {"type": "integer"}, "last": {"type": "integer"}}},
                   "first_failed_at": {"type": "string", "format": "date-time"},
                   "last_failed_at": {"type": "string", "format": "date-time"},
                   "created_at": {"type": "string", "format": "date-time"},
                   "resolved_at": {"$ref": "#/components/schemas/Time"},
                   "replay": {"type": ["object", "null"]},
                   "replay_of": {"type": ["integer", "null"]}}},
  "DeadLetterPage": {
    "type": "object", "additionalProperties": false, "required": ["entries", "next_cursor"],
    "properties": {"entries": {"type": "array", "items": {"$ref": "#/components/schemas/DeadLetter"}},
                   "next_cursor": {"type": ["string", "null"]}}},
  "Breaker": {
    "type": "object", "additionalProperties": false,
    "required": ["key", "namespace", "state", "failures", "successes", "trips", "opened_at", "probe_at", "last_error", "failure_threshold", "recovery_timeout", "success_threshold", "updated_at"],
    "properties": {"key": {"type": "string"}, "namespace": {"type": "string"},
                   "state": {"type": "string", "enum": ["closed", "open", "half_open"]},
                   "failures": {"type": "integer"}, "successes": {"type": "integer"}, "trips": {"type": "integer"},
                   "opened_at": {"$ref": "#/components/schemas/Time"}, "probe_at": {"$ref": "#/components/schemas/Time"},
                   "last_error": {"$ref": "#/components/schemas/Failure"}, "failure_threshold": {"type": "integer"},
                   "recovery_timeout": {"type": "string"}, "success_threshold": {"type": "integer"},
                   "updated_at": {"$ref": "#/components/schemas/Time"}}},
  "BreakerList": {
    "type": "object", "additionalProperties": false, "required": ["breakers"],
    "properties": {"breakers": {"type": "array", "items": {"$ref": "#/components/schemas/Breaker"}}}},
  "Pool": {
    "type": "object", "additionalProperties": false,
    "required": ["name", "slots", "used", "holders", "waiting", "created_at", "updated_at"],
    "properties": {"name": {"type": "string"}, "slots": {"type": "integer"}, "used": {"type": "integer"},
                   "holders": {"type": "array"}, "waiting": {},
                   "created_at": {"type": "string", "format": "date-time"},
                   "updated_at": {"type": "string", "format": "date-time"}}},
  "ExecutionCounts": {
    "type": "object", "additionalProperties": false, "required": ["counts", "total"],
    "properties": {"counts": {"type": "object", "additionalProperties": {"type": "integer"},
                              "description": "By status; statuses with none are left out"},
                   "total": {"type": "integer"}}},
  "BulkRequest": {
    "type": "object", "additionalProperties": false, "required": ["action"],
    "properties": {"action": {"type": "string", "enum": ["cancel", "pause", "resume", "retry"]},
                   "filter": {"type": "object", "additionalProperties": false,
                              "description": "As the list's query parameters",
                              "properties": {"status": {"type": "string"}, "workflow": {"type": "string"},
                                             "parent": {"type": "string"}, "since": {"type": "string"},
                                             "until": {"type": "string"}, "q": {"type": "string"}}},
                   "dry_run": {"type": "boolean"},
                   "max": {"type": "integer", "minimum": 1, "maximum": 10000},
                   "reason": {"type": "string"}}},
  "BulkResult": {
    "type": "object", "additionalProperties": false,
    "required": ["action", "matched", "truncated", "dry_run", "applied", "failed", "failures"],
    "properties": {"action": {"type": "string"},
                   "matched": {"type": "integer", "description": "Executions the action applies to"},
                   "truncated": {"type": "boolean", "description": "More matched than max"},
                   "dry_run": {"type": "boolean"}, "applied": {"type": "integer"},
                   "failed": {"type": "integer"},
                   "failures": {"type": "array", "description": "The first 50",
                                "items": {"type": "object", "additionalProperties": false,
                                          "properties": {"id": {"type": "string"}, "code": {"type": "string"},
                                                         "message": {"type": "string"}}}}}},
  "ActivityMinute": {
    "type": "object", "additionalProperties": false,
    "required": ["at", "executions_started", "executions_completed", "executions_failed",
                 "steps_completed", "steps_failed", "step_p50_ms", "step_p99_ms"],
    "properties": {"at": {"type": "string", "format": "date-time"},
                   "executions_started": {"type": "integer"}, "executions_completed": {"type": "integer"},
                   "executions_failed": {"type": "integer"}, "steps_completed": {"type": "integer"},
                   "steps_failed": {"type": "integer"},
                   "step_p50_ms": {"type": ["integer", "null"]}, "step_p99_ms": {"type": ["integer", "null"]}}},
  "Activity": {
    "type": "object", "additionalProperties": false,
    "required": ["window_minutes", "minutes", "hour", "stalled"],
    "properties": {"window_minutes": {"type": "integer"},
                   "minutes": {"type": "array", "items": {"$ref": "#/components/schemas/ActivityMinute"}},
                   "hour": {"$ref": "#/components/schemas/ActivityMinute"},
                   "stalled": {"type": "array", "items": {
                     "type": "object", "additionalProperties": false,
                     "properties": {"execution_id": {"type": "string"}, "workflow": {"type": "string"},
                                    "since": {"type": "string", "format": "date-time"}}}}}},
  "Session": {
    "type": "object", "additionalProperties": false,
    "required": ["token_id", "namespace", "scopes", "can_write"],
    "properties": {"token_id": {"type": "string"}, "namespace": {"type": "string"},
                   "scopes": {"type": "array", "items": {"type": "string"}},
                   "can_write": {"type": "boolean"},
                   "expires_at": {"type": "string", "format": "date-time"}}},
  "SessionRequest": {
    "type": "object", "additionalProperties": false, "required": ["token"],
    "properties": {"token": {"type": "string"}}},
  "PoolList": {
    "type": "object", "additionalProperties": false, "required": ["pools"],
    "properties": {"pools": {"type": "array", "items": {"$ref": "#/components/schemas/Pool"}}}},
  "CacheEntry": {
    "type": "object", "additionalProperties": false,
    "required": ["key", "namespace", "workflow", "step_id", "execution_id", "bytes", "created_at", "expires_at", "last_hit_at", "hits"],
    "properties": {"key": {"type": "string"}, "namespace": {"type": "string"}, "workflow": {"type": "string"},
                   "step_id": {"type": "string"}, "execution_id": {"type": "string"}, "bytes": {"type": "integer"},
                   "created_at": {"$ref": "#/components/schemas/Time"}, "expires_at": {"$ref": "#/components/schemas/Time"},
                   "last_hit_at": {"$ref": "#/components/schemas/Time"}, "hits": {"type": "integer"},
                   "output": {"description": "Only on GET /api/v1/cache/{key}"}}},
  "CacheList": {
    "type": "object", "additionalProperties": false, "required": ["entries", "total", "bytes"],
    "properties": {"entries": {"type": "array", "items": {"$ref": "#/components/schemas/CacheEntry"}},
                   "total": {"type": "integer"}, "bytes": {"type": "integer"}}},
  "Worker": {
    "type": "object", "additionalProperties": false,
    "required": ["workerId", "namespace", "local", "nodeId", "host", "status", "capacity", "currentLoad", "reportedLoad", "commands", "tags", "lastHeartbeat", "registeredAt", "assignments"],
    "properties": {"workerId": {"type": "string"}, "namespace": {"type": "string", "description": "\"*\" for the server's own local worker"},
                   "local": {"type": "boolean"}, "nodeId": {"type": "string"}, "host": {"type": "string"},
                   "status": {"type": "string", "enum": ["ONLINE", "UNHEALTHY", "DRAINING", "OFFLINE"]},
                   "capacity": {"type": "integer"}, "currentLoad": {"type": "integer"}, "reportedLoad": {"type": "integer"},
                   "commands": {"type": "array", "items": {"type": "string"}},
                   "tags": {"type": "array", "items": {"type": "string"}},
                   "lastHeartbeat": {"type": "string"}, "registeredAt": {"type": "string"},
                   "assignments": {"type": "array", "items": {"type": "string"}}}},
  "WorkerList": {
    "type": "object", "additionalProperties": false, "required": ["workers"],
    "properties": {"workers": {"type": "array", "items": {"$ref": "#/components/schemas/Worker"}}}},
  "Reassignment": {
    "type": "object", "additionalProperties": false,
    "required": ["id", "dispatchId", "assignmentId", "executionId", "stepId", "fromWorkerId", "toWorkerId", "reassignedAt", "reason", "checkpoint"],
    "properties": {"id": {"type": ["integer", "string"]}, "dispatchId": {"type": "string"}, "assignmentId": {"type": "string"},
                   "executionId": {"type": "string"}, "stepId": {"type": "string"}, "fromWorkerId": {"type": "string"},
                   "toWorkerId": {"type": ["string", "null"]}, "reassignedAt": {"type": "string"},
                   "reason": {"type": "string"}, "checkpoint": {}}},
  "ReassignmentList": {
    "type": "object", "additionalProperties": false, "required": ["reassignments"],
    "properties": {"reassignments": {"type": "array", "items": {"$ref": "#/components/schemas/Reassignment"}}}},
  "Assignment": {
    "type": "object", "additionalProperties": false,
    "required": ["assignmentId", "dispatchId", "executionId", "stepId", "attempt", "command", "workerId", "status", "progress", "checkpoint", "reassignments", "createdAt", "updatedAt"],
    "properties": {"assignmentId": {"type": "string"}, "dispatchId": {"type": "string", "description": "EXECUTION/STEP/ATTEMPT"},
                   "executionId": {"type": "string"}, "stepId": {"type": "string"}, "attempt": {"type": "integer"},
                   "command": {"type": "string"}, "workerId": {"type": ["string", "null"]}, "status": {"type": "string"},
                   "progress": {"type": "integer"}, "checkpoint": {}, "reassignments": {"type": "integer"},
                   "createdAt": {"type": "string"}, "updatedAt": {"type": "string"},
                   "waitingReason": {"type": "string", "description": "Waiting: why no worker took it"},
                   "reassignmentHistory": {"type": "array", "items": {"$ref": "#/components/schemas/Reassignment"}}}},
  "AssignmentList": {
    "type": "object", "additionalProperties": false, "required": ["assignments"],
    "properties": {"assignments": {"type": "array", "items": {"$ref": "#/components/schemas/Assignment"}}}},
  "CoordinatorHealth": {
    "type": "object", "additionalProperties": false,
    "required": ["totalWorkers", "onlineWorkers", "unhealthyWorkers", "drainingWorkers", "offlineWorkers", "totalCapacity", "usedCapacity", "reassignmentEvents", "waitingAssignments", "heartbeatMisses", "staleMessages"],
    "properties": {"totalWorkers": {"type": "integer"}, "onlineWorkers": {"type": "integer"},
                   "unhealthyWorkers": {"type": "integer"}, "drainingWorkers": {"type": "integer"},
                   "offlineWorkers": {"type": "integer"}, "totalCapacity": {"type": "integer"},
                   "usedCapacity": {"type": "integer"}, "reassignmentEvents": {"type": "integer"},
                   "waitingAssignments": {"type": "integer"}, "heartbeatMisses": {"type": "integer"},
                   "staleMessages": {"type": "integer"}}},
  "DeadLetterStats": {
    "type": "object", "additionalProperties": false,
    "required": ["total", "status", "by_workflow", "by_step", "by_fingerprint"],
    "properties": {"total": {"type": "integer"}, "status": {"type": "string"},
                   "by_workflow": {"type": "array", "items": {"type": "object", "additionalProperties": false,
                     "required": ["workflow", "count"],
                     "properties": {"workflow": {"type": "string"}, "count": {"type": "integer"}}}},
                   "by_step": {"type": "array", "items": {"type": "object", "additionalProperties": false,
                     "required": ["workflow", "step_id", "count"],
                     "properties": {"workflow": {"type": "string"}, "step_id": {"type": "string"}, "count": {"type": "integer"}}}},
                   "by_fingerprint": {"type": "array", "items": {"type": "object", "additionalProperties": false,
                     "required": ["workflow", "step_id", "fingerprint", "code", "count", "first_failed_at", "last_failed_at", "last_id"],
                     "properties": {"workflow": {"type": "string"}, "step_id": {"type": "string"},
                                    "fingerprint": {"type": "string"}, "code": {"type": "string"}, "count": {"type": "integer"},
                                    "first_failed_at": {"type": "string"}, "last_failed_at": {"type": "string"},
                                    "last_id": {"type": "integer"}}}}}},
  "ReplayJob": {
    "type": "object", "additionalProperties": false,
    "required": ["id", "state", "filter", "per_second", "matched", "replayed", "skipped", "failed", "remaining", "errors", "started_at", "finished_at"],
    "properties": {"id": {"type": "string"}, "state": {"type": "string"}, "filter": {},
                   "per_second": {"type": "number"}, "matched": {"type": "integer"}, "replayed": {"type": "integer"},
                   "skipped": {"type": "integer"}, "failed": {"type": "integer"}, "remaining": {"type": "integer"},
                   "errors": {"type": "array"}, "started_at": {"type": "string"},
                   "finished_at": {"type": ["string", "null"]}}},
  "ReplayJobStarted": {
    "type": "object", "additionalProperties": false, "required": ["replay"],
    "properties": {"replay": {"$ref": "#/components/schemas/ReplayJob"}}},
  "ReplayJobList": {
    "type": "object", "additionalProperties": false, "required": ["replays"],
    "properties": {"replays": {"type": "array", "items": {"$ref": "#/components/schemas/ReplayJob"}}}},
  "ReplayRequest": {
    "type": "object", "additionalProperties": false, "required": ["filter", "per_second"],
    "properties": {"filter": {"type": "object", "additionalProperties": true, "description": "As the query of GET /api/v1/dlq: workflow, step, code, fingerprint, execution, since, until"},
                   "per_second": {"type": "number", "exclusiveMinimum": 0}, "limit": {"type": "integer", "minimum": 1}}},
  "ScheduleRequest": {
    "type": "object", "additionalProperties": false, "required": ["name", "workflow", "cron"],
    "properties": {"name": {"type": "string"}, "workflow": {"type": "string"}, "version": {"type": "integer", "minimum": 1},
                   "cron": {"type": "string", "description": "Five fields: minute hour day month weekday"},
                   "timezone": {"type": "string", "description": "IANA name (default UTC)"},
                   "input": {"type": "object", "additionalProperties": true},
                   "overlap": {"type": "string", "enum": ["skip", "allow", "cancel_previous"]},
                   "catchup": {"type": "string"}}},
  "HookRequest": {
    "type": "object", "additionalProperties": false, "required": ["name", "workflow"],
    "properties": {"name": {"type": "string"}, "workflow": {"type": "string"}, "version": {"type": "integer", "minimum": 1},
                   "secret": {"type": "string", "description": "Default: generated, shown once"}}},
  "TriggerRequest": {
    "type": "object", "additionalProperties": false, "required": ["name", "source", "on", "workflow"],
    "properties": {"name": {"type": "string"}, "source": {"type": "string", "description": "The workflow whose executions' ends start this one"},
                   "on": {"type": "array", "items": {"type": "string"}}, "workflow": {"type": "string"},
                   "version": {"type": "integer", "minimum": 1},
                   "input": {"type": "object", "additionalProperties": true, "description": "Templates over {{ source.* }}"}}},
  "PoolRequest": {
    "type": "object", "additionalProperties": false, "required": ["name", "slots"],
    "properties": {"name": {"type": "string"}, "slots": {"type": "integer", "minimum": 1, "maximum": 1000000}}},
  "RegisterMessage": {
    "type": "object", "additionalProperties": true, "required": ["type", "workerId", "capacity", "commands"],
    "description": "docs/worker-protocol.md, Worker to server",
    "properties": {"type": {"const": "register"}, "workerId": {"type": "string"}, "nodeId": {"type": "string"},
                   "host": {"type": "string"}, "capacity": {"type": "integer", "minimum": 1},
                   "commands": {"type": "array", "items": {"type": "string"}},
                   "tags": {"type": "array", "items": {"type": "string"}},
                   "sessionId": {"type": "string", "maxLength": 128}, "batching": {"type": "boolean"}}},
  "RegisteredMessage": {
    "type": "object", "additionalProperties": true, "required": ["type", "workerId", "heartbeatInterval", "heartbeatTimeout"],
    "properties": {"type": {"const": "registered"}, "workerId": {"type": "string"},
                   "heartbeatInterval": {"type": "integer", "description": "Milliseconds"},
                   "heartbeatTimeout": {"type": "integer", "description": "Milliseconds"},
                   "batching": {"type": "boolean"}}},
  "HeartbeatMessage": {
    "type": "object", "additionalProperties": true, "required": ["type", "currentLoad", "capacity", "status"],
    "properties": {"type": {"const": "heartbeat"}, "currentLoad": {"type": "integer", "minimum": 0},
                   "capacity": {"type": "integer", "minimum": 1},
                   "status": {"type": "string", "enum": ["ONLINE", "DRAINING"]}}},
  "AckMessage": {
    "type": "object", "additionalProperties": true, "required": ["type", "assignmentId", "status"],
    "properties": {"type": {"const": "command.ack"}, "assignmentId": {"type": "string"},
                   "status": {"type": "string", "enum": ["accepted", "rejected"]},
                   "estimatedDuration": {"type": "integer"}}},
  "ProgressMessage": {
    "type": "object", "additionalProperties": true, "required": ["type", "assignmentId", "progress"],
    "properties": {"type": {"const": "command.progress"}, "assignmentId": {"type": "string"},
                   "progress": {"type": "integer", "minimum": 0, "maximum": 100}, "checkpoint": {}, "data": {}}},
  "ResultMessage": {
    "type": "object", "additionalProperties": true, "required": ["type", "assignmentId", "status"],
    "properties": {"type": {"const": "command.result"}, "assignmentId": {"type": "string"},
                   "status": {"type": "string", "enum": ["success", "failure"]}, "output": {},
                   "error": {"$ref": "#/components/schemas/Failure"}}},
  "WorkerMessage": {
    "oneOf": [{"$ref": "#/components/schemas/HeartbeatMessage"}, {"$ref": "#/components/schemas/AckMessage"},
              {"$ref": "#/components/schemas/ProgressMessage"}, {"$ref": "#/components/schemas/ResultMessage"},
              {"type": "object", "required": ["type"], "properties": {"type": {"const": "deregister"}}}]},
  "BatchMessage": {
    "type": "object", "additionalProperties": true, "required": ["type", "messages"],
    "properties": {"type": {"const": "batch"},
                   "messages": {"type": "array", "maxItems": 1000, "items": {"$ref": "#/components/schemas/WorkerMessage"}}}},
  "BatchReply": {
    "type": "object", "additionalProperties": false, "required": ["results"],
    "properties": {"results": {"type": "array", "items": {"type": "object", "additionalProperties": true}}}},
  "ServerMessage": {
    "type": "object", "additionalProperties": true, "required": ["type"],
    "description": "command, command.cancel or error (docs/worker-protocol.md, Server to worker)",
    "properties": {"type": {"type": "string"}, "assignmentId": {"type": "string"}, "command": {"type": "string"},
                   "resource": {}, "data": {}, "execution": {"type": "object", "additionalProperties": true},
                   "checkpoint": {}, "timeoutSeconds": {"type": "integer"}, "reason": {"type": "string"}}},
  "PollReply": {
    "type": "object", "additionalProperties": false, "required": ["messages"],
    "properties": {"messages": {"type": "array", "items": {"$ref": "#/components/schemas/ServerMessage"}}}},
  "WorkerOk": {
    "type": "object", "additionalProperties": false, "required": ["type"],
    "properties": {"type": {"type": "string", "enum": ["ok", "heartbeat.ok"]}}},
  "DeadLetterReplayed": {
    "type": "object", "additionalProperties": false, "required": ["entry", "execution"],
    "properties": {"entry": {"$ref": "#/components/schemas/DeadLetter"},
                   "execution": {"oneOf": [{"$ref": "#/components/schemas/ExecutionSummary"}, {"type": "null"}]}}},
  "Deleted": {
    "type": "object", "additionalProperties": false, "required": ["deleted"],
    "properties": {"deleted": {"type": ["integer", "string"], "description": "How many, or the name deleted"}}}
})json";

}  // namespace

const Json& OpenApiSchemas() {
  static const Json schemas = Json::parse(kSchemas);
  return schemas;
}

}  // namespace baton::server
