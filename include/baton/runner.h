// Runners do the work of a step: a process, an HTTP request, a timer, a worker.
//
// The engine renders a step's templates into a RunRequest and calls Start(). The
// runner reports back through the callbacks, from any thread; exactly one Done() call
// follows every Start, also after Cancel. The engine (not the runner) enforces step
// timeouts: it calls Cancel() and records TIMEOUT itself.
//
// Before Start, in the turn that dispatches the attempt, the engine calls Prepare(): a
// runner whose own bookkeeping must be durable (the coordinator's assignment of a step to
// a worker) writes it into the engine's batch, so that it costs no commit of its own.
#pragma once

#include <baton/clock.h>
#include <baton/json.h>
#include <baton/status.h>
#include <baton/workflow.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace baton {

struct WriteBatch;  // <baton/store.h>

// A step's rendered spec: immutable once built, and shared rather than copied. The engine
// (for a dead-letter record) and a runner holding a waiting dispatch point at one copy,
// and a spec without templates points into the workflow definition itself: tens of
// thousands of steps waiting for a worker pay nothing for it.
using SpecPtr = std::shared_ptr<const Json>;
inline SpecPtr MakeSpec(Json spec) {
  return std::make_shared<const Json>(std::move(spec));
}
// The empty object, shared: what a RunRequest holds until a spec is set.
inline const SpecPtr& EmptySpec() {
  static const SpecPtr empty = MakeSpec(Json::object());
  return empty;
}

// (The ints sit together: the coordinator holds one per waiting command step.)
struct RunRequest {
  std::string execution_id;
  std::string step_id;
  std::string assignment_id;   // unique per dispatch
  std::string ns;              // the execution's namespace (remote workers are per namespace)
  SpecPtr spec = EmptySpec();  // StepDef::spec with templates rendered; never null
  Duration timeout{0};         // 0 = none (informational; the engine enforces it)
  int attempt = 1;
  int priority = 1;    // the execution's priority (0 low .. 3 critical)
  int step_index = 0;  // the step's position in the definition
  StepType type = StepType::kNoop;
};

struct RunResult {
  Status status;  // ok, or the error (code + message)
  Json output;    // the step's output (on success; may be set on failure too)
  Json error_details;
  int exit_code = -1;       // shell: the process exit code; -1 when not applicable
  std::string stderr_text;  // shell: captured stderr (bounded)
};

// The receiving end of one attempt's reports, called from any thread (the runner's):
// Started and Progress any number of times, then Done exactly once. Started comes again
// when the work begins again elsewhere (a remote worker's step moved to another worker):
// a sink takes a repeat as a no-op or as news, never as an error.
class RunSink {
 public:
  virtual ~RunSink() = default;
  // The work has really started (process spawned, a worker took it).
  virtual void Started() {}
  // Progress 0..100 with optional data (a checkpoint).
  virtual void Progress(int /*progress*/, Json /*data*/) {}
  virtual void Done(RunResult result) = 0;
};

// The three reports as functions, each optional: for callers that have lambdas (tests,
// the CLI, a runner handing work on). Converts to RunCallbacks.
struct RunFunctions {
  std::function<void()> on_started;
  std::function<void(int progress, Json data)> on_progress;
  std::function<void(RunResult)> on_done;
};

// What a runner reports one attempt to: a handle on its RunSink, shared by copies (a
// runner may keep one per thread). One pointer, not three functions: a runner holding
// an attempt that waits for a worker holds one per pending step. A default-constructed
// or moved-from handle reports nowhere.
class RunCallbacks {
 public:
  RunCallbacks() = default;
  explicit RunCallbacks(std::shared_ptr<RunSink> sink) : sink_(std::move(sink)) {}
  RunCallbacks(RunFunctions functions);  // NOLINT(google-explicit-constructor): by design

  void Started() const {
    if (sink_) sink_->Started();
  }
  void Progress(int progress, Json data) const {
    if (sink_) sink_->Progress(progress, std::move(data));
  }
  void Done(RunResult result) const {
    if (sink_) sink_->Done(std::move(result));
  }
  explicit operator bool() const { return sink_ != nullptr; }

 private:
  std::shared_ptr<RunSink> sink_;
};

namespace detail {
class FunctionSink final : public RunSink {
 public:
  explicit FunctionSink(RunFunctions f) : f_(std::move(f)) {}
  void Started() override {
    if (f_.on_started) f_.on_started();
  }
  void Progress(int progress, Json data) override {
    if (f_.on_progress) f_.on_progress(progress, std::move(data));
  }
  void Done(RunResult result) override {
    if (f_.on_done) f_.on_done(std::move(result));
  }

 private:
  RunFunctions f_;
};
}  // namespace detail

inline RunCallbacks::RunCallbacks(RunFunctions functions)
    : sink_(std::make_shared<detail::FunctionSink>(std::move(functions))) {}

class Runner {
 public:
  virtual ~Runner() = default;
  // Called on the engine's thread during the turn that dispatches the attempt (a for_each
  // instance: the turn that begins it), before that turn's batch is submitted. Records
  // added to `batch` become durable together with the dispatch, in one commit. Then
  // exactly one of:
  //   - Start(request) once that commit succeeded, the attempt still current;
  //   - Cancel(request.assignment_id) when the attempt ended before Start could follow
  //     (cancelled, timed out, its execution gone) or the commit failed, so that the
  //     runner releases what Prepare reserved. No callbacks exist yet: nothing may be
  //     reported for it.
  // Nothing outside the process may learn of the work before Start: until then it is not
  // durable. Not called for Reattach, nor by callers that Start directly (tests, the CLI),
  // so Start must also work unprepared. Default: nothing to prepare.
  virtual void Prepare(const RunRequest& /*request*/, WriteBatch& /*batch*/) {}
  // Starts the work and returns at once.
  virtual void Start(const RunRequest& request, RunCallbacks callbacks) = 0;
  // Asks the work to stop (processes: SIGTERM to the group, SIGKILL after the grace
  // period). Done() still follows, with code CANCELLED unless the work finished first.
  // An id never started, already finished or already cancelled is ignored, with no
  // Done() (the engine may cancel an attempt it only prepared, and cancel it twice).
  virtual void Cancel(const std::string& assignment_id) = 0;
  // Stops accepting work and cancels everything running; blocks until done.
  virtual void Shutdown() {}
  // True when Start() may be followed by a wait (for a worker, for a free slot) before
  // the work begins, and Started() says when it does. Until then the attempt waits
  // rather than runs: the engine watches for a slow attempt (`step.slow`) and learns the
  // step's usual duration from Started(), not from the dispatch. False (the default):
  // the work begins at Start().
  virtual bool ReportsStart() const { return false; }
  // Kills everything running at once, without the cancel's grace period (a second
  // Ctrl-C). Each attempt still ends through Done() (CANCELLED once cancelled). A no-op
  // for runners with nothing to kill.
  virtual void KillNow() {}

  // After a restart, the engine hands a runner that CanReattach() the attempts that were
  // running when the previous process stopped, instead of failing them with
  // ENGINE_RESTART: work that lives outside this process (a remote worker) may still be
  // going on. `request` is the original dispatch (same assignment id, spec rendered
  // again). Callbacks follow as after Start(); a runner that cannot find the work calls
  // Done() with ENGINE_RESTART.
  virtual bool CanReattach() const { return false; }
  virtual void Reattach(const RunRequest& /*request*/, RunCallbacks callbacks) {
    RunResult r;
    r.status = Status(errc::kEngineRestart, "the engine stopped while this attempt was running");
    callbacks.Done(std::move(r));
  }
};

struct ShellRunnerOptions {
  Duration kill_grace{5000};            // SIGTERM -> SIGKILL
  size_t default_max_output = 1 << 20;  // bytes per stream
};
// Runs `shell` steps: argv via posix_spawn in a new process group; a string `run` via
// /bin/sh -c; env, cwd, stdin; bounded output; memory and cpu_time limits (applied by
// spawning /usr/bin/prlimit, never by forking). Spec fields: src/runners/shell_spec.h.
//
// Result: output = stdout parsed as JSON when it is one valid JSON value (after trimming
// whitespace), else the trimmed stdout string; empty stdout gives "" (not null).
// exit_code, stderr_text as captured. Non-zero exit or death by a signal: EXIT_NONZERO
// (output still set); cancel: CANCELLED; launch failure (program not found, bad cwd):
// SPAWN_ERROR; a bad spec: VALIDATION. A stream over max_output keeps its first
// max_output bytes, stderr_text gets "\n[baton: stdout truncated at N bytes]" (or
// stderr), and error_details.output_truncated names the streams (details:
// src/runners/shell_result.h). request.type is not checked.
//
// A step's process group does not outlive it: when the process exits (or is cancelled),
// whatever is left of its group gets SIGKILL; a daemon meant to stay needs setsid.
//
// Threading: one I/O thread for all processes; Started() and Done() run on it and
// must not block or call Shutdown(). Start() after Shutdown() calls Done() at once, on
// the calling thread, with CANCELLED.
std::unique_ptr<Runner> NewShellRunner(const ShellRunnerOptions& options = {});

}  // namespace baton
