// A runner for a step type this process is configured not to run (`baton server
// --no-local-shell`): every attempt fails at once with the status given, so the step
// fails with a reason instead of waiting for a capacity that will never come.
#pragma once

#include <baton/runner.h>
#include <baton/status.h>

#include <memory>

namespace baton::runners {

// Thread-safe; holds no state but the status.
std::unique_ptr<Runner> MakeRefusingRunner(Status why);

}  // namespace baton::runners
