#include "server/websocket_session.h"

#include "server/http_types.h"
#include "server/upgrade.h"
#include "server/views.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <algorithm>
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
constexpr size_t kWorkflowCache = 1024;  // executions whose workflow a replay remembers

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
  void Refuse(const HttpResponse& r) {
    RefuseUpgrade(ws_.next_layer(), req_.version(), r, shared_from_this());
  }

  void Authorize() {
    std::map<std::string, std::string> query;
    HttpResponse refusal;
    auto who = AuthorizeUpgrade(req_, ctx_->auth, Scope::kRead, &query, &refusal);
    if (!who.ok()) return Refuse(refusal);
    filter_.ns = who->ns;
    filter_.execution_id = query["execution"];
    filter_.workflow = query["workflow"];
    if (query.count("types")) {
      if (Status s = ParseEventTypes(query["types"], &filter_); !s.ok()) {
        return Refuse(ErrorResponse(400, errc::kInvalidArgument, s.message()));
      }
    }
    if (query.count("since") && query.count("after")) {
      return Refuse(
          ErrorResponse(400, errc::kInvalidArgument, "give since=SEQ or after=POSITION, not both"));
    }
    if (query.count("since")) {
      if (filter_.execution_id.empty() || !ParseCount(query["since"], &replay_after_)) {
        return Refuse(ErrorResponse(400, errc::kInvalidArgument,
                                    "since=SEQ needs execution=ID and a sequence number"));
      }
      replay_ = Replay::kBySeq;
    }
    if (query.count("after")) {
      if (!ParseCount(query["after"], &replay_after_)) {
        return Refuse(ErrorResponse(400, errc::kInvalidArgument,
                                    "after=POSITION needs an event position (a number)"));
      }
      replay_ = Replay::kByPosition;
      sent_position_ = replay_after_;  // the client has everything up to there
    }
    if (!filter_.execution_id.empty()) {
      auto e = ctx_->store->GetExecution(filter_.execution_id);
      if (!e.ok() || e->ns != filter_.ns) {
        return Refuse(
            ErrorResponse(404, errc::kNotFound, "no execution '" + filter_.execution_id + "'"));
      }
      workflows_[e->id] = e->workflow;
    }
    if (replay_ == Replay::kBySeq && replay_after_ > 0) {
      // The client has up to seq `since`, which may be stored but not yet published to
      // the hub (it hears of events after their commit): the live queue must drop it too,
      // and it drops by position.
      auto had = ctx_->store->GetEvents(filter_.execution_id, replay_after_ - 1, 1);
      if (had.ok() && !had->empty() && (*had)[0].seq == replay_after_) {
        sent_position_ = (*had)[0].position;
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
    // stored, and the last position sent drops the duplicate.
    std::weak_ptr<WebSocketSession> weak = shared_from_this();
    auto executor = ws_.get_executor();
    subscriber_ = std::make_shared<Subscriber>(filter_, ctx_->queue_capacity, [weak, executor] {
      net::post(executor, [weak] {
        if (auto self = weak.lock()) self->Pump();
      });
    });
    ctx_->hub->Subscribe(subscriber_);
    if (replay_ == Replay::kNone) SendReady();
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
    if (outbox_.empty() && replay_ != Replay::kNone) ReplayPage();
    if (outbox_.empty() && replay_ == Replay::kNone && subscriber_) TakeLive();
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

  // One page of stored events into the outbox; the replay ends with a short page.
  void ReplayPage() {
    Result<std::vector<EventRecord>> page =
        replay_ == Replay::kBySeq
            ? ctx_->store->GetEvents(filter_.execution_id, replay_after_, kReplayPage)
            : ctx_->store->ListEvents({.ns = filter_.ns,
                                       .workflow = filter_.workflow,
                                       .execution_id = filter_.execution_id,
                                       .after = replay_after_,
                                       .limit = kReplayPage});
    if (!page.ok()) {
      // Go live without what could not be read; after an overflow, say how much.
      replay_ = Replay::kNone;
      if (missed_ > 0) outbox_.push_back(Json{{"type", "gap"}, {"missed", missed_}}.dump());
      missed_ = 0;
      SendReady();
      return;
    }
    for (const EventRecord& e : *page) {
      replay_after_ = replay_ == Replay::kBySeq ? e.seq : e.position;
      sent_position_ = std::max(sent_position_, e.position);
      if (!filter_.MatchesType(e.type)) continue;
      Json j = EventJson(e);
      if (const std::string* workflow = WorkflowOf(e.execution_id)) j["workflow"] = *workflow;
      outbox_.push_back(j.dump(-1, ' ', false, Json::error_handler_t::replace));
    }
    if (page->size() < kReplayPage) {
      replay_ = Replay::kNone;
      missed_ = 0;  // read back from the store
      SendReady();
    }
  }

  // The live queue into the outbox, without what a replay sent already.
  void TakeLive() {
    uint64_t missed = 0;
    std::vector<FeedMessage> taken = subscriber_->Take(&missed);
    for (FeedMessage& m : taken) {
      if (m.position <= sent_position_) continue;  // replayed already
      sent_position_ = m.position;
      outbox_.push_back(std::move(m.text));
    }
    if (missed == 0) return;
    // The queue overflowed. What it dropped came after what it kept and is stored (the
    // hub hears of events after their commit): read it from there, from the last
    // position sent, as a replay does. With nothing sent yet there is no such point.
    if (sent_position_ > 0) {
      replay_ = Replay::kByPosition;
      replay_after_ = sent_position_;
      missed_ += missed;
    } else {
      outbox_.push_back(Json{{"type", "gap"}, {"missed", missed}}.dump());
    }
  }

  void SendReady() {
    if (ready_sent_) return;
    ready_sent_ = true;
    outbox_.push_back(R"({"type":"ready"})");
  }

  // The workflow of a replayed event's execution (live events carry theirs), or null.
  const std::string* WorkflowOf(const std::string& execution_id) {
    if (!filter_.workflow.empty()) return &filter_.workflow;
    auto it = workflows_.find(execution_id);
    if (it == workflows_.end()) {
      auto e = ctx_->store->GetExecution(execution_id);
      if (!e.ok()) return nullptr;
      if (workflows_.size() >= kWorkflowCache) workflows_.clear();  // bounded memory
      it = workflows_.emplace(execution_id, e->workflow).first;
    }
    return &it->second;
  }

  static bool ParseCount(const std::string& text, int64_t* out) {
    if (text.empty() || text.size() > 18 ||
        text.find_first_not_of("0123456789") != std::string::npos) {
      return false;
    }
    *out = std::stoll(text);
    return true;
  }

  enum class Replay { kNone, kBySeq, kByPosition };

  websocket::stream<beast::tcp_stream> ws_;
  std::shared_ptr<WebSocketContext> ctx_;
  http::request<http::string_body> req_;
  beast::flat_buffer in_;
  EventFilter filter_;
  std::shared_ptr<Subscriber> subscriber_;
  std::deque<std::string> outbox_;
  Replay replay_ = Replay::kNone;
  int64_t replay_after_ = 0;   // a seq or a position, per replay_
  int64_t sent_position_ = 0;  // the highest position in the outbox (or the client's)
  uint64_t missed_ = 0;        // dropped by the live queue, being read back
  bool ready_sent_ = false;
  std::map<std::string, std::string> workflows_;  // execution id -> workflow
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
