// Accepted HTTP statuses of an `http` step (its `accept` list), shared by validation and
// the runner.
#pragma once

#include <baton/json.h>
#include <baton/status.h>

#include <utility>

namespace baton::model {

// One `accept` entry as an inclusive range of statuses: an integer (404), a digit
// string ("404"), a class ("4xx", also "4XX") or a range ("400-499"), all within
// 100..599. Errors are VALIDATION, e.g. "expected a status (404), a class ("4xx") or a
// range ("400-499"), got 'x'".
Result<std::pair<int, int>> ParseStatusRange(const Json& entry);

}  // namespace baton::model
