#include "worker/persistent_handler.h"

#include <sys/wait.h>

#include <algorithm>
#include <utility>

#include "common/json_parse.h"
#include "runners/process.h"
#include "runners/shell_result.h"
#include "runners/shell_spec.h"
#include "worker/handler_result.h"

namespace baton::worker {
namespace {

using protocol::CommandError;
using protocol::CommandProgress;
using protocol::CommandResult;

// The code of a command whose persistent handler process ended under it.
constexpr const char* kHandlerExited = "HANDLER_EXITED";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

PersistentHandler::PersistentHandler(std::string name, std::vector<std::string> argv,
                                     runners::ProcessReactor* reactor, size_t max_line,
                                     size_t max_stderr, const std::atomic<bool>* stopped)
    : name_(std::move(name)),
      argv_(std::move(argv)),
      reactor_(reactor),
      max_line_(max_line),
      max_stderr_(max_stderr),
      stopped_(stopped) {}

void PersistentHandler::Start(const protocol::Command& c, HandlerCallbacks callbacks) {
  const std::string& id = c.assignment_id;
  if (commands_.count(id)) {
    if (callbacks.on_done) {
      callbacks.on_done(FailureResult(
          id, Status(errc::kInvalidArgument, "assignment " + id + " is already running")));
    }
    return;
  }
  if (!running_) {
    Status error;
    if (!Spawn(&error)) {
      if (callbacks.on_done) callbacks.on_done(FailureResult(id, error));
      return;
    }
  }
  Running& r = commands_[id];
  r.done = std::move(callbacks.on_done);
  r.progress = std::move(callbacks.on_progress);
  r.timeout = CommandTimeout(c);
  if (r.timeout.count() > 0) {
    std::weak_ptr<PersistentHandler> weak = weak_from_this();
    r.timer = reactor_->PostAfter(r.timeout, [weak, id] {
      if (auto self = weak.lock()) self->OnTimeout(id);
    });
  }
  reactor_->Write(job_id_, protocol::ToText(protocol::ServerMessage(c)) + "\n");
}

bool PersistentHandler::Spawn(Status* error) {
  Result<runners::ShellSpec> spec = runners::ParseShellSpec(
      {{"run", argv_}, {"env", {{"BATON_HANDLER", name_}, {"BATON_PERSISTENT", "1"}}}}, max_line_);
  if (!spec.ok()) {
    *error = spec.status();
    return false;
  }
  const uint64_t generation = ++generation_;
  job_id_ = "persistent/" + name_ + "/" + std::to_string(generation);
  line_.clear();
  stderr_ = std::make_unique<TailBuffer>(max_stderr_);
  runners::ProcessJob job;
  job.id = job_id_;
  job.spec = std::move(spec->process);
  job.keep_stdin_open = true;
  auto self = shared_from_this();
  job.on_stdout = [self, generation](std::string_view chunk) { self->OnStdout(generation, chunk); };
  job.on_stderr = [self, generation](std::string_view chunk) {
    if (generation == self->generation_) self->stderr_->Append(chunk);
  };
  job.on_done = [self, generation](runners::ProcessOutcome outcome) {
    self->OnExit(generation, outcome);
  };
  if (!reactor_->Submit(std::move(job))) {
    *error = Status(errc::kCancelled, "the handler runner is shut down");
    return false;
  }
  running_ = true;
  return true;
}

void PersistentHandler::OnStdout(uint64_t generation, std::string_view chunk) {
  if (generation != generation_) return;
  line_.append(chunk);
  size_t start = 0;
  for (size_t nl; (nl = line_.find('\n', start)) != std::string::npos; start = nl + 1) {
    OnLine(std::string_view(line_).substr(start, nl - start));
  }
  line_.erase(0, start);
  if (line_.size() > max_line_) {
    // A handler that writes a line without end is broken: stop it; its exit fails
    // what it held.
    stderr_->Append("\nbaton worker: a stdout line longer than " + std::to_string(max_line_) +
                    " bytes; the handler is stopped\n");
    line_.clear();
    reactor_->Cancel(job_id_);
  }
}

void PersistentHandler::OnLine(std::string_view text) {
  text = Trim(text);
  if (text.empty() || text.front() != '{') return;
  Json line;
  JsonParseError parse_error;
  JsonParseLimits limits;
  limits.max_depth = protocol::kMaxJsonDepth;
  if (!ParseJsonText(text, &line, &parse_error, limits) || !line.is_object()) return;
  const Json& id_value = line["assignment_id"];
  if (!id_value.is_string()) return;
  const std::string id = id_value.get<std::string>();
  auto it = commands_.find(id);
  if (it == commands_.end()) return;  // ended already (cancelled, timed out) or unknown
  if (line.contains("progress")) {
    const Json& p = line["progress"];
    if (!p.is_number() || !it->second.progress) return;
    CommandProgress m;
    m.assignment_id = id;
    m.progress = static_cast<int>(std::clamp(p.get<double>(), 0.0, 100.0));
    m.checkpoint = line.value("checkpoint", Json());
    m.data = line.value("data", Json());
    it->second.progress(std::move(m));
    return;
  }
  if (line.contains("error")) {
    // The handler's own words, whatever their types: nothing here may throw.
    const Json& e = line["error"];
    auto field = [&](const char* key) -> std::string {
      if (!e.is_object() || !e.contains(key)) return "";
      const Json& v = e[key];
      return v.is_string() ? v.get<std::string>()
                           : v.dump(-1, ' ', false, Json::error_handler_t::replace);
    };
    CommandError error;
    error.code = field("code");
    if (error.code.empty()) error.code = "HANDLER_ERROR";
    error.message = e.is_string() ? e.get<std::string>() : field("message");
    if (e.is_object() && e.contains("retryable") && e["retryable"].is_boolean()) {
      error.retryable = e["retryable"].get<bool>();
    }
    if (e.is_object() && e.contains("details") && e["details"].is_object()) {
      error.details = e["details"];
    }
    Finish(id, CommandResult::Failure(id, std::move(error), line.value("output", Json())));
    return;
  }
  if (line.contains("output")) Finish(id, CommandResult::Success(id, line["output"]));
}

void PersistentHandler::Tell(const std::string& assignment_id, const char* reason) {
  if (!running_) return;
  reactor_->Write(job_id_, Json{{"cancel", assignment_id}, {"reason", reason}}.dump() + "\n");
}

void PersistentHandler::OnTimeout(const std::string& assignment_id) {
  auto it = commands_.find(assignment_id);
  if (it == commands_.end()) return;
  it->second.timer = 0;  // fired
  const Duration timeout = it->second.timeout;
  Tell(assignment_id, "timeout");
  Finish(assignment_id,
         FailureResult(assignment_id,
                       Status(errc::kTimeout, "timed out after " + FormatDuration(timeout))));
}

bool PersistentHandler::Cancel(const std::string& assignment_id) {
  if (!commands_.count(assignment_id)) return false;
  Tell(assignment_id, "cancelled");
  Finish(assignment_id, FailureResult(assignment_id, Status(errc::kCancelled, "cancelled")));
  return true;
}

void PersistentHandler::Finish(const std::string& assignment_id, CommandResult result) {
  auto it = commands_.find(assignment_id);
  if (it == commands_.end()) return;
  Running r = std::move(it->second);
  commands_.erase(it);
  reactor_->CancelPosted(r.timer);
  if (r.done) r.done(std::move(result));
}

void PersistentHandler::OnExit(uint64_t generation, const runners::ProcessOutcome& outcome) {
  if (generation != generation_) return;
  running_ = false;
  Status why;
  if (stopped_->load()) {
    why = Status(errc::kCancelled, "the handler runner is shut down");
  } else if (!outcome.spawn_error.ok()) {
    why = outcome.spawn_error;
  } else {
    std::string message = "persistent handler '" + name_ + "' ";
    const int ws = outcome.wait_status;
    if (outcome.reaped && WIFSIGNALED(ws)) {
      message += "was killed by signal " + runners::SignalName(WTERMSIG(ws));
    } else if (outcome.reaped && WIFEXITED(ws)) {
      message += "exited with code " + std::to_string(WEXITSTATUS(ws));
    } else {
      message += "ended";
    }
    if (std::string tail = MessageTail(stderr_->Text(), kStderrInMessage); !tail.empty()) {
      message += ": " + tail;
    }
    why = Status(kHandlerExited, message);
  }
  std::vector<std::string> held;
  for (const auto& [id, r] : commands_) held.push_back(id);
  for (const std::string& id : held) Finish(id, FailureResult(id, why));
}

}  // namespace baton::worker
