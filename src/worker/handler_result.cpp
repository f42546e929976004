#include "worker/handler_result.h"

#include <sys/wait.h>

#include <algorithm>
#include <utility>

#include "runners/process.h"
#include "runners/shell_result.h"
#include "worker/handler_output.h"

namespace baton::worker {

using protocol::CommandError;
using protocol::CommandResult;

CommandResult FailureResult(const std::string& assignment_id, const Status& status) {
  CommandError error;
  error.code = status.code();
  error.message = status.message();
  error.retryable = status.code() != errc::kValidation;
  return CommandResult::Failure(assignment_id, std::move(error));
}

CommandResult HandlerResult(const std::string& assignment_id,
                            const runners::ProcessOutcome& outcome, Result<Json> output,
                            const std::string& stderr_tail, Duration timeout) {
  if (!outcome.spawn_error.ok()) return FailureResult(assignment_id, outcome.spawn_error);
  if (outcome.timed_out) {
    return FailureResult(assignment_id,
                         Status(errc::kTimeout, "timed out after " + FormatDuration(timeout)));
  }
  if (outcome.cancelled) return FailureResult(assignment_id, Status(errc::kCancelled, "cancelled"));
  if (!outcome.reaped) {
    return FailureResult(
        assignment_id,
        Status(errc::kIo, "exit status unavailable: the process was reaped elsewhere"));
  }

  const int ws = outcome.wait_status;
  if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
    if (!output.ok()) return FailureResult(assignment_id, output.status());
    return CommandResult::Success(assignment_id, std::move(output).value());
  }
  CommandError error;
  error.code = errc::kExitNonzero;
  if (WIFSIGNALED(ws)) {
    error.message = "killed by signal " + runners::SignalName(WTERMSIG(ws));
    error.details["signal"] = runners::SignalName(WTERMSIG(ws));
  } else {
    error.message = "exited with code " + std::to_string(WEXITSTATUS(ws));
    error.details["exitCode"] = WEXITSTATUS(ws);
  }
  if (std::string tail = MessageTail(stderr_tail, kStderrInMessage); !tail.empty()) {
    error.message += ": " + tail;
    error.details["stderr"] = runners::SanitizeUtf8(stderr_tail);
  }
  return CommandResult::Failure(assignment_id, std::move(error),
                                output.ok() ? std::move(output).value() : Json());
}

CommandResult FromRunResult(const std::string& assignment_id, RunResult result) {
  if (result.status.ok()) return CommandResult::Success(assignment_id, std::move(result.output));
  CommandResult r = FailureResult(assignment_id, result.status);
  if (result.error_details.is_object()) r.error.details = std::move(result.error_details);
  if (result.exit_code >= 0) r.error.details["exitCode"] = result.exit_code;
  if (!result.stderr_text.empty()) r.error.details["stderr"] = std::move(result.stderr_text);
  r.output = std::move(result.output);
  return r;
}

Duration CommandTimeout(const protocol::Command& c) {
  constexpr int64_t kMaxTimeoutSeconds = int64_t{10} * 365 * 24 * 3600;
  return Duration(std::min(c.timeout_seconds, kMaxTimeoutSeconds) * 1000);
}

}  // namespace baton::worker
