#include "server/websocket_session.h"

#include "server/http_types.h"
#include "server/views.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <deque>
#include <map>

namespace baton::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr size_t kReplayPage = 500;

class WebSocketSession : public std::enable_shared_from_this<WebSocketSession> {
 public:
  WebSocketSession(tcp::socket socket, std::shared_ptr<WebSocketContext> ctx)
      : ws_(std::move(socket)), ctx_(std::move(ctx)) {}

  ~WebSocketSession() {
    if (subscriber_) ctx_->hub->Unsubscribe(subscriber_.get());
  }

  void Run(http::request<http::string_body> req) {
    req_ = std::move(req);
    net::dispatch(ws_.get_executor(), [self = shared_from_this()] { self->Authorize(); });
  }

 private:
  // Refuses before the upgrade, as plain HTTP, so clients see a status code.
  void Refuse(const HttpResponse& r) {
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(r.status), req_.version());
    res->set(http::field::content_type, r.content_type);
    res->body() = r.body;
    res->keep_alive(false);
    res->prepare_payload();
    http::async_write(ws_.next_layer(), *res,
                      [self = shared_from_this(), res](beast::error_code, size_t) {
                        beast::error_code ec;
                        self->ws_.next_layer().socket().shutdown(tcp::socket::shutdown_send, ec);
                      });
  }

  void Authorize() {
    std::string_view target = req_.target();
    size_t q = target.find('?');
    std::map<std::string, std::string> query;
    if (q != std::string_view::npos && !ParseQuery(target.substr(q + 1), &query)) {
      return Refuse(ErrorResponse(400, "BAD_REQUEST", "malformed query string"));
    }
    std::string header(req_[http::field::authorization]);
    if (header.empty() && query.count("token")) header = "Bearer " + query["token"];
    auto who = ctx_->auth->Authenticate(header);
    if (!who.ok()) return Refuse(ErrorResponse(who.status()));
    if (!who->Has(Scope::kRead)) {
      return Refuse(ErrorResponse(403, "FORBIDDEN", "this token lacks the 'read' scope"));
    }
    filter_.ns = who->ns;
    filter_.execution_id = query["execution"];
    filter_.workflow = query["workflow"];
    if (query.count("since")) {
      const std::string& since = query["since"];
      if (filter_.execution_id.empty() || since.empty() || since.size() > 15 ||
          since.find_first_not_of("0123456789") != std::string::npos) {
        return Refuse(ErrorResponse(400, errc::kInvalidArgument,
                                    "since=SEQ needs execution=ID and a sequence number"));
      }
      replay_after_ = std::stoll(since);
      replaying_ = true;
    }
    if (!filter_.execution_id.empty()) {
      auto e = ctx_->store->GetExecution(filter_.execution_id);
      if (!e.ok() || e->ns != filter_.ns) {
        return Refuse(
            ErrorResponse(404, errc::kNotFound, "no execution '" + filter_.execution_id + "'"));
      }
    }
    ws_.read_message_max(ctx_->max_message_bytes);
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "baton"); }));
    ws_.async_accept(req_, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return;
      self->OnAccepted();
    });
  }

  void OnAccepted() {
    // Subscribe first, replay second: an event committed meanwhile is both queued and
    // stored, and the replay's last seq drops the duplicate.
    std::weak_ptr<WebSocketSession> weak = shared_from_this();
    auto executor = ws_.get_executor();
    subscriber_ = std::make_shared<Subscriber>(filter_, ctx_->queue_capacity, [weak, executor] {
      net::post(executor, [weak] {
        if (auto self = weak.lock()) self->Pump();
      });
    });
    ctx_->hub->Subscribe(subscriber_);
    if (!replaying_) outbox_.push_back(R"({"type":"ready"})");
    Read();
    Pump();
  }

  void Read() {
    ws_.async_read(in_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->Stop();
      self->in_.consume(self->in_.size());  // clients have nothing to say yet
      self->Read();
    });
  }

  void Stop() {
    stopped_ = true;
    if (subscriber_) {
      ctx_->hub->Unsubscribe(subscriber_.get());
      subscriber_.reset();
    }
  }

  // Fills the outbox (replay pages first, then the live queue) and writes one message.
  void Pump() {
    if (stopped_ || writing_) return;
    if (outbox_.empty() && replaying_) {
      auto page = ctx_->store->GetEvents(filter_.execution_id, replay_after_, kReplayPage);
      if (!page.ok() || page->size() < kReplayPage) replaying_ = false;
      if (page.ok()) {
        for (const EventRecord& e : *page) {
          outbox_.push_back(EventJson(e).dump(-1, ' ', false, Json::error_handler_t::replace));
          replay_after_ = e.seq;
          last_seq_[e.execution_id] = e.seq;
        }
      }
      if (!replaying_) outbox_.push_back(R"({"type":"ready"})");
    }
    if (outbox_.empty() && !replaying_ && subscriber_) {
      uint64_t missed = 0;
      for (FeedMessage& m : subscriber_->Take(&missed)) {
        auto it = last_seq_.find(m.execution_id);
        if (it != last_seq_.end() && m.seq <= it->second) continue;  // replayed already
        outbox_.push_back(std::move(m.text));
      }
      if (missed > 0) {
        outbox_.push_front(Json{{"type", "gap"}, {"missed", missed}}.dump());
      }
    }
    if (outbox_.empty()) return;
    writing_ = true;
    ws_.text(true);
    ws_.async_write(net::buffer(outbox_.front()),
                    [self = shared_from_this()](beast::error_code ec, size_t) {
                      self->writing_ = false;
                      if (ec) return self->Stop();
                      self->outbox_.pop_front();
                      self->Pump();
                    });
  }

  websocket::stream<beast::tcp_stream> ws_;
  std::shared_ptr<WebSocketContext> ctx_;
  http::request<http::string_body> req_;
  beast::flat_buffer in_;
  EventFilter filter_;
  std::shared_ptr<Subscriber> subscriber_;
  std::deque<std::string> outbox_;
  std::map<std::string, int64_t> last_seq_;  // per execution, what the replay sent
  bool replaying_ = false;
  int64_t replay_after_ = 0;
  bool writing_ = false;
  bool stopped_ = false;
};

}  // namespace

void StartWebSocketSession(tcp::socket socket, http::request<http::string_body> request,
                           std::shared_ptr<WebSocketContext> context) {
  std::make_shared<WebSocketSession>(std::move(socket), std::move(context))
      ->Run(std::move(request));
}

}  // namespace baton::server
