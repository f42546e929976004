// How the engine takes one body of worker messages (a WebSocket frame, a long-poll
// request): in a turn of its own with the coordinator's writes, or not.
#pragma once

#include <baton/engine.h>

#include <cstddef>
#include <optional>

namespace baton::server {

// At most this many messages, the body's writes and the engine's answer to them commit
// in one transaction (Engine::JoinedTurn): an idle worker's ack and result of one
// command cost the step one commit, not two in a row. A busy worker's frame of many
// answers keeps the two apart, so the writer starts on the assignments while the
// engine is still handling the results: joined, the worker path did ~10 % fewer jobs/s.
inline constexpr size_t kJoinedBodyMessages = 4;

// Opens `turn` when the body is small enough. Engine thread.
inline void JoinSmallBody(std::optional<Engine::JoinedTurn>& turn, Engine& engine,
                          size_t messages) {
  if (messages <= kJoinedBodyMessages) turn.emplace(&engine);
}

}  // namespace baton::server
