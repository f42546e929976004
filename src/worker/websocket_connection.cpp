// The worker's WebSocket transport over Beast. The only file of the worker that includes
// Beast (build time). Everything runs on the calling thread: Send and Receive run the
// io_context until their operation completes; a read stays pending across Receive
// calls; Interrupt stops the io_context from another thread.
#include "worker/websocket_connection.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace baton::worker {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kPath = "/api/v1/workers/connect";
constexpr Duration kCloseTimeout{2000};

std::string MsText(Duration d) {
  return std::to_string(d.count()) + " ms";
}

class WebSocketConnection final : public Connection {
 public:
  explicit WebSocketConnection(WebSocketOptions options) : options_(std::move(options)) {}
  ~WebSocketConnection() override {
    beast::error_code ec;
    ws_.next_layer().close(ec);
  }

  Status Open(const client::Endpoint& endpoint);
  Status Send(const protocol::WorkerMessage& message) override;
  Status SendBatch(const std::vector<protocol::WorkerMessage>& messages) override;
  Result<std::optional<protocol::ServerMessage>> Receive(Duration timeout) override;
  void Interrupt() override {
    interrupted_ = true;  // before stop(): Receive checks it after restart()
    ioc_.stop();
  }
  void Close() override;

 private:
  // Runs the I/O until op_done_ or `timeout`; false on timeout. An Interrupt() meanwhile
  // is not for this operation: the flag stays set for the next Receive.
  bool RunOperation(Duration timeout);
  Status Write(const std::string& text);
  // Closes the socket and lets the pending operations finish (aborted).
  void Drop();
  Status Lost(const beast::error_code& ec);

  WebSocketOptions options_;
  net::io_context ioc_;
  tcp::resolver resolver_{ioc_};
  websocket::stream<tcp::socket> ws_{ioc_};
  // The operation in progress (open, write or close): one at a time.
  bool op_done_ = false;
  beast::error_code op_error_;
  // The read, pending across Receive calls.
  beast::flat_buffer buffer_;
  bool reading_ = false;
  bool read_done_ = false;
  beast::error_code read_error_;
  bool closed_ = false;
  std::atomic<bool> interrupted_{false};
  // The rest of a batch frame, given out by the next Receive calls.
  std::deque<protocol::ServerMessage> received_;
};

bool WebSocketConnection::RunOperation(Duration timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  while (!op_done_) {
    auto left = deadline - SteadyClock::now();
    if (left <= SteadyClock::duration::zero()) return false;
    if (ioc_.stopped()) ioc_.restart();
    ioc_.run_one_for(left);
  }
  return true;
}

void WebSocketConnection::Drop() {
  closed_ = true;
  beast::error_code ec;
  resolver_.cancel();
  ws_.next_layer().close(ec);
  RunOperation(kCloseTimeout);
}

Status WebSocketConnection::Lost(const beast::error_code& ec) {
  closed_ = true;
  if (ec == websocket::error::closed) {
    const websocket::close_reason& why = ws_.reason();
    std::string text = "the server closed the connection (code " + std::to_string(why.code);
    if (!why.reason.empty()) text += ": " + std::string(why.reason.data(), why.reason.size());
    return Status(errc::kIo, text + ")");
  }
  return Status(errc::kIo, "connection lost: " + ec.message());
}

Status WebSocketConnection::Open(const client::Endpoint& endpoint) {
  Result<client::ServerAddress> address = client::ParseServerUrl(endpoint.server);
  if (!address.ok()) return address.status();
  const client::ServerAddress& a = *address;
  std::string stage = "cannot resolve " + a.host;
  websocket::response_type res;
  ws_.set_option(
      websocket::stream_base::decorator([token = endpoint.token](websocket::request_type& req) {
        if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
        req.set(http::field::user_agent, "baton-worker");
      }));
  op_done_ = false;
  resolver_.async_resolve(a.host, a.port, [&](beast::error_code ec, tcp::resolver::results_type r) {
    if (ec) {
      op_error_ = ec;
      op_done_ = true;
      return;
    }
    stage = "cannot reach the Baton server at " + endpoint.server;
    net::async_connect(ws_.next_layer(), r, [&](beast::error_code ec2, const tcp::endpoint&) {
      if (ec2) {
        op_error_ = ec2;
        op_done_ = true;
        return;
      }
      // Acks and results are small frames written one after another: with Nagle's
      // algorithm each waits for the server's (delayed) ACK of the one before.
      beast::error_code ignored;
      ws_.next_layer().set_option(tcp::no_delay(true), ignored);
      stage = "WebSocket upgrade of " + endpoint.server + kPath + " failed";
      ws_.async_handshake(res, a.hostport, kPath, [&](beast::error_code ec3) {
        op_error_ = ec3;
        op_done_ = true;
      });
    });
  });
  if (!RunOperation(options_.connect_timeout)) {
    Drop();
    return Status(errc::kIo, stage + ": timed out after " + MsText(options_.connect_timeout));
  }
  if (!op_error_) return Status::Ok();
  closed_ = true;
  if (op_error_ != websocket::error::upgrade_declined) {
    return Status(errc::kIo, stage + " (" + op_error_.message() + ")");
  }
  int status = static_cast<int>(res.result_int());
  Status refused = client::ReplyError(status, res.body());
  std::string code = status == 401 ? kUnauthorized : status == 403 ? kForbidden : refused.code();
  return Status(code, "the server refused the worker connection (HTTP " + std::to_string(status) +
                          "): " + refused.message());
}

Status WebSocketConnection::Send(const protocol::WorkerMessage& message) {
  return Write(protocol::ToText(message));
}

Status WebSocketConnection::SendBatch(const std::vector<protocol::WorkerMessage>& messages) {
  std::vector<std::string> texts;
  texts.reserve(messages.size());
  for (const protocol::WorkerMessage& m : messages) texts.push_back(protocol::ToText(m));
  // Frames within the server's size limit: large outputs go in frames of their own.
  for (protocol::Frame& f : protocol::BatchFrames(std::move(texts))) {
    if (Status s = Write(f.text); !s.ok()) return s;
  }
  return Status::Ok();
}

Status WebSocketConnection::Write(const std::string& text) {
  if (closed_) return Status(errc::kIo, "connection closed");
  op_done_ = false;
  ws_.text(true);
  ws_.async_write(net::buffer(text), [this](beast::error_code ec, size_t) {
    op_error_ = ec;
    op_done_ = true;
  });
  if (!RunOperation(options_.send_timeout)) {
    Drop();
    return Status(errc::kIo, "sending timed out after " + MsText(options_.send_timeout));
  }
  return op_error_ ? Lost(op_error_) : Status::Ok();
}

Result<std::optional<protocol::ServerMessage>> WebSocketConnection::Receive(Duration timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  for (;;) {
    if (!received_.empty()) {
      protocol::ServerMessage next = std::move(received_.front());
      received_.pop_front();
      return std::optional<protocol::ServerMessage>(std::move(next));
    }
    if (closed_) return Status(errc::kIo, "connection closed");
    if (!reading_) {
      reading_ = true;
      read_done_ = false;
      ws_.async_read(buffer_, [this](beast::error_code ec, size_t) {
        read_error_ = ec;
        read_done_ = true;
      });
    }
    ioc_.restart();
    if (interrupted_.exchange(false)) return std::optional<protocol::ServerMessage>();
    auto left = deadline - SteadyClock::now();
    // Only the read is pending: run_for returns when it completes, at Interrupt(), or
    // when the time is up.
    if (!read_done_ && left > SteadyClock::duration::zero()) ioc_.run_for(left);
    if (!read_done_) return std::optional<protocol::ServerMessage>();
    reading_ = false;
    if (read_error_) return Lost(read_error_);
    std::string text = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    Result<std::vector<protocol::ServerMessage>> frame = protocol::ParseServerFrameText(text);
    if (frame.ok()) {
      for (protocol::ServerMessage& m : *frame) received_.push_back(std::move(m));
      continue;
    }
    if (options_.log) {
      options_.log("ignoring a message from the server: " + frame.status().message());
    }
  }
}

void WebSocketConnection::Close() {
  if (closed_) return;
  closed_ = true;
  op_done_ = false;
  ws_.async_close(websocket::close_code::normal, [this](beast::error_code ec) {
    op_error_ = ec;
    op_done_ = true;
  });
  RunOperation(kCloseTimeout);
  beast::error_code ec;
  ws_.next_layer().close(ec);
  ioc_.restart();
  ioc_.poll();  // what the close aborted
}

}  // namespace

Result<std::unique_ptr<Connection>> OpenWebSocketConnection(const client::Endpoint& endpoint,
                                                            const WebSocketOptions& options) {
  auto conn = std::make_unique<WebSocketConnection>(options);
  if (Status opened = conn->Open(endpoint); !opened.ok()) return opened;
  return std::unique_ptr<Connection>(std::move(conn));
}

Connector WebSocketConnector(client::Endpoint endpoint, WebSocketOptions options) {
  return [endpoint = std::move(endpoint), options = std::move(options)] {
    return OpenWebSocketConnection(endpoint, options);
  };
}

Connector FailoverConnector(std::vector<client::Endpoint> endpoints, WebSocketOptions options) {
  if (endpoints.size() == 1) return WebSocketConnector(std::move(endpoints[0]), std::move(options));
  auto current = std::make_shared<size_t>(0);  // the server that answered last
  return [endpoints = std::move(endpoints), options = std::move(options),
          current]() -> Result<std::unique_ptr<Connection>> {
    std::string errors;
    for (size_t i = 0; i < endpoints.size(); ++i) {
      const size_t at = (*current + i) % endpoints.size();
      auto c = OpenWebSocketConnection(endpoints[at], options);
      if (c.ok()) {
        if (at != *current && options.log) options.log("connected to " + endpoints[at].server);
        *current = at;
        return c;
      }
      if (IsFatalConnectError(c.status())) return c.status();
      errors += (errors.empty() ? "" : "; ") + endpoints[at].server + ": " + c.status().message();
    }
    return Status(errc::kIo, "no server answered (" + errors + ")");
  };
}

}  // namespace baton::worker
