// What the WebSocket endpoints (the live feed, the workers' connection) share before
// the upgrade: who is asking, and refusing as plain HTTP so clients see a status code.
#pragma once

#include "server/auth.h"
#include "server/http_types.h"

#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <map>
#include <memory>
#include <string>

namespace baton::server {

using UpgradeRequest = boost::beast::http::request<boost::beast::http::string_body>;

// The request's query (into *query) and its token: the Authorization header, or
// ?token= for clients that cannot set headers (browsers). The refusal to send otherwise
// (400 malformed query, 401, 403 without `scope`).
Result<Principal> AuthorizeUpgrade(const UpgradeRequest& request, TokenAuthority* auth, Scope scope,
                                   std::map<std::string, std::string>* query,
                                   HttpResponse* refusal);

// Writes `response` on `stream` and shuts the sending side; `keep` (the session) stays
// alive until the write is done.
void RefuseUpgrade(boost::beast::tcp_stream& stream, unsigned version, const HttpResponse& response,
                   std::shared_ptr<void> keep);

}  // namespace baton::server
