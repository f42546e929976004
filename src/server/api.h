// The REST API under /api/v1: each Add*Routes registers one resource's routes.
#pragma once

#include "server/auth.h"
#include "server/engine_host.h"
#include "server/router.h"

#include <baton/store.h>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace baton::workers {
class Coordinator;
}  // namespace baton::workers

namespace baton::server {

struct ServerLimits {
  size_t max_body_bytes = 4 << 20;       // a request body (a workflow definition, a submit)
  size_t max_payload_bytes = 256 << 10;  // one execution's input, as JSON
  size_t max_header_bytes = 16 << 10;
  size_t max_connections = 1024;
  int idle_timeout_s = 60;     // a connection with no request in flight
  int request_timeout_s = 30;  // reading one request, writing one response
  size_t max_page = 1000;      // list endpoints' largest `limit`
  // Messages waiting to be written to one worker connection (WebSocket) before the server
  // decides the worker does not read and closes it; its work goes elsewhere.
  size_t max_worker_queue = 10'000;
  // Requests per second per token (per peer address for webhooks); 0 = no limit.
  double rate_per_second = 1000;
  double rate_burst = 2000;
};

class Submitter;
class WorkflowCache;
class ServerMetrics;
class Scheduler;
class FollowUps;
class Deliverer;
class DlqReplayer;
class ActivityWindow;
class CompletionWaits;

// What handlers share. Everything here outlives the router.
struct ApiContext {
  Store* store = nullptr;
  EngineHost* engine = nullptr;
  TokenAuthority* auth = nullptr;
  Submitter* submitter = nullptr;
  WorkflowCache* workflows = nullptr;  // thread-safe
  ServerMetrics* metrics = nullptr;
  Scheduler* scheduler = nullptr;               // engine thread only: reach it through engine->Post
  FollowUps* follow_ups = nullptr;              // engine thread only
  CompletionWaits* waits = nullptr;             // engine thread only: POST ?wait
  Deliverer* deliverer = nullptr;               // engine thread only
  workers::Coordinator* coordinator = nullptr;  // engine thread only
  DlqReplayer* replayer = nullptr;              // thread-safe
  ActivityWindow* activity = nullptr;           // thread-safe: the overview's last hour
  ServerLimits limits;
  std::mutex workflow_versions;  // serialises "read latest version, write the next"
  std::atomic<bool> store_ok{true};
};

void AddSystemRoutes(Router& router, ApiContext& ctx);
void AddWorkflowRoutes(Router& router, ApiContext& ctx);
void AddExecutionRoutes(Router& router, ApiContext& ctx);
// POST /api/v1/executions/bulk (executions_bulk_api.cpp): before AddExecutionRoutes.
void AddExecutionBulkRoutes(Router& router, ApiContext& ctx);
void AddTokenRoutes(Router& router, ApiContext& ctx);
void AddScheduleRoutes(Router& router, ApiContext& ctx);
void AddHookRoutes(Router& router, ApiContext& ctx);
void AddTriggerRoutes(Router& router, ApiContext& ctx);     // triggers and deliveries
void AddDeadLetterRoutes(Router& router, ApiContext& ctx);  // the dead-letter queue
void AddBreakerRoutes(Router& router, ApiContext& ctx);     // circuit breakers
void AddCacheRoutes(Router& router, ApiContext& ctx);       // cached step results
void AddPoolRoutes(Router& router, ApiContext& ctx);        // pools of slots
// Workers, assignments, reassignments, coordinator health (workers/workers_api.cpp), and
// the long-poll transport (workers/worker_longpoll.cpp).
void AddWorkerRoutes(Router& router, ApiContext& ctx);
void AddWorkerLongPollRoutes(Router& router, ApiContext& ctx);
// The dashboard's page and files (GET /, /ui/...) and its session (/api/v1/session).
void AddDashboardRoutes(Router& router, ApiContext& ctx);

// What each open step of an execution this instance holds waits for (the `steps` of GET
// /executions/{id}/why), from the engine and the coordinator. Engine thread; NOT_FOUND
// when the engine does not hold it.
Result<Json> WhySteps(Engine& engine, workers::Coordinator* coordinator, const std::string& id);

// Shared by handlers: the body as a JSON object, or a 400 response naming the problem.
Result<Json> ParseJsonBody(const HttpRequest& request);
// 400 naming the first key of `body` not in `valid`, or nullopt when all are known.
// `where` prefixes the name ("executions[3]." for a member of a list).
std::optional<HttpResponse> UnknownField(const Json& body, const std::vector<std::string>& valid,
                                         const std::string& where = "");
// 400 VALIDATION "field 'F': message" with details {"field": F}.
HttpResponse FieldError(const std::string& field, const std::string& message);
// The optional `version` field: 0 when absent, else a positive integer (FieldError).
Result<int> VersionField(const Json& body);
// 1..max_len letters, digits, '-', '_' or '.': names that appear in URLs and namespaces.
bool IsSimpleName(const std::string& s, size_t max_len);
// The `limit` query parameter within [1, max], default `fallback`.
Result<size_t> PageLimit(const HttpRequest& request, size_t fallback, size_t max);

}  // namespace baton::server
