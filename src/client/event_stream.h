// A client of the live feed (WebSocket /api/v1/events): `baton events --follow`,
// `baton status --watch` and the tests.
#pragma once

#include "client/api_client.h"

#include <memory>
#include <optional>

namespace baton::client {

class EventStream {
 public:
  // Connects and upgrades; `query` is e.g. "execution=ID&since=0". A refusal (401, 404)
  // is a Status carrying the server's error message.
  static Result<std::unique_ptr<EventStream>> Open(const Endpoint& endpoint,
                                                   const std::string& query);
  ~EventStream();

  // The next message, waiting at most `timeout_ms`: nullopt when none came in time
  // (the wait can be resumed), an IO_ERROR once the server closed the stream.
  Result<std::optional<Json>> Next(int timeout_ms);

  struct Impl;

 private:
  explicit EventStream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton::client
