// The WebSocket transport of a worker (docs/worker-protocol.md): GET
// /api/v1/workers/connect with `Authorization: Bearer TOKEN`, then one JSON message per
// text frame. Synchronous: Send and Receive run the connection's own I/O on the calling
// thread (Connection's threading rules).
#pragma once

#include <baton/clock.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "client/api_client.h"
#include "worker/connection.h"

namespace baton::worker {

struct WebSocketOptions {
  Duration connect_timeout{10000};  // resolve, connect and upgrade
  Duration send_timeout{30000};     // one message; past it the connection is dropped
  // Messages from the server that do not parse are skipped and logged here.
  std::function<void(const std::string&)> log;
};

// Connects to endpoint.server (http://HOST[:PORT]) and upgrades. A refused upgrade is a
// Status with the server's error message: code UNAUTHORIZED for 401, FORBIDDEN for 403
// (IsFatalConnectError), else the server's error code or IO_ERROR.
Result<std::unique_ptr<Connection>> OpenWebSocketConnection(const client::Endpoint& endpoint,
                                                            const WebSocketOptions& options);

// A Connector opening a new WebSocketConnection each time.
Connector WebSocketConnector(client::Endpoint endpoint, WebSocketOptions options);

// A Connector over several servers (instances sharing one database): each attempt tries
// the server that answered last first, then the others in order, and keeps the first that
// accepts. A refusal of the token (IsFatalConnectError) ends the attempt at once; when
// every server fails, the attempt fails with each one's error. One endpoint behaves as
// WebSocketConnector.
Connector FailoverConnector(std::vector<client::Endpoint> endpoints, WebSocketOptions options);

}  // namespace baton::worker
