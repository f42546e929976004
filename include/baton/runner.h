// Runners do the work of a step: a process, an HTTP request, a timer, a worker.
//
// The engine renders a step's templates into a RunRequest and calls Start(). The
// runner reports back through the callbacks, from any thread; exactly one OnDone call
// follows every Start, also after Cancel. The engine (not the runner) enforces step
// timeouts: it calls Cancel() and records TIMEOUT itself.
#pragma once

#include <baton/clock.h>
#include <baton/json.h>
#include <baton/status.h>
#include <baton/workflow.h>

#include <functional>
#include <memory>
#include <string>

namespace baton {

struct RunRequest {
  std::string execution_id;
  std::string step_id;
  int attempt = 1;
  std::string assignment_id;  // unique per dispatch
  StepType type = StepType::kNoop;
  Json spec = Json::object();  // StepDef::spec with templates rendered
  Duration timeout{0};         // 0 = none (informational; the engine enforces it)
};

struct RunResult {
  Status status;  // ok, or the error (code + message)
  Json output;    // the step's output (on success; may be set on failure too)
  Json error_details;
  int exit_code = -1;  // shell: the process exit code; -1 when not applicable
  std::string stderr_text;  // shell: captured stderr (bounded)
};

struct RunCallbacks {
  // The work has really started (process spawned). Optional.
  std::function<void()> on_started;
  // Progress 0..100 with optional data (a checkpoint). Optional.
  std::function<void(int progress, Json data)> on_progress;
  // Exactly once.
  std::function<void(RunResult)> on_done;
};

class Runner {
 public:
  virtual ~Runner() = default;
  // Starts the work and returns at once.
  virtual void Start(const RunRequest& request, RunCallbacks callbacks) = 0;
  // Asks the work to stop (processes: SIGTERM to the group, SIGKILL after the grace
  // period). OnDone still follows, with code CANCELLED unless the work finished first.
  virtual void Cancel(const std::string& assignment_id) = 0;
  // Stops accepting work and cancels everything running; blocks until done.
  virtual void Shutdown() {}
};

struct ShellRunnerOptions {
  Duration kill_grace{5000};          // SIGTERM -> SIGKILL
  size_t default_max_output = 1 << 20;  // bytes per stream
};
// Runs `shell` steps: argv via posix_spawn in a new process group; a string `run` via
// /bin/sh -c; env, cwd, stdin; bounded output; memory and cpu_time limits.
std::unique_ptr<Runner> NewShellRunner(const ShellRunnerOptions& options = {});

}  // namespace baton
