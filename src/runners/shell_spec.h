// The fields of a `shell` step (its rendered spec) turned into a ProcessSpec.
//
//   run         array: argv, one element per argument, strings verbatim and any other
//               value as its compact JSON text (3 -> "3", true -> "true");
//               string: run by `/bin/sh -c STRING`. Required, not empty.
//   env         object: added to (or overriding) the inherited environment; values as
//               for run elements, except that null removes the variable.
//   cwd         string: working directory (relative to this process's).
//   stdin       string: written to the child's stdin, which is then closed; any other
//               non-null value is written as its JSON text. Absent/null: /dev/null.
//   max_output  bytes kept per stream (stdout, stderr); default from the runner.
//   memory      address-space limit (RLIMIT_AS) in bytes.
//   cpu_time    CPU-time limit (RLIMIT_CPU) in seconds, rounded up.
//
// Sizes are a non-negative integer of bytes or a string: "512", "64k", "100MB", "1GiB"
// (k/m/g/KiB/MiB/GiB = powers of 1024; KB/MB/GB = powers of 1000). CPU time is a number
// of seconds or a duration string ("90s", "2m", "1h30m", "500ms"). Other fields are
// ignored (validation is the model's job). Errors have code VALIDATION and name the field.
#pragma once

#include <baton/json.h>
#include <baton/status.h>

#include <cstdint>
#include <string>

#include "runners/process.h"

namespace baton::runners {

struct ShellSpec {
  ProcessSpec process;
  size_t max_output = 1 << 20;
};

Result<ShellSpec> ParseShellSpec(const Json& spec, size_t default_max_output);

// The text a JSON value contributes as an argument: a string verbatim, else its dump.
std::string ArgText(const Json& value);
// A size as described above.
Result<uint64_t> ParseByteSize(const Json& value, const std::string& field);
// CPU seconds as described above (0 < result; fractions round up).
Result<uint64_t> ParseCpuSeconds(const Json& value, const std::string& field);

}  // namespace baton::runners
