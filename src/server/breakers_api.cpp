// /api/v1/breakers: the circuit breakers of the caller's namespace, as the engine holds
// them, and a manual reset (close) for when the dependency is known to be back.
#include "server/api.h"
#include "server/views.h"

namespace baton::server {
// A namespace of its own, so that unity builds can compile it with the other routes.
namespace breakers_api {
namespace {

void List(ApiContext& ctx, const Call& call, const Responder& respond) {
  const std::string ns = call.principal.ns;
  ctx.engine->Post([respond, ns](Engine& engine) {
    Json items = Json::array();
    for (const BreakerRecord& b : engine.Breakers(ns)) items.push_back(BreakerJson(b));
    respond(JsonResponse(200, {{"breakers", std::move(items)}}));
  });
}

// POST /breakers/{key}/reset: closed now, counts cleared; answered once durable.
void Reset(ApiContext& ctx, const Call& call, const Responder& respond) {
  std::string key;
  if (!PercentDecode(call.Param("key"), &key, false) || key.empty() || key.size() > 253) {
    return respond(ErrorResponse(400, errc::kValidation,
                                 "the breaker key must be 1 to 253 bytes, percent-encoded"));
  }
  const std::string ns = call.principal.ns;
  ctx.engine->Post([respond, ns, key](Engine& engine) {
    Result<BreakerRecord> reset = engine.ResetBreaker(ns, key);
    if (!reset.ok()) return respond(ErrorResponse(reset.status()));
    engine.WhenDurable([respond, record = std::move(reset.value())](const Status& durable) {
      if (!durable.ok()) return respond(ErrorResponse(durable));
      respond(JsonResponse(200, BreakerJson(record)));
    });
  });
}

}  // namespace
}  // namespace breakers_api

void AddBreakerRoutes(Router& router, ApiContext& ctx) {
  using namespace breakers_api;
  router.Add("GET", "/api/v1/breakers", Scope::kRead,
             "Circuit breakers of the namespace: state (closed, open, half_open), consecutive "
             "failures, next probe time, trips, last error, thresholds",
             [&ctx](const Call& call, Responder respond) { List(ctx, call, respond); });
  router.Add("POST", "/api/v1/breakers/{key}/reset", Scope::kWrite,
             "Close a circuit breaker now (its counts cleared); the key is percent-encoded",
             [&ctx](const Call& call, Responder respond) { Reset(ctx, call, respond); });
}

}  // namespace baton::server
