// For the protocol's tests: the parsers of either direction, chosen by the message type.
#pragma once

#include <gtest/gtest.h>

#include <string_view>
#include <type_traits>

#include "protocol/worker_protocol.h"

namespace baton::protocol::testing {

// WorkerMessage for the worker's messages, ServerMessage for the server's.
template <class M>
using VariantOf = std::conditional_t<std::is_constructible_v<WorkerMessage, const M&>,
                                     WorkerMessage, ServerMessage>;

template <class V>
Result<V> Parse(const Json& json) {
  if constexpr (std::is_same_v<V, WorkerMessage>) {
    return ParseWorkerMessage(json);
  } else {
    return ParseServerMessage(json);
  }
}

template <class V>
Result<V> ParseText(std::string_view text) {
  if constexpr (std::is_same_v<V, WorkerMessage>) {
    return ParseWorkerMessageText(text);
  } else {
    return ParseServerMessageText(text);
  }
}

// Parses `json`, which must be a valid M.
template <class M>
M ParseAs(const Json& json) {
  Result<VariantOf<M>> r = Parse<VariantOf<M>>(json);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok() || !std::holds_alternative<M>(*r)) {
    ADD_FAILURE() << "not a " << M::kType;
    return M{};
  }
  return std::get<M>(*r);
}

}  // namespace baton::protocol::testing
