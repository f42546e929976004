// What openapi.json says of each route beyond the router's method, pattern, scope and
// summary: its operationId, query parameters, request body and answers.
#include "server/openapi/openapi.h"

#include "server/auth.h"

#include <cctype>
#include <map>
#include <sstream>
#include <utility>

namespace baton::server {
namespace {

struct Operation {
  const char* method;
  const char* pattern;
  const char* id;        // operationId
  int status;            // the success status
  const char* response;  // schema name; "" none (204); "text" text/plain; "openapi" the document
  const char* request;   // schema name; "" none; "workflow" YAML or JSON; "any" any JSON
  const char* query;     // comma-separated query parameters (kQueryParams)
  int also = 0;          // a second success status with the same body (201 created / 200 found)
};

// clang-format off
constexpr Operation kOperations[] = {
  {"GET", "/health", "getHealth", 200, "Health", "", ""},
  {"GET", "/metrics", "getMetrics", 200, "text", "", ""},
  {"GET", "/api/v1/openapi.json", "getOpenApi", 200, "openapi", "", ""},
  // Executions
  {"POST", "/api/v1/executions", "submitExecution", 201, "ExecutionSummary", "SubmitRequest", "wait", 200},
  {"POST", "/api/v1/executions/batch", "submitExecutions", 201, "BatchSubmitResult", "BatchSubmitRequest", "", 207},
  {"GET", "/api/v1/executions", "listExecutions", 200, "ExecutionPage", "", "status,workflow,parent,since,until,q,limit,cursor"},
  {"POST", "/api/v1/executions/bulk", "bulkExecutions", 200, "BulkResult", "BulkRequest", ""},
  {"GET", "/api/v1/executions/counts", "countExecutions", 200, "ExecutionCounts", "", "workflow,parent,since,until,q"},
  {"GET", "/api/v1/executions/{id}", "getExecution", 200, "Execution", "", ""},
  {"GET", "/api/v1/executions/{id}/why", "whyExecution", 200, "Why", "", ""},
  {"GET", "/api/v1/executions/{id}/events", "listExecutionEvents", 200, "EventPage", "", "after,limit,types"},
  {"POST", "/api/v1/executions/{id}/cancel", "cancelExecution", 200, "ExecutionSummary", "ControlRequest", ""},
  {"POST", "/api/v1/executions/{id}/pause", "pauseExecution", 200, "ExecutionSummary", "ControlRequest", ""},
  {"POST", "/api/v1/executions/{id}/resume", "resumeExecution", 200, "ExecutionSummary", "ControlRequest", ""},
  {"POST", "/api/v1/executions/{id}/retry", "retryExecution", 200, "ExecutionSummary", "RetryRequest", ""},
  {"POST", "/api/v1/executions/{id}/signals/{name}", "sendSignal", 202, "SignalSent", "any", ""},
  {"GET", "/api/v1/executions/{id}/signals", "listSignals", 200, "SignalList", "", ""},
  // Workflows
  {"POST", "/api/v1/workflows", "createWorkflow", 201, "Workflow", "workflow", "", 200},
  {"GET", "/api/v1/workflows", "listWorkflows", 200, "WorkflowList", "", ""},
  {"GET", "/api/v1/workflows/{name}", "getWorkflow", 200, "Workflow", "", "version"},
  {"GET", "/api/v1/workflows/{name}/versions", "listWorkflowVersions", 200, "WorkflowVersions", "", ""},
  {"DELETE", "/api/v1/workflows/{name}", "deleteWorkflow", 204, "", "", ""},
  // Tokens
  {"POST", "/api/v1/tokens", "createToken", 201, "Token", "TokenRequest", ""},
  {"GET", "/api/v1/tokens", "listTokens", 200, "TokenList", "", ""},
  {"DELETE", "/api/v1/tokens/{id}", "revokeToken", 204, "", "", ""},
  // Schedules, webhooks, triggers, deliveries
  {"POST", "/api/v1/schedules", "createSchedule", 201, "Schedule", "ScheduleRequest", ""},
  {"GET", "/api/v1/schedules", "listSchedules", 200, "ScheduleList", "", ""},
  {"GET", "/api/v1/schedules/{id}", "getSchedule", 200, "Schedule", "", ""},
  {"DELETE", "/api/v1/schedules/{id}", "deleteSchedule", 204, "", "", ""},
  {"POST", "/api/v1/hooks", "createHook", 201, "Hook", "HookRequest", ""},
  {"GET", "/api/v1/hooks", "listHooks", 200, "HookList", "", ""},
  {"GET", "/api/v1/hooks/{name}", "getHook", 200, "Hook", "", ""},
  {"DELETE", "/api/v1/hooks/{name}", "deleteHook", 204, "", "", ""},
  {"POST", "/api/v1/hooks/{name}", "callHook", 202, "HookStarted", "any", "", 200},
  {"POST", "/api/v1/triggers", "createTrigger", 201, "Trigger", "TriggerRequest", ""},
  {"GET", "/api/v1/triggers", "listTriggers", 200, "TriggerList", "", ""},
  {"DELETE", "/api/v1/triggers/{id}", "deleteTrigger", 204, "", "", ""},
  {"GET", "/api/v1/deliveries", "listDeliveries", 200, "DeliveryList", "", "execution,status,limit"},
  {"GET", "/api/v1/deliveries/{id}", "getDelivery", 200, "Delivery", "", ""},
  {"POST", "/api/v1/deliveries/{id}/redeliver", "redeliver", 202, "Delivery", "", ""},
  // Dead letters, breakers, pools, the cache
  {"GET", "/api/v1/dlq", "listDeadLetters", 200, "DeadLetterPage", "", "workflow,step,code,fingerprint,execution,status,since,until,limit,cursor"},
  {"GET", "/api/v1/dlq/stats", "deadLetterStats", 200, "DeadLetterStats", "", "workflow,step,code,fingerprint,execution,status,since,until"},
  {"POST", "/api/v1/dlq/replay", "replayDeadLetters", 202, "ReplayJobStarted", "ReplayRequest", ""},
  {"GET", "/api/v1/dlq/replays", "listDeadLetterReplays", 200, "ReplayJobList", "", ""},
  {"GET", "/api/v1/dlq/replays/{id}", "getDeadLetterReplay", 200, "ReplayJob", "", ""},
  {"DELETE", "/api/v1/dlq/replays/{id}", "stopDeadLetterReplay", 200, "ReplayJob", "", ""},
  {"GET", "/api/v1/dlq/{id}", "getDeadLetter", 200, "DeadLetter", "", ""},
  {"POST", "/api/v1/dlq/{id}/replay", "replayDeadLetter", 200, "DeadLetterReplayed", "", ""},
  {"DELETE", "/api/v1/dlq/{id}", "discardDeadLetter", 200, "DeadLetter", "", ""},
  {"GET", "/api/v1/breakers", "listBreakers", 200, "BreakerList", "", ""},
  {"POST", "/api/v1/breakers/{key}/reset", "resetBreaker", 200, "Breaker", "", ""},
  {"GET", "/api/v1/pools", "listPools", 200, "PoolList", "", ""},
  {"POST", "/api/v1/pools", "setPool", 201, "Pool", "PoolRequest", "", 200},
  {"DELETE", "/api/v1/pools/{name}", "deletePool", 200, "Deleted", "", ""},
  {"GET", "/api/v1/cache", "listCache", 200, "CacheList", "", "workflow,step,limit"},
  {"DELETE", "/api/v1/cache", "clearCache", 200, "Deleted", "", "workflow,step"},
  {"GET", "/api/v1/cache/{key}", "getCacheEntry", 200, "CacheEntry", "", ""},
  {"DELETE", "/api/v1/cache/{key}", "deleteCacheEntry", 200, "Deleted", "", ""},
  // Workers (docs/worker-protocol.md; the WebSocket transport is /api/v1/workers/connect)
  {"GET", "/api/v1/workers", "listWorkers", 200, "WorkerList", "", ""},
  {"GET", "/api/v1/workers/{id}", "getWorker", 200, "Worker", "", ""},
  {"DELETE", "/api/v1/workers/{id}", "drainWorker", 202, "Worker", "", ""},
  {"POST", "/api/v1/workers/register", "registerWorker", 200, "RegisteredMessage", "RegisterMessage", ""},
  {"POST", "/api/v1/workers/{id}/heartbeat", "workerHeartbeat", 200, "WorkerOk", "HeartbeatMessage", ""},
  {"GET", "/api/v1/workers/{id}/poll", "pollWorker", 200, "PollReply", "", "wait"},
  {"POST", "/api/v1/workers/{id}/ack", "ackCommand", 200, "WorkerOk", "AckMessage", ""},
  {"POST", "/api/v1/workers/{id}/progress", "commandProgress", 200, "WorkerOk", "ProgressMessage", ""},
  {"POST", "/api/v1/workers/{id}/result", "commandResult", 200, "WorkerOk", "ResultMessage", ""},
  {"POST", "/api/v1/workers/{id}/batch", "workerBatch", 200, "BatchReply", "BatchMessage", ""},
  {"POST", "/api/v1/workers/{id}/deregister", "deregisterWorker", 200, "WorkerOk", "", ""},
  {"GET", "/api/v1/assignments", "listAssignments", 200, "AssignmentList", "", "worker,workerId,execution,status,limit"},
  {"GET", "/api/v1/assignments/{execution}/{step}/{attempt}", "getAssignment", 200, "Assignment", "", ""},
  {"GET", "/api/v1/reassignments", "listReassignments", 200, "ReassignmentList", "", "limit,worker,assignment"},
  {"GET", "/api/v1/coordinator/health", "coordinatorHealth", 200, "CoordinatorHealth", "", ""},
  // The dashboard's session
  {"POST", "/api/v1/session", "openSession", 201, "Session", "SessionRequest", ""},
  {"GET", "/api/v1/session", "getSession", 200, "Session", "", ""},
  {"DELETE", "/api/v1/session", "closeSession", 204, "", "", ""},
  {"GET", "/api/v1/activity", "getActivity", 200, "Activity", "", ""},
};
// clang-format on

// Query parameters by name: their schema and what they mean.
const std::map<std::string, std::pair<const char*, const char*>> kQueryParams = {
    {"status", {"string", "Only this status"}},
    {"workflow", {"string", "Only this workflow"}},
    {"parent", {"string", "Only children of this execution"}},
    {"since", {"string", "Created at or after (ISO 8601 UTC or epoch ms)"}},
    {"until", {"string", "Created before (ISO 8601 UTC or epoch ms)"}},
    {"limit", {"integer", "At most this many"}},
    {"cursor", {"string", "The next_cursor of the previous page"}},
    {"q",
     {"string",
      "Text in the id, or in the input or output as compact JSON (case-sensitive, at most 256 "
      "bytes)"}},
    {"after", {"integer", "After this sequence number"}},
    {"version", {"integer", "This version (default: the latest)"}},
    {"execution", {"string", "Only this execution"}},
    {"step", {"string", "Only this step id"}},
    {"code", {"string", "Only this error code"}},
    {"fingerprint", {"string", "Only this error fingerprint"}},
    {"worker", {"string", "Only this worker"}},
    {"workerId", {"string", "Only this worker (as worker)"}},
    {"assignment", {"string", "Only this assignment (dispatch id)"}},
    {"wait",
     {"integer",
      "Milliseconds to wait, at most 60000: a worker's poll for work (default 25000); a submit "
      "for its execution to end (default 0), answering with its output"}},
    {"types",
     {"string",
      "Only these event types and families, comma-separated (execution.completed,step.*); a "
      "page may then hold fewer than limit events"}},
};

// The dashboard's page and files: not part of the API.
bool IsDashboardPage(const RouteInfo& r) {
  return r.pattern == "/" || r.pattern.rfind("/ui/", 0) == 0;
}

const Operation* Find(const RouteInfo& r) {
  for (const Operation& op : kOperations) {
    if (r.method == op.method && r.pattern == op.pattern) return &op;
  }
  return nullptr;
}

Json Ref(const std::string& schema) {
  return {{"$ref", "#/components/schemas/" + schema}};
}

Json ErrorAnswer(const char* description) {
  return {{"description", description},
          {"content", {{"application/json", {{"schema", Ref("Error")}}}}}};
}

Json SuccessAnswer(const Operation& op) {
  const std::string response = op.response;
  if (response.empty()) return {{"description", "Done; no body"}};
  if (response == "text") {
    return {{"description", "The Prometheus text format"},
            {"content", {{"text/plain", {{"schema", {{"type", "string"}}}}}}}};
  }
  const Json schema = response == "openapi"
                          ? Json{{"type", "object"}, {"additionalProperties", true}}
                          : Ref(response);
  return {{"description", "Success"}, {"content", {{"application/json", {{"schema", schema}}}}}};
}

Json DescribeOperation(const RouteInfo& r) {
  const Operation* op = Find(r);
  Json o = {{"summary", r.summary}, {"description", r.summary}};
  Json answers = Json::object();
  if (op == nullptr) {
    answers["200"] = {{"description", "Success"},
                      {"content",
                       {{"application/json",
                         {{"schema", {{"type", "object"}, {"additionalProperties", true}}}}}}}};
  } else {
    o["operationId"] = op->id;
    answers[std::to_string(op->status)] = SuccessAnswer(*op);
    if (op->also != 0) answers[std::to_string(op->also)] = SuccessAnswer(*op);
    const std::string request = op->request;
    if (request == "workflow") {
      o["requestBody"] = {{"required", true},
                          {"content",
                           {{"application/json", {{"schema", Ref("WorkflowDefinition")}}},
                            {"application/yaml", {{"schema", {{"type", "string"}}}}}}}};
    } else if (request == "any") {
      o["requestBody"] = {{"required", false},
                          {"content", {{"application/json", {{"schema", Json::object()}}}}}};
    } else if (!request.empty()) {
      o["requestBody"] = {// Control and retry bodies are optional; every other one is required.
                          {"required", request != "ControlRequest" && request != "RetryRequest"},
                          {"content", {{"application/json", {{"schema", Ref(request)}}}}}};
    }
  }
  Json params = Json::array();
  for (size_t i = r.pattern.find('{'); i != std::string::npos; i = r.pattern.find('{', i + 1)) {
    const size_t j = r.pattern.find('}', i);
    params.push_back({{"name", r.pattern.substr(i + 1, j - i - 1)},
                      {"in", "path"},
                      {"required", true},
                      {"schema", {{"type", "string"}}}});
  }
  if (op != nullptr && *op->query != '\0') {
    std::stringstream names(op->query);
    for (std::string name; std::getline(names, name, ',');) {
      auto known = kQueryParams.find(name);
      params.push_back(
          {{"name", name},
           {"in", "query"},
           {"required", false},
           {"description", known == kQueryParams.end() ? "" : known->second.second},
           {"schema", {{"type", known == kQueryParams.end() ? "string" : known->second.first}}}});
    }
  }
  if (!params.empty()) o["parameters"] = params;
  // What every route may answer besides success (the API's one error shape).
  if (r.scope == Scope::kPublic) {
    o["security"] = Json::array();
  } else {
    o["security"] = Json::array({{{"bearer", Json::array()}}});
    o["x-baton-scope"] = ToString(r.scope);
    answers["401"] = ErrorAnswer("No token, or one that is unknown or revoked (UNAUTHORIZED)");
    answers["403"] = ErrorAnswer("The token lacks the scope (FORBIDDEN)");
  }
  if (r.method != "GET" || !params.empty()) {
    answers["400"] = ErrorAnswer("A bad request: the message and details name the field");
  }
  // A path's id, or a workflow (or other record) a request body names, that does not exist.
  if (r.pattern.find('{') != std::string::npos || r.method != "GET") {
    answers["404"] = ErrorAnswer("Not found: what the path or the body names does not exist");
  }
  if (r.method != "GET") {
    answers["409"] = ErrorAnswer("Conflicts with the current state");
    answers["413"] = ErrorAnswer(
        "The body is past --max-body, or a payload in it past --max-payload (PAYLOAD_TOO_LARGE)");
  }
  answers["429"] = ErrorAnswer("Past the rate limit (RATE_LIMITED; see Retry-After)");
  answers["503"] = ErrorAnswer("The store is unavailable; retry");
  o["responses"] = answers;
  return o;
}

}  // namespace

Json OpenApiDocument(const std::vector<RouteInfo>& routes) {
  Json paths = Json::object();
  for (const RouteInfo& r : routes) {
    if (IsDashboardPage(r)) continue;
    std::string method = r.method;
    for (char& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    paths[r.pattern][method] = DescribeOperation(r);
  }
  return {{"openapi", "3.1.0"},
          {"info",
           {{"title", "Baton API"},
            {"version", "1"},
            {"description",
             "Baton's REST API: workflows, executions, their events and control, workers, "
             "schedules, webhooks, triggers, dead letters, breakers, pools and the result cache. "
             "Errors are {\"error\": {\"code\", \"message\", \"details\"}}."}}},
          {"servers",
           Json::array({{{"url", "/"}, {"description", "The server that served this document"}}})},
          {"security", Json::array({{{"bearer", Json::array()}}})},
          {"components",
           {{"securitySchemes",
             {{"bearer",
               {{"type", "http"},
                {"scheme", "bearer"},
                {"description", "A token from `baton token create` or the credentials file"}}}}},
            {"schemas", OpenApiSchemas()}}},
          {"paths", paths}};
}

std::vector<std::string> UndocumentedRoutes(const std::vector<RouteInfo>& routes) {
  std::vector<std::string> out;
  for (const RouteInfo& r : routes) {
    if (Find(r) == nullptr && !IsDashboardPage(r)) out.push_back(r.method + " " + r.pattern);
  }
  return out;
}

}  // namespace baton::server
