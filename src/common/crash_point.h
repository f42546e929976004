// Named points where tests kill or stall the process, to prove recovery and to widen a
// race on purpose. Without the variables a point costs one branch.
//
// BATON_CRASH_AT=name or name:N (the Nth time the point is reached): the process
// SIGKILLs itself there.
// BATON_STALL_AT=name:MS: the thread that reaches the point sleeps MS milliseconds, every
// time (e.g. a server whose commits are slow to take effect).
//
// Points: "engine.after_commit" (a turn is durable, its effects have not run: e.g. a
// step's completion is stored and the next step is not dispatched yet),
// "store.before_commit" (inside a transaction, rows written, COMMIT not yet issued).
#pragma once

namespace baton {

void CrashPoint(const char* name);

}  // namespace baton
