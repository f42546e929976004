// /api/v1/pools: the named pools of slots of the caller's namespace (a step's `pool`),
// with who holds their slots; created, resized and deleted by operators.
#include "server/api.h"
#include "server/views.h"

namespace baton::server {
// A namespace of its own, so that unity builds can compile it with the other routes.
namespace pools_api {
namespace {

Json PoolJson(const PoolUsage& u) {
  return {{"name", u.pool.name},
          {"slots", u.pool.slots},
          {"used", u.used},
          {"holders", u.holders},
          {"waiting", u.waiting},
          {"created_at", IsoTime(u.pool.created_at)},
          {"updated_at", IsoTime(u.pool.updated_at)}};
}

bool IsPoolName(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_or_digit(s[0])) return false;
  for (char c : s) {
    if (!lower_or_digit(c) && c != '_' && c != '.' && c != '-') return false;
  }
  return true;
}

void List(ApiContext& ctx, const Call& call, const Responder& respond) {
  const std::string ns = call.principal.ns;
  ctx.engine->Post([respond, ns](Engine& engine) {
    Json items = Json::array();
    for (const PoolUsage& u : engine.Pools(ns)) items.push_back(PoolJson(u));
    respond(JsonResponse(200, {{"pools", std::move(items)}}));
  });
}

// POST /pools {"name", "slots"}: creates or resizes; answered once durable.
void Put(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto body = ParseJsonBody(*call.request);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  if (auto bad = UnknownField(*body, {"name", "slots"})) return respond(*bad);
  const Json& name = body->value("name", Json(nullptr));
  if (!name.is_string() || !IsPoolName(name.get<std::string>())) {
    return respond(FieldError("name", "must be [a-z0-9][a-z0-9_.-]*, at most 253 bytes"));
  }
  const Json& slots = body->value("slots", Json(nullptr));
  if (!slots.is_number_integer() || slots.get<int64_t>() < 1 || slots.get<int64_t>() > 1'000'000) {
    return respond(FieldError("slots", "must be an integer from 1 to 1000000"));
  }
  PoolRecord pool;
  pool.ns = call.principal.ns;
  pool.name = name.get<std::string>();
  pool.slots = static_cast<int>(slots.get<int64_t>());
  ctx.engine->Post([respond, pool](Engine& engine) {
    const bool existed = [&] {
      for (const PoolUsage& u : engine.Pools(pool.ns)) {
        if (u.pool.name == pool.name) return true;
      }
      return false;
    }();
    if (Status s = engine.SetPool(pool); !s.ok()) return respond(ErrorResponse(s));
    engine.WhenDurable([respond, existed, &engine, pool](const Status& durable) {
      if (!durable.ok()) return respond(ErrorResponse(durable));
      for (const PoolUsage& u : engine.Pools(pool.ns)) {
        if (u.pool.name == pool.name)
          return respond(JsonResponse(existed ? 200 : 201, PoolJson(u)));
      }
      respond(ErrorResponse(Status(errc::kNotFound, "pool '" + pool.name + "' was deleted")));
    });
  });
}

void Delete(ApiContext& ctx, const Call& call, const Responder& respond) {
  const std::string ns = call.principal.ns;
  const std::string name = call.Param("name");
  if (!IsPoolName(name)) return respond(FieldError("name", "not a pool name"));
  if (Status s = ctx.store->DeletePool(ns, name); !s.ok() && s.code() != errc::kNotFound) {
    return respond(ErrorResponse(s));
  }
  ctx.engine->Post([respond, ns, name](Engine& engine) {
    if (Status s = engine.RemovePool(ns, name); !s.ok()) return respond(ErrorResponse(s));
    respond(JsonResponse(200, {{"deleted", name}}));
  });
}

}  // namespace
}  // namespace pools_api

void AddPoolRoutes(Router& router, ApiContext& ctx) {
  using namespace pools_api;
  router.Add("GET", "/api/v1/pools", Scope::kRead,
             "Pools of the namespace: slots, slots in use, their holders (execution/step) and "
             "the steps waiting",
             [&ctx](const Call& call, Responder respond) { List(ctx, call, respond); });
  router.Add("POST", "/api/v1/pools", Scope::kAdmin,
             "Create or resize a pool {name, slots} (201 created, 200 resized); a bigger pool "
             "lets waiting steps in at once",
             [&ctx](const Call& call, Responder respond) { Put(ctx, call, respond); });
  router.Add("DELETE", "/api/v1/pools/{name}", Scope::kAdmin,
             "Delete a pool: its holders keep their slots until they end; steps waiting for it "
             "fail NOT_FOUND",
             [&ctx](const Call& call, Responder respond) { Delete(ctx, call, respond); });
}

}  // namespace baton::server
