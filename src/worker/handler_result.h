// The `command.result` of a finished handler process or built-in step, without any I/O.
//
// A handler process (HandlerResult):
//   exit 0                 success; output as chosen by StdoutParser. Output over the
//                          limit: failure OUTPUT_TOO_LARGE (the message says which limit).
//   exit N != 0, signal    failure EXIT_NONZERO, "exited with code N" or "killed by
//                          signal SIGKILL", then ": " and the end of stderr (at most
//                          kStderrInMessage bytes, see MessageTail) when there is any.
//                          output as for a success when it could be taken, else null.
//   timeout                failure TIMEOUT "timed out after 10m" (the command's
//                          timeoutSeconds), output null.
//   cancelled              failure CANCELLED "cancelled", output null.
//   not started            failure SPAWN_ERROR naming the program and the cause.
// error.details: {"exitCode": N} or {"signal": "SIGKILL"} once the process ran, and
// "stderr": the kept end of stderr when not empty. Every failure is retryable.
//
// A built-in step's RunResult (FromRunResult): ok is success with its output; an error
// is a failure with its code and message, details = error_details (an object) plus
// "exitCode" (shell) and "stderr" (when not empty), output as the runner set it.
// VALIDATION failures (a bad spec) are not retryable; the rest are.
#pragma once

#include <baton/clock.h>
#include <baton/json.h>
#include <baton/runner.h>
#include <baton/status.h>

#include <string>

#include "protocol/worker_protocol.h"
#include "runners/reactor.h"

namespace baton::worker {

inline constexpr size_t kStderrInMessage = 2048;

protocol::CommandResult HandlerResult(const std::string& assignment_id,
                                      const runners::ProcessOutcome& outcome, Result<Json> output,
                                      const std::string& stderr_tail, Duration timeout);

protocol::CommandResult FromRunResult(const std::string& assignment_id, RunResult result);

// The command's timeoutSeconds as a Duration (0: none); longer than ten years counts as
// ten years, so that milliseconds cannot overflow.
Duration CommandTimeout(const protocol::Command& c);

// A failure result: code and message, no details, retryable unless VALIDATION.
protocol::CommandResult FailureResult(const std::string& assignment_id, const Status& status);

}  // namespace baton::worker
