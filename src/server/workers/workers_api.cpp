// The coordinator's REST API (seed 003, under /api/v1): workers (list, get, delete =
// drain), assignments (by id, by worker or execution), reassignments (history) and the
// coordinator's health. Live state comes from the coordinator on the engine thread;
// history from the store. Field names are camelCase, as in the seed and the protocol.
#include "server/api.h"
#include "server/views.h"
#include "server/workers/workers_views.h"
#include "workers/coordinator.h"

#include <set>

namespace baton::server {
namespace {

// Runs `f` on the engine thread and answers with what it returns.
void OnEngine(ApiContext& ctx, Responder respond, std::function<HttpResponse()> f) {
  ctx.engine->Post([respond = std::move(respond), f = std::move(f)](Engine&) { respond(f()); });
}

// Every worker the namespace knows: live ones from the registry, then the stored ones
// this process has not seen (OFFLINE until they register again).
Json ListWorkers(ApiContext& ctx, const std::string& ns, const std::string& only) {
  Json out = Json::array();
  std::set<std::string> seen;
  for (const workers::WorkerEntry* w : ctx.coordinator->registry().List(ns)) {
    seen.insert(w->id);
    if (!only.empty() && w->id != only) continue;
    Json j = WorkerJson(*w);
    if (w->local && !ns.empty()) {
      // The local worker serves every namespace: a caller sees its load, not the others'
      // assignments.
      Json mine = Json::array();
      for (const AssignmentRecord& a : ctx.coordinator->Active(ns, w->id)) {
        mine.push_back(a.dispatch_id);
      }
      j["assignments"] = std::move(mine);
    }
    out.push_back(std::move(j));
  }
  if (auto stored = ctx.store->ListWorkers(ns); stored.ok()) {
    for (WorkerRecord& r : *stored) {
      if (seen.count(r.id) || (!only.empty() && r.id != only)) continue;
      r.status = "OFFLINE";
      out.push_back(WorkerJson(r));
    }
  }
  return out;
}

void AddAssignmentRoutes(Router& router, ApiContext& ctx) {
  router.Add(
      "GET", "/api/v1/assignments", Scope::kRead,
      "Assignments: ?worker=ID (or workerId), ?execution=ID, ?status=active|all, ?limit=N",
      [&ctx](const Call& call, Responder respond) {
        const auto& q = call.request->query;
        auto get = [&](const char* k) {
          auto it = q.find(k);
          return it == q.end() ? std::string() : it->second;
        };
        AssignmentFilter f;
        f.ns = call.principal.ns;
        f.worker_id = get("worker").empty() ? get("workerId") : get("worker");
        f.execution_id = get("execution");
        const std::string status = get("status").empty() ? "active" : get("status");
        if (status != "active" && status != "all") {
          return respond(FieldError("status", "expected active or all, got '" + status + "'"));
        }
        f.active_only = status == "active";
        auto limit = PageLimit(*call.request, 100, ctx.limits.max_page);
        if (!limit.ok()) return respond(ErrorResponse(limit.status()));
        f.limit = *limit;
        if (!f.active_only) {
          auto all = ctx.store->ListAssignments(f);
          if (!all.ok()) return respond(ErrorResponse(all.status()));
          Json items = Json::array();
          for (const auto& a : *all) items.push_back(AssignmentJson(a));
          return respond(JsonResponse(200, {{"assignments", items}}));
        }
        // Active ones are live: the coordinator knows why a waiting one waits.
        OnEngine(ctx, respond, [&ctx, f] {
          Json items = Json::array();
          for (const AssignmentRecord& a : ctx.coordinator->Active(f.ns, f.worker_id)) {
            if (!f.execution_id.empty() && a.execution_id != f.execution_id) continue;
            if (items.size() >= f.limit) break;
            Json j = AssignmentJson(a);
            if (a.status == "waiting") {
              j["waitingReason"] = ctx.coordinator->WaitingReason(a.execution_id);
            }
            items.push_back(std::move(j));
          }
          return JsonResponse(200, {{"assignments", items}});
        });
      });
  // Assignment ids are "<execution>/<step>/<attempt>[.r<n>]": the path takes them as
  // they are.
  router.Add("GET", "/api/v1/assignments/{execution}/{step}/{attempt}", Scope::kRead,
             "One assignment, by its dispatch id or a worker-facing id (…/1.r2)",
             [&ctx](const Call& call, Responder respond) {
               const std::string id =
                   call.Param("execution") + "/" + call.Param("step") + "/" + call.Param("attempt");
               auto a = ctx.store->GetAssignment(id);
               if (!a.ok()) {
                 // The local worker's assignments live in the coordinator only (a shell
                 // step's start writes no assignment record): the one running is found
                 // there, as the list finds it.
                 return OnEngine(ctx, respond, [&ctx, id, ns = call.principal.ns] {
                   for (const AssignmentRecord& live : ctx.coordinator->Active(ns, "")) {
                     if (live.id == id || live.dispatch_id == id) {
                       return JsonResponse(200, AssignmentJson(live));
                     }
                   }
                   return ErrorResponse(404, errc::kNotFound, "no assignment '" + id + "'");
                 });
               }
               if (a->ns != call.principal.ns) {
                 return respond(ErrorResponse(404, errc::kNotFound, "no assignment '" + id + "'"));
               }
               Json j = AssignmentJson(*a);
               ReassignmentFilter moves;
               moves.dispatch_id = a->dispatch_id;
               if (auto r = ctx.store->ListReassignments(moves); r.ok()) {
                 Json history = Json::array();
                 for (const auto& x : *r) history.push_back(ReassignmentJson(x));
                 j["reassignmentHistory"] = std::move(history);
               }
               respond(JsonResponse(200, j));
             });
  router.Add("GET", "/api/v1/reassignments", Scope::kRead,
             "Reassignment history, newest first: ?limit=N, ?worker=ID, ?assignment=DISPATCH_ID",
             [&ctx](const Call& call, Responder respond) {
               ReassignmentFilter f;
               f.ns = call.principal.ns;
               const auto& q = call.request->query;
               if (auto it = q.find("worker"); it != q.end()) f.worker_id = it->second;
               if (auto it = q.find("assignment"); it != q.end()) f.dispatch_id = it->second;
               auto limit = PageLimit(*call.request, 100, ctx.limits.max_page);
               if (!limit.ok()) return respond(ErrorResponse(limit.status()));
               f.limit = *limit;
               auto all = ctx.store->ListReassignments(f);
               if (!all.ok()) return respond(ErrorResponse(all.status()));
               Json items = Json::array();
               for (const auto& r : *all) items.push_back(ReassignmentJson(r));
               respond(JsonResponse(200, {{"reassignments", items}}));
             });
}

}  // namespace

void AddWorkerRoutes(Router& router, ApiContext& ctx) {
  router.Add("GET", "/api/v1/workers", Scope::kRead,
             "Workers of the namespace: status, capacity, load, last heartbeat, assignments",
             [&ctx](const Call& call, Responder respond) {
               OnEngine(ctx, respond, [&ctx, ns = call.principal.ns] {
                 return JsonResponse(200, {{"workers", ListWorkers(ctx, ns, "")}});
               });
             });
  router.Add("GET", "/api/v1/workers/{id}", Scope::kRead, "A worker",
             [&ctx](const Call& call, Responder respond) {
               OnEngine(ctx, respond, [&ctx, ns = call.principal.ns, id = call.Param("id")] {
                 Json found = ListWorkers(ctx, ns, id);
                 if (found.empty()) {
                   return ErrorResponse(404, errc::kNotFound, "no worker '" + id + "'");
                 }
                 return JsonResponse(200, found[0]);
               });
             });
  router.Add("DELETE", "/api/v1/workers/{id}", Scope::kWrite,
             "Drain a worker: no new work; running work finishes (or moves after the drain "
             "timeout)",
             [&ctx](const Call& call, Responder respond) {
               OnEngine(ctx, respond, [&ctx, ns = call.principal.ns, id = call.Param("id")] {
                 if (Status s = ctx.coordinator->Drain(ns, id); !s.ok()) return ErrorResponse(s);
                 return JsonResponse(202, WorkerJson(*ctx.coordinator->registry().Find(id)));
               });
             });
  router.Add("GET", "/api/v1/coordinator/health", Scope::kRead,
             "Workers by status, capacity in use, reassignments",
             [&ctx](const Call& call, Responder respond) {
               OnEngine(ctx, respond, [&ctx, ns = call.principal.ns] {
                 Json h = CoordinatorHealthJson(ctx.coordinator->registry().List(ns));
                 ReassignmentFilter all;
                 all.ns = ns;
                 all.limit = 0;
                 auto moved = ctx.store->ListReassignments(all);
                 h["reassignmentEvents"] = moved.ok() ? moved->size() : 0;
                 const workers::CoordinatorStats s = ctx.coordinator->stats();
                 int waiting = 0;
                 for (const auto& a : ctx.coordinator->Active(ns, ""))
                   waiting += a.status == "waiting";
                 h["waitingAssignments"] = waiting;
                 h["heartbeatMisses"] = s.heartbeat_misses;
                 h["staleMessages"] = s.stale;
                 return JsonResponse(200, h);
               });
             });
  AddAssignmentRoutes(router, ctx);
  AddWorkerLongPollRoutes(router, ctx);
}

}  // namespace baton::server
