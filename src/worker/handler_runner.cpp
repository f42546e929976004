// HandlerRunner: each command becomes a job on one ProcessReactor (handlers and the shell
// built-in) or a request on one http runner; results go back through the reactor's
// thread.
#include "worker/handler_runner.h"

#include <baton/workflow.h>

#include <algorithm>
#include <atomic>
#include <utility>

#include "runners/reactor.h"
#include "runners/shell_result.h"
#include "runners/shell_spec.h"
#include "worker/handler_output.h"
#include "worker/handler_result.h"
#include "worker/persistent_handler.h"

namespace baton::worker {
namespace {

using protocol::Command;
using protocol::CommandProgress;
using protocol::CommandResult;
using DoneFn = std::function<void(CommandResult)>;
using SharedDone = std::shared_ptr<DoneFn>;

void Call(const DoneFn& done, CommandResult result) {
  if (done) done(std::move(result));
}

CommandResult ShutDownResult(const std::string& assignment_id) {
  return FailureResult(assignment_id, Status(errc::kCancelled, "the handler runner is shut down"));
}

// The BATON_* variables of a handler (and of a shell built-in).
Json HandlerEnv(const Command& c) {
  auto text = [](const Json& v) { return v.is_null() ? std::string() : runners::ArgText(v); };
  return {
      {"BATON_EXECUTION_ID", c.execution.execution_id},
      {"BATON_STEP_ID", c.execution.step_id},
      {"BATON_ATTEMPT", std::to_string(c.execution.attempt)},
      {"BATON_ASSIGNMENT_ID", c.assignment_id},
      {"BATON_COMMAND", c.command},
      {"BATON_RESOURCE", text(c.resource)},
      {"BATON_CHECKPOINT",
       c.checkpoint.is_null() ? std::string()
                              : c.checkpoint.dump(-1, ' ', false, Json::error_handler_t::replace)}};
}

// An http spec whose request.timeout is at most `limit` (when limit > 0). A spec the
// http runner will refuse is left as it is, for the runner to say why.
Json CapHttpTimeout(Json spec, Duration limit) {
  if (limit.count() <= 0 || !spec.is_object()) return spec;
  auto request = spec.find("request");
  if (request == spec.end() || !request->is_object()) return spec;
  if (auto t = request->find("timeout"); t != request->end() && !t->is_null()) {
    Result<Duration> own = ParseDuration(*t);
    if (!own.ok() || *own <= limit) return spec;
  }
  (*request)["timeout"] = FormatDuration(limit);
  return spec;
}

// The stream state of one handler process, used on the I/O thread only.
struct HandlerStreams {
  HandlerStreams(size_t max_stdout, size_t max_stderr, StdoutParser::ProgressFn on_progress)
      : out(max_stdout, std::move(on_progress)), err(max_stderr) {}
  StdoutParser out;
  TailBuffer err;
};

}  // namespace

struct HandlerRunner::Impl {
  explicit Impl(HandlerRunnerOptions o) : options(std::move(o)), reactor(options.kill_grace) {
    if (options.builtin_http) http = NewHttpRunner(options.http);
    if (options.persistent) {
      for (const auto& [name, argv] : options.handlers) {
        persistent[name] = std::make_shared<PersistentHandler>(
            name, argv, &reactor, options.max_stdout, options.max_stderr, &stopped);
      }
    }
  }

  const HandlerRunnerOptions options;
  std::atomic<bool> stopped{false};
  runners::ProcessReactor reactor;
  std::unique_ptr<Runner> http;  // after the reactor: destroyed first
  // With options.persistent, one per handler; used on the reactor's thread only.
  std::map<std::string, std::shared_ptr<PersistentHandler>> persistent;

  // Reports `result` on the I/O thread (or, once that is gone, on this one).
  void Report(const SharedDone& done, CommandResult result) {
    if (!reactor.Post([done, result]() mutable { Call(*done, std::move(result)); })) {
      Call(*done, std::move(result));
    }
  }
  // Submits `job`, or reports that the runner is shut down.
  void Submit(runners::ProcessJob job, const SharedDone& done) {
    std::string id = job.id;
    if (!reactor.Submit(std::move(job))) Call(*done, ShutDownResult(id));
  }

  void StartHandler(const Command& c, const std::vector<std::string>& argv,
                    HandlerCallbacks callbacks);
  void StartShell(const Command& c, const SharedDone& done);
  void StartHttp(const Command& c, const SharedDone& done);
};

void HandlerRunner::Impl::StartHandler(const Command& c, const std::vector<std::string>& argv,
                                       HandlerCallbacks callbacks) {
  auto done = std::make_shared<DoneFn>(std::move(callbacks.on_done));
  // The shell spec code builds the argv and the environment (with its NUL checks).
  Result<runners::ShellSpec> spec =
      runners::ParseShellSpec({{"run", argv}, {"env", HandlerEnv(c)}}, options.max_stdout);
  if (!spec.ok()) return Report(done, FailureResult(c.assignment_id, spec.status()));

  auto progress = [id = c.assignment_id, fn = std::move(callbacks.on_progress)](
                      int value, Json checkpoint, Json data) {
    if (!fn) return;
    CommandProgress m;
    m.assignment_id = id;
    m.progress = value;
    m.checkpoint = std::move(checkpoint);
    m.data = std::move(data);
    fn(std::move(m));
  };
  auto streams =
      std::make_shared<HandlerStreams>(options.max_stdout, options.max_stderr, std::move(progress));

  runners::ProcessJob job;
  job.id = c.assignment_id;
  job.spec = std::move(spec->process);
  job.spec.stdin_data = protocol::ToText(protocol::ServerMessage(c)) + "\n";
  job.timeout = CommandTimeout(c);
  job.on_stdout = [streams](std::string_view chunk) { streams->out.Feed(chunk); };
  job.on_stderr = [streams](std::string_view chunk) { streams->err.Append(chunk); };
  job.on_done = [streams, done, id = c.assignment_id,
                 timeout = job.timeout](runners::ProcessOutcome outcome) {
    Call(*done, HandlerResult(id, outcome, streams->out.Finish(), streams->err.Text(), timeout));
  };
  Submit(std::move(job), done);
}

void HandlerRunner::Impl::StartShell(const Command& c, const SharedDone& done) {
  Json data = c.data;
  if (data.is_object()) {
    Json& env = data["env"];
    if (env.is_null()) env = Json::object();
    if (env.is_object()) {
      const Json vars = HandlerEnv(c);
      for (auto it = vars.begin(); it != vars.end(); ++it) env.emplace(it.key(), it.value());
    }
  }
  Result<runners::ShellSpec> spec = runners::ParseShellSpec(data, options.max_stdout);
  if (!spec.ok()) return Report(done, FailureResult(c.assignment_id, spec.status()));

  runners::ProcessJob job;
  job.id = c.assignment_id;
  job.max_output = spec->max_output;
  job.timeout = CommandTimeout(c);
  job.on_done = [done, id = c.assignment_id, cpu = spec->process.cpu_seconds,
                 max = spec->max_output, timeout = job.timeout](runners::ProcessOutcome outcome) {
    const bool timed_out = outcome.timed_out;
    RunResult result = runners::BuildShellResult(std::move(outcome), cpu, max);
    if (timed_out) {
      result.status = Status(errc::kTimeout, "timed out after " + FormatDuration(timeout));
      result.output = nullptr;
    }
    Call(*done, FromRunResult(id, std::move(result)));
  };
  job.spec = std::move(spec->process);
  Submit(std::move(job), done);
}

void HandlerRunner::Impl::StartHttp(const Command& c, const SharedDone& done) {
  RunRequest request;
  request.execution_id = c.execution.execution_id;
  request.step_id = c.execution.step_id;
  request.attempt = c.execution.attempt;
  request.assignment_id = c.assignment_id;
  request.type = StepType::kHttp;
  request.timeout = CommandTimeout(c);
  request.spec = MakeSpec(CapHttpTimeout(c.data, request.timeout));
  RunFunctions callbacks;
  callbacks.on_done = [this, done, id = c.assignment_id](RunResult result) {
    Report(done, FromRunResult(id, std::move(result)));
  };
  http->Start(request, std::move(callbacks));
}

HandlerRunner::HandlerRunner(HandlerRunnerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

HandlerRunner::~HandlerRunner() {
  Shutdown();
}

std::vector<std::string> HandlerRunner::Commands() const {
  std::vector<std::string> out;
  for (const auto& [name, argv] : impl_->options.handlers) out.push_back(name);
  if (impl_->options.builtin_shell) out.push_back("shell");
  if (impl_->options.builtin_http) out.push_back("http");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool HandlerRunner::Handles(const std::string& command) const {
  const HandlerRunnerOptions& o = impl_->options;
  return o.handlers.count(command) > 0 || (command == "shell" && o.builtin_shell) ||
         (command == "http" && o.builtin_http);
}

void HandlerRunner::Start(const protocol::Command& command, HandlerCallbacks callbacks) {
  if (impl_->stopped.load()) {
    Call(callbacks.on_done, ShutDownResult(command.assignment_id));
    return;
  }
  const HandlerRunnerOptions& o = impl_->options;
  if (auto p = impl_->persistent.find(command.command); p != impl_->persistent.end()) {
    auto done = std::make_shared<DoneFn>(callbacks.on_done);
    const std::string id = command.assignment_id;
    if (!impl_->reactor.Post([handler = p->second, command, callbacks = std::move(callbacks)] {
          handler->Start(command, callbacks);
        })) {
      Call(*done, ShutDownResult(id));
    }
    return;
  }
  if (auto it = o.handlers.find(command.command); it != o.handlers.end()) {
    impl_->StartHandler(command, it->second, std::move(callbacks));
    return;
  }
  auto done = std::make_shared<DoneFn>(std::move(callbacks.on_done));
  if (command.command == "shell" && o.builtin_shell) {
    impl_->StartShell(command, done);
  } else if (command.command == "http" && impl_->http) {
    impl_->StartHttp(command, done);
  } else {
    impl_->Report(done,
                  FailureResult(command.assignment_id,
                                Status(kNoHandler, "no handler for command '" + command.command +
                                                       "' on this worker")));
  }
}

void HandlerRunner::Cancel(const std::string& assignment_id) {
  if (!impl_->persistent.empty()) {
    impl_->reactor.Post([impl = impl_.get(), assignment_id] {
      for (auto& [name, handler] : impl->persistent) {
        if (handler->Cancel(assignment_id)) break;
      }
    });
  }
  impl_->reactor.Cancel(assignment_id);
  if (impl_->http) impl_->http->Cancel(assignment_id);
}

void HandlerRunner::Shutdown() {
  impl_->stopped.store(true);
  // The http runner first: its last results still go through the reactor's thread.
  if (impl_->http) impl_->http->Shutdown();
  impl_->reactor.Shutdown();
}

}  // namespace baton::worker
