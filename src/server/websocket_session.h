// WebSocket /api/v1/events: the live feed of one execution, one workflow, or all of a
// namespace.
//
// Query: execution=ID | workflow=NAME (neither: everything the token's namespace runs),
// since=SEQ (with execution: first replay the stored events after SEQ, then go live,
// without a gap or a duplicate), token=SECRET (for browsers, which cannot set headers;
// the Authorization header works too). Needs the read scope.
// Messages are JSON text frames: an event ({"execution_id","seq","type","time",
// "step_id"?,"attempt"?,"data","workflow","progress"}), or {"type":"gap","missed":N} when
// this client fell behind and N events were dropped (fetch them from
// /api/v1/executions/{id}/events), or {"type":"ready"} once the replay is done.
#pragma once

#include "server/auth.h"
#include "server/event_hub.h"

#include <baton/store.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <memory>

namespace baton::server {

struct WebSocketContext {
  EventHub* hub = nullptr;
  Store* store = nullptr;
  TokenAuthority* auth = nullptr;
  size_t queue_capacity = 1024;         // events held for one slow client
  size_t max_message_bytes = 64 << 10;  // from the client
};

// Takes over the connection that sent this upgrade request. (Clients wait for the
// handshake's answer before sending frames, so nothing past the request is pending.)
void StartWebSocketSession(boost::asio::ip::tcp::socket socket,
                           boost::beast::http::request<boost::beast::http::string_body> request,
                           std::shared_ptr<WebSocketContext> context);

}  // namespace baton::server
