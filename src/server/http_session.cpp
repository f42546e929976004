#include "server/http_session.h"

#include "server/metrics.h"
#include "server/request_reader.h"
#include "server/websocket_session.h"
#include "server/workers/worker_session.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include <array>
#include <chrono>
#include <optional>

namespace baton::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, std::shared_ptr<SessionShared> shared, bool reject)
      : stream_(std::move(socket)), shared_(std::move(shared)), reject_(reject) {
    ++shared_->connections;
  }
  ~HttpSession() { --shared_->connections; }

  void Run() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->ReadHeader(); });
  }

 private:
  const ServerLimits& limits() const { return shared_->limits; }

  void ReadHeader() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(limits().max_header_bytes));
    parser_->body_limit(limits().max_body_bytes);
    // Idle until the first byte of a request, then the request deadline covers the
    // header: a client that trickles a header gets the request timeout, not the idle one.
    if (buffer_.size() > 0) return ReadHeaderWithinDeadline();  // pipelined bytes
    stream_.expires_after(std::chrono::seconds(limits().idle_timeout_s));
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec) return self->OnReadError(ec);
                              self->buffer_.commit(n);
                              self->ReadHeaderWithinDeadline();
                            });
  }

  void ReadHeaderWithinDeadline() {
    stream_.expires_after(std::chrono::seconds(limits().request_timeout_s));
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return OnReadError(ec);
    auto& req = parser_->get();
    if (auto len = parser_->content_length(); len && *len > limits().max_body_bytes) {
      return TooLarge();
    }
    if (beast::iequals(req[http::field::expect], "100-continue")) {
      // curl and others wait for this before sending a body.
      auto cont = std::make_shared<http::response<http::empty_body>>(http::status::continue_,
                                                                     req.version());
      http::async_write(stream_, *cont,
                        [self = shared_from_this(), cont](beast::error_code wec, size_t) {
                          if (wec) return self->Close();
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->OnReadError(ec);
                       self->Dispatch();
                     });
  }

  void OnReadError(beast::error_code ec) {
    std::optional<HttpResponse> answer = ReadErrorResponse(ec, limits());
    if (!answer) return Close();
    Fail(std::move(*answer));
  }

  void TooLarge() { Fail(BodyTooLarge(limits())); }

  // Answers and closes: the rest of the stream cannot be trusted to frame requests.
  void Fail(HttpResponse r) {
    keep_alive_ = false;
    linger_ = true;
    Write(std::move(r), 11);
  }

  void Dispatch() {
    auto& msg = parser_->get();
    const unsigned version = msg.version();
    keep_alive_ = msg.keep_alive();
    if (reject_) {
      keep_alive_ = false;
      return Write(ErrorResponse(503, "UNAVAILABLE", "too many connections; retry later"), version);
    }
    std::string_view target = msg.target();
    size_t q = target.find('?');
    if (beast::websocket::is_upgrade(msg) && target.substr(0, q) == "/api/v1/events" &&
        shared_->websocket) {
      // The connection becomes a WebSocket; this session ends here.
      return StartWebSocketSession(stream_.release_socket(), parser_->release(),
                                   shared_->websocket);
    }
    if (beast::websocket::is_upgrade(msg) && target.substr(0, q) == "/api/v1/workers/connect" &&
        shared_->workers) {
      return StartWorkerSession(stream_.release_socket(), parser_->release(), shared_->workers);
    }
    auto req = std::make_shared<HttpRequest>();
    HttpResponse refusal;
    if (!ToHttpRequest(msg, req.get(), &refusal)) return Fail(std::move(refusal));
    if (!remote_known_) {  // once per connection: a system call and a formatting
      beast::error_code ec;
      auto ep = stream_.socket().remote_endpoint(ec);
      if (!ec) remote_ = ep.address().to_string();
      remote_known_ = true;
    }
    req->remote = remote_;
    // The handler may answer later, from another thread: post back to this strand.
    auto self = shared_from_this();
    shared_->router->Handle(req, [self, version](HttpResponse r) {
      net::post(self->stream_.get_executor(), [self, version, r = std::move(r)]() mutable {
        self->Write(std::move(r), version);
      });
    });
  }

  void Write(HttpResponse r, unsigned version) {
    if (shared_->metrics) shared_->metrics->CountRequest(r.status);
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(r.status), version);
    res->set(http::field::server, "baton");
    if (!r.content_type.empty()) res->set(http::field::content_type, r.content_type);
    for (auto& [k, v] : r.headers) res->set(k, v);
    res->body() = std::move(r.body);
    res->keep_alive(keep_alive_);
    res->prepare_payload();
    stream_.expires_after(std::chrono::seconds(limits().request_timeout_s));
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res](beast::error_code ec, size_t) {
                        if (ec || !self->keep_alive_) return self->Close();
                        self->ReadHeader();
                      });
  }

  void Close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (linger_) Discard();
  }

  // After refusing a request whose body is still arriving, read and drop what the peer
  // sends for a while: closing with unread data would reset the connection and the
  // peer could lose our answer (the "lingering close" of HTTP servers).
  void Discard() {
    linger_ = false;
    stream_.expires_after(std::chrono::seconds(2));
    discard_ = std::make_shared<std::array<char, 16384>>();
    ReadAndDrop();
  }
  void ReadAndDrop() {
    stream_.async_read_some(net::buffer(*discard_),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->dropped_ += n;
                              if (ec || self->dropped_ > (64u << 20)) return;
                              self->ReadAndDrop();
                            });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<SessionShared> shared_;
  bool reject_;
  bool keep_alive_ = false;
  std::string remote_;  // the peer's address, empty when unknown
  bool remote_known_ = false;
  bool linger_ = false;
  std::shared_ptr<std::array<char, 16384>> discard_;
  size_t dropped_ = 0;
};

}  // namespace

void StartHttpSession(tcp::socket socket, std::shared_ptr<SessionShared> shared, bool reject) {
  std::make_shared<HttpSession>(std::move(socket), std::move(shared), reject)->Run();
}

}  // namespace baton::server
