// POST /api/v1/executions/bulk: cancel, pause, resume or retry every execution a filter
// matches (the dashboard's bulk actions over its current list). A dry run first says how
// many the action would touch, so a confirmation can name the number.
#include "server/api.h"
#include "server/execution_filter.h"
#include "server/submitter.h"

#include <memory>
#include <mutex>

namespace baton::server {
// A namespace of its own, so that unity builds can compile it with the other routes.
namespace executions_bulk_api {
namespace {

constexpr size_t kDefaultMax = 1000;
constexpr size_t kLargestMax = 10'000;
constexpr size_t kListPage = 500;
constexpr size_t kFailuresListed = 50;

enum class Action { kCancel, kPause, kResume, kRetry };

// The statuses an action applies to: the others are left out, not failed.
std::vector<ExecutionStatus> AppliesTo(Action a) {
  using S = ExecutionStatus;
  switch (a) {
    case Action::kCancel:
      return {S::kPending, S::kQueued, S::kRunning, S::kPaused};
    case Action::kPause:
      return {S::kRunning};
    case Action::kResume:
      return {S::kPaused};
    case Action::kRetry:
      return {S::kFailed, S::kTimeout, S::kCancelled};
  }
  return {};
}

// What one bulk request does, and what became of it; the last answer responds.
struct Progress {
  std::mutex mu;
  size_t pending = 0;
  size_t applied = 0;
  Json failures = Json::array();
  size_t failed = 0;
};

void Bulk(ApiContext& ctx, const Call& call, const Responder& respond) {
  Result<Json> body = ParseJsonBody(*call.request);
  if (!body.ok()) return respond(ErrorResponse(body.status()));
  if (auto bad = UnknownField(*body, {"action", "filter", "dry_run", "max", "reason"})) {
    return respond(std::move(*bad));
  }
  static const std::map<std::string, Action> kActions = {{"cancel", Action::kCancel},
                                                         {"pause", Action::kPause},
                                                         {"resume", Action::kResume},
                                                         {"retry", Action::kRetry}};
  const Json& action_json = body->value("action", Json(nullptr));
  const auto action_it =
      action_json.is_string() ? kActions.find(action_json.get<std::string>()) : kActions.end();
  if (action_it == kActions.end()) {
    return respond(FieldError("action", "one of cancel, pause, resume, retry"));
  }
  const Action action = action_it->second;
  const std::string action_name = action_it->first;

  const Json& filter_json = body->value("filter", Json::object());
  if (!filter_json.is_object()) return respond(FieldError("filter", "must be an object"));
  if (auto bad = UnknownField(filter_json, {"status", "workflow", "parent", "since", "until", "q"},
                              "filter.")) {
    return respond(std::move(*bad));
  }
  for (const auto& [k, v] : filter_json.items()) {
    if (!v.is_string()) {
      return respond(FieldError("filter." + k, "must be a string, as in the list's query"));
    }
  }
  ExecutionFilter filter;
  filter.ns = call.principal.ns;
  if (auto bad = ReadExecutionFilter(
          [&filter_json](const char* name) { return filter_json.value(name, std::string()); },
          &filter)) {
    return respond(std::move(*bad));
  }
  const Json& dry = body->value("dry_run", Json(false));
  if (!dry.is_boolean()) return respond(FieldError("dry_run", "must be true or false"));
  size_t max = kDefaultMax;
  if (body->contains("max")) {
    const Json& m = (*body)["max"];
    if (!m.is_number_integer() || m.get<int64_t>() < 1 ||
        m.get<int64_t>() > static_cast<int64_t>(kLargestMax)) {
      return respond(FieldError("max", "an integer from 1 to " + std::to_string(kLargestMax)));
    }
    max = m.get<size_t>();
  }
  std::string reason = "cancelled in bulk through the API";
  if (body->contains("reason")) {
    const Json& r = (*body)["reason"];
    if (!r.is_string()) return respond(FieldError("reason", "must be a string"));
    reason = r.get<std::string>().substr(0, 500);
  }

  // The matching executions the action applies to, up to `max`, newest first within each
  // status: one listing per status, so rows it would leave out are never read.
  std::vector<std::string> ids;
  bool truncated = false;
  for (ExecutionStatus status : AppliesTo(action)) {
    if (filter.status && *filter.status != status) continue;
    ExecutionFilter f = filter;
    f.status = status;
    f.limit = kListPage;
    while (!truncated) {
      auto page = ctx.store->ListExecutions(f);
      if (!page.ok()) return respond(ErrorResponse(page.status()));
      for (const ExecutionRecord& e : *page) {
        if (ids.size() == max) {
          truncated = true;
          break;
        }
        ids.push_back(e.id);
      }
      if (page->size() < f.limit) break;
      f.after = ExecutionCursor{page->back().created_at, page->back().id};
    }
  }
  Json answer = {{"action", action_name},
                 {"matched", ids.size()},
                 {"truncated", truncated},
                 {"dry_run", dry.get<bool>()}};
  if (dry.get<bool>() || ids.empty()) {
    answer["applied"] = 0;
    answer["failed"] = 0;
    answer["failures"] = Json::array();
    return respond(JsonResponse(200, answer));
  }

  // Each as its own request would be; the answer once every one has answered. One that
  // fails (it finished meanwhile, say) is listed, and the others go on.
  auto progress = std::make_shared<Progress>();
  progress->pending = ids.size();
  auto done = [progress, respond, answer](const std::string& id, const Status& st) mutable {
    std::lock_guard lock(progress->mu);
    if (st.ok()) {
      ++progress->applied;
    } else {
      ++progress->failed;
      if (progress->failures.size() < kFailuresListed) {
        progress->failures.push_back({{"id", id}, {"code", st.code()}, {"message", st.message()}});
      }
    }
    if (--progress->pending > 0) return;
    answer["applied"] = progress->applied;
    answer["failed"] = progress->failed;
    answer["failures"] = std::move(progress->failures);
    respond(JsonResponse(200, answer));
  };
  for (const std::string& id : ids) {
    auto one = [done, id](Status st) mutable { done(id, st); };
    switch (action) {
      case Action::kCancel:
        ctx.submitter->Control(id, ControlOp::kCancel, reason, one);
        break;
      case Action::kPause:
        ctx.submitter->Control(id, ControlOp::kPause, "", one);
        break;
      case Action::kResume:
        ctx.submitter->Control(id, ControlOp::kResume, "", one);
        break;
      case Action::kRetry:
        ctx.submitter->Retry(id, "", one);
        break;
    }
  }
}

}  // namespace
}  // namespace executions_bulk_api

void AddExecutionBulkRoutes(Router& router, ApiContext& ctx) {
  router.Add("POST", "/api/v1/executions/bulk", Scope::kWrite,
             "Cancel, pause, resume or retry every execution a filter matches (up to max, "
             "default 1,000): {action, filter: {status, workflow, parent, since, until, q}, "
             "dry_run?, max?, reason?}; a dry run says how many it would touch",
             [&ctx](const Call& call, Responder respond) {
               executions_bulk_api::Bulk(ctx, call, respond);
             });
}

}  // namespace baton::server
