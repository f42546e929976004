// One HTTP/1.1 connection: reads requests within the limits, hands each to the Router,
// writes its response, keeps the connection alive when the client asks.
//
// Limits (ServerLimits): header and body sizes (413 and close), a deadline for reading
// a request and writing a response, an idle deadline between requests. A request that
// does not parse gets 400 and the connection is closed; nothing it sent reaches a handler.
// Threading: the session's socket lives on its own strand; the Responder may be called
// from any thread (it posts back to the strand).
#pragma once

#include "server/api.h"
#include "server/router.h"

#include <boost/asio/ip/tcp.hpp>

#include <atomic>
#include <memory>

namespace baton::server {

class ServerMetrics;
struct WebSocketContext;
struct WorkerSessionContext;

struct SessionShared {
  const Router* router;
  ServerMetrics* metrics;
  std::shared_ptr<WebSocketContext> websocket;    // upgrades to /api/v1/events
  std::shared_ptr<WorkerSessionContext> workers;  // upgrades to /api/v1/workers/connect
  ServerLimits limits;
  std::atomic<size_t> connections{0};
};

// Starts serving `socket` (already on its strand). `reject` answers the first request
// with 503 (too many connections) and closes.
void StartHttpSession(boost::asio::ip::tcp::socket socket, std::shared_ptr<SessionShared> shared,
                      bool reject);

}  // namespace baton::server
