#include "server/views.h"

#include <baton/workflow.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <tuple>

namespace baton {

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

Result<Json> ExecutionJson(ExecutionStore* store, const std::string& id) {
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
  if (ex->vars.is_object()) out["vars"] = ex->vars;  // set by steps' set_vars
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
                 // The last progress the step reported (0..99 while it runs), 100 once done.
                 {"progress", IsTerminal(s.status) ? 100 : s.progress},
                 {"output", s.output},
                 {"error", err},
                 {"started_at", TimeOrNull(s.started_at)},
                 {"completed_at", TimeOrNull(s.completed_at)}};
    if (s.exit_code >= 0) step["exit_code"] = s.exit_code;
    if (!s.stderr_tail.empty()) step["stderr"] = s.stderr_tail;
    out["steps"].push_back(std::move(step));
  }
  if (!steps->empty()) out["progress"] = sum / static_cast<int64_t>(steps->size());
  return out;
}

Result<TimeMs> ParseTime(const std::string& text) {
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    if (text.size() > 15) return Status(errc::kInvalidArgument, "time out of range: " + text);
    return static_cast<TimeMs>(std::stoll(text));
  }
  std::tm tm{};
  int ms = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6) {
    return Status(errc::kInvalidArgument,
                  "bad time '" + text + "' (expected 2026-11-21T10:00:00Z or epoch milliseconds)");
  }
  std::string rest = text.substr(static_cast<size_t>(consumed));
  if (!rest.empty() && rest[0] == '.') {
    size_t digits = 1;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) {
      if (digits <= 3) ms = ms * 10 + (rest[digits] - '0');
      ++digits;
    }
    for (size_t d = digits; d <= 3; ++d) ms *= 10;
    rest = rest.substr(digits);
  }
  if (rest != "Z" && rest != "+00:00") {
    return Status(errc::kInvalidArgument, "bad time '" + text + "' (use UTC: a trailing Z)");
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<TimeMs>(timegm(&tm)) * 1000 + ms;
}

Json ExecutionSummaryJson(const ExecutionRecord& e) {
  return {{"id", e.id},
          {"namespace", e.ns},
          {"workflow", e.workflow},
          {"version", e.version},
          {"status", ToString(e.status)},
          // By name, as a submit gives it (stored as its rank, 0 = low .. 3 = critical).
          {"priority", e.priority >= 0 && e.priority <= 3
                           ? Json(ToString(static_cast<Priority>(e.priority)))
                           : Json(e.priority)},
          {"parent_id", e.parent_id.empty() ? Json(nullptr) : Json(e.parent_id)},
          {"parent_step", e.parent_step.empty() ? Json(nullptr) : Json(e.parent_step)},
          {"idempotency_key", e.idempotency_key.empty() ? Json(nullptr) : Json(e.idempotency_key)},
          {"error", e.error},
          {"created_at", TimeOrNull(e.created_at)},
          {"started_at", TimeOrNull(e.started_at)},
          {"completed_at", TimeOrNull(e.completed_at)}};
}

Result<Json> ExecutionDetailJson(ExecutionStore* store, const ExecutionRecord& e) {
  Result<Json> out = ExecutionJson(store, e.id);
  if (!out.ok()) return out;
  Json& j = *out;
  const Json summary = ExecutionSummaryJson(e);  // a named object: items() only refers to it
  for (const auto& [k, v] : summary.items()) j[k] = v;
  const TimeMs end = e.completed_at;
  j["duration_ms"] = e.started_at && end ? Json(end - e.started_at) : Json(nullptr);
  // Child workflows its steps started (every attempt's), oldest first.
  ExecutionFilter children;
  children.parent_id = e.id;
  children.ns = e.ns;
  children.limit = kMaxChildrenListed;
  auto found = store->ListExecutions(children);
  if (!found.ok()) return found.status();
  std::sort(found->begin(), found->end(), [](const ExecutionRecord& a, const ExecutionRecord& b) {
    return std::tie(a.created_at, a.id) < std::tie(b.created_at, b.id);
  });
  j["children"] = Json::array();
  for (const ExecutionRecord& c : *found) {
    j["children"].push_back({{"id", c.id},
                             {"workflow", c.workflow},
                             {"version", c.version},
                             {"status", ToString(c.status)},
                             {"parent_step", c.parent_step},
                             {"parent_attempt", c.parent_attempt},
                             {"error", c.error},
                             {"created_at", TimeOrNull(c.created_at)},
                             {"completed_at", TimeOrNull(c.completed_at)}});
  }
  // Attempts per step, in order.
  auto attempts = store->GetAttempts(e.id);
  if (!attempts.ok()) return attempts.status();
  std::map<std::string, Json> by_step;
  for (const AttemptRecord& a : *attempts) {
    by_step[a.step_id].push_back({{"attempt", a.attempt},
                                  {"status", ToString(a.status)},
                                  {"assignment_id", a.assignment_id},
                                  {"error", a.error},
                                  {"started_at", TimeOrNull(a.started_at)},
                                  {"completed_at", TimeOrNull(a.completed_at)}});
  }
  std::map<std::string, bool> terminal;
  for (Json& step : j["steps"]) {
    const std::string id = step["id"];
    auto it = by_step.find(id);
    step["attempt_history"] = it == by_step.end() ? Json::array() : it->second;
    terminal[id] = IsTerminal(
        ParseStepStatus(step["status"].get<std::string>()).value_or(StepStatus::kPending));
  }
  // The layer view from the snapshot the execution runs.
  j["layers"] = Json::array();
  j["current_layer"] = nullptr;
  auto def = WorkflowFromSnapshot(e.definition, "execution " + e.id);
  if (def.ok()) {
    // Each step's `name` from the definition: what a person calls it.
    std::map<std::string, const std::string*> names;
    for (const StepDef& s : def->steps) {
      if (!s.name.empty()) names.emplace(s.id, &s.name);
    }
    for (Json& step : j["steps"]) {
      auto it = names.find(step["id"].get<std::string>());
      if (it != names.end()) step["name"] = *it->second;
    }
    DagAnalysis dag = AnalyzeDag(*def);
    for (size_t l = 0; l < dag.layers.size(); ++l) {
      Json ids = Json::array();
      bool done = true;
      for (int i : dag.layers[l]) {
        const std::string& id = def->steps[static_cast<size_t>(i)].id;
        ids.push_back(id);
        done = done && terminal[id];
      }
      if (!done && j["current_layer"].is_null()) j["current_layer"] = l + 1;
      j["layers"].push_back({{"index", l + 1}, {"steps", ids}, {"done", done}});
    }
  }
  return out;
}

Json EventJson(const EventRecord& e) {
  Json j = {{"execution_id", e.execution_id}, {"seq", e.seq},
            {"position", e.position},         {"type", e.type},
            {"time", IsoTime(e.time)},        {"data", e.data}};
  if (!e.step_id.empty()) j["step_id"] = e.step_id;
  if (e.attempt > 0) j["attempt"] = e.attempt;
  return j;
}

Json SignalJson(const SignalRecord& s) {
  return {{"execution_id", s.execution_id},
          {"seq", s.seq},
          {"name", s.name},
          {"payload", s.payload},
          {"sent_at", IsoTime(s.sent_at)},
          {"taken_by", s.consumed_by.empty() ? Json(nullptr) : Json(s.consumed_by)},
          {"taken_at", TimeOrNull(s.consumed_at)}};
}

Json DeadLetterJson(const DeadLetterRecord& d) {
  Json last = d.errors.is_array() && !d.errors.empty() ? d.errors.back() : Json(nullptr);
  Json replay = nullptr;
  if (d.replay_attempt > 0) replay = {{"attempt", d.replay_attempt}};
  return {{"id", d.id},
          {"status", d.status},
          {"execution_id", d.execution_id},
          {"workflow", d.workflow},
          {"version", d.version},
          {"step_id", d.step_id},
          {"code", d.code},
          {"fingerprint", d.fingerprint},
          {"error", last},
          {"errors", d.errors},
          {"input", d.input},
          {"attempts", {{"first", d.first_attempt}, {"last", d.last_attempt}}},
          {"first_failed_at", IsoTime(d.first_failed_at)},
          {"last_failed_at", IsoTime(d.last_failed_at)},
          {"created_at", IsoTime(d.created_at)},
          {"resolved_at", TimeOrNull(d.resolved_at)},
          {"replay", replay}};
}

Json BreakerJson(const BreakerRecord& b) {
  return {{"key", b.key},
          {"namespace", b.ns},
          {"state", b.state},
          {"failures", b.failures},
          {"successes", b.successes},
          {"trips", b.trips},
          {"opened_at", TimeOrNull(b.opened_at)},
          {"probe_at", b.state == kBreakerClosed ? Json() : TimeOrNull(b.probe_at)},
          {"last_error", b.last_error},
          {"failure_threshold", b.failure_threshold},
          {"recovery_timeout", FormatDuration(Duration(b.recovery_timeout_ms))},
          {"success_threshold", b.success_threshold},
          {"updated_at", TimeOrNull(b.updated_at)}};
}

Json CacheEntryJson(const CacheEntryRecord& e, bool with_output) {
  Json j = {{"key", e.key},
            {"namespace", e.ns},
            {"workflow", e.workflow},
            {"step_id", e.step_id},
            {"execution_id", e.execution_id},
            {"bytes", e.bytes},
            {"created_at", TimeOrNull(e.created_at)},
            {"expires_at", TimeOrNull(e.expires_at)},
            {"last_hit_at", TimeOrNull(e.last_hit_at)},
            {"hits", e.hits}};
  if (with_output) j["output"] = e.output;
  return j;
}

namespace {

std::string Quoted(const std::vector<std::string>& ids) {
  std::string out;
  for (const std::string& id : ids) out += (out.empty() ? "'" : ", '") + id + "'";
  return out;
}

std::string WaitSentence(const StepWait& w, const std::string& execution_id,
                         const std::string& no_worker) {
  const std::string timeout = w.until ? "; times out at " + IsoTime(w.until) : "";
  if (!no_worker.empty()) return "waits for a worker: " + no_worker;
  if (w.kind == "upstream") {
    return (w.steps.size() == 1 ? "waits for step " : "waits for steps ") + Quoted(w.steps) +
           " to finish";
  }
  if (w.kind == "paused") {
    return "the execution is paused: `baton resume " + execution_id + "` lets it go on";
  }
  if (w.kind == "max_parallel") {
    return "the workflow's max_parallel (" + std::to_string(w.limit) +
           ") is reached: " + Quoted(w.steps) + (w.steps.size() == 1 ? " is" : " are") + " running";
  }
  if (w.kind == "capacity") {
    return "every local worker slot (" + std::to_string(w.limit) + ") is busy";
  }
  if (w.kind == "retry_backoff") {
    std::string error = w.error.is_object() ? w.error.value("code", "") : "";
    if (w.error.is_object() && w.error.contains("message") && w.error["message"].is_string()) {
      error += ": " + w.error["message"].get<std::string>().substr(0, 200);
    }
    return "attempt " + std::to_string(w.attempt) + " of " + std::to_string(w.max_attempts) +
           " failed (" + error + "); the next starts at " + IsoTime(w.until);
  }
  if (w.kind == "breaker") {
    return "circuit breaker '" + w.breaker + "' is open: attempt " + std::to_string(w.attempt) +
           " of " + std::to_string(w.max_attempts) + " was refused; the next starts at " +
           IsoTime(w.until) + " (`baton breaker reset " + w.breaker + "` closes it)";
  }
  if (w.kind == "cache") {
    return "an identical step (" + Quoted(w.steps) +
           ") is running: its result, cached, will be this one's";
  }
  if (w.kind == "signal") {
    return "waits for signal '" + w.signal + "' (`baton signal " + execution_id + " " + w.signal +
           " --data JSON`)" + timeout;
  }
  if (w.kind == "pool") {
    return "waits for a slot of pool '" + w.breaker + "' (" + std::to_string(w.limit) +
           " slots), held by " + (w.steps.empty() ? std::string("nobody") : Quoted(w.steps));
  }
  if (w.kind == "concurrency") {
    return "the execution is queued: its workflow runs at most " + std::to_string(w.limit) +
           " at once for concurrency key '" + w.breaker + "', held by " +
           (w.steps.empty() ? std::string("nobody yet") : Quoted(w.steps));
  }
  if (w.kind == "max_running") {
    return "the execution is queued: the server runs at most " + std::to_string(w.limit) +
           " executions at once (--max-running-executions)";
  }
  if (w.kind == "child") {
    return w.steps.empty() ? "its child execution is being recovered" + timeout
                           : "its child execution " + w.steps[0] + " runs (`baton status " +
                                 w.steps[0] + "`)" + timeout;
  }
  if (w.kind == "timer") return w.until ? "waits until " + IsoTime(w.until) : "waits";
  if (w.kind == "instances") {
    return std::to_string(w.done) + " of " + std::to_string(w.total) + " items finished" + timeout;
  }
  if (w.kind == "running") {
    return "attempt " + std::to_string(w.attempt) + " running since " + IsoTime(w.since) + timeout;
  }
  return "ready: starts on the engine's next turn";
}

}  // namespace

Json StepWaitJson(const StepWait& w, const std::string& execution_id,
                  const std::string& no_worker) {
  Json j = {{"step_id", w.step_id},
            {"status", ToString(w.status)},
            {"kind", no_worker.empty() ? w.kind : "worker"},
            {"reason", WaitSentence(w, execution_id, no_worker)},
            {"since", TimeOrNull(w.since)},
            {"until", TimeOrNull(w.until)}};
  if (w.kind == "instances") {
    // A for_each's items: how many finished and started, and which run now.
    Json running = Json::array();
    for (const std::string& item : w.steps) running.push_back(std::stoll(item));
    j["instances"] = {{"done", w.done},
                      {"total", w.total},
                      {"started", w.limit},
                      {"running", std::move(running)}};
  } else if (!w.steps.empty()) {
    j["steps"] = w.steps;
  }
  if (!w.signal.empty()) j["signal"] = w.signal;
  if (!w.breaker.empty()) {
    j[w.kind == "concurrency" ? "key" : w.kind == "pool" ? "pool" : "breaker"] = w.breaker;
  }
  return j;
}

Json WorkflowJson(const WorkflowRecord& w, bool with_definition) {
  Json j = {{"name", w.name},
            {"version", w.version},
            {"namespace", w.ns},
            {"created_at", TimeOrNull(w.created_at)}};
  if (with_definition) j["definition"] = w.definition;
  return j;
}

int ExitCodeFor(ExecutionStatus status) {
  return status == ExecutionStatus::kCompleted ? 0 : 1;
}

}  // namespace baton
