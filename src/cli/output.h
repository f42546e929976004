// The CLI's machine-readable shapes (DESIGN.md §8) and human summaries.
#pragma once

#include <baton/store.h>

#include <string>

namespace baton::cli {

std::string IsoTime(TimeMs t);  // "2026-11-21T10:00:00.123Z"; "" for 0
// {"id","workflow","status","progress","output","error","steps":[{"id","status",
//  "attempts","output","error":{"code","message"}|null,"started_at","completed_at"}]}
Result<Json> ExecutionJson(Store* store, const std::string& execution_id);
// Exit code for a final status: 0 completed, 1 otherwise.
int ExitCodeFor(ExecutionStatus status);

}  // namespace baton::cli
