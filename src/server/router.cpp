#include "server/router.h"

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
      Result<Principal> who = auth_->Authenticate(request->Header("authorization"));
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
    }
    route.handler(call, std::move(respond));
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

std::vector<RouteInfo> Router::Routes() const {
  std::vector<RouteInfo> out;
  for (const Route& r : routes_) out.push_back(r.info);
  return out;
}

}  // namespace baton::server
