// A finished process turned into a RunResult (DESIGN.md §3, shell output).
//
//   output       stdout parsed as JSON when the whole of it (trimmed of whitespace) is
//                one valid JSON value, else the trimmed stdout as a string. Empty or
//                all-whitespace stdout gives "" (an empty string, not null). Set on
//                success and on a non-zero exit; null when cancelled or not started.
//   exit_code    the exit status; 128 + N when killed by signal N; -1 when not started.
//   stderr_text  the captured stderr.
//   status       ok on exit 0. EXIT_NONZERO "exited with code N: <last stderr line>";
//                EXIT_NONZERO "killed by signal SIGXCPU (cpu_time limit of 2s)"; CANCELLED
//                "cancelled"; SPAWN_ERROR from process launch.
//   error_details  an object, only when something below applies (else null):
//                "signal": "SIGKILL" when killed by a signal;
//                "output_truncated": {"max_output": N, "stdout": total bytes written,
//                "stderr": ...} naming only the streams that went over max_output.
//
// Truncation: a stream that went over max_output keeps its first max_output bytes (the
// rest is read and dropped), and stderr_text ends with one note per truncated stream:
//   "\n[baton: stdout truncated at N bytes]"   "\n[baton: stderr truncated at N bytes]"
// Text is made valid UTF-8 (bad sequences, e.g. a character cut by the truncation,
// become U+FFFD) so results always serialise.
#pragma once

#include <baton/json.h>
#include <baton/runner.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "runners/reactor.h"

namespace baton::runners {

// `cpu_seconds` is the step's cpu_time limit (0 = none), named in a SIGXCPU message.
RunResult BuildShellResult(ProcessOutcome outcome, uint64_t cpu_seconds, size_t max_output);

// stdout as a step output, as described above.
Json ParseStdout(std::string_view stdout_data);

// `s` without leading and trailing white space (space, \t, \n, \r, \v, \f).
std::string_view TrimSpace(std::string_view s);

// `text` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string SanitizeUtf8(std::string_view text);

}  // namespace baton::runners
