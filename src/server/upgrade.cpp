#include "server/upgrade.h"

#include <boost/beast/http.hpp>

namespace baton::server {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

Result<Principal> AuthorizeUpgrade(const UpgradeRequest& request, TokenAuthority* auth, Scope scope,
                                   std::map<std::string, std::string>* query,
                                   HttpResponse* refusal) {
  std::string_view target = request.target();
  size_t q = target.find('?');
  if (q != std::string_view::npos && !ParseQuery(target.substr(q + 1), query)) {
    *refusal = ErrorResponse(400, "BAD_REQUEST", "malformed query string");
    return Status(errc::kInvalidArgument, "malformed query string");
  }
  std::string header(request[http::field::authorization]);
  if (header.empty() && query->count("token")) header = "Bearer " + (*query)["token"];
  const std::string cookie(request[http::field::cookie]);
  const bool by_session = header.empty() && !TokenAuthority::SessionSecret(cookie).empty();
  if (by_session && scope == Scope::kWorker) {
    const std::string message = "the worker channel takes a bearer token, not the session cookie";
    *refusal = ErrorResponse(403, "FORBIDDEN", message);
    return Status("FORBIDDEN", message);
  }
  if (by_session) {
    // A page of another site may open a WebSocket here, and the browser would send the
    // cookie: the session is good only from the server's own pages (a proxy in front
    // must pass the Host header on, as nginx's `proxy_set_header Host $host` does).
    const std::string origin(request[http::field::origin]);
    const std::string host(request[http::field::host]);
    if (!origin.empty() && origin != "http://" + host && origin != "https://" + host) {
      const std::string message = "the session cookie is accepted only from this server's pages";
      *refusal = ErrorResponse(403, "FORBIDDEN", message);
      return Status("FORBIDDEN", message);
    }
  }
  auto who = by_session ? auth->AuthenticateSession(cookie) : auth->Authenticate(header);
  if (!who.ok()) {
    *refusal = ErrorResponse(who.status());
    return who.status();
  }
  if (!who->Has(scope)) {
    const std::string message = std::string("this token lacks the '") + ToString(scope) + "' scope";
    *refusal = ErrorResponse(403, "FORBIDDEN", message);
    return Status("FORBIDDEN", message);
  }
  return who;
}

void RefuseUpgrade(beast::tcp_stream& stream, unsigned version, const HttpResponse& r,
                   std::shared_ptr<void> keep) {
  auto res = std::make_shared<http::response<http::string_body>>(
      static_cast<http::status>(r.status), version);
  res->set(http::field::content_type, r.content_type);
  res->body() = r.body;
  res->keep_alive(false);
  res->prepare_payload();
  http::async_write(stream, *res,
                    [&stream, keep = std::move(keep), res](beast::error_code, size_t) {
                      beast::error_code ec;
                      stream.socket().shutdown(tcp::socket::shutdown_send, ec);
                    });
}

}  // namespace baton::server
