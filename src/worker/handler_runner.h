// HandlerRunner: runs the `command` messages a worker receives (docs/worker-protocol.md,
// "Handlers of baton worker") and reports their progress and results as protocol
// messages. It does no networking: the worker's connection loop feeds it commands and
// sends what it reports.
//
// A command whose name has a registered handler runs that executable:
//   - argv: the handler's argv as registered (argv[0] a path, or a name searched in
//     PATH), in a new process group;
//   - stdin: the command message as JSON (protocol::ToJson), one line, then EOF;
//   - environment: this process's, plus BATON_EXECUTION_ID, BATON_STEP_ID, BATON_ATTEMPT,
//     BATON_ASSIGNMENT_ID, BATON_COMMAND, BATON_RESOURCE (a string resource as it is,
//     another value as its JSON text, empty when null) and BATON_CHECKPOINT (JSON text,
//     empty when null);
//   - stdout: progress lines are reported through on_progress as they come, and the
//     output is chosen at the end (worker/handler_output.h);
//   - the result: worker/handler_result.h (exit 0 = success; otherwise EXIT_NONZERO with
//     the end of stderr as the message; TIMEOUT; CANCELLED; SPAWN_ERROR;
//     OUTPUT_TOO_LARGE).
// stdout beyond max_stdout (progress lines aside) fails the command rather than cutting
// its output; of stderr the last max_stderr bytes are kept.
//
// Built-in handlers, for commands without a registered handler (each can be turned off;
// they run whatever the server sends, so a worker should advertise them on purpose):
//   shell   `data` is the spec of a shell step (src/runners/shell_spec.h), with the
//           BATON_* variables above added to its env unless it sets them. It runs
//           through the shell runner's spec and result code on this runner's own
//           processes: the output is a shell step's (stdout parsed as JSON, else text),
//           no progress lines.
//   http    `data` is the spec of an http step (src/runners/http_runner.h), run by an
//           http runner with HttpRunnerOptions `http`; the command's timeout caps the
//           request's.
// Their RunResult becomes the result as FromRunResult says (worker/handler_result.h). A
// command with no handler at all fails with NO_HANDLER (retryable: another worker may
// have one).
//
// Stopping: Cancel(assignment_id), or the command's timeoutSeconds passing, sends SIGTERM
// (and SIGCONT) to the handler's process group and SIGKILL after kill_grace; when the
// handler exits, whatever is left of its group gets SIGKILL, so no process of it
// outlives the command. (An http command is aborted at once.) The result is then
// CANCELLED or TIMEOUT, unless the work finished first.
//
// Threading: Start, Cancel and Shutdown are thread-safe; Start and Cancel return at
// once and may be called from the callbacks. Every callback runs on the runner's I/O
// thread, one at a time: on_progress zero or more times, then on_done exactly once per
// Start, also after Cancel and Shutdown. Callbacks must not block for long, and must not
// call Shutdown() or destroy the runner. Start() after Shutdown() calls on_done at once,
// on the calling thread, with CANCELLED.
#pragma once

#include <baton/clock.h>

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "protocol/worker_protocol.h"
#include "runners/http_runner.h"

namespace baton::worker {

// The error code of a command this runner has no handler for.
inline constexpr const char* kNoHandler = "NO_HANDLER";

struct HandlerRunnerOptions {
  // Command name -> the argv of its handler.
  std::map<std::string, std::vector<std::string>> handlers;
  bool builtin_shell = true;  // run `shell` commands that have no handler
  bool builtin_http = true;   // run `http` commands that have no handler
  Duration kill_grace{5000};  // SIGTERM -> SIGKILL
  size_t max_stdout = 1 << 20;
  size_t max_stderr = 1 << 20;
  HttpRunnerOptions http;  // for the http built-in (egress allow-list, CA file, ...)
  // Each registered handler runs as one long-lived process that takes its commands as
  // JSON lines on stdin and answers on stdout (worker/persistent_handler.h), instead of
  // one process per command. max_stdout then bounds a line; the process's group is
  // stopped when the runner shuts down.
  bool persistent = false;
};

struct HandlerCallbacks {
  // Optional. The progress of the command (assignment_id set).
  std::function<void(protocol::CommandProgress)> on_progress;
  // Exactly once per Start.
  std::function<void(protocol::CommandResult)> on_done;
};

class HandlerRunner {
 public:
  explicit HandlerRunner(HandlerRunnerOptions options = {});
  ~HandlerRunner();  // Shutdown()
  HandlerRunner(const HandlerRunner&) = delete;
  HandlerRunner& operator=(const HandlerRunner&) = delete;

  // The commands this runner can run, sorted (for register.commands): the registered
  // ones and the enabled built-ins.
  std::vector<std::string> Commands() const;
  bool Handles(const std::string& command) const;

  // Starts `command` and returns at once.
  void Start(const protocol::Command& command, HandlerCallbacks callbacks);
  // Stops the command with this assignment id, as described above; a no-op for an
  // unknown or finished one.
  void Cancel(const std::string& assignment_id);
  // Refuses new commands, cancels the running ones and waits until each on_done has
  // returned. Idempotent; not from a callback.
  void Shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton::worker
