// /api/v1/dlq: the dead-letter queue -- steps that failed for good, listed, grouped,
// replayed (one at a time or in bulk at a bounded rate) and discarded.
#include "server/api.h"
#include "server/dlq_replayer.h"
#include "server/metrics.h"
#include "server/submitter.h"
#include "server/views.h"

#include <charconv>
#include <functional>
#include <optional>

namespace baton::server {
// A namespace of its own, so that unity builds can compile it with the other routes.
namespace dlq_api {
namespace {

constexpr size_t kDefaultPage = 50;
constexpr size_t kDefaultBulk = 1000;
constexpr size_t kMaxBulk = 10000;

// The filter fields, as query parameters of GET /dlq and /dlq/stats and as the keys of
// the bulk replay's "filter" object.
const std::vector<std::string> kFilterFields = {"workflow",  "step",   "code", "fingerprint",
                                                "execution", "status", "since"};

// `get(name)`: the field's text, or nullopt when absent. Status defaults to open;
// "any" lists every status.
Result<DeadLetterFilter> ParseFilter(
    const std::string& ns, const std::function<std::optional<std::string>(const char*)>& get) {
  DeadLetterFilter f;
  f.ns = ns;
  f.status = kDeadLetterOpen;
  for (auto [name, out] : {std::pair{"workflow", &f.workflow}, std::pair{"step", &f.step_id},
                           std::pair{"code", &f.code}, std::pair{"fingerprint", &f.fingerprint},
                           std::pair{"execution", &f.execution_id}}) {
    if (auto v = get(name)) {
      if (v->size() > 1024) {
        return Status(errc::kInvalidArgument, std::string(name) + " is longer than 1024 bytes");
      }
      *out = *v;
    }
  }
  if (auto s = get("status")) {
    if (*s == "any") {
      f.status.clear();
    } else if (*s == kDeadLetterOpen || *s == kDeadLetterReplayed || *s == kDeadLetterDiscarded) {
      f.status = *s;
    } else {
      return Status(errc::kInvalidArgument,
                    "status must be one of open, replayed, discarded, any; got '" + *s + "'");
    }
  }
  if (auto s = get("since")) {
    auto t = ParseTime(*s);
    if (!t.ok()) return Status(errc::kInvalidArgument, "since: " + t.status().message());
    f.since = *t;
  }
  return f;
}

Result<DeadLetterFilter> FilterFromQuery(const Call& call) {
  const HttpRequest& req = *call.request;
  return ParseFilter(call.principal.ns, [&req](const char* name) -> std::optional<std::string> {
    auto it = req.query.find(name);
    if (it == req.query.end() || it->second.empty()) return std::nullopt;
    return it->second;
  });
}

Result<int64_t> EntryId(const Call& call) {
  const std::string& text = call.Param("id");
  int64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id < 1) {
    return Status(errc::kNotFound, "no dead letter '" + text + "'");
  }
  return id;
}

// An entry of the caller's namespace; other namespaces' ids are 404 like absent ones.
Result<DeadLetterRecord> Visible(ApiContext& ctx, const Call& call) {
  auto id = EntryId(call);
  if (!id.ok()) return id.status();
  auto d = ctx.store->GetDeadLetter(*id);
  if (!d.ok() || d->ns != call.principal.ns) {
    if (d.ok() || d.status().code() == errc::kNotFound) {
      return Status(errc::kNotFound, "no dead letter '" + call.Param("id") + "'");
    }
  }
  return d;
}

// The entry with its links: the entry its run replayed (`replay_of`) and, once replayed,
// the entry that run left if it failed again (`replay.entry_id`).
Result<Json> EntryJson(ApiContext& ctx, const DeadLetterRecord& d) {
  Json out = DeadLetterJson(d);
  auto siblings = ctx.store->ListDeadLetters(d.execution_id);
  if (!siblings.ok()) return siblings.status();
  out["replay_of"] = nullptr;
  for (const DeadLetterRecord& s : *siblings) {
    if (s.step_id != d.step_id || s.id == d.id) continue;
    if (s.replay_attempt > 0 && s.replay_attempt == d.first_attempt) out["replay_of"] = s.id;
    if (d.replay_attempt > 0 && s.first_attempt == d.replay_attempt) {
      out["replay"]["entry_id"] = s.id;
    }
  }
  if (out["replay"].is_object() && !out["replay"].contains("entry_id")) {
    out["replay"]["entry_id"] = nullptr;
  }
  return out;
}

void List(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto f = FilterFromQuery(call);
  if (!f.ok()) return respond(ErrorResponse(f.status()));
  auto limit = PageLimit(*call.request, kDefaultPage, ctx.limits.max_page);
  if (!limit.ok()) return respond(ErrorResponse(limit.status()));
  f->limit = *limit;
  if (std::string c = call.request->Query("cursor"); !c.empty()) {
    auto [end, ec] = std::from_chars(c.data(), c.data() + c.size(), f->after_id);
    if (ec != std::errc() || end != c.data() + c.size() || f->after_id < 0) {
      return respond(
          ErrorResponse(400, errc::kInvalidArgument, "malformed cursor", {{"field", "cursor"}}));
    }
  }
  auto list = ctx.store->ListDeadLetters(*f);
  if (!list.ok()) return respond(ErrorResponse(list.status()));
  Json items = Json::array();
  for (const DeadLetterRecord& d : *list) items.push_back(DeadLetterJson(d));
  Json next = nullptr;
  if (list->size() == f->limit) next = std::to_string(list->back().id);
  respond(JsonResponse(200, {{"entries", items}, {"next_cursor", next}}));
}

void Stats(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto f = FilterFromQuery(call);
  if (!f.ok()) return respond(ErrorResponse(f.status()));
  auto groups = ctx.store->CountDeadLetters(*f);
  if (!groups.ok()) return respond(ErrorResponse(groups.status()));
  int64_t total = 0;
  std::map<std::string, int64_t> by_workflow;
  std::map<std::pair<std::string, std::string>, int64_t> by_step;
  Json by_fingerprint = Json::array();
  for (const DeadLetterGroup& g : *groups) {
    total += g.count;
    by_workflow[g.workflow] += g.count;
    by_step[{g.workflow, g.step_id}] += g.count;
    by_fingerprint.push_back({{"workflow", g.workflow},
                              {"step_id", g.step_id},
                              {"fingerprint", g.fingerprint},
                              {"code", g.code},
                              {"count", g.count},
                              {"first_failed_at", IsoTime(g.first_failed_at)},
                              {"last_failed_at", IsoTime(g.last_failed_at)},
                              {"last_id", g.last_id}});
  }
  auto largest_first = [](const Json& a, const Json& b) { return a["count"] > b["count"]; };
  Json workflows = Json::array();
  for (const auto& [w, n] : by_workflow) workflows.push_back({{"workflow", w}, {"count", n}});
  std::stable_sort(workflows.begin(), workflows.end(), largest_first);
  Json steps = Json::array();
  for (const auto& [k, n] : by_step) {
    steps.push_back({{"workflow", k.first}, {"step_id", k.second}, {"count", n}});
  }
  std::stable_sort(steps.begin(), steps.end(), largest_first);
  respond(JsonResponse(200, {{"total", total},
                             {"status", f->status.empty() ? "any" : f->status},
                             {"by_workflow", workflows},
                             {"by_step", steps},
                             {"by_fingerprint", by_fingerprint}}));
}

void Show(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto d = Visible(ctx, call);
  if (!d.ok()) return respond(ErrorResponse(d.status()));
  auto out = EntryJson(ctx, *d);
  if (!out.ok()) return respond(ErrorResponse(out.status()));
  respond(JsonResponse(200, *out));
}

// The caller's entry when it is open; 404, or 409 naming its status, otherwise.
Result<DeadLetterRecord> OpenEntry(ApiContext& ctx, const Call& call, const char* verb) {
  auto d = Visible(ctx, call);
  if (d.ok() && d->status != kDeadLetterOpen) {
    return Status(errc::kConflict, "dead letter " + std::to_string(d->id) + " is already " +
                                       d->status + "; only open entries are " + verb);
  }
  return d;
}

void Replay(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto d = OpenEntry(ctx, call, "replayed");
  if (!d.ok()) return respond(ErrorResponse(d.status()));
  const int64_t id = d->id;
  const std::string execution_id = d->execution_id;
  ctx.submitter->Retry(d->execution_id, d->step_id, [&ctx, id, execution_id, respond](Status st) {
    if (!st.ok()) return respond(ErrorResponse(st));
    auto now = ctx.store->GetDeadLetter(id);
    if (!now.ok()) return respond(ErrorResponse(now.status()));
    auto entry = EntryJson(ctx, *now);
    if (!entry.ok()) return respond(ErrorResponse(entry.status()));
    Json execution = nullptr;
    if (auto e = ctx.store->GetExecution(execution_id); e.ok()) {
      execution = ExecutionSummaryJson(*e);
    }
    respond(JsonResponse(200, {{"entry", *entry}, {"execution", execution}}));
  });
}

void Discard(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto d = OpenEntry(ctx, call, "discarded");
  if (!d.ok()) return respond(ErrorResponse(d.status()));
  DeadLetterRecord discarded = std::move(d).value();
  discarded.status = kDeadLetterDiscarded;
  discarded.resolved_at = ctx.engine->clock().Now();
  WriteBatch batch;
  batch.dead_letters.push_back(discarded);
  if (Status s = ctx.store->Commit(batch); !s.ok()) return respond(ErrorResponse(s));
  ctx.metrics->CountDiscardedDeadLetter();
  respond(JsonResponse(200, DeadLetterJson(discarded)));
}

// POST /dlq/replay {"filter": {...}, "per_second": N, "limit": N}: a job replaying the
// open entries the filter matches (oldest first, at most `limit`) at `per_second`.
void BulkReplay(ApiContext& ctx, const Call& call, const Responder& respond) {
  auto body = ParseJsonBody(*call.request);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  if (auto bad = UnknownField(*body, {"filter", "per_second", "limit"})) return respond(*bad);
  Json filter = body->value("filter", Json::object());
  if (!filter.is_object()) return respond(FieldError("filter", "must be an object"));
  if (auto bad = UnknownField(filter, kFilterFields)) return respond(*bad);
  std::string bad_field;
  auto f = ParseFilter(call.principal.ns, [&](const char* name) -> std::optional<std::string> {
    if (!filter.contains(name)) return std::nullopt;
    const Json& v = filter[name];
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
    bad_field = name;
    return std::string();
  });
  if (!bad_field.empty()) {
    return respond(FieldError("filter." + bad_field, "must be a string"));
  }
  if (!f.ok()) return respond(ErrorResponse(400, errc::kValidation, f.status().message()));
  if (f->status != kDeadLetterOpen) {
    return respond(FieldError("filter.status", "only open entries are replayed"));
  }
  const Json& rate = body->value("per_second", Json(nullptr));
  if (!rate.is_number() || !(rate.get<double>() > 0) ||
      rate.get<double>() > DlqReplayer::kMaxPerSecond) {
    return respond(FieldError("per_second", "a number of replays per second in (0, 1000]"));
  }
  size_t limit = kDefaultBulk;
  if (body->contains("limit")) {
    const Json& l = (*body)["limit"];
    if (!l.is_number_integer() || l.get<int64_t>() < 1 ||
        l.get<int64_t>() > static_cast<int64_t>(kMaxBulk)) {
      return respond(FieldError("limit", "an integer between 1 and " + std::to_string(kMaxBulk)));
    }
    limit = l.get<size_t>();
  }
  f->limit = limit;
  auto matched = ctx.store->ListDeadLetters(*f);
  if (!matched.ok()) return respond(ErrorResponse(matched.status()));
  std::vector<int64_t> ids;
  for (const DeadLetterRecord& d : *matched) ids.push_back(d.id);
  Json job = ctx.replayer->Start(call.principal.ns, filter, std::move(ids), rate.get<double>());
  HttpResponse r = JsonResponse(202, {{"replay", job}});
  r.headers.emplace_back("Location", "/api/v1/dlq/replays/" + job["id"].get<std::string>());
  respond(std::move(r));
}

}  // namespace
}  // namespace dlq_api

void AddDeadLetterRoutes(Router& router, ApiContext& ctx) {
  using namespace dlq_api;
  // Literal paths before /dlq/{id}: the first match wins.
  router.Add("GET", "/api/v1/dlq", Scope::kRead,
             "Dead letters (steps that failed for good), oldest first: ?workflow, step, code, "
             "fingerprint, execution, status (open|replayed|discarded|any; default open), "
             "since, limit, cursor",
             [&ctx](const Call& call, Responder respond) { List(ctx, call, respond); });
  router.Add("GET", "/api/v1/dlq/stats", Scope::kRead,
             "Dead letters counted by workflow, by step and by error fingerprint (the filters "
             "of GET /api/v1/dlq)",
             [&ctx](const Call& call, Responder respond) { Stats(ctx, call, respond); });
  router.Add("POST", "/api/v1/dlq/replay", Scope::kWrite,
             "Replay the open entries a filter matches at a bounded rate: {filter, per_second, "
             "limit?}; answers 202 with the job",
             [&ctx](const Call& call, Responder respond) { BulkReplay(ctx, call, respond); });
  router.Add("GET", "/api/v1/dlq/replays", Scope::kRead, "Bulk replay jobs and their progress",
             [&ctx](const Call& call, Responder respond) {
               respond(JsonResponse(200, {{"replays", ctx.replayer->List(call.principal.ns)}}));
             });
  router.Add("GET", "/api/v1/dlq/replays/{id}", Scope::kRead, "One bulk replay job",
             [&ctx](const Call& call, Responder respond) {
               auto job = ctx.replayer->Get(call.principal.ns, call.Param("id"));
               if (!job.ok()) return respond(ErrorResponse(job.status()));
               respond(JsonResponse(200, *job));
             });
  router.Add("DELETE", "/api/v1/dlq/replays/{id}", Scope::kWrite,
             "Stop a bulk replay job; entries it has not reached stay open",
             [&ctx](const Call& call, Responder respond) {
               auto job = ctx.replayer->Cancel(call.principal.ns, call.Param("id"));
               if (!job.ok()) return respond(ErrorResponse(job.status()));
               respond(JsonResponse(200, *job));
             });
  router.Add("GET", "/api/v1/dlq/{id}", Scope::kRead,
             "A dead letter: input, every attempt's error, fingerprint, and its replay links",
             [&ctx](const Call& call, Responder respond) { Show(ctx, call, respond); });
  router.Add("POST", "/api/v1/dlq/{id}/replay", Scope::kWrite,
             "Run the entry's execution again from its step (completed steps kept, a fresh "
             "retry budget); the entry becomes replayed",
             [&ctx](const Call& call, Responder respond) { Replay(ctx, call, respond); });
  router.Add("DELETE", "/api/v1/dlq/{id}", Scope::kWrite,
             "Discard an open dead letter (kept, with status discarded)",
             [&ctx](const Call& call, Responder respond) { Discard(ctx, call, respond); });
}

}  // namespace baton::server
