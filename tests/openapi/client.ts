// A client generated from Baton's openapi.json (openapi-typescript's types, driven by
// openapi-fetch) against a real server: create a workflow, submit, wait, read the output,
// read the events, and see a refusal in the document's error shape. It compiles only if
// the document describes these operations as this code uses them.
// Every answer is also checked against its schema in the document (Ajv, JSON Schema
// 2020-12): the core records allow no field the document does not list and need every
// one it requires, so a view that drifts from its schema fails here.
// Usage: node out/client.js SERVER_URL TOKEN OPENAPI_JSON
import { readFileSync } from "node:fs";
import Ajv2020Module from "ajv/dist/2020.js";
import createClient from "openapi-fetch";
import type { paths, components } from "./out/schema.js";

type Execution = components["schemas"]["Execution"];

const [server, token, documentFile] = process.argv.slice(2);
const document = JSON.parse(readFileSync(documentFile, "utf8"));
const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema(document, "openapi");
// The answer `data` of `operation` matches the schema components/schemas/`schema`.
function conforms(operation: string, schema: string, data: unknown): void {
  const validate = ajv.getSchema(`openapi#/components/schemas/${schema}`);
  if (!validate) fail(`no schema ${schema}`);
  if (!validate(data)) {
    fail(`${operation}: the answer does not match ${schema}: ${ajv.errorsText(validate.errors)}\n` +
         JSON.stringify(data));
  }
}
const baton = createClient<paths>({
  baseUrl: server,
  headers: { Authorization: `Bearer ${token}` },
});

function fail(why: string): never {
  console.error(`client: ${why}`);
  process.exit(1);
}

const created = await baton.POST("/api/v1/workflows", {
  body: {
    name: "generated-client",
    inputs: { who: { type: "string", required: true } },
    steps: [{ id: "greet", type: "shell", run: ["echo", "hello {{ inputs.who }}"] }],
    output: { said: "{{ steps.greet.output }}" },
  },
});
if (created.error) fail(`createWorkflow: ${created.error.error.code} ${created.error.error.message}`);
if (created.data.version < 1) fail(`createWorkflow: version ${created.data.version}`);
conforms("createWorkflow", "Workflow", created.data);

// A trigger on this workflow's completions: the run below leaves a delivery, and the
// workflow it starts fails (a dead letter, a breaker) after a cached step.
const failing = await baton.POST("/api/v1/workflows", {
  body: {
    name: "failing",
    steps: [
      { id: "cached", type: "shell", run: ["echo", "kept"], cache: { ttl: "1h" } },
      {
        id: "load",
        type: "shell",
        run: "exit 3",
        circuit_breaker: { key: "warehouse", failure_threshold: 5 },
        depends_on: ["cached"],
      },
    ],
  },
});
if (failing.error) fail(`createWorkflow failing: ${failing.error.error.message}`);
const trigger = await baton.POST("/api/v1/triggers", {
  body: { name: "after-greet", source: "generated-client", on: ["completed"], workflow: "failing" },
});
if (trigger.error) fail(`createTrigger: ${trigger.error.error.code} ${trigger.error.error.message}`);
conforms("createTrigger", "Trigger", trigger.data);

const submitted = await baton.POST("/api/v1/executions", {
  body: { workflow: "generated-client", input: { who: "openapi" }, idempotency_key: "gen-1" },
});
if (submitted.error) fail(`submitExecution: ${submitted.error.error.code}`);
const id: string = submitted.data.id;
conforms("submitExecution", "ExecutionSummary", submitted.data);

// A submit that waits for the end answers with the output.
const waited = await baton.POST("/api/v1/executions", {
  params: { query: { wait: 30000 } },
  body: { workflow: "generated-client", input: { who: "waiting" } },
});
if (waited.error) fail(`submitExecution?wait: ${waited.error.error.code}`);
conforms("submitExecution", "ExecutionSummary", waited.data);
if (waited.data.status !== "completed" || waited.data.output === undefined) {
  fail(`submitExecution?wait: ${JSON.stringify(waited.data)}`);
}

let execution: Execution | undefined;
for (let i = 0; i < 600; i++) {
  const got = await baton.GET("/api/v1/executions/{id}", { params: { path: { id } } });
  if (got.error) fail(`getExecution: ${got.error.error.code}`);
  conforms("getExecution", "Execution", got.data);
  if (["completed", "failed", "timeout", "cancelled"].includes(got.data.status)) {
    execution = got.data;
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
}
if (!execution) fail(`execution ${id} did not finish`);
if (execution.status !== "completed") fail(`execution ${id} ended ${execution.status}`);
const output = execution.output as { said?: string };
if (output.said !== "hello openapi") fail(`output ${JSON.stringify(execution.output)}`);
const step = execution.steps.find((s) => s.id === "greet");
if (!step || step.status !== "completed" || step.attempts !== 1) fail(`step ${JSON.stringify(step)}`);

const events = await baton.GET("/api/v1/executions/{id}/events", {
  params: { path: { id }, query: { after: 0, limit: 100 } },
});
if (events.error) fail(`listExecutionEvents: ${events.error.error.code}`);
conforms("listExecutionEvents", "EventPage", events.data);
const types = events.data.events.map((e) => e.type);
if (types[0] !== "execution.started" || types[types.length - 1] !== "execution.completed") {
  fail(`events ${types.join(",")}`);
}

// The other core records, as the server answers them.
const listed = await baton.GET("/api/v1/executions", { params: { query: { limit: 10 } } });
if (listed.error) fail(`listExecutions: ${listed.error.error.code}`);
conforms("listExecutions", "ExecutionPage", listed.data);
const why = await baton.GET("/api/v1/executions/{id}/why", { params: { path: { id } } });
if (why.error) fail(`whyExecution: ${why.error.error.code}`);
conforms("whyExecution", "Why", why.data);
const signals = await baton.GET("/api/v1/executions/{id}/signals", { params: { path: { id } } });
if (signals.error) fail(`listSignals: ${signals.error.error.code}`);
conforms("listSignals", "SignalList", signals.data);
const workflow = await baton.GET("/api/v1/workflows/{name}", {
  params: { path: { name: "generated-client" } },
});
if (workflow.error) fail(`getWorkflow: ${workflow.error.error.code}`);
conforms("getWorkflow", "Workflow", workflow.data);
const workflows = await baton.GET("/api/v1/workflows");
if (workflows.error) fail(`listWorkflows: ${workflows.error.error.code}`);
conforms("listWorkflows", "WorkflowList", workflows.data);
const versions = await baton.GET("/api/v1/workflows/{name}/versions", {
  params: { path: { name: "generated-client" } },
});
if (versions.error) fail(`listWorkflowVersions: ${versions.error.error.code}`);
conforms("listWorkflowVersions", "WorkflowVersions", versions.data);
const reader = await baton.POST("/api/v1/tokens", { body: { name: "reader", scopes: ["read"] } });
if (reader.error) fail(`createToken: ${reader.error.error.code}`);
conforms("createToken", "Token", reader.data);
const tokens = await baton.GET("/api/v1/tokens");
if (tokens.error) fail(`listTokens: ${tokens.error.error.code}`);
conforms("listTokens", "TokenList", tokens.data);
const cancelled = await baton.POST("/api/v1/executions/{id}/cancel", {
  params: { path: { id } },
  body: { reason: "done already" },
});
if (!cancelled.error) conforms("cancelExecution", "ExecutionSummary", cancelled.data);
else conforms("cancelExecution", "Error", cancelled.error);
const bulk = await baton.POST("/api/v1/executions/bulk", {
  body: { action: "retry", filter: { workflow: "generated-client" }, dry_run: true },
});
if (bulk.error) fail(`bulkExecutions: ${bulk.error.error.code}`);
conforms("bulkExecutions", "BulkResult", bulk.data);
const activity = await baton.GET("/api/v1/activity");
if (activity.error) fail(`getActivity: ${activity.error.error.code}`);
conforms("getActivity", "Activity", activity.data);
if (activity.data.hour.executions_started < 1) fail("getActivity: no execution started this hour");
const health = await baton.GET("/health");
if (health.error) fail("getHealth");
conforms("getHealth", "Health", health.data);

// The other records, once the trigger's run has failed (a dead letter, a breaker, a
// cache entry, a delivery).
let deliveries: components["schemas"]["DeliveryList"] | undefined;
for (let i = 0; i < 600; i++) {
  const got = await baton.GET("/api/v1/deliveries", { params: { query: { limit: 10 } } });
  if (got.error) fail(`listDeliveries: ${got.error.error.code}`);
  const dlq = await baton.GET("/api/v1/dlq", {});
  if (dlq.error) fail(`listDeadLetters: ${dlq.error.error.code}`);
  if (got.data.deliveries.some((d) => d.status === "delivered") && dlq.data.entries.length > 0) {
    deliveries = got.data;
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
}
if (!deliveries) fail("no delivered trigger and no dead letter");
conforms("listDeliveries", "DeliveryList", deliveries);
const delivery = await baton.GET("/api/v1/deliveries/{id}", {
  params: { path: { id: deliveries.deliveries[0].id } },
});
if (delivery.error) fail(`getDelivery: ${delivery.error.error.code}`);
conforms("getDelivery", "Delivery", delivery.data);
const letters = await baton.GET("/api/v1/dlq", {});
if (letters.error) fail("listDeadLetters");
conforms("listDeadLetters", "DeadLetterPage", letters.data);
const letter = await baton.GET("/api/v1/dlq/{id}", {
  params: { path: { id: String(letters.data.entries[0].id) } },
});
if (letter.error) fail(`getDeadLetter: ${letter.error.error.code}`);
conforms("getDeadLetter", "DeadLetter", letter.data);
const stats = await baton.GET("/api/v1/dlq/stats", {});
if (stats.error) fail("deadLetterStats");
conforms("deadLetterStats", "DeadLetterStats", stats.data);
if (stats.data.total < 1) fail(`dlq stats total ${stats.data.total}`);
const replay = await baton.POST("/api/v1/dlq/replay", {
  body: { filter: { workflow: "nothing-matches" }, per_second: 10 },
});
if (replay.error) fail(`replayDeadLetters: ${replay.error.error.code} ${replay.error.error.message}`);
conforms("replayDeadLetters", "ReplayJobStarted", replay.data);
const replays = await baton.GET("/api/v1/dlq/replays");
if (replays.error) fail("listDeadLetterReplays");
conforms("listDeadLetterReplays", "ReplayJobList", replays.data);
const job = await baton.GET("/api/v1/dlq/replays/{id}", { params: { path: { id: replay.data.replay.id } } });
if (job.error) fail("getDeadLetterReplay");
conforms("getDeadLetterReplay", "ReplayJob", job.data);

const breakers = await baton.GET("/api/v1/breakers");
if (breakers.error) fail("listBreakers");
conforms("listBreakers", "BreakerList", breakers.data);
if (!breakers.data.breakers.some((b) => b.key === "warehouse")) fail("no breaker 'warehouse'");
const cache = await baton.GET("/api/v1/cache", {});
if (cache.error) fail("listCache");
conforms("listCache", "CacheList", cache.data);
if (cache.data.entries.length === 0) fail("no cache entry");
const entry = await baton.GET("/api/v1/cache/{key}", {
  params: { path: { key: cache.data.entries[0].key } },
});
if (entry.error) fail(`getCacheEntry: ${entry.error.error.code}`);
conforms("getCacheEntry", "CacheEntry", entry.data);
const pool = await baton.POST("/api/v1/pools", { body: { name: "gpu", slots: 2 } });
if (pool.error) fail(`setPool: ${pool.error.error.code}`);
conforms("setPool", "Pool", pool.data);
const pools = await baton.GET("/api/v1/pools");
if (pools.error) fail("listPools");
conforms("listPools", "PoolList", pools.data);
const schedule = await baton.POST("/api/v1/schedules", {
  body: { name: "nightly", workflow: "generated-client", cron: "0 2 * * *", input: { who: "cron" } },
});
if (schedule.error) fail(`createSchedule: ${schedule.error.error.code} ${schedule.error.error.message}`);
conforms("createSchedule", "Schedule", schedule.data);
const schedules = await baton.GET("/api/v1/schedules");
if (schedules.error) fail("listSchedules");
conforms("listSchedules", "ScheduleList", schedules.data);
const oneSchedule = await baton.GET("/api/v1/schedules/{id}", {
  params: { path: { id: schedule.data.id } },
});
if (oneSchedule.error) fail("getSchedule");
conforms("getSchedule", "Schedule", oneSchedule.data);
const hook = await baton.POST("/api/v1/hooks", { body: { name: "gh-push", workflow: "generated-client" } });
if (hook.error) fail(`createHook: ${hook.error.error.code} ${hook.error.error.message}`);
conforms("createHook", "Hook", hook.data);
const hooks = await baton.GET("/api/v1/hooks");
if (hooks.error) fail("listHooks");
conforms("listHooks", "HookList", hooks.data);
const oneHook = await baton.GET("/api/v1/hooks/{name}", { params: { path: { name: "gh-push" } } });
if (oneHook.error) fail("getHook");
conforms("getHook", "Hook", oneHook.data);
const triggers = await baton.GET("/api/v1/triggers");
if (triggers.error) fail("listTriggers");
conforms("listTriggers", "TriggerList", triggers.data);

const workersList = await baton.GET("/api/v1/workers");
if (workersList.error) fail("listWorkers");
conforms("listWorkers", "WorkerList", workersList.data);
const local = await baton.GET("/api/v1/workers/{id}", { params: { path: { id: "local" } } });
if (local.error) fail(`getWorker local: ${local.error.error.code}`);
conforms("getWorker", "Worker", local.data);
const coordinator = await baton.GET("/api/v1/coordinator/health");
if (coordinator.error) fail("coordinatorHealth");
conforms("coordinatorHealth", "CoordinatorHealth", coordinator.data);
// A shell step runs as an assignment of the local worker: seen while it runs.
const sleeper = await baton.POST("/api/v1/workflows", {
  body: { name: "sleeper", steps: [{ id: "nap", type: "shell", run: ["sleep", "30"] }] },
});
if (sleeper.error) fail("createWorkflow sleeper");
const napping = await baton.POST("/api/v1/executions", { body: { workflow: "sleeper" } });
if (napping.error) fail("submitExecution sleeper");
let assignments: components["schemas"]["AssignmentList"] | undefined;
for (let i = 0; i < 600 && !assignments; i++) {
  const got = await baton.GET("/api/v1/assignments", { params: { query: { execution: napping.data.id } } });
  if (got.error) fail(`listAssignments: ${got.error.error.code}`);
  if (got.data.assignments.length > 0) assignments = got.data;
  else await new Promise((resolve) => setTimeout(resolve, 50));
}
if (!assignments) fail("the shell step never showed as an assignment");
conforms("listAssignments", "AssignmentList", assignments);
const history = await baton.GET("/api/v1/assignments", { params: { query: { status: "all" } } });
if (history.error) fail(`listAssignments all: ${history.error.error.code}`);
conforms("listAssignments", "AssignmentList", history.data);
const [dExecution, dStep, dAttempt] = assignments.assignments[0].dispatchId.split("/");
const assignment = await baton.GET("/api/v1/assignments/{execution}/{step}/{attempt}", {
  params: { path: { execution: dExecution, step: dStep, attempt: dAttempt } },
});
if (assignment.error) fail(`getAssignment: ${assignment.error.error.code}`);
conforms("getAssignment", "Assignment", assignment.data);
const stopped = await baton.POST("/api/v1/executions/{id}/cancel", {
  params: { path: { id: napping.data.id } },
  body: {},
});
if (stopped.error) fail(`cancelExecution sleeper: ${stopped.error.error.code}`);
const moves = await baton.GET("/api/v1/reassignments", {});
if (moves.error) fail("listReassignments");
conforms("listReassignments", "ReassignmentList", moves.data);

// A long-polling worker through the generated client: register, heartbeat, poll, leave.
const workerToken = await baton.POST("/api/v1/tokens", { body: { name: "w", scopes: ["worker"] } });
if (workerToken.error || !workerToken.data.token) fail("createToken worker");
const asWorker = createClient<paths>({
  baseUrl: server,
  headers: { Authorization: `Bearer ${workerToken.data.token}` },
});
const registered = await asWorker.POST("/api/v1/workers/register", {
  body: { type: "register", workerId: "ts-1", capacity: 1, commands: ["nothing.here"] },
});
if (registered.error) fail(`registerWorker: ${registered.error.error.code} ${registered.error.error.message}`);
conforms("registerWorker", "RegisteredMessage", registered.data);
const beat = await asWorker.POST("/api/v1/workers/{id}/heartbeat", {
  params: { path: { id: "ts-1" } },
  body: { type: "heartbeat", currentLoad: 0, capacity: 1, status: "ONLINE" },
});
if (beat.error) fail(`workerHeartbeat: ${beat.error.error.code} ${beat.error.error.message}`);
conforms("workerHeartbeat", "WorkerOk", beat.data);
const polled = await asWorker.GET("/api/v1/workers/{id}/poll", {
  params: { path: { id: "ts-1" }, query: { wait: 0 } },
});
if (polled.error) fail(`pollWorker: ${polled.error.error.code}`);
conforms("pollWorker", "PollReply", polled.data);
const batch = await asWorker.POST("/api/v1/workers/{id}/batch", {
  params: { path: { id: "ts-1" } },
  body: { type: "batch", messages: [{ type: "heartbeat", currentLoad: 0, capacity: 1, status: "ONLINE" }] },
});
if (batch.error) fail(`workerBatch: ${batch.error.error.code} ${batch.error.error.message}`);
conforms("workerBatch", "BatchReply", batch.data);
const left = await asWorker.POST("/api/v1/workers/{id}/deregister", { params: { path: { id: "ts-1" } } });
if (left.error) fail(`deregisterWorker: ${left.error.error.code}`);
conforms("deregisterWorker", "WorkerOk", left.data);
const cleared = await baton.DELETE("/api/v1/cache", { params: { query: { workflow: "failing" } } });
if (cleared.error) fail("clearCache");
conforms("clearCache", "Deleted", cleared.data);
const dropped = await baton.DELETE("/api/v1/pools/{name}", { params: { path: { name: "gpu" } } });
if (dropped.error) fail("deletePool");
conforms("deletePool", "Deleted", dropped.data);
const again = await baton.POST("/api/v1/dlq/{id}/replay", {
  params: { path: { id: String(letters.data.entries[0].id) } },
});
if (again.error) fail(`replayDeadLetter: ${again.error.error.code} ${again.error.error.message}`);
conforms("replayDeadLetter", "DeadLetterReplayed", again.data);

const missing = await baton.GET("/api/v1/executions/{id}", { params: { path: { id: "nosuch" } } });
if (!missing.error || missing.response.status !== 404 || missing.error.error.code !== "NOT_FOUND") {
  fail(`a missing execution: ${missing.response.status} ${JSON.stringify(missing.error)}`);
}
conforms("getExecution", "Error", missing.error);
console.log(`client: ok (${id} completed with ${JSON.stringify(execution.output)}, ${types.length} events)`);
