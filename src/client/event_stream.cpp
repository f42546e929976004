#include "client/event_stream.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <chrono>

namespace baton::client {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct EventStream::Impl {
  net::io_context ioc;
  websocket::stream<tcp::socket> ws{ioc};
  beast::flat_buffer buffer;
  bool reading = false;  // an async_read is pending across Next() calls
  bool done = false;     // it completed
  beast::error_code error;
};

EventStream::EventStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

EventStream::~EventStream() {
  beast::error_code ec;
  impl_->ws.next_layer().close(ec);
}

Result<std::unique_ptr<EventStream>> EventStream::Open(const Endpoint& endpoint,
                                                       const std::string& query) {
  constexpr std::string_view kScheme = "http://";
  if (endpoint.server.rfind(kScheme, 0) != 0) {
    return Status(errc::kInvalidArgument, "server URL must start with http://");
  }
  std::string hostport = endpoint.server.substr(kScheme.size());
  std::string host = hostport, port = "80";
  if (size_t colon = hostport.rfind(':'); colon != std::string::npos) {
    host = hostport.substr(0, colon);
    port = hostport.substr(colon + 1);
  }
  auto impl = std::make_unique<Impl>();
  beast::error_code ec;
  tcp::resolver resolver(impl->ioc);
  auto results = resolver.resolve(host, port, ec);
  if (!ec) net::connect(impl->ws.next_layer(), results, ec);
  if (ec) {
    return Status(errc::kIo, "cannot reach the Baton server at " + endpoint.server + " (" +
                                 ec.message() + ")");
  }
  impl->ws.set_option(websocket::stream_base::decorator([&](websocket::request_type& req) {
    if (!endpoint.token.empty()) req.set(http::field::authorization, "Bearer " + endpoint.token);
  }));
  websocket::response_type res;
  impl->ws.handshake(res, hostport, "/api/v1/events?" + query, ec);
  if (ec) {
    Json body = Json::parse(res.body(), nullptr, false);
    if (body.is_object() && body.contains("error")) {
      return Status(body["error"].value("code", "HTTP_" + std::to_string(res.result_int())),
                    body["error"].value("message", ""));
    }
    return Status(errc::kIo, "live feed refused: " + ec.message());
  }
  return std::unique_ptr<EventStream>(new EventStream(std::move(impl)));
}

Result<std::optional<Json>> EventStream::Next(int timeout_ms) {
  Impl& s = *impl_;
  if (!s.reading) {
    s.reading = true;
    s.done = false;
    s.ws.async_read(s.buffer, [&s](beast::error_code ec, size_t) {
      s.done = true;
      s.error = ec;
    });
  }
  s.ioc.restart();
  s.ioc.run_for(std::chrono::milliseconds(timeout_ms));
  if (!s.done) return std::optional<Json>();
  s.reading = false;
  if (s.error) return Status(errc::kIo, "live feed closed: " + s.error.message());
  Json j = Json::parse(beast::buffers_to_string(s.buffer.data()), nullptr, false);
  s.buffer.consume(s.buffer.size());
  if (j.is_discarded()) return Status(errc::kIo, "live feed sent a message that is not JSON");
  return std::optional<Json>(std::move(j));
}

}  // namespace baton::client
