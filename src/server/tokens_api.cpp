// /api/v1/tokens: create, list and revoke bearer tokens (admin scope).
#include "server/api.h"
#include "server/views.h"

namespace baton::server {
// A namespace of its own, so that unity builds can compile it with the other routes.
namespace tokens_api {
namespace {

Json TokenJson(const TokenRecord& t) {
  return {{"id", t.id},
          {"namespace", t.ns},
          {"name", t.name},
          {"scopes", t.scopes},
          {"created_at", IsoTime(t.created_at)},
          {"revoked_at", t.revoked_at ? Json(IsoTime(t.revoked_at)) : Json(nullptr)}};
}

void Create(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto body = ParseJsonBody(*call.request);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  for (const auto& [key, value] : body->items()) {
    if (key != "name" && key != "scopes" && key != "namespace") {
      return respond(FieldError(key, "unknown field (valid: name, scopes, namespace)"));
    }
  }
  const Json& name = body->value("name", Json(""));
  if (!name.is_string() || name.get<std::string>().empty() ||
      name.get<std::string>().size() > 200) {
    return respond(FieldError("name", "a description of 1 to 200 characters is required"));
  }
  const Json& scopes = body->value("scopes", Json());
  if (!scopes.is_array() || scopes.empty()) {
    return respond(FieldError("scopes", "a list of one or more of admin, write, read, worker"));
  }
  std::vector<Scope> parsed;
  for (const Json& s : scopes) {
    auto scope = s.is_string() ? ParseScope(s.get<std::string>()) : std::nullopt;
    if (!scope) return respond(FieldError("scopes", "unknown scope " + s.dump()));
    parsed.push_back(*scope);
  }
  std::string ns = call.principal.ns;
  if (body->contains("namespace")) {
    const Json& n = (*body)["namespace"];
    if (!n.is_string() || !IsSimpleName(n.get<std::string>(), 64)) {
      return respond(
          FieldError("namespace", "1 to 64 letters, digits, '-', '_' or '.', not only dots"));
    }
    ns = n.get<std::string>();
  }
  if (!call.principal.MayAdminister(ns)) {
    return respond(ErrorResponse(403, "FORBIDDEN",
                                 "only admins of the default namespace create tokens for "
                                 "another namespace"));
  }
  auto issued = ctx.auth->Create(ns, name.get<std::string>(), parsed);
  if (!issued.ok()) return respond(ErrorResponse(issued.status()));
  Json out = TokenJson(issued->record);
  out["token"] = issued->secret;
  respond(JsonResponse(201, out));
}

}  // namespace
}  // namespace tokens_api

void AddTokenRoutes(Router& router, ApiContext& ctx) {
  using namespace tokens_api;
  router.Add("POST", "/api/v1/tokens", Scope::kAdmin,
             "Create a token: {name, scopes, namespace?}; the secret is shown once",
             [&ctx](const Call& call, Responder respond) { Create(ctx, call, respond); });
  router.Add("GET", "/api/v1/tokens", Scope::kAdmin,
             "List the tokens this admin manages (never their secrets)",
             [&ctx](const Call& call, Responder respond) {
               auto list = ctx.store->ListTokens("");
               if (!list.ok()) return respond(ErrorResponse(list.status()));
               Json items = Json::array();
               for (const auto& t : *list) {
                 if (call.principal.MayAdminister(t.ns)) items.push_back(TokenJson(t));
               }
               respond(JsonResponse(200, {{"tokens", items}}));
             });
  router.Add("DELETE", "/api/v1/tokens/{id}", Scope::kAdmin, "Revoke a token at once",
             [&ctx](const Call& call, Responder respond) {
               Status s = ctx.auth->Revoke(call.principal, call.Param("id"));
               if (!s.ok()) return respond(ErrorResponse(s));
               respond(NoContent());
             });
}

}  // namespace baton::server
