// /api/v1/workflows: definitions and their versions, per namespace.
#include "server/api.h"
#include "server/views.h"
#include "server/workflow_cache.h"

#include <baton/workflow.h>

namespace baton::server {
// A namespace of its own, so that unity builds can compile it with the other routes.
namespace workflows_api {
namespace {

Json DiagnosticsJson(const ParseOutcome& parsed) {
  Json out = Json::array();
  for (const Diagnostic& d : parsed.diagnostics) {
    Json j = {{"message", d.message}};
    if (d.line > 0) j["line"] = d.line;
    if (!d.step.empty()) j["step"] = d.step;
    if (!d.field.empty()) j["field"] = d.field;
    out.push_back(std::move(j));
  }
  return out;
}

int VersionParam(const HttpRequest& req, Status* error) {
  std::string v = req.Query("version");
  if (v.empty()) return 0;
  if (v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos || v == "0") {
    *error = Status(errc::kInvalidArgument, "version must be a positive integer");
    return 0;
  }
  return std::stoi(v);
}

void Create(ApiContext& ctx, const Call& call, const Responder& respond) {
  const HttpRequest& req = *call.request;
  if (req.body.empty()) {
    return respond(
        ErrorResponse(400, errc::kInvalidArgument,
                      "the request body must hold a workflow definition (YAML or JSON)"));
  }
  ParseOutcome parsed = ParseWorkflow(req.body, "request body");
  if (!parsed.ok()) {
    return respond(ErrorResponse(400, errc::kValidation, parsed.ToStatus().message(),
                                 {{"diagnostics", DiagnosticsJson(parsed)}}));
  }
  const WorkflowDef& def = *parsed.workflow;
  const std::string& ns = call.principal.ns;
  std::lock_guard lock(ctx.workflow_versions);
  auto latest = ctx.store->GetWorkflow(ns, def.name, 0);
  if (!latest.ok() && latest.status().code() != errc::kNotFound) {
    return respond(ErrorResponse(latest.status()));
  }
  // The catalog keeps the document as Json (a stored record's view shows it).
  Json definition = Json::parse(*def.source);
  if (latest.ok() && latest->definition == definition) {
    Json body = WorkflowJson(*latest, false);
    body["created"] = false;
    return respond(JsonResponse(200, body));
  }
  WorkflowRecord rec;
  rec.ns = ns;
  rec.name = def.name;
  rec.version = latest.ok() ? latest->version + 1 : 1;
  rec.definition = std::move(definition);
  rec.created_at = ctx.engine->clock().Now();
  WriteBatch b;
  b.workflows.push_back(rec);
  // Forgotten whatever the outcome: a write that failed late may still be in the store.
  const Status committed = ctx.store->Commit(b);
  ctx.workflows->Forget(ns, rec.name);
  if (!committed.ok()) return respond(ErrorResponse(committed));
  Json body = WorkflowJson(rec, false);
  body["created"] = true;
  HttpResponse r = JsonResponse(201, body);
  r.headers.emplace_back(
      "Location", "/api/v1/workflows/" + rec.name + "?version=" + std::to_string(rec.version));
  respond(std::move(r));
}

}  // namespace
}  // namespace workflows_api

void AddWorkflowRoutes(Router& router, ApiContext& ctx) {
  using namespace workflows_api;
  router.Add("POST", "/api/v1/workflows", Scope::kWrite,
             "Create a workflow, or a new version of one (YAML or JSON body)",
             [&ctx](const Call& call, Responder respond) { Create(ctx, call, respond); });
  router.Add("GET", "/api/v1/workflows", Scope::kRead, "List workflows (latest versions)",
             [&ctx](const Call& call, Responder respond) {
               auto list = ctx.store->ListWorkflows(call.principal.ns, "");
               if (!list.ok()) return respond(ErrorResponse(list.status()));
               Json items = Json::array();
               for (const auto& w : *list) items.push_back(WorkflowJson(w, false));
               respond(JsonResponse(200, {{"workflows", items}}));
             });
  router.Add("GET", "/api/v1/workflows/{name}", Scope::kRead,
             "Get a workflow's latest definition, or ?version=N",
             [&ctx](const Call& call, Responder respond) {
               Status bad;
               int version = VersionParam(*call.request, &bad);
               if (!bad.ok()) return respond(ErrorResponse(bad));
               auto w = ctx.store->GetWorkflow(call.principal.ns, call.Param("name"), version);
               if (!w.ok()) return respond(ErrorResponse(w.status()));
               respond(JsonResponse(200, WorkflowJson(*w, true)));
             });
  router.Add(
      "GET", "/api/v1/workflows/{name}/versions", Scope::kRead,
      "Every version of a workflow, newest first", [&ctx](const Call& call, Responder respond) {
        auto list = ctx.store->ListWorkflows(call.principal.ns, call.Param("name"));
        if (!list.ok()) return respond(ErrorResponse(list.status()));
        if (list->empty()) {
          return respond(ErrorResponse(404, errc::kNotFound, "workflow " + call.Param("name")));
        }
        Json items = Json::array();
        for (const auto& w : *list) items.push_back(WorkflowJson(w, false));
        respond(JsonResponse(200, {{"versions", items}}));
      });
  router.Add("DELETE", "/api/v1/workflows/{name}", Scope::kWrite,
             "Delete every version (running executions keep their snapshot)",
             [&ctx](const Call& call, Responder respond) {
               std::lock_guard lock(ctx.workflow_versions);
               Status s = ctx.store->DeleteWorkflow(call.principal.ns, call.Param("name"));
               ctx.workflows->Forget(call.principal.ns, call.Param("name"));
               if (!s.ok()) return respond(ErrorResponse(s));
               respond(NoContent());
             });
}

}  // namespace baton::server
