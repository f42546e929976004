#include "server/router.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>

namespace baton::server {
namespace {

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    out.emplace_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

void Router::Add(std::string method, std::string pattern, Scope scope, std::string summary,
                 Handler handler) {
  Route r;
  r.segments = Split(pattern);
  r.info = {std::move(method), std::move(pattern), scope, std::move(summary)};
  r.handler = std::move(handler);
  routes_.push_back(std::move(r));
}

bool Router::Match(const Route& route, const std::vector<std::string>& segments,
                   std::map<std::string, std::string>* params) {
  if (route.segments.size() != segments.size()) return false;
  params->clear();
  for (size_t i = 0; i < segments.size(); ++i) {
    const std::string& want = route.segments[i];
    if (want.size() > 2 && want.front() == '{' && want.back() == '}') {
      if (segments[i].empty()) return false;
      (*params)[want.substr(1, want.size() - 2)] = segments[i];
    } else if (want != segments[i]) {
      return false;
    }
  }
  return true;
}

void Router::Handle(std::shared_ptr<const HttpRequest> request, Responder respond) const {
  const std::vector<std::string> segments = Split(request->path);
  std::map<std::string, std::string> params;
  std::vector<std::string> allowed;
  // Literal segments win over captures: the first route in registration order that
  // matches is used, so specific routes are registered before general ones.
  for (const Route& route : routes_) {
    if (!Match(route, segments, &params)) continue;
    if (route.info.method != request->method) {
      allowed.push_back(route.info.method);
      continue;
    }
    Call call{request, std::move(params), {}};
    if (route.info.scope != Scope::kPublic) {
      // A bearer token, or else the dashboard's session cookie.
      const std::string& bearer = request->Header("authorization");
      const std::string& cookie = request->Header("cookie");
      const bool by_session = bearer.empty() && !TokenAuthority::SessionSecret(cookie).empty();
      Result<Principal> who =
          by_session ? auth_->AuthenticateSession(cookie) : auth_->Authenticate(bearer);
      if (who.ok() && by_session && route.info.scope == Scope::kWorker) {
        // The worker protocol is for workers' tokens, never a browser's session.
        respond(ErrorResponse(403, "FORBIDDEN",
                              "the worker routes take a bearer token, not the session cookie"));
        return;
      }
      if (who.ok() && by_session && route.info.method != "GET" &&
          request->Header(kCsrfHeader).empty()) {
        // A browser sends the cookie with any request to this server; only the dashboard's
        // own script can add a header (another site's would need CORS, which is refused).
        respond(ErrorResponse(403, "FORBIDDEN",
                              "a write authenticated by the session cookie must carry the "
                              "X-Baton-Csrf header (the dashboard sends it)"));
        return;
      }
      if (!who.ok()) {
        HttpResponse r = ErrorResponse(who.status());
        if (r.status == 401) r.headers.emplace_back("WWW-Authenticate", "Bearer");
        respond(std::move(r));
        return;
      }
      if (!who->Has(route.info.scope)) {
        respond(ErrorResponse(
            403, "FORBIDDEN",
            std::string("this token lacks the '") + ToString(route.info.scope) + "' scope"));
        return;
      }
      call.principal = std::move(*who);
      if (auto refused = Throttle("token:" + call.principal.token_id)) {
        return respond(std::move(*refused));
      }
    } else if (route.info.method != "GET") {  // webhooks: by peer address
      if (auto refused = Throttle("peer:" + request->remote)) return respond(std::move(*refused));
    }
    RunGuarded(route, call, std::move(respond));
    return;
  }
  if (!allowed.empty()) {
    std::string list;
    for (const auto& m : allowed) list += (list.empty() ? "" : ", ") + m;
    HttpResponse r = ErrorResponse(405, "METHOD_NOT_ALLOWED",
                                   request->method + " is not allowed on " + request->path,
                                   {{"allowed", allowed}});
    r.headers.emplace_back("Allow", list);
    respond(std::move(r));
    return;
  }
  respond(ErrorResponse(404, errc::kNotFound, "no route for " + request->path));
}

void Router::RunGuarded(const Route& route, const Call& call, Responder respond) const {
  // The handler's Responder may already have been used when it throws: answer once.
  auto answered = std::make_shared<std::atomic<bool>>(false);
  Responder once = [answered, respond = std::move(respond)](HttpResponse r) {
    if (!answered->exchange(true)) respond(std::move(r));
  };
  std::string failure;
  try {
    route.handler(call, once);
    return;
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "an exception that is not a std::exception";
  }
  static std::atomic<uint64_t> next_error{1};
  char id[32];
  std::snprintf(id, sizeof id, "E%06llu", static_cast<unsigned long long>(next_error.fetch_add(1)));
  std::fprintf(stderr, "baton: internal error %s in %s %s: %s\n", id, route.info.method.c_str(),
               call.request->path.c_str(), failure.c_str());
  if (unhandled_) unhandled_->fetch_add(1, std::memory_order_relaxed);
  once(ErrorResponse(500, "INTERNAL",
                     std::string("internal error ") + id + "; the server logged it and goes on",
                     {{"error_id", id}}));
}

std::optional<HttpResponse> Router::Throttle(const std::string& key) const {
  int64_t retry_ms = 0;
  if (limiter_ == nullptr || limiter_->Allow(key, &retry_ms)) return std::nullopt;
  const RateLimit& limit = limiter_->limit();
  char rate[64];
  std::snprintf(rate, sizeof rate, "%g requests/s (bursts of %g)", limit.per_second, limit.burst);
  HttpResponse r = ErrorResponse(429, "RATE_LIMITED",
                                 std::string("over the rate limit of ") + rate + "; retry in " +
                                     std::to_string(retry_ms) + " ms (server --rate-limit)",
                                 {{"limit_per_second", limit.per_second},
                                  {"burst", limit.burst},
                                  {"retry_after_ms", retry_ms}});
  r.headers.emplace_back("Retry-After",
                         std::to_string(std::max<int64_t>(1, (retry_ms + 999) / 1000)));
  return r;
}

std::vector<RouteInfo> Router::Routes() const {
  std::vector<RouteInfo> out;
  for (const Route& r : routes_) out.push_back(r.info);
  return out;
}

}  // namespace baton::server
