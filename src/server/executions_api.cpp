// /api/v1/executions: submit, list, get, events, and control.
#include "common/json_parse.h"
#include "server/api.h"
#include "server/completion_waits.h"
#include "server/event_hub.h"
#include "server/execution_filter.h"
#include "server/submitter.h"
#include "server/views.h"
#include "server/workflow_cache.h"
#include "workers/coordinator.h"

#include <baton/workflow.h>

#include <map>
#include <mutex>
#include <variant>

namespace baton::server {

constexpr size_t kMaxSearchText = 256;  // ?q=: a search, not a document
// A namespace of its own, so that unity builds can compile it with the other routes.
namespace executions_api {
namespace {

constexpr size_t kDefaultPage = 50;

// An execution of the caller's namespace; ids of other namespaces are 404, like ids that
// do not exist, so a token learns nothing about namespaces it cannot see.
Result<ExecutionRecord> Visible(ApiContext& ctx, const Call& call) {
  const std::string& id = call.Param("id");
  auto e = ctx.store->GetExecution(id);
  if (!e.ok()) {
    if (e.status().code() == errc::kNotFound) {
      return Status(errc::kNotFound, "no execution '" + id + "'");
    }
    return e.status();
  }
  if (e->ns != call.principal.ns) return Status(errc::kNotFound, "no execution '" + id + "'");
  return e;
}

HttpResponse ExecutionAnswer(ApiContext& ctx, const std::string& id, int status,
                             bool created_flag = false, bool created = false,
                             std::optional<ExecutionRecord> known = std::nullopt) {
  Result<ExecutionRecord> e =
      known ? Result<ExecutionRecord>(std::move(*known)) : ctx.store->GetExecution(id);
  if (!e.ok()) return ErrorResponse(e.status());
  Json body = ExecutionSummaryJson(*e);
  if (created_flag) body["created"] = created;
  HttpResponse r = JsonResponse(status, body);
  r.headers.emplace_back("Location", "/api/v1/executions/" + id);
  return r;
}

void RespondWithExecution(ApiContext& ctx, const std::string& id, int status,
                          const Responder& respond, bool created_flag = false, bool created = false,
                          std::optional<ExecutionRecord> known = std::nullopt) {
  respond(ExecutionAnswer(ctx, id, status, created_flag, created, std::move(known)));
}

// The workflows one request has loaded, by (name, version asked): a batch of 1,000 items
// of one workflow looks it up once, not once per item.
using WorkflowReads = std::map<std::pair<std::string, int>, std::shared_ptr<const WorkflowDef>>;

// What one submission asks for, checked: the request, or the response that refuses it.
// `where` prefixes the fields the response names ("executions[3]." within a batch).
std::variant<SubmitRequest, HttpResponse> PrepareSubmit(ApiContext& ctx, const Call& call,
                                                        const Json& body, WorkflowReads* reads,
                                                        const std::string& where = "") {
  if (!body.is_object()) return FieldError(where.substr(0, where.size() - 1), "must be an object");
  static const std::vector<std::string> kFields = {
      "workflow", "version", "input", "args", "priority", "idempotency_key", "parent_id"};
  if (auto bad = UnknownField(body, kFields, where)) return std::move(*bad);
  const Json& wf = body["workflow"];
  if (!wf.is_string() || wf.get<std::string>().empty()) {
    return FieldError(where + "workflow", "the name of a workflow is required");
  }
  int version = 0;
  if (body.contains("version")) {
    const Json& v = body["version"];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > INT32_MAX) {
      return FieldError(where + "version", "must be a positive integer");
    }
    version = v.get<int>();
  }
  Json input = body.value("input", Json::object());
  if (!input.is_object()) return FieldError(where + "input", "must be an object");
  const size_t input_bytes = input.dump().size();
  if (input_bytes > ctx.limits.max_payload_bytes) {
    return ErrorResponse(
        413, "PAYLOAD_TOO_LARGE",
        where + "input is " + std::to_string(input_bytes) + " bytes; the limit is " +
            std::to_string(ctx.limits.max_payload_bytes) + " bytes (server --max-payload)",
        {{"field", where + "input"}, {"limit", ctx.limits.max_payload_bytes}});
  }
  SubmitRequest req;
  req.ns = call.principal.ns;
  if (body.contains("priority")) {
    const Json& p = body["priority"];
    auto parsed = p.is_string() ? ParsePriority(p.get<std::string>()) : std::nullopt;
    if (!parsed)
      return FieldError(where + "priority", "must be one of low, normal, high, critical");
    req.priority = *parsed;
  }
  for (auto [name, out] : {std::pair{"idempotency_key", &req.idempotency_key},
                           std::pair{"parent_id", &req.parent_id}}) {
    if (!body.contains(name)) continue;
    const Json& v = body[name];
    if (!v.is_string() || v.get<std::string>().size() > 200) {
      return FieldError(where + name, "must be a string of at most 200 characters");
    }
    *out = v.get<std::string>();
  }
  const auto read_key = std::make_pair(wf.get<std::string>(), version);
  auto read = reads->find(read_key);
  if (read == reads->end()) {
    auto loaded = ctx.workflows->Load(*ctx.store, req.ns, wf.get<std::string>(), version);
    if (!loaded.ok()) {
      return ErrorResponse(Status(loaded.status().code(), where + loaded.status().message()),
                           {{"field", where + "workflow"}});
    }
    read = reads->emplace(read_key, std::move(loaded).value()).first;
  }
  std::shared_ptr<const WorkflowDef> def = read->second;
  // `args`: ["key=value", ...] as typed on a command line, converted to the declared types.
  std::vector<std::pair<std::string, std::string>> args;
  if (body.contains("args")) {
    const Json& a = body["args"];
    if (!a.is_array()) return FieldError(where + "args", "must be a list of \"key=value\" strings");
    for (const Json& kv : a) {
      const std::string text = kv.is_string() ? kv.get<std::string>() : "";
      const size_t eq = text.find('=');
      if (eq == std::string::npos || eq == 0) {
        return FieldError(where + "args",
                          "must be a list of \"key=value\" strings, got " + kv.dump());
      }
      args.emplace_back(text.substr(0, eq), text.substr(eq + 1));
    }
  }
  auto resolved = ResolveInputs(*def, input, args);
  if (!resolved.ok()) {
    return ErrorResponse(400, errc::kValidation, where + resolved.status().message(),
                         {{"field", where + "input"}});
  }
  req.input = std::move(resolved.value());
  req.workflow = std::move(def);
  return req;
}

// POST /api/v1/executions?wait=MS: how long the answer may wait for the execution's end.
constexpr int64_t kMaxSubmitWaitMs = 60'000;

// The `wait` query parameter: 0 when absent, else FieldError.
std::variant<int64_t, HttpResponse> SubmitWait(const HttpRequest& request) {
  auto it = request.query.find("wait");
  if (it == request.query.end()) return int64_t{0};
  const std::string& text = it->second;
  const bool digits = !text.empty() && text.size() <= 5 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  const int64_t ms = digits ? std::stoll(text) : -1;
  if (ms < 0 || ms > kMaxSubmitWaitMs) {
    return FieldError("wait", "expected milliseconds from 0 to " +
                                  std::to_string(kMaxSubmitWaitMs) + ", got '" +
                                  text.substr(0, 32) + "'");
  }
  return ms;
}

// A waited submit's answer: the summary with the execution's output.
HttpResponse WaitedAnswer(const ExecutionRecord& e, int status, bool created) {
  Json body = ExecutionSummaryJson(e);
  body["output"] = e.output;
  body["created"] = created;
  HttpResponse r = JsonResponse(status, body);
  r.headers.emplace_back("Location", "/api/v1/executions/" + e.id);
  return r;
}

// What a waiter answers with (engine thread): the record it is given, or the store's
// when the engine no longer holds the execution.
CompletionWaits::Answer WaitedResponder(ApiContext& ctx, const std::string& id, int status,
                                        bool created, const Responder& respond) {
  return [&ctx, id, status, created, respond](const ExecutionRecord* record, bool) {
    if (record != nullptr) return respond(WaitedAnswer(*record, status, created));
    auto stored = ctx.store->GetExecution(id);
    if (!stored.ok()) return respond(ErrorResponse(stored.status()));
    respond(WaitedAnswer(*stored, status, created));
  };
}

// A submit whose answer waits up to `wait` for the execution to end (a repeated
// idempotency key: for the first execution to end). The start is durable before any
// answer, as without a wait.
void SubmitAndWait(ApiContext& ctx, SubmitRequest request, Duration wait,
                   const Responder& respond) {
  ctx.submitter->SubmitEarly(
      std::move(request),
      // A refusal, or an earlier submit's execution (engine thread).
      [&ctx, respond, wait](Result<SubmitOutcome> out) {
        if (!out.ok()) return respond(ErrorResponse(out.status()));
        const int status = out->created ? 201 : 200;
        const auto ticket = ctx.waits->Expect(
            out->execution_id,
            WaitedResponder(ctx, out->execution_id, status, out->created, respond));
        ctx.waits->Arm(ticket, wait, *ctx.engine->engine());
      },
      // A new start (engine thread, in the turn that started it): its end cannot have
      // come yet unless it came in that turn.
      [&ctx, respond, wait](SubmitOutcome started) -> Submitter::Deliver {
        if (IsTerminal(started.record->status)) {
          auto ready = std::make_shared<HttpResponse>(WaitedAnswer(*started.record, 201, true));
          return [ready, respond](const Status& durable) {
            respond(durable.ok() ? std::move(*ready) : ErrorResponse(durable));
          };
        }
        const auto ticket = ctx.waits->Expect(
            started.execution_id, WaitedResponder(ctx, started.execution_id, 201, true, respond));
        return [&ctx, ticket, wait, respond](const Status& durable) {  // any thread
          ctx.engine->Post([&ctx, ticket, wait, durable, respond](Engine& engine) {
            if (!durable.ok()) {
              ctx.waits->Drop(ticket);
              return respond(ErrorResponse(durable));
            }
            ctx.waits->Arm(ticket, wait, engine);
          });
        };
      });
}

void Submit(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto wait = SubmitWait(*call.request);
  if (auto* refused = std::get_if<HttpResponse>(&wait)) return respond(std::move(*refused));
  auto body = ParseJsonBody(*call.request);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  WorkflowReads reads;
  auto prepared = PrepareSubmit(ctx, call, *body, &reads);
  if (auto* refused = std::get_if<HttpResponse>(&prepared)) return respond(std::move(*refused));
  std::get<SubmitRequest>(prepared).want_record = true;
  if (const int64_t wait_ms = std::get<int64_t>(wait); wait_ms > 0 && ctx.waits != nullptr) {
    return SubmitAndWait(ctx, std::move(std::get<SubmitRequest>(prepared)), Duration(wait_ms),
                         respond);
  }
  ctx.submitter->SubmitEarly(
      std::move(std::get<SubmitRequest>(prepared)),
      [&ctx, respond](Result<SubmitOutcome> out) {
        if (!out.ok()) return respond(ErrorResponse(out.status()));
        RespondWithExecution(ctx, out->execution_id, out->created ? 201 : 200, respond, true,
                             out->created, std::move(out->record));
      },
      // A new start: the answer is made from the start's own record (moved, not copied; no
      // store read) while the store writes it, and sent from the thread that committed it
      // (from the loop, should the commit have ended first).
      [&ctx, respond](SubmitOutcome started) -> Submitter::Deliver {
        auto ready = std::make_shared<HttpResponse>(
            ExecutionAnswer(ctx, started.execution_id, 201, true, true, std::move(started.record)));
        return [ready, respond](const Status& durable) {
          respond(durable.ok() ? std::move(*ready) : ErrorResponse(durable));
        };
      });
}

// Up to kMaxBatch submissions in one request, as BullMQ's addBulk and graphile-worker's
// addJobs: all are checked before any starts (one bad item refuses the request, naming
// it), then each starts as a single submit would, its idempotency key included. The
// answer comes once every start is durable, in the order given.
constexpr size_t kMaxBatch = 1000;

void SubmitBatch(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto body = ParseJsonBody(*call.request);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  if (auto bad = UnknownField(*body, {"executions"})) return respond(std::move(*bad));
  const Json& items = (*body)["executions"];
  if (!items.is_array() || items.empty() || items.size() > kMaxBatch) {
    return respond(FieldError(
        "executions", "must be a list of 1 to " + std::to_string(kMaxBatch) + " submissions"));
  }
  std::vector<SubmitRequest> requests;
  requests.reserve(items.size());
  WorkflowReads reads;
  for (size_t i = 0; i < items.size(); ++i) {
    auto prepared =
        PrepareSubmit(ctx, call, items[i], &reads, "executions[" + std::to_string(i) + "].");
    if (auto* refused = std::get_if<HttpResponse>(&prepared)) return respond(std::move(*refused));
    requests.push_back(std::move(std::get<SubmitRequest>(prepared)));
  }
  struct Gathered {
    std::mutex mu;
    std::vector<Json> results;
    size_t left = 0;
    bool created = false, failed = false;
  };
  auto gathered = std::make_shared<Gathered>();
  gathered->results.resize(requests.size());
  gathered->left = requests.size();
  ctx.submitter->SubmitAll(
      std::move(requests), [gathered, respond](size_t i, Result<SubmitOutcome> out) {
        std::lock_guard lock(gathered->mu);
        if (out.ok()) {
          gathered->results[i] = {{"id", out->execution_id}, {"created", out->created}};
          gathered->created |= out->created;
        } else {
          gathered->results[i] = {
              {"error", {{"code", out.status().code()}, {"message", out.status().message()}}}};
          gathered->failed = true;
        }
        if (--gathered->left > 0) return;
        // 207 when some failed (each item says which), else 201 when any started.
        const int status = gathered->failed ? 207 : gathered->created ? 201 : 200;
        respond(JsonResponse(status, {{"executions", std::move(gathered->results)}}));
      });
}

std::optional<HttpResponse> ReadFilter(const HttpRequest& req, ExecutionFilter* f) {
  return ReadExecutionFilter([&req](const char* name) { return req.Query(name); }, f);
}

void Counts(ApiContext& ctx, const Call& call, const Responder& respond) {
  ExecutionFilter f;
  f.ns = call.principal.ns;
  if (auto bad = ReadFilter(*call.request, &f)) return respond(std::move(*bad));
  auto counts = ctx.store->CountExecutions(f);
  if (!counts.ok()) return respond(ErrorResponse(counts.status()));
  Json by_status = Json::object();
  int64_t total = 0;
  for (const ExecutionCount& c : *counts) {
    by_status[ToString(c.status)] = c.count;
    total += c.count;
  }
  respond(JsonResponse(200, {{"counts", by_status}, {"total", total}}));
}

void List(ApiContext& ctx, const Call& call, const Responder& respond) {
  const HttpRequest& req = *call.request;
  ExecutionFilter f;
  f.ns = call.principal.ns;
  auto limit = PageLimit(req, kDefaultPage, ctx.limits.max_page);
  if (!limit.ok()) return respond(ErrorResponse(limit.status()));
  f.limit = *limit;
  if (auto bad = ReadFilter(req, &f)) return respond(std::move(*bad));
  if (std::string c = req.Query("cursor"); !c.empty()) {
    size_t dot = c.find('.');
    auto t = dot == std::string::npos ? Result<TimeMs>(Status(errc::kInvalidArgument, "x"))
                                      : ParseTime(c.substr(0, dot));
    if (!t.ok() || dot + 1 >= c.size()) {
      return respond(
          ErrorResponse(400, errc::kInvalidArgument, "malformed cursor", {{"field", "cursor"}}));
    }
    f.after = ExecutionCursor{*t, c.substr(dot + 1)};
  }
  auto list = ctx.store->ListExecutions(f);
  if (!list.ok()) return respond(ErrorResponse(list.status()));
  Json items = Json::array();
  for (const auto& e : *list) items.push_back(ExecutionSummaryJson(e));
  Json next = nullptr;
  if (list->size() == f.limit) {
    next = std::to_string(list->back().created_at) + "." + list->back().id;
  }
  respond(JsonResponse(200, {{"executions", items}, {"next_cursor", next}}));
}

void Events(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto e = Visible(ctx, call);
  if (!e.ok()) return respond(ErrorResponse(e.status()));
  const HttpRequest& req = *call.request;
  int64_t after = 0;
  if (std::string a = req.Query("after"); !a.empty()) {
    if (a.size() > 15 || a.find_first_not_of("0123456789") != std::string::npos) {
      return respond(ErrorResponse(400, errc::kInvalidArgument,
                                   "after must be an event sequence number", {{"field", "after"}}));
    }
    after = std::stoll(a);
  }
  auto limit = PageLimit(req, 100, ctx.limits.max_page);
  if (!limit.ok()) return respond(ErrorResponse(limit.status()));
  // types=: as the live feed's. The page is read first and filtered after, so a page may
  // hold fewer than `limit` events (none, even) while next_after says there are more.
  EventFilter types;
  if (auto t = req.query.find("types"); t != req.query.end()) {
    if (Status s = ParseEventTypes(t->second, &types); !s.ok()) {
      return respond(ErrorResponse(400, errc::kInvalidArgument, s.message(), {{"field", "types"}}));
    }
  }
  auto events = ctx.store->GetEvents(e->id, after, *limit);
  if (!events.ok()) return respond(ErrorResponse(events.status()));
  Json items = Json::array();
  for (const auto& ev : *events) {
    if (types.MatchesType(ev.type)) items.push_back(EventJson(ev));
  }
  Json next = events->size() == *limit ? Json(events->back().seq) : Json(nullptr);
  respond(JsonResponse(200, {{"events", items}, {"next_after", next}}));
}

void Control(ApiContext& ctx, const Call& call, const Responder& respond, ControlOp op) {
  auto e = Visible(ctx, call);
  if (!e.ok()) return respond(ErrorResponse(e.status()));
  std::string reason = "cancelled through the API";
  if (op == ControlOp::kCancel && !call.request->body.empty()) {
    auto body = ParseJsonBody(*call.request);
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    if (body->contains("reason") && (*body)["reason"].is_string()) {
      reason = (*body)["reason"].get<std::string>().substr(0, 500);
    }
  }
  std::string id = e->id;
  ctx.submitter->Control(id, op, reason, [&ctx, id, respond](Status st) {
    if (!st.ok()) return respond(ErrorResponse(st));
    RespondWithExecution(ctx, id, 200, respond);
  });
}

// POST /executions/{id}/retry, optionally {"from": STEP}.
void Retry(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto e = Visible(ctx, call);
  if (!e.ok()) return respond(ErrorResponse(e.status()));
  std::string from;
  if (!call.request->body.empty()) {
    auto body = ParseJsonBody(*call.request);
    if (!body.ok()) return respond(ErrorResponse(body.status()));
    if (auto bad = UnknownField(*body, {"from"})) return respond(*bad);
    if (body->contains("from")) {
      const Json& f = (*body)["from"];
      if (!f.is_string() || f.get<std::string>().empty()) {
        return respond(FieldError("from", "a step id of the execution's workflow"));
      }
      from = f.get<std::string>();
    }
  }
  std::string id = e->id;
  ctx.submitter->Retry(id, from, [&ctx, id, respond](Status st) {
    if (!st.ok()) return respond(ErrorResponse(st));
    RespondWithExecution(ctx, id, 200, respond);
  });
}

// GET /executions/{id}/why: what each open step waits for, from the engine's live state
// and, for a step waiting for a remote worker, the coordinator's.
void Why(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto e = Visible(ctx, call);
  if (!e.ok()) return respond(ErrorResponse(e.status()));
  Json head = {{"execution_id", e->id}, {"status", ToString(e->status)}};
  if (IsTerminal(e->status)) {
    head["steps"] = Json::array();
    return respond(JsonResponse(200, head));
  }
  ctx.engine->Post([&ctx, respond, head = std::move(head)](Engine& engine) mutable {
    const std::string id = head["execution_id"].get<std::string>();
    auto steps = WhySteps(engine, ctx.coordinator, id);
    if (!steps.ok() && steps.status().code() == errc::kNotFound) {
      // Another instance holds it: it answers.
      ControlRequest why;
      why.execution_id = id;
      why.op = "why";
      auto relayed = [respond, head](Status answer, const Json& result) mutable {
        if (!answer.ok()) return respond(ErrorResponse(answer));
        head["steps"] = result.value("steps", Json::array());
        respond(JsonResponse(200, head));
      };
      if (ctx.submitter->ForwardIfElsewhere(std::move(why), relayed)) return;
      // It finished since the store was read.
      if (auto now = ctx.store->GetExecution(id); now.ok()) head["status"] = ToString(now->status);
      head["steps"] = Json::array();
      return respond(JsonResponse(200, head));
    }
    if (!steps.ok()) return respond(ErrorResponse(steps.status()));
    head["steps"] = std::move(steps).value();
    respond(JsonResponse(200, head));
  });
}

// POST /executions/{id}/signals/{name}: the body is the payload (any JSON; none = null).
void SendSignal(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto e = Visible(ctx, call);
  if (!e.ok()) return respond(ErrorResponse(e.status()));
  const std::string& name = call.Param("name");
  Json payload = nullptr;
  if (!call.request->body.empty()) {
    Result<Json> parsed = ParseJsonText(call.request->body, "the signal's payload");
    if (!parsed.ok()) return respond(ErrorResponse(parsed.status()));
    payload = std::move(parsed).value();
  }
  ctx.submitter->Signal(e->id, name, std::move(payload), [respond](Result<SignalRecord> sent) {
    if (!sent.ok()) return respond(ErrorResponse(sent.status()));
    respond(JsonResponse(202, {{"signal", SignalJson(*sent)}}));
  });
}

void ListSignals(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto e = Visible(ctx, call);
  if (!e.ok()) return respond(ErrorResponse(e.status()));
  auto signals = ctx.store->ListSignals(e->id);
  if (!signals.ok()) return respond(ErrorResponse(signals.status()));
  Json items = Json::array();
  for (const SignalRecord& s : *signals) items.push_back(SignalJson(s));
  respond(JsonResponse(200, {{"signals", items}}));
}

}  // namespace
}  // namespace executions_api

Result<Json> WhySteps(Engine& engine, workers::Coordinator* coordinator, const std::string& id) {
  auto waits = engine.Why(id);
  if (!waits.ok()) return waits.status();
  std::map<std::string, std::string> no_worker;
  if (coordinator != nullptr) no_worker = coordinator->WaitingReasons(id);
  Json steps = Json::array();
  for (const StepWait& w : *waits) {
    auto it = no_worker.find(w.step_id);
    steps.push_back(StepWaitJson(w, id, it == no_worker.end() ? "" : it->second));
  }
  return steps;
}

// The filters GET /executions, /executions/counts and POST /executions/bulk share:
// status, workflow, parent, since, until and q (text in the id, input or output); a 400
// naming the bad one.
std::optional<HttpResponse> ReadExecutionFilter(const std::function<std::string(const char*)>& get,
                                                ExecutionFilter* f) {
  if (std::string s = get("status"); !s.empty()) {
    f->status = ParseExecutionStatus(s);
    if (!f->status) {
      return ErrorResponse(400, errc::kInvalidArgument, "unknown status '" + s + "'",
                           {{"field", "status"}});
    }
  }
  f->workflow = get("workflow");
  f->parent_id = get("parent");
  for (auto [name, out] :
       {std::pair{"since", &f->created_from}, std::pair{"until", &f->created_until}}) {
    std::string text = get(name);
    if (text.empty()) continue;
    auto t = ParseTime(text);
    if (!t.ok()) return ErrorResponse(t.status(), {{"field", name}});
    *out = *t;
  }
  f->text = get("q");
  if (f->text.size() > kMaxSearchText) {
    return FieldError("q", "at most " + std::to_string(kMaxSearchText) + " bytes");
  }
  return std::nullopt;
}

void AddExecutionRoutes(Router& router, ApiContext& ctx) {
  using namespace executions_api;
  router.Add(
      "POST", "/api/v1/executions", Scope::kWrite,
      "Start an execution: {workflow, version?, input?, args?, priority?, idempotency_key?}; "
      "?wait=MS (at most 60000) holds the answer until the execution ends, or MS pass, "
      "and adds its output",
      [&ctx](const Call& call, Responder respond) { Submit(ctx, call, respond); });
  router.Add("POST", "/api/v1/executions/batch", Scope::kWrite,
             "Start up to 1,000 executions in one request (each as a single submit would)",
             [&ctx](const Call& call, Responder respond) { SubmitBatch(ctx, call, respond); });
  router.Add("GET", "/api/v1/executions", Scope::kRead,
             "List executions: ?status, workflow, parent, since, until, q (text in the id, "
             "input or output), limit, cursor",
             [&ctx](const Call& call, Responder respond) { List(ctx, call, respond); });
  // Before /executions/{id}: the first route that matches is used.
  router.Add("GET", "/api/v1/executions/counts", Scope::kRead,
             "How many executions match the list's filters, by status: ?workflow, parent, "
             "since, until, q",
             [&ctx](const Call& call, Responder respond) { Counts(ctx, call, respond); });
  router.Add(
      "GET", "/api/v1/executions/{id}", Scope::kRead,
      "An execution with its steps, attempts, timing, layers and the child workflows its steps "
      "started (children)",
      [&ctx](const Call& call, Responder respond) {
        auto e = Visible(ctx, call);
        if (!e.ok()) return respond(ErrorResponse(e.status()));
        auto detail = ExecutionDetailJson(ctx.store, *e);
        if (!detail.ok()) return respond(ErrorResponse(detail.status()));
        bool dispatched = false;
        for (const Json& s : (*detail)["steps"]) dispatched |= s["status"] == "dispatched";
        if (!dispatched || ctx.coordinator == nullptr) {
          return respond(JsonResponse(200, *detail));
        }
        // A dispatched step may be waiting for a worker (queued): the coordinator says
        // why, on the step and (the first one) on the execution.
        ctx.engine->Post([&ctx, respond, id = e->id, detail = std::move(*detail)](Engine&) mutable {
          const auto reasons = ctx.coordinator->WaitingReasons(id);
          for (Json& step : detail["steps"]) {
            auto it = reasons.find(step.value("id", ""));
            if (it != reasons.end()) step["waiting"] = it->second;
          }
          if (!reasons.empty()) detail["waiting"] = ctx.coordinator->WaitingReason(id);
          respond(JsonResponse(200, detail));
        });
      });
  router.Add("GET", "/api/v1/executions/{id}/why", Scope::kRead,
             "What each step that has not finished waits for: upstream steps, a retry "
             "backoff, an open circuit breaker, an identical step's cached run, a signal, a timer, "
             "a slot, a worker, a pause",
             [&ctx](const Call& call, Responder respond) { Why(ctx, call, respond); });
  router.Add("GET", "/api/v1/executions/{id}/events", Scope::kRead,
             "An execution's events by seq, with positions: ?after=SEQ&limit=N&types=T,F.*",
             [&ctx](const Call& call, Responder respond) { Events(ctx, call, respond); });
  router.Add("POST", "/api/v1/executions/{id}/retry", Scope::kWrite,
             "Run a failed, timed-out or cancelled execution again, keeping completed steps; "
             "with {\"from\": STEP}, that step and everything downstream of it run again "
             "(a completed execution too)",
             [&ctx](const Call& call, Responder respond) { Retry(ctx, call, respond); });
  router.Add("POST", "/api/v1/executions/{id}/signals/{name}", Scope::kWrite,
             "Send a signal to a running execution; the body (any JSON) is its payload, which "
             "becomes the output of the wait step that takes it",
             [&ctx](const Call& call, Responder respond) { SendSignal(ctx, call, respond); });
  router.Add("GET", "/api/v1/executions/{id}/signals", Scope::kRead,
             "The signals sent to an execution, and the step that took each",
             [&ctx](const Call& call, Responder respond) { ListSignals(ctx, call, respond); });
  for (auto [name, op] :
       {std::pair{"cancel", ControlOp::kCancel}, std::pair{"pause", ControlOp::kPause},
        std::pair{"resume", ControlOp::kResume}}) {
    router.Add(
        "POST", std::string("/api/v1/executions/{id}/") + name, Scope::kWrite,
        std::string("Ask the engine to ") + name + " the execution",
        // A copy, not the binding: clang 14 cannot capture structured bindings.
        [&ctx, op = op](const Call& call, Responder respond) { Control(ctx, call, respond, op); });
  }
}

}  // namespace baton::server
