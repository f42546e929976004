// Reading an ExecutionFilter from a request: the list, the counts and the bulk actions
// take the same filters, by the same names.
#pragma once

#include <baton/store.h>

#include "server/http_types.h"

#include <functional>
#include <optional>
#include <string>

namespace baton::server {

// status, workflow, parent, since, until and q (text in the id, input or output), each
// read through `get` ("" = not given); a 400 response naming the bad one, or nullopt.
std::optional<HttpResponse> ReadExecutionFilter(const std::function<std::string(const char*)>& get,
                                                ExecutionFilter* f);

}  // namespace baton::server
