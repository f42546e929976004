#pragma once

namespace baton {

// Names the calling thread (as `top -H`, `perf` and /proc/PID/task/*/comm show it), so
// an operator can tell the engine, commit, I/O and process threads apart. Linux keeps 15
// characters; a longer name is cut. Best effort: a failure changes nothing else.
void SetThreadName(const char* name);

}  // namespace baton
