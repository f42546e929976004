// The transport between a worker's Agent and the server: one connection carrying the
// messages of docs/worker-protocol.md. WebSocketConnection (websocket_connection.h) is
// the real one; tests inject an in-memory one.
#pragma once

#include <baton/clock.h>
#include <baton/status.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "protocol/worker_protocol.h"

namespace baton::worker {

// Status codes of a refused connection that retrying cannot fix (HTTP 401 and 403): the
// Agent gives up at once instead of reconnecting.
inline constexpr const char* kUnauthorized = "UNAUTHORIZED";
inline constexpr const char* kForbidden = "FORBIDDEN";

inline bool IsFatalConnectError(const Status& status) {
  return status.code() == kUnauthorized || status.code() == kForbidden;
}

// Send, Receive and Close are called by one thread at a time (the Agent's loop);
// Interrupt from any thread.
class Connection {
 public:
  virtual ~Connection() = default;

  // Sends one message; an error once the connection is closed or broken.
  virtual Status Send(const protocol::WorkerMessage& message) = 0;
  // Sends several, in order: in one `batch` frame when the transport has them (only to a
  // server whose `registered` said `batching`), else one by one. On an error, which of
  // them arrived is unknown (the Agent sends them all again after reconnecting).
  virtual Status SendBatch(const std::vector<protocol::WorkerMessage>& messages) {
    for (const protocol::WorkerMessage& m : messages) {
      if (Status s = Send(m); !s.ok()) return s;
    }
    return Status::Ok();
  }
  // The next message from the server, waiting at most `timeout`: nullopt when none came
  // in time or Interrupt() was called; an error once the connection is closed (by either
  // side). Messages that do not parse are skipped (the implementation logs them); the
  // messages of a `batch` frame come one per call, in order.
  virtual Result<std::optional<protocol::ServerMessage>> Receive(Duration timeout) = 0;
  // Makes the Receive in progress, or else the next one, return nullopt at once.
  // Thread-safe and non-blocking.
  virtual void Interrupt() = 0;
  // Closes the connection (a clean close when possible). Idempotent.
  virtual void Close() = 0;
};

// Opens a new connection to the server. A refusal carries IsFatalConnectError codes when
// retrying cannot help; any other error is retried.
using Connector = std::function<Result<std::unique_ptr<Connection>>()>;

}  // namespace baton::worker
