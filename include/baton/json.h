// The JSON value type used across Baton's API: nlohmann::json (ordered by key).
#pragma once

#include <nlohmann/json.hpp>

namespace baton {
using Json = nlohmann::json;
}  // namespace baton
