// /api/v1/triggers (event triggers: a finished execution of one workflow starts another)
// and /api/v1/deliveries (the outbox: notifications and trigger starts, with their
// delivery state). The logic is in triggers/follow_ups.h and triggers/deliverer.h.
#include "expr/template.h"
#include "server/api.h"
#include "server/triggers/deliverer.h"
#include "server/triggers/follow_ups.h"
#include "server/views.h"

namespace baton::server {
// A namespace of its own, so that unity builds can compile it with the other routes.
namespace triggers_api {
namespace {

Json TriggerJson(const TriggerRecord& t) {
  return {{"id", t.id},
          {"namespace", t.ns},
          {"name", t.name},
          {"source", t.source},
          {"on", t.on},
          {"workflow", t.workflow},
          {"version", t.version == 0 ? Json("latest") : Json(t.version)},
          {"input", t.input},
          {"created_at", IsoTime(t.created_at)}};
}

Json DeliveryJson(const DeliveryRecord& d) {
  auto time = [](TimeMs t) { return t ? Json(IsoTime(t)) : Json(nullptr); };
  Json j = {{"id", d.id},
            {"namespace", d.ns},
            {"execution_id", d.execution_id},
            {"event", d.event},
            {"kind", d.kind},
            {"status", ToString(d.status)},
            {"attempts", d.attempts},
            {"next_attempt_at",
             d.status == DeliveryStatus::kPending ? time(d.next_attempt_at) : Json(nullptr)},
            {"last_error", d.last_error},
            {"payload", d.payload},
            {"created_at", time(d.created_at)},
            {"updated_at", time(d.updated_at)}};
  if (d.kind == "trigger") {
    j["trigger_id"] = d.target;
    j["started_execution_id"] = d.result.empty() ? Json(nullptr) : Json(d.result);
  } else {
    j["url"] = d.target;
  }
  return j;
}

// Trigger inputs may only refer to the finished execution.
Status CheckTriggerInput(const Json& input) {
  std::vector<expr::Path> refs;
  if (Status s = expr::CollectReferences(input, &refs); !s.ok()) return s;
  for (const expr::Path& p : refs) {
    if (p.root() != "source") {
      return Status(errc::kValidation, "'" + p.text +
                                           "' is not available: templates of a trigger's input "
                                           "may refer to source.* (the finished execution)");
    }
  }
  return Status::Ok();
}

void Create(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto body = ParseJsonBody(*call.request);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  if (auto bad = UnknownField(*body, {"name", "source", "on", "workflow", "version", "input"})) {
    return respond(std::move(*bad));
  }
  TriggerRecord t;
  t.ns = call.principal.ns;
  for (auto [name, out] : {std::pair{"name", &t.name}, std::pair{"source", &t.source},
                           std::pair{"workflow", &t.workflow}}) {
    const Json& v = body->value(name, Json());
    if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().size() > 200) {
      return respond(FieldError(name, "a string of 1 to 200 characters is required"));
    }
    *out = v.get<std::string>();
  }
  const Json& on = body->value("on", Json());
  if (!on.is_array()) {
    return respond(FieldError("on", "a list of statuses is required, e.g. [\"completed\"]"));
  }
  for (const Json& s : on) {
    if (!s.is_string()) return respond(FieldError("on", "statuses must be strings"));
    t.on.push_back(s.get<std::string>());
  }
  auto version = VersionField(*body);
  if (!version.ok()) return respond(FieldError("version", version.status().message()));
  t.version = *version;
  t.input = body->value("input", Json::object());
  if (!t.input.is_object()) return respond(FieldError("input", "must be an object"));
  if (Status s = CheckTriggerInput(t.input); !s.ok()) {
    return respond(FieldError("input", s.message()));
  }
  for (auto [field, name, v] :
       {std::tuple{"source", t.source, 0}, std::tuple{"workflow", t.workflow, t.version}}) {
    if (auto wf = ctx.store->GetWorkflow(t.ns, name, v); !wf.ok()) {
      return respond(ErrorResponse(wf.status(), {{"field", field}}));
    }
  }
  auto existing = ctx.store->ListTriggers(t.ns);
  if (!existing.ok()) return respond(ErrorResponse(existing.status()));
  if (Status s = ValidateTrigger(t, *existing); !s.ok()) {
    const std::string& m = s.message();
    std::string field = m.substr(m.find('\'') + 1);
    return respond(FieldError(field.substr(0, field.find('\'')), m.substr(m.find(": ") + 2)));
  }
  t.id = "trg_" + RandomHex(6);
  t.created_at = ctx.engine->clock().Now();
  WriteBatch b;
  b.triggers.push_back(t);
  if (Status s = ctx.store->Commit(b); !s.ok()) return respond(ErrorResponse(s));
  ctx.engine->Post([&ctx, t, respond](Engine&) {
    ctx.follow_ups->PutTrigger(t);
    respond(JsonResponse(201, TriggerJson(t)));
  });
}

Result<DeliveryRecord> VisibleDelivery(ApiContext& ctx, const Call& call) {
  auto d = ctx.store->GetDelivery(call.Param("id"));
  if ((d.ok() && d->ns != call.principal.ns) || (!d.ok() && d.status().code() == errc::kNotFound)) {
    return Status(errc::kNotFound, "no delivery '" + call.Param("id") + "'");
  }
  return d;
}

void ListDeliveries(ApiContext& ctx, const Call& call, const Responder& respond) {
  DeliveryFilter f;
  f.ns = call.principal.ns;
  f.execution_id = call.request->Query("execution");
  if (std::string status = call.request->Query("status"); !status.empty()) {
    f.status = ParseDeliveryStatus(status);
    if (!f.status) {
      return respond(
          ErrorResponse(400, errc::kValidation,
                        "status must be pending, delivered or failed, got '" + status + "'",
                        {{"field", "status"}}));
    }
  }
  auto limit = PageLimit(*call.request, 100, ctx.limits.max_page);
  if (!limit.ok()) return respond(ErrorResponse(limit.status()));
  f.limit = *limit;
  auto all = ctx.store->ListDeliveries(f);
  if (!all.ok()) return respond(ErrorResponse(all.status()));
  Json items = Json::array();
  for (const auto& d : *all) items.push_back(DeliveryJson(d));
  respond(JsonResponse(200, {{"deliveries", items}}));
}

}  // namespace
}  // namespace triggers_api

void AddTriggerRoutes(Router& router, ApiContext& ctx) {
  using namespace triggers_api;
  router.Add("POST", "/api/v1/triggers", Scope::kWrite,
             "Create an event trigger: {name, source, on: [statuses], workflow, version?, "
             "input?} (input templates see source.*: the finished execution)",
             [&ctx](const Call& call, Responder respond) { Create(ctx, call, respond); });
  router.Add("GET", "/api/v1/triggers", Scope::kRead, "List event triggers",
             [&ctx](const Call& call, Responder respond) {
               auto all = ctx.store->ListTriggers(call.principal.ns);
               if (!all.ok()) return respond(ErrorResponse(all.status()));
               Json items = Json::array();
               for (const auto& t : *all) items.push_back(TriggerJson(t));
               respond(JsonResponse(200, {{"triggers", items}}));
             });
  router.Add("DELETE", "/api/v1/triggers/{id}", Scope::kWrite, "Delete an event trigger",
             [&ctx](const Call& call, Responder respond) {
               const std::string id = call.Param("id");
               Status s = ctx.store->DeleteTrigger(call.principal.ns, id);
               if (s.code() == errc::kNotFound)
                 s = Status(errc::kNotFound, "no trigger '" + id + "'");
               if (!s.ok()) return respond(ErrorResponse(s));
               ctx.engine->Post([&ctx, id, respond](Engine&) {
                 ctx.follow_ups->RemoveTrigger(id);
                 respond(NoContent());
               });
             });
  router.Add("GET", "/api/v1/deliveries", Scope::kRead,
             "Notification and trigger deliveries (?execution=ID&status=pending|delivered|"
             "failed&limit=N), oldest first",
             [&ctx](const Call& call, Responder respond) { ListDeliveries(ctx, call, respond); });
  router.Add("GET", "/api/v1/deliveries/{id}", Scope::kRead, "A delivery with its last error",
             [&ctx](const Call& call, Responder respond) {
               auto d = VisibleDelivery(ctx, call);
               if (!d.ok()) return respond(ErrorResponse(d.status()));
               respond(JsonResponse(200, DeliveryJson(*d)));
             });
  router.Add("POST", "/api/v1/deliveries/{id}/redeliver", Scope::kWrite,
             "Try a failed delivery again (its attempts start over)",
             [&ctx](const Call& call, Responder respond) {
               auto d = VisibleDelivery(ctx, call);
               if (!d.ok()) return respond(ErrorResponse(d.status()));
               ctx.engine->Post([&ctx, record = std::move(d.value()), respond](Engine&) {
                 auto again = ctx.deliverer->Redeliver(record);
                 if (!again.ok()) return respond(ErrorResponse(again.status()));
                 respond(JsonResponse(202, DeliveryJson(*again)));
               });
             });
}

}  // namespace baton::server
