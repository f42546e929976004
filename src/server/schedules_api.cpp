// /api/v1/schedules: cron triggers (the scheduler is in triggers/scheduler.h).
#include "server/api.h"
#include "server/triggers/scheduler.h"
#include "server/views.h"

namespace baton::server {
// A namespace of its own, so that unity builds can compile it with the other routes.
namespace schedules_api {
namespace {

Json ScheduleJson(const ScheduleRecord& r) {
  return {{"id", r.id},
          {"namespace", r.ns},
          {"name", r.name},
          {"workflow", r.workflow},
          {"version", r.version == 0 ? Json("latest") : Json(r.version)},
          {"cron", r.cron},
          {"timezone", r.timezone},
          {"input", r.input},
          {"overlap", r.overlap},
          {"catchup", r.catchup},
          {"next_fire_at", r.next_fire_at ? Json(IsoTime(r.next_fire_at)) : Json(nullptr)},
          {"last_fire_at", r.last_fire_at ? Json(IsoTime(r.last_fire_at)) : Json(nullptr)},
          {"last_execution_id",
           r.last_execution_id.empty() ? Json(nullptr) : Json(r.last_execution_id)},
          {"created_at", IsoTime(r.created_at)}};
}

void Create(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto body = ParseJsonBody(*call.request);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  static const std::vector<std::string> kFields = {"name",     "workflow", "version", "cron",
                                                   "timezone", "input",    "overlap", "catchup"};
  if (auto bad = UnknownField(*body, kFields)) return respond(std::move(*bad));
  ScheduleRecord r;
  r.ns = call.principal.ns;
  for (auto [name, out, required] :
       {std::tuple{"name", &r.name, true}, std::tuple{"workflow", &r.workflow, true},
        std::tuple{"cron", &r.cron, true}, std::tuple{"timezone", &r.timezone, false},
        std::tuple{"overlap", &r.overlap, false}, std::tuple{"catchup", &r.catchup, false}}) {
    if (!body->contains(name)) {
      if (required) return respond(FieldError(name, "is required"));
      continue;
    }
    const Json& v = (*body)[name];
    if (!v.is_string() || v.get<std::string>().size() > 200) {
      return respond(FieldError(name, "must be a string of at most 200 characters"));
    }
    *out = v.get<std::string>();
  }
  auto version = VersionField(*body);
  if (!version.ok()) return respond(FieldError("version", version.status().message()));
  r.version = *version;
  r.input = body->value("input", Json::object());
  if (!r.input.is_object()) return respond(FieldError("input", "must be an object"));
  if (r.input.dump().size() > ctx.limits.max_payload_bytes) {
    return respond(ErrorResponse(413, "PAYLOAD_TOO_LARGE", "input exceeds the payload limit",
                                 {{"field", "input"}, {"limit", ctx.limits.max_payload_bytes}}));
  }
  auto parsed = ParseSchedule(r);
  if (!parsed.ok()) {
    const std::string& m = parsed.status().message();
    std::string field = m.substr(m.find('\'') + 1);
    field = field.substr(0, field.find('\''));
    return respond(ErrorResponse(400, errc::kValidation, m, {{"field", field}}));
  }
  if (auto wf = ctx.store->GetWorkflow(r.ns, r.workflow, r.version); !wf.ok()) {
    return respond(ErrorResponse(wf.status(), {{"field", "workflow"}}));
  }
  r.id = "sch_" + RandomHex(6);
  r.created_at = ctx.engine->clock().Now();
  ctx.engine->Post([&ctx, r, respond](Engine&) mutable {
    Status s = ctx.scheduler->Put(r);
    if (!s.ok()) return respond(ErrorResponse(s));
    respond(JsonResponse(201, ScheduleJson(*ctx.scheduler->Get(r.id))));
  });
}

Result<ScheduleRecord> Find(ApiContext& ctx, const Call& call) {
  auto all = ctx.store->ListSchedules(call.principal.ns);
  if (!all.ok()) return all.status();
  for (ScheduleRecord& r : *all) {
    if (r.id == call.Param("id")) return std::move(r);
  }
  return Status(errc::kNotFound, "no schedule '" + call.Param("id") + "'");
}

}  // namespace
}  // namespace schedules_api

void AddScheduleRoutes(Router& router, ApiContext& ctx) {
  using namespace schedules_api;
  router.Add("POST", "/api/v1/schedules", Scope::kWrite,
             "Create a cron schedule: {name, workflow, version?, cron, timezone?, input?, "
             "overlap?: skip|allow|cancel_old, catchup?: skip|once}",
             [&ctx](const Call& call, Responder respond) { Create(ctx, call, respond); });
  router.Add("GET", "/api/v1/schedules", Scope::kRead, "List schedules with their next fire",
             [&ctx](const Call& call, Responder respond) {
               auto all = ctx.store->ListSchedules(call.principal.ns);
               if (!all.ok()) return respond(ErrorResponse(all.status()));
               Json items = Json::array();
               for (const auto& r : *all) items.push_back(ScheduleJson(r));
               respond(JsonResponse(200, {{"schedules", items}}));
             });
  router.Add("GET", "/api/v1/schedules/{id}", Scope::kRead, "A schedule",
             [&ctx](const Call& call, Responder respond) {
               auto r = Find(ctx, call);
               if (!r.ok()) return respond(ErrorResponse(r.status()));
               respond(JsonResponse(200, ScheduleJson(*r)));
             });
  router.Add("DELETE", "/api/v1/schedules/{id}", Scope::kWrite,
             "Delete a schedule (running executions it started go on)",
             [&ctx](const Call& call, Responder respond) {
               const std::string id = call.Param("id");
               Status s = ctx.store->DeleteSchedule(call.principal.ns, id);
               if (!s.ok()) return respond(ErrorResponse(s));
               ctx.engine->Post([&ctx, id, respond](Engine&) {
                 ctx.scheduler->Remove(id);
                 respond(NoContent());
               });
             });
}

}  // namespace baton::server
