// Named points where tests kill the process, to prove recovery. Set
// BATON_CRASH_AT=name or name:N (the Nth time the point is reached) and the process
// SIGKILLs itself there. Without the variable a point costs one branch.
//
// Points: "engine.after_commit" (a turn is durable, its effects have not run: e.g. a
// step's completion is stored and the next step is not dispatched yet),
// "store.before_commit" (inside a transaction, rows written, COMMIT not yet issued).
#pragma once

namespace baton {

void CrashPoint(const char* name);

}  // namespace baton
