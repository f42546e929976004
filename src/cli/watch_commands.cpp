// `baton events ID --follow` and `baton status ID --watch`: the server's live feed.
#include "cli/client_common.h"
#include "cli/commands.h"
#include "cli/progress_view.h"
#include "client/api_client.h"
#include "client/event_stream.h"
#include "server/event_hub.h"
#include "server/server.h"
#include "server/views.h"

#include <unistd.h>

#include <chrono>
#include <map>

namespace baton::cli {
namespace {

bool IsFinalEvent(const std::string& type) {
  return type == "execution.completed" || type == "execution.failed" ||
         type == "execution.timed_out" || type == "execution.cancelled";
}

constexpr const char* kFinalEvents =
    "execution.completed,execution.failed,execution.timed_out,execution.cancelled";

TimeMs NowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// The feed's JSON back into what observers take.
void ToRecords(const Json& m, const std::string& id, EventRecord* e, ExecutionProgress* p) {
  e->execution_id = id;
  e->seq = m.value("seq", int64_t{0});
  e->position = m.value("position", int64_t{0});
  e->type = m.value("type", "");
  e->step_id = m.value("step_id", "");
  e->attempt = m.value("attempt", 0);
  e->data = m.value("data", Json());
  e->time = ParseTime(m.value("time", "")).ok() ? *ParseTime(m.value("time", "")) : NowMs();
  p->execution_id = id;
  // Replayed (stored) events carry no progress: the last known stays.
  if (!m.contains("progress") || !m["progress"].is_object()) return;
  const Json& pr = m["progress"];
  p->status =
      ParseExecutionStatus(pr.value("status", "running")).value_or(ExecutionStatus::kRunning);
  p->percent = pr.value("percent", 0);
  p->layer = pr.value("layer", 0);
  p->layers = pr.value("layers", 0);
  p->steps_done = pr.value("steps_done", 0);
  p->steps_total = pr.value("steps_total", 0);
}

// The progress an execution's detail (GET /executions/{id}) shows: where a watch that
// attaches mid-run starts, before any live event says more.
ExecutionProgress ProgressOfDetail(const Json& detail) {
  ExecutionProgress p;
  p.execution_id = detail.value("id", "");
  p.status =
      ParseExecutionStatus(detail.value("status", "running")).value_or(ExecutionStatus::kRunning);
  p.workflow = detail.value("workflow", "");
  const Json steps = detail.value("steps", Json::array());
  p.steps_total = static_cast<int>(steps.size());
  for (const Json& s : steps) {
    auto status = ParseStepStatus(s.value("status", ""));
    if (status && IsTerminal(*status)) ++p.steps_done;
  }
  if (detail.contains("progress") && detail["progress"].is_number_integer()) {
    p.percent = detail["progress"].get<int>();
  }
  p.layers = static_cast<int>(detail.value("layers", Json::array()).size());
  const Json layer = detail.value("current_layer", Json());
  p.layer = layer.is_number_integer() ? layer.get<int>() : p.layers;
  return p;
}

// The outcome as `baton run` ends with it, read from the server.
int PrintOutcomeOf(const client::ApiClient& api, const std::string& id, bool live) {
  auto e = api.Call("GET", "/api/v1/executions/" + client::UrlEncode(id));
  if (!e.ok()) {
    std::fprintf(stderr, "baton: %s: %s\n", e.status().code().c_str(),
                 e.status().message().c_str());
    return 1;
  }
  const ExecutionStatus status =
      ParseExecutionStatus(e->value("status", "failed")).value_or(ExecutionStatus::kFailed);
  PrintOutcome(stderr, id, status, e->value("error", Json()), e->value("output", Json()), live,
               /*with_output=*/true);
  return ExitCodeFor(status);
}

}  // namespace

int FollowExecution(const std::string& id, const client::Endpoint& endpoint, bool json, bool watch,
                    const std::string& types) {
  // With types, the final events are asked for too: they say when to stop. The server's
  // own parser checks the list (and refuses it as the feed would) and then matches by it.
  std::string query = "execution=" + client::UrlEncode(id) + "&since=0";
  server::EventFilter wanted;
  if (!types.empty()) {
    if (Status s = server::ParseEventTypes(types, &wanted); !s.ok()) {
      std::fprintf(stderr, "baton: %s: %s\n", s.code().c_str(), s.message().c_str());
      return 1;
    }
    query += "&types=" + client::UrlEncode(types + "," + kFinalEvents);
  }
  auto stream = client::EventStream::Open(endpoint, query);
  if (!stream.ok()) {
    std::fprintf(stderr, "baton: %s: %s\n", stream.status().code().c_str(),
                 stream.status().message().c_str());
    return 1;
  }
  const bool live = watch && isatty(STDERR_FILENO);
  ProgressView view(stderr, live, /*quiet=*/false);
  const client::ApiClient api(endpoint);
  ExecutionProgress progress;
  if (watch) {
    // Attached at any point: the names and the progress so far come from the detail.
    auto detail = api.Call("GET", "/api/v1/executions/" + client::UrlEncode(id));
    if (!detail.ok()) {
      std::fprintf(stderr, "baton: %s: %s\n", detail.status().code().c_str(),
                   detail.status().message().c_str());
      return 1;
    }
    std::map<std::string, std::string> names;
    for (const Json& s : detail->value("steps", Json::array())) {
      if (s.contains("name") && s["name"].is_string()) names[s.value("id", "")] = s["name"];
    }
    view.SetStepNames(std::move(names));
    progress = ProgressOfDetail(*detail);
  }
  ExecutionStatus final_status = ExecutionStatus::kRunning;
  bool finished = false;
  while (!finished) {
    auto next = (*stream)->Next(200);
    if (!next.ok()) {
      std::fprintf(stderr, "baton: %s\n", next.status().message().c_str());
      return 1;
    }
    if (watch) view.Tick(NowMs());
    if (!next->has_value()) continue;
    const Json& m = **next;
    const std::string type = m.value("type", "");
    if (type == "ready") continue;
    if (type == "gap") {
      std::fprintf(stderr, "baton: fell behind, %s events skipped (see `baton events %s`)\n",
                   m["missed"].dump().c_str(), id.c_str());
      continue;
    }
    if (watch) {
      EventRecord e;
      ToRecords(m, id, &e, &progress);
      view.OnEvent(e, progress);
    } else if (!wanted.MatchesType(type)) {
      // A final event asked for only to know when to stop.
    } else if (json) {
      std::printf("%s\n", m.dump().c_str());
      std::fflush(stdout);
    } else {
      // The same line as `baton events`: with the attempt, the error and the reason.
      std::printf("%5s %s %-18s %s%s\n", m["seq"].dump().c_str(), m.value("time", "").c_str(),
                  type.c_str(), m.value("step_id", "").c_str(), EventDetail(m).c_str());
      std::fflush(stdout);
    }
    if (IsFinalEvent(type)) {
      finished = true;
      final_status =
          type == "execution.completed" ? ExecutionStatus::kCompleted : ExecutionStatus::kFailed;
    }
  }
  if (watch) {
    view.Finish();
    return PrintOutcomeOf(api, id, live);
  }
  return ExitCodeFor(final_status);
}

}  // namespace baton::cli
