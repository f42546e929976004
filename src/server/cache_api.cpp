// /api/v1/cache: the cached step results of the caller's namespace, as the engine holds
// them, and their removal (one entry, or every entry of a workflow or step).
#include "server/api.h"
#include "server/views.h"

namespace baton::server {
// A namespace of its own, so that unity builds can compile it with the other routes.
namespace cache_api {
namespace {

constexpr size_t kDefaultPage = 100;

// The workflow and step filters: at most 253 bytes each.
Result<std::pair<std::string, std::string>> Filters(const Call& call) {
  std::string workflow = call.request->Query("workflow"), step = call.request->Query("step");
  if (workflow.size() > 253 || step.size() > 253) {
    return Status(errc::kInvalidArgument, "workflow and step are at most 253 bytes");
  }
  return std::pair{workflow, step};
}

void List(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto filters = Filters(call);
  if (!filters.ok()) return respond(ErrorResponse(filters.status()));
  auto limit = PageLimit(*call.request, kDefaultPage, ctx.limits.max_page);
  if (!limit.ok()) return respond(ErrorResponse(limit.status()));
  ctx.engine->Post([respond, ns = call.principal.ns, f = *filters, limit = *limit](Engine& engine) {
    Json items = Json::array();
    int64_t bytes = 0;
    std::vector<CacheEntryRecord> entries = engine.CacheEntries(ns, f.first, f.second);
    for (const CacheEntryRecord& e : entries) {
      bytes += e.bytes;
      if (items.size() < limit) items.push_back(CacheEntryJson(e, /*with_output=*/false));
    }
    respond(JsonResponse(
        200, {{"entries", std::move(items)}, {"total", entries.size()}, {"bytes", bytes}}));
  });
}

void Show(ApiContext& ctx, const Call& call, const Responder& respond) {
  ctx.engine->Post([respond, ns = call.principal.ns, key = call.Param("key")](Engine& engine) {
    for (const CacheEntryRecord& e : engine.CacheEntries(ns, "", "")) {
      if (e.key == key) return respond(JsonResponse(200, CacheEntryJson(e, true)));
    }
    respond(ErrorResponse(404, errc::kNotFound, "no cache entry '" + key + "'"));
  });
}

// DELETE /cache/{key} (key set) or DELETE /cache?workflow=&step= (every match); answered
// once the deletion is durable.
void Clear(ApiContext& ctx, const Call& call, const Responder& respond, const std::string& key) {
  auto filters = Filters(call);
  if (!filters.ok()) return respond(ErrorResponse(filters.status()));
  ctx.engine->Post([respond, ns = call.principal.ns, key, f = *filters](Engine& engine) {
    Result<size_t> cleared = engine.ClearCache(ns, key, f.first, f.second);
    if (!cleared.ok()) return respond(ErrorResponse(cleared.status()));
    engine.WhenDurable([respond, n = *cleared](const Status& durable) {
      if (!durable.ok()) return respond(ErrorResponse(durable));
      respond(JsonResponse(200, {{"deleted", n}}));
    });
  });
}

}  // namespace
}  // namespace cache_api

void AddCacheRoutes(Router& router, ApiContext& ctx) {
  using namespace cache_api;
  router.Add("GET", "/api/v1/cache", Scope::kRead,
             "Cached step results of the namespace (outputs left out): ?workflow, step, limit; "
             "with the total count and bytes",
             [&ctx](const Call& call, Responder respond) { List(ctx, call, respond); });
  router.Add("DELETE", "/api/v1/cache", Scope::kWrite,
             "Delete the cached results matching ?workflow and ?step (every one without them)",
             [&ctx](const Call& call, Responder respond) { Clear(ctx, call, respond, ""); });
  router.Add("GET", "/api/v1/cache/{key}", Scope::kRead, "One cached result, with its output",
             [&ctx](const Call& call, Responder respond) { Show(ctx, call, respond); });
  router.Add("DELETE", "/api/v1/cache/{key}", Scope::kWrite,
             "Delete one cached result: the next identical step runs again",
             [&ctx](const Call& call, Responder respond) {
               Clear(ctx, call, respond, call.Param("key"));
             });
}

}  // namespace baton::server
