// WebSocket /api/v1/events: the live feed of one execution, one workflow, or all of a
// namespace.
//
// Query: execution=ID | workflow=NAME (neither: everything the token's namespace runs);
// token=SECRET (for browsers, which cannot set headers; the Authorization header works
// too). Needs the read scope. To resume, at most one of:
//  - after=POSITION (any filter): first replay the stored events after that position
//    (EventRecord::position, global to the server), then go live;
//  - since=SEQ (with execution=ID only): the same from that execution's sequence number.
// Either way without a gap or a duplicate: a client that reconnects with the last
// position (or seq) it received misses nothing and sees nothing twice.
// Messages are JSON text frames: an event ({"execution_id","seq","position","type",
// "time","step_id"?,"attempt"?,"data","workflow"?, "progress"?}: replayed events have no
// progress), {"type":"ready"} once the replay is done (at once without one), or
// {"type":"gap","missed":N} when N events were dropped and could not be read back from
// the store (fetch them from /api/v1/executions/{id}/events). A client that falls behind
// the live queue (1,024 events) is fed from the store from where it is, as in a replay.
// With several instances on one database (--instance), the hub hears the database's
// shared feed (server/feed_tail.h), and positions are the database's: every instance
// sends the same events of every execution with the same positions, so a client may
// resume on any instance; events of executions another instance runs carry no
// "progress".
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
