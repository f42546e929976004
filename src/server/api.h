// The REST API under /api/v1: each Add*Routes registers one resource's routes.
#pragma once

#include "server/auth.h"
#include "server/engine_host.h"
#include "server/router.h"

#include <baton/store.h>

#include <atomic>
#include <cstddef>
#include <mutex>

namespace baton::server {

struct ServerLimits {
  size_t max_body_bytes = 4 << 20;       // a request body (a workflow definition, a submit)
  size_t max_payload_bytes = 256 << 10;  // one execution's input, as JSON
  size_t max_header_bytes = 16 << 10;
  size_t max_connections = 1024;
  int idle_timeout_s = 60;     // a connection with no request in flight
  int request_timeout_s = 30;  // reading one request, writing one response
  size_t max_page = 1000;      // list endpoints' largest `limit`
};

class Submitter;
class ServerMetrics;
class Scheduler;

// What handlers share. Everything here outlives the router.
struct ApiContext {
  Store* store = nullptr;
  EngineHost* engine = nullptr;
  TokenAuthority* auth = nullptr;
  Submitter* submitter = nullptr;
  ServerMetrics* metrics = nullptr;
  Scheduler* scheduler = nullptr;  // engine thread only: reach it through engine->Post
  ServerLimits limits;
  std::mutex workflow_versions;  // serialises "read latest version, write the next"
  std::atomic<bool> store_ok{true};
};

void AddSystemRoutes(Router& router, ApiContext& ctx);
void AddWorkflowRoutes(Router& router, ApiContext& ctx);
void AddExecutionRoutes(Router& router, ApiContext& ctx);
void AddTokenRoutes(Router& router, ApiContext& ctx);
void AddScheduleRoutes(Router& router, ApiContext& ctx);

// Shared by handlers: the body as a JSON object, or a 400 response naming the problem.
Result<Json> ParseJsonBody(const HttpRequest& request);
// The `limit` query parameter within [1, max], default `fallback`.
Result<size_t> PageLimit(const HttpRequest& request, size_t fallback, size_t max);

}  // namespace baton::server
