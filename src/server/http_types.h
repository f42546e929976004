// The server's view of an HTTP exchange, free of Boost: routes and handlers see these,
// so only the session and listener translation units include Beast.
#pragma once

#include <baton/json.h>
#include <baton/status.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace baton::server {

struct HttpRequest {
  std::string method;                          // "GET", "POST", ...
  std::string path;                            // decoded, without the query
  std::map<std::string, std::string> query;    // decoded; a repeated key keeps the last
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string remote;  // peer address, for logs

  // The header's value, or "" when absent.
  const std::string& Header(const std::string& lower_name) const;
  // The query parameter's value, or `fallback`.
  std::string Query(const std::string& name, const std::string& fallback = "") const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

// Delivers the response; callable once, from any thread.
using Responder = std::function<void(HttpResponse)>;

HttpResponse JsonResponse(int status, const Json& body);
HttpResponse NoContent();  // 204, no body
// {"error": {"code", "message", "details"}} with `status`.
HttpResponse ErrorResponse(int status, const std::string& code, const std::string& message,
                           Json details = Json::object());
// The HTTP status for a Status's code (NOT_FOUND 404, VALIDATION 400, CONFLICT 409, ...),
// then the error body.
HttpResponse ErrorResponse(const Status& status, Json details = Json::object());
int HttpStatusFor(const std::string& code);

// Splits "a=1&b=x%20y" into decoded pairs; false on a bad %-escape.
bool ParseQuery(std::string_view text, std::map<std::string, std::string>* out);
// %-decodes a path; false on a bad escape or an encoded NUL.
bool PercentDecode(std::string_view in, std::string* out, bool plus_is_space);

}  // namespace baton::server
