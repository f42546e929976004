#include "cli/output.h"

#include <ctime>

namespace baton::cli {

std::string IsoTime(TimeMs t) {
  if (t == 0) return "";
  std::time_t s = static_cast<std::time_t>(t / 1000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(t % 1000));
  return buf;
}

namespace {
Json TimeOrNull(TimeMs t) {
  return t ? Json(IsoTime(t)) : Json(nullptr);
}
}  // namespace

Result<Json> ExecutionJson(Store* store, const std::string& id) {
  Result<ExecutionRecord> ex = store->GetExecution(id);
  if (!ex.ok()) return ex.status();
  Result<std::vector<StepRecord>> steps = store->GetSteps(id);
  if (!steps.ok()) return steps.status();
  Json out = {{"id", ex->id},
              {"workflow", ex->workflow},
              {"version", ex->version},
              {"status", ToString(ex->status)},
              {"progress", 0},
              {"input", ex->input},
              {"output", ex->output},
              {"error", ex->error},
              {"started_at", TimeOrNull(ex->started_at)},
              {"completed_at", TimeOrNull(ex->completed_at)},
              {"steps", Json::array()}};
  int64_t sum = 0;
  for (const auto& s : *steps) {
    sum += IsTerminal(s.status) ? 100 : s.progress;
    Json err = nullptr;
    if (s.error.is_object()) {
      err = {{"code", s.error.value("code", "")}, {"message", s.error.value("message", "")}};
    }
    Json step = {{"id", s.step_id},
                 {"status", ToString(s.status)},
                 {"attempts", s.attempts},
                 {"output", s.output},
                 {"error", err},
                 {"started_at", TimeOrNull(s.started_at)},
                 {"completed_at", TimeOrNull(s.completed_at)}};
    if (s.exit_code >= 0) step["exit_code"] = s.exit_code;
    out["steps"].push_back(std::move(step));
  }
  if (!steps->empty()) out["progress"] = sum / static_cast<int64_t>(steps->size());
  return out;
}

int ExitCodeFor(ExecutionStatus status) {
  return status == ExecutionStatus::kCompleted ? 0 : 1;
}

}  // namespace baton::cli
