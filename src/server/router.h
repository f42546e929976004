// Routes requests to handlers by method and path pattern, after authentication.
//
// Patterns are literal segments and {name} captures: "/api/v1/executions/{id}/cancel".
// A path that matches no pattern is 404; one that matches with another method is 405.
// Each route names the scope it needs: public routes skip authentication; the others
// answer 401 without a valid token (an Authorization bearer token, or the dashboard's
// session cookie) and 403 without the scope. With a rate limiter, each
// token (or, on public routes other than GETs, each peer address) gets its own bucket;
// an empty one is 429 with Retry-After.
//
// Threading: routes are added before serving; Handle() is then thread-safe. Handlers
// run on the calling (I/O) thread and answer through the Responder, at once or later
// from any thread.
#pragma once

#include "server/auth.h"
#include "server/http_types.h"
#include "server/rate_limiter.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace baton::server {

struct Call {
  std::shared_ptr<const HttpRequest> request;
  std::map<std::string, std::string> params;  // the pattern's {captures}
  Principal principal;                        // empty for public routes
  const std::string& Param(const std::string& name) const { return params.at(name); }
};

using Handler = std::function<void(const Call& call, Responder respond)>;

// The header a write authenticated by the dashboard's session cookie must carry (any
// value): a cross-site form or fetch cannot add it. Lower-cased, as HttpRequest keeps it.
inline constexpr const char* kCsrfHeader = "x-baton-csrf";

struct RouteInfo {
  std::string method;
  std::string pattern;
  Scope scope;
  std::string summary;  // one line, for openapi.json
};

class Router {
 public:
  explicit Router(TokenAuthority* auth, RateLimiter* limiter = nullptr)
      : auth_(auth), limiter_(limiter) {}
  void Add(std::string method, std::string pattern, Scope scope, std::string summary,
           Handler handler);
  // Every handler runs under a boundary: an exception it throws is logged with an error
  // id on stderr and answered 500 INTERNAL (unless it answered already); the server
  // goes on serving.
  void Handle(std::shared_ptr<const HttpRequest> request, Responder respond) const;
  // Counts the exceptions the boundary caught (for metrics); optional.
  void CountUnhandledIn(std::atomic<uint64_t>* counter) { unhandled_ = counter; }
  std::vector<RouteInfo> Routes() const;

 private:
  struct Route {
    RouteInfo info;
    std::vector<std::string> segments;
    Handler handler;
  };
  void RunGuarded(const Route& route, const Call& call, Responder respond) const;
  static bool Match(const Route& route, const std::vector<std::string>& segments,
                    std::map<std::string, std::string>* params);
  // 429 for a caller past its rate, or nullopt.
  std::optional<HttpResponse> Throttle(const std::string& key) const;
  TokenAuthority* auth_;
  RateLimiter* limiter_;
  std::atomic<uint64_t>* unhandled_ = nullptr;
  std::vector<Route> routes_;
};

}  // namespace baton::server
