// Turning HTTP/1.1 bytes into the HttpRequest that handlers see, the same way on a
// connection (http_session.cpp) and without one (the HTTP fuzz target), so that what
// the fuzzer reaches is what a client reaches.
#pragma once

#include "server/api.h"
#include "server/http_types.h"

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <optional>
#include <string_view>

namespace baton::server {

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;

// The request as handlers see it (path and query %-decoded, header names lower-cased,
// the body moved out of `msg`) in *out; false with the 400 to answer in *refusal when
// the URL's %-encoding is malformed.
bool ToHttpRequest(BeastRequest& msg, HttpRequest* out, HttpResponse* refusal);

// The answer to an error reading a request when it is the client's doing: 400 for a
// malformed request, 413 past the body limit, 431 past the header limit. nullopt for an
// error that only ends the connection (end of stream, timeout, reset).
std::optional<HttpResponse> ReadErrorResponse(const boost::beast::error_code& ec,
                                              const ServerLimits& limits);

// 413 for a body longer than the limit (declared or read).
HttpResponse BodyTooLarge(const ServerLimits& limits);

// One request read from `bytes` with a session's limits, as if they had arrived on a
// connection that the client then closed. A WebSocket upgrade comes back as a request
// like any other (a session would hand it on before the router).
struct RequestFromBytes {
  std::optional<HttpRequest> request;   // a complete request for the router
  std::optional<HttpResponse> refusal;  // what a session answers instead, if anything
};
RequestFromBytes ReadRequestFromBytes(std::string_view bytes, const ServerLimits& limits);

}  // namespace baton::server
