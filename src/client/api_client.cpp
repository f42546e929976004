#include "client/api_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>

namespace baton::client {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

Endpoint ResolveEndpoint(const std::string& server_flag, const std::string& token_flag,
                         const std::string& credentials_path) {
  Endpoint e;
  Json creds = Json::object();
  if (std::ifstream in(credentials_path); in) {
    creds = Json::parse(in, nullptr, false);
    if (!creds.is_object()) creds = Json::object();
  }
  auto pick = [&](const std::string& flag, const char* env, const char* key,
                  const std::string& fallback) -> std::string {
    if (!flag.empty()) return flag;
    if (const char* v = std::getenv(env); v && *v) return v;
    if (creds.contains(key) && creds[key].is_string()) return creds[key].get<std::string>();
    return fallback;
  };
  e.server = pick(server_flag, "BATON_SERVER", "server", "http://127.0.0.1:8080");
  e.token = pick(token_flag, "BATON_TOKEN", "token", "");
  while (!e.server.empty() && e.server.back() == '/') e.server.pop_back();
  return e;
}

Result<ServerAddress> ParseServerUrl(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (url.rfind(kScheme, 0) != 0) {
    return Status(errc::kInvalidArgument, "server URL must start with http:// (got '" + url + "')");
  }
  ServerAddress a;
  a.hostport = url.substr(kScheme.size());
  a.host = a.hostport;
  a.port = "80";
  if (size_t colon = a.hostport.rfind(':');
      colon != std::string::npos && a.hostport.find(']', colon) == std::string::npos) {
    a.host = a.hostport.substr(0, colon);
    a.port = a.hostport.substr(colon + 1);
  }
  if (a.host.size() > 2 && a.host.front() == '[') a.host = a.host.substr(1, a.host.size() - 2);
  return a;
}

Status ReplyError(int http_status, const std::string& body) {
  Json j = body.empty() ? Json(nullptr) : Json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    return Status(j["error"].value("code", "HTTP_" + std::to_string(http_status)),
                  j["error"].value("message", body));
  }
  return Status("HTTP_" + std::to_string(http_status), body);
}

std::string UrlEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

Result<HttpReply> ApiClient::Send(const std::string& method, const std::string& target,
                                  const std::string& body, const std::string& content_type,
                                  const std::map<std::string, std::string>& headers) const {
  const std::string& url = endpoint_.server;
  Result<ServerAddress> address = ParseServerUrl(url);
  if (!address.ok()) return address.status();
  const auto& [host, port, hostport] = *address;
  const std::string what = method + " " + url + target;
  try {
    net::io_context ioc;
    beast::tcp_stream stream(ioc);
    tcp::resolver resolver(ioc);
    stream.expires_after(std::chrono::seconds(timeout_s_));
    beast::error_code ec;
    auto results = resolver.resolve(host, port, ec);
    if (ec) return Status(errc::kIo, what + ": cannot resolve " + host + ": " + ec.message());
    stream.connect(results, ec);
    if (ec) {
      return Status(errc::kIo, "cannot reach the Baton server at " + url + " (" + ec.message() +
                                   "); is `baton server` running? (--server URL)");
    }
    http::request<http::string_body> req(http::string_to_verb(method), target, 11);
    req.set(http::field::host, hostport);
    req.set(http::field::user_agent, "baton-cli");
    if (!endpoint_.token.empty()) req.set(http::field::authorization, "Bearer " + endpoint_.token);
    for (const auto& [k, v] : headers) req.set(k, v);
    if (!body.empty() || method == "POST" || method == "PUT") {
      req.set(http::field::content_type, content_type);
      req.body() = body;
    }
    req.prepare_payload();
    http::write(stream, req, ec);
    // A server may answer before reading the whole body (413): read its answer anyway.
    const beast::error_code write_ec = ec;
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(256u << 20);
    http::read(stream, buffer, parser, ec);
    if (ec) return Status(errc::kIo, what + ": " + (write_ec ? write_ec : ec).message());
    HttpReply reply;
    auto& res = parser.get();
    reply.status = static_cast<int>(res.result_int());
    reply.body = std::move(res.body());
    for (const auto& f : res) {
      std::string name(f.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      reply.headers[name] = std::string(f.value());
    }
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    return reply;
  } catch (const std::exception& e) {  // Beast throws on invalid method names and the like
    return Status(errc::kIo, what + ": " + e.what());
  }
}

Result<Json> ApiClient::Call(const std::string& method, const std::string& target,
                             const Json& body) const {
  return CallWithText(method, target, body.is_null() ? "" : body.dump(), "application/json");
}

Result<Json> ApiClient::CallWithText(const std::string& method, const std::string& target,
                                     const std::string& body,
                                     const std::string& content_type) const {
  auto reply = Send(method, target, body, content_type);
  if (!reply.ok()) return reply.status();
  if (reply->status < 200 || reply->status >= 300) return ReplyError(reply->status, reply->body);
  Json j = reply->body.empty() ? Json(nullptr) : Json::parse(reply->body, nullptr, false);
  if (j.is_discarded()) return Status(errc::kIo, "the server sent a reply that is not JSON");
  return j;
}

}  // namespace baton::client
