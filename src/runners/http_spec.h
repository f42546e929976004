// The fields of an `http` step (its rendered spec) turned into an HttpSpec.
//
//   request.method         GET (default), HEAD, POST, PUT, PATCH, DELETE, OPTIONS;
//                          any case.
//   request.url            http[s]://HOST[:PORT][/PATH][?QUERY]; HOST a name, an IPv4
//                          address or [IPv6]. Credentials in the URL are refused.
//                          Spaces, controls and non-ASCII bytes in the path and query are
//                          percent-encoded; a #fragment is dropped.
//   request.headers        object; values as shell arguments (3 -> "3"). Names must be
//                          HTTP tokens, values must not hold CR, LF or NUL.
//   request.body           a string: sent as is, Content-Type text/plain; charset=utf-8
//                          unless a Content-Type header is given; any other value but
//                          null: sent as its JSON text, Content-Type application/json
//                          unless given. Absent or null: no body.
//   request.timeout        a duration for the whole request, redirects included (the
//                          engine enforces the step's `timeout` separately). Default:
//                          the runner's (none unless configured).
//   request.max_redirects  how many redirects to follow, default 5; 0 returns a 3xx as it
//                          is (judged by `accept` like any status).
//   request.max_output     response body limit in bytes (a size, e.g. "4MiB"); default
//                          the runner's (1 MiB).
//   accept                 extra accepted statuses besides 2xx: integers (404), digit
//                          strings ("404"), classes ("4xx") or ranges ("400-499").
//
// Errors have code VALIDATION and name the field ("http step: field 'request.url': ...").
#pragma once

#include <baton/clock.h>
#include <baton/json.h>
#include <baton/status.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace baton::runners {

struct HttpUrl {
  bool https = false;
  std::string host;  // without brackets; lower-case
  uint16_t port = 80;
  std::string target = "/";  // path and query, percent-encoded where needed
  bool ipv6_literal = false;
  std::string Scheme() const { return https ? "https" : "http"; }
  uint16_t DefaultPort() const { return https ? 443 : 80; }
  // "http://host:port/target", the port left out when it is the scheme's default.
  std::string ToString() const;
  // "host" or "host:port", as for the Host header.
  std::string Authority() const;
};

// Parses an absolute http:// or https:// URL (errors are VALIDATION, without a field
// name).
Result<HttpUrl> ParseHttpUrl(const std::string& url);
// A Location header resolved against the URL that returned it: absolute, scheme-relative
// ("//host/x", keeping the base's scheme), absolute-path ("/x") or relative ("x", "../x"; resolved
// against the directory of the base path, dot segments kept as sent).
Result<HttpUrl> ResolveLocation(const HttpUrl& base, const std::string& location);

// ASCII lower case (header names, schemes).
std::string AsciiLower(std::string_view s);

// An accepted status range, inclusive.
using StatusRange = std::pair<int, int>;

struct HttpSpec {
  std::string method = "GET";
  HttpUrl url;
  std::vector<std::pair<std::string, std::string>> headers;  // as given, in order
  bool has_body = false;
  std::string body;
  Duration timeout{0};  // 0 = none
  int max_redirects = 5;
  size_t max_output = 1 << 20;
  std::vector<StatusRange> accept = {{200, 299}};

  bool Accepts(int status) const;
};

Result<HttpSpec> ParseHttpSpec(const Json& spec, size_t default_max_output,
                               Duration default_timeout);

}  // namespace baton::runners
