// `baton events ID --follow` and `baton status ID --watch`: the server's live feed.
#include "cli/commands.h"
#include "cli/progress_view.h"
#include "client/event_stream.h"
#include "server/server.h"
#include "server/views.h"

#include <unistd.h>

#include <chrono>

namespace baton::cli {
namespace {

bool IsFinalEvent(const std::string& type) {
  return type == "execution.completed" || type == "execution.failed" ||
         type == "execution.timed_out" || type == "execution.cancelled";
}

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
  const Json& pr = m.value("progress", Json::object());
  p->status =
      ParseExecutionStatus(pr.value("status", "running")).value_or(ExecutionStatus::kRunning);
  p->percent = pr.value("percent", 0);
  p->layer = pr.value("layer", 0);
  p->layers = pr.value("layers", 0);
  p->steps_done = pr.value("steps_done", 0);
  p->steps_total = pr.value("steps_total", 0);
}

}  // namespace

int FollowExecution(const std::string& id, const client::Endpoint& endpoint, bool json,
                    bool watch) {
  auto stream =
      client::EventStream::Open(endpoint, "execution=" + client::UrlEncode(id) + "&since=0");
  if (!stream.ok()) {
    std::fprintf(stderr, "baton: %s: %s\n", stream.status().code().c_str(),
                 stream.status().message().c_str());
    return 1;
  }
  const bool live = watch && isatty(STDERR_FILENO);
  ProgressView view(stderr, live, /*quiet=*/false);
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
      ExecutionProgress p;
      ToRecords(m, id, &e, &p);
      view.OnEvent(e, p);
    } else if (json) {
      std::printf("%s\n", m.dump().c_str());
      std::fflush(stdout);
    } else {
      std::printf("%5s %s %-18s %s\n", m["seq"].dump().c_str(), m.value("time", "").c_str(),
                  type.c_str(), m.value("step_id", "").c_str());
      std::fflush(stdout);
    }
    if (IsFinalEvent(type)) {
      finished = true;
      final_status =
          type == "execution.completed" ? ExecutionStatus::kCompleted : ExecutionStatus::kFailed;
    }
  }
  if (watch) view.Finish();
  return ExitCodeFor(final_status);
}

}  // namespace baton::cli
