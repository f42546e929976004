// /api/v1/hooks: webhooks. Managing them takes a token (write scope); calling one,
// `POST /api/v1/hooks/{name}`, takes the hook's own signature instead:
//
//   X-Baton-Timestamp: <Unix seconds>, within 300 s of the server's clock (no replays)
//   X-Baton-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>", keyed by
//                      the secret>
//   X-Baton-Delivery:  <optional id>  a repeated id returns the first execution
//
// The body (a JSON object, or empty for {}) is the execution's input, checked against
// the workflow's declared inputs like a submit.
#include "server/api.h"
#include "server/submitter.h"
#include "server/views.h"

#include <chrono>

namespace baton::server {
// A namespace of its own, so that unity builds can compile it with the other routes.
namespace hooks_api {
namespace {

constexpr const char* kSignatureHeader = "x-baton-signature";
constexpr const char* kDeliveryHeader = "x-baton-delivery";
constexpr const char* kTimestampHeader = "x-baton-timestamp";
// How far a signed timestamp may be from the server's clock: a captured request can be
// replayed only within this window (and X-Baton-Delivery deduplicates inside it).
constexpr int64_t kReplayToleranceS = 300;

Json HookJson(const HookRecord& h) {
  return {{"name", h.name},
          {"namespace", h.ns},
          {"workflow", h.workflow},
          {"version", h.version == 0 ? Json("latest") : Json(h.version)},
          {"url", "/api/v1/hooks/" + h.name},
          {"created_at", IsoTime(h.created_at)}};
}

void Create(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto body = ParseJsonBody(*call.request);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  if (auto bad = UnknownField(*body, {"name", "workflow", "version", "secret"})) {
    return respond(std::move(*bad));
  }
  HookRecord h;
  h.ns = call.principal.ns;
  const Json& name = body->value("name", Json());
  if (!name.is_string() || !IsSimpleName(name.get<std::string>(), 100)) {
    return respond(FieldError(
        "name", "1-100 letters, digits, '-', '_' or '.', not only dots (it is the URL)"));
  }
  h.name = name.get<std::string>();
  const Json& workflow = body->value("workflow", Json());
  if (!workflow.is_string() || workflow.get<std::string>().empty()) {
    return respond(FieldError("workflow", "the name of a workflow is required"));
  }
  h.workflow = workflow.get<std::string>();
  auto version = VersionField(*body);
  if (!version.ok()) return respond(FieldError("version", version.status().message()));
  h.version = *version;
  if (body->contains("secret")) {
    const Json& secret = (*body)["secret"];
    if (!secret.is_string() || secret.get<std::string>().size() < 16 ||
        secret.get<std::string>().size() > 200) {
      return respond(FieldError("secret", "must be a string of 16 to 200 characters"));
    }
    h.secret = secret.get<std::string>();
  } else {
    h.secret = "whsec_" + RandomHex(24);
  }
  if (auto wf = ctx.store->GetWorkflow(h.ns, h.workflow, h.version); !wf.ok()) {
    return respond(ErrorResponse(wf.status(), {{"field", "workflow"}}));
  }
  // Names are global (they are URLs): one of another namespace is taken all the same.
  if (auto existing = ctx.store->GetHook(h.name); existing.ok()) {
    return respond(ErrorResponse(409, errc::kConflict, "a hook named '" + h.name + "' exists",
                                 {{"field", "name"}}));
  }
  h.created_at = ctx.engine->clock().Now();
  WriteBatch b;
  b.hooks.push_back(h);
  if (Status s = ctx.store->Commit(b); !s.ok()) return respond(ErrorResponse(s));
  Json out = HookJson(h);
  out["secret"] = h.secret;  // shown once, at creation
  HttpResponse r = JsonResponse(201, out);
  r.headers.emplace_back("Location", "/api/v1/hooks/" + h.name);
  respond(std::move(r));
}

// A hook of the caller's namespace; others are 404 like names that do not exist.
Result<HookRecord> Visible(ApiContext& ctx, const Call& call) {
  auto h = ctx.store->GetHook(call.Param("name"));
  if ((h.ok() && h->ns != call.principal.ns) || (!h.ok() && h.status().code() == errc::kNotFound)) {
    return Status(errc::kNotFound, "no hook '" + call.Param("name") + "'");
  }
  return h;
}

void Deliver(ApiContext& ctx, const Call& call, const Responder& respond) {
  const HttpRequest& req = *call.request;
  auto hook = ctx.store->GetHook(call.Param("name"));
  if (!hook.ok()) {
    if (hook.status().code() == errc::kNotFound) {
      return respond(ErrorResponse(404, errc::kNotFound, "no hook '" + call.Param("name") + "'"));
    }
    return respond(ErrorResponse(hook.status()));
  }
  const std::string& signature = req.Header(kSignatureHeader);
  if (signature.empty()) {
    return respond(ErrorResponse(
        401, "UNAUTHORIZED",
        "missing X-Baton-Signature header: sha256=<hex HMAC-SHA256 of the body with the "
        "hook's secret>"));
  }
  // Signed: "<X-Baton-Timestamp>.<body>", as Stripe does, so the time cannot be changed
  // without the secret and an old request cannot be replayed later.
  const std::string& stamp = req.Header(kTimestampHeader);
  int64_t sent_s = 0;
  if (stamp.empty() || stamp.size() > 12 ||
      stamp.find_first_not_of("0123456789") != std::string::npos) {
    return respond(ErrorResponse(
        401, "UNAUTHORIZED",
        "missing or malformed X-Baton-Timestamp header: the Unix time in seconds, signed "
        "with the body as \"<timestamp>.<body>\""));
  }
  sent_s = std::stoll(stamp);
  const std::string expected = "sha256=" + HmacSha256Hex(hook->secret, stamp + "." + req.body);
  if (!SafeEqual(signature, expected)) {
    return respond(ErrorResponse(401, "UNAUTHORIZED",
                                 "X-Baton-Signature does not match \"<timestamp>.<body>\" "
                                 "signed with the hook's secret"));
  }
  // The caller's clock is a real one: compare with the real time, not the engine's.
  const int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  if (sent_s < now_s - kReplayToleranceS || sent_s > now_s + kReplayToleranceS) {
    return respond(ErrorResponse(
        401, "UNAUTHORIZED",
        "X-Baton-Timestamp is " + std::to_string(now_s - sent_s) +
            " s from the server's clock; a signed call is accepted within " +
            std::to_string(kReplayToleranceS) + " s (a replay, or a clock out of sync?)",
        {{"tolerance_s", kReplayToleranceS}, {"server_time", now_s}}));
  }
  if (req.body.size() > ctx.limits.max_payload_bytes) {
    return respond(ErrorResponse(
        413, "PAYLOAD_TOO_LARGE",
        "the body is " + std::to_string(req.body.size()) + " bytes; a hook's input may be " +
            std::to_string(ctx.limits.max_payload_bytes) + " bytes (server --max-payload)",
        {{"limit", ctx.limits.max_payload_bytes}}));
  }
  Json input = Json::object();
  if (!req.body.empty()) {
    auto parsed = ParseJsonBody(req);
    if (!parsed.ok()) return respond(ErrorResponse(parsed.status()));
    input = std::move(parsed.value());
  }
  std::string key;
  if (const std::string& delivery = req.Header(kDeliveryHeader); !delivery.empty()) {
    if (delivery.size() > 200) {
      return respond(
          ErrorResponse(400, errc::kValidation, "X-Baton-Delivery is longer than 200 characters"));
    }
    key = "hook/" + hook->name + "/" + delivery;
  }
  ctx.submitter->SubmitStored(hook->ns, hook->workflow, hook->version, std::move(input), key,
                              [&ctx, respond, name = hook->name](Result<SubmitOutcome> out) {
                                if (!out.ok()) return respond(ErrorResponse(out.status()));
                                auto e = ctx.store->GetExecution(out->execution_id);
                                if (!e.ok()) return respond(ErrorResponse(e.status()));
                                Json body = ExecutionSummaryJson(*e);
                                body["created"] = out->created;
                                body["hook"] = name;
                                HttpResponse r = JsonResponse(out->created ? 202 : 200, body);
                                r.headers.emplace_back("Location",
                                                       "/api/v1/executions/" + out->execution_id);
                                respond(std::move(r));
                              });
}

}  // namespace
}  // namespace hooks_api

void AddHookRoutes(Router& router, ApiContext& ctx) {
  using namespace hooks_api;
  router.Add("POST", "/api/v1/hooks", Scope::kWrite,
             "Create a webhook: {name, workflow, version?, secret?}; the answer shows the "
             "secret once",
             [&ctx](const Call& call, Responder respond) { Create(ctx, call, respond); });
  router.Add("GET", "/api/v1/hooks", Scope::kRead, "List webhooks (without secrets)",
             [&ctx](const Call& call, Responder respond) {
               auto all = ctx.store->ListHooks(call.principal.ns);
               if (!all.ok()) return respond(ErrorResponse(all.status()));
               Json items = Json::array();
               for (const auto& h : *all) items.push_back(HookJson(h));
               respond(JsonResponse(200, {{"hooks", items}}));
             });
  router.Add("GET", "/api/v1/hooks/{name}", Scope::kRead, "A webhook (without its secret)",
             [&ctx](const Call& call, Responder respond) {
               auto h = Visible(ctx, call);
               if (!h.ok()) return respond(ErrorResponse(h.status()));
               respond(JsonResponse(200, HookJson(*h)));
             });
  router.Add("DELETE", "/api/v1/hooks/{name}", Scope::kWrite, "Delete a webhook",
             [&ctx](const Call& call, Responder respond) {
               Status s = ctx.store->DeleteHook(call.principal.ns, call.Param("name"));
               if (s.code() == errc::kNotFound) {
                 s = Status(errc::kNotFound, "no hook '" + call.Param("name") + "'");
               }
               if (!s.ok()) return respond(ErrorResponse(s));
               respond(NoContent());
             });
  router.Add("POST", "/api/v1/hooks/{name}", Scope::kPublic,
             "Call a webhook: the JSON body is the input; signed with X-Baton-Signature: "
             "sha256=HMAC-SHA256(secret, body) in hex; X-Baton-Delivery: ID deduplicates",
             [&ctx](const Call& call, Responder respond) { Deliver(ctx, call, respond); });
}

}  // namespace baton::server
