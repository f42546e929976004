// WebSocket /api/v1/workers/connect: a worker's push connection (docs/worker-protocol.md).
//
// The token (Authorization: Bearer, or ?token=) needs the `worker` scope (admin has it);
// its namespace is the namespace the worker serves. Refusals come before the upgrade, as
// plain HTTP (401, 403). After the upgrade, the first message must be `register`
// (answered `registered`, or an `error` and the close); then heartbeats, acks, progress
// and results flow to the coordinator on the engine thread, in order, and commands and
// cancels flow back. An unparseable or refused message is answered with an `error`
// message (STALE_ASSIGNMENT names the assignment) and changes nothing; the connection
// stays open, except after NOT_FOUND (the worker must register again) and `deregister`.
//
// Bounded: messages up to max_message_bytes; at most max_queued messages waiting to be
// written to a worker that does not read (then the connection is closed: the worker
// reconnects and is sent what it still holds).
#pragma once

#include "server/auth.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <memory>

namespace baton::workers {
class Coordinator;
}  // namespace baton::workers

namespace baton::server {

class EngineHost;
struct WorkerWireCounters;

struct WorkerSessionContext {
  TokenAuthority* auth = nullptr;
  EngineHost* engine = nullptr;
  workers::Coordinator* coordinator = nullptr;  // engine thread only
  WorkerWireCounters* wire = nullptr;           // counted when set
  size_t max_message_bytes = 1 << 20;
  size_t max_queued = 10'000;
};

void StartWorkerSession(boost::asio::ip::tcp::socket socket,
                        boost::beast::http::request<boost::beast::http::string_body> request,
                        std::shared_ptr<WorkerSessionContext> context);

}  // namespace baton::server
