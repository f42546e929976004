// A small blocking HTTP/1.1 client for Baton's API: the CLI's client commands and the
// integration tests use it. One connection per request (the CLI makes few).
#pragma once

#include <baton/json.h>
#include <baton/status.h>

#include <map>
#include <string>

namespace baton::client {

struct Endpoint {
  std::string server;  // "http://127.0.0.1:8080"
  std::string token;   // bearer secret; empty = none
};

// Flags first, then $BATON_SERVER / $BATON_TOKEN, then the credentials file the server
// wrote on its first start (see server/server.h), then http://127.0.0.1:8080.
Endpoint ResolveEndpoint(const std::string& server_flag, const std::string& token_flag,
                         const std::string& credentials_path);

struct HttpReply {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names lower-cased
};

class ApiClient {
 public:
  explicit ApiClient(Endpoint endpoint, int timeout_s = 30)
      : endpoint_(std::move(endpoint)), timeout_s_(timeout_s) {}

  // Any reply is ok (check status); IO_ERROR when the server cannot be reached.
  Result<HttpReply> Send(const std::string& method, const std::string& target,
                         const std::string& body = "",
                         const std::string& content_type = "application/json",
                         const std::map<std::string, std::string>& headers = {}) const;
  // JSON in and out: the parsed body of a 2xx reply; otherwise a Status carrying the
  // API's error code and message.
  Result<Json> Call(const std::string& method, const std::string& target,
                    const Json& body = nullptr) const;
  // The same with a body that is not JSON (a YAML definition). A 204 gives null.
  Result<Json> CallWithText(const std::string& method, const std::string& target,
                            const std::string& body, const std::string& content_type) const;

  const Endpoint& endpoint() const { return endpoint_; }

 private:
  Endpoint endpoint_;
  int timeout_s_;
};

// The parts of a server URL "http://HOST[:PORT]" (an IPv6 HOST in brackets).
struct ServerAddress {
  std::string host;      // without brackets
  std::string port;      // "80" when the URL has none
  std::string hostport;  // as in the URL, for the Host header
};
// INVALID_ARGUMENT when `url` does not start with http://.
Result<ServerAddress> ParseServerUrl(const std::string& url);

// The Status of a reply that is not 2xx: the API's error code and message from its
// {"error": {...}} body, else HTTP_<status> and the body.
Status ReplyError(int http_status, const std::string& body);

// %-encodes a path segment or query value.
std::string UrlEncode(std::string_view s);

}  // namespace baton::client
