#include "server/workers/worker_session.h"

#include "protocol/worker_protocol.h"
#include "server/engine_host.h"
#include "server/http_types.h"
#include "server/metrics.h"
#include "server/upgrade.h"
#include "server/workers/frame_turn.h"
#include "workers/coordinator.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace baton::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

class WorkerSession;

// The coordinator's handle on the session: thread-safe, and harmless once the session
// is gone.
//
// Messages sent while the engine's loop runs one round of tasks go out together: the
// first one has the flush posted to the session's strand once that round is done
// (EngineHost::AfterCurrentTasks), and the others join it. So a busy coordinator costs
// one hop (and, to a worker that reads batch frames, one frame) per round rather than per
// message; an idle one sends as soon as its task ends. (Posted straight to the strand,
// the flush let the I/O thread write the first of a commit's 50 commands alone while the
// engine was still sending the others: the worker answered each frame on its own, and
// the commands and results of a busy worker kept splitting into ever smaller frames and
// commits, ~20 jobs per commit at a capacity of 50.)
class SessionChannel final : public workers::WorkerChannel,
                             public std::enable_shared_from_this<SessionChannel> {
 public:
  SessionChannel(std::weak_ptr<WorkerSession> session, net::any_io_executor executor,
                 EngineHost* engine)
      : session_(std::move(session)), executor_(std::move(executor)), engine_(engine) {}
  void Send(const protocol::ServerMessage& message) override;
  void Close() override;
  // Whether the worker said it reads batch frames (its register). On the strand, before
  // anything is sent to it.
  void SetBatching(bool on) {
    std::lock_guard lock(mu_);
    batching_ = on;
  }

 private:
  void PostFlush();
  void Flush();

  std::weak_ptr<WorkerSession> session_;
  net::any_io_executor executor_;
  EngineHost* engine_;
  std::mutex mu_;
  // Texts not handed to the session yet; `solo` ones (registered) never share a frame.
  struct Pending {
    std::string text;
    bool solo = false;
  };
  std::vector<Pending> pending_;
  bool close_after_ = false;
  bool batching_ = false;
};

class WorkerSession : public std::enable_shared_from_this<WorkerSession> {
 public:
  WorkerSession(tcp::socket socket, std::shared_ptr<WorkerSessionContext> ctx)
      : ws_(std::move(socket)), ctx_(std::move(ctx)) {}

  void Run(http::request<http::string_body> req) {
    req_ = std::move(req);
    net::dispatch(ws_.get_executor(), [self = shared_from_this()] { self->Authorize(); });
  }

  // On the session's strand. `messages`: how many the frame holds (a batch: several).
  void Queue(std::string text, size_t messages = 1) {
    if (closing_ || ended_) return;
    if (queued_messages_ + messages > ctx_->max_queued) {
      std::fprintf(stderr, "baton: worker %s reads too slowly (%zu messages queued); closing\n",
                   worker_id_.c_str(), queued_messages_);
      overflow_ = true;  // what is queued is dropped: the worker gets it again on reconnect
      closing_ = true;
      if (!writing_) CloseNow();
      return;
    }
    outbox_.push_back({std::move(text), messages});
    queued_messages_ += messages;
    if (ctx_->wire != nullptr) {
      ++ctx_->wire->frames_sent;
      ctx_->wire->messages_sent += messages;
    }
    Pump();
  }
  // After what is queued has been written.
  void Close() {
    if (closing_ || ended_) return;
    closing_ = true;
    if (!writing_ && outbox_.empty()) CloseNow();
  }

 private:
  void Refuse(const HttpResponse& r) {
    RefuseUpgrade(ws_.next_layer(), req_.version(), r, shared_from_this());
  }

  void Authorize() {
    std::map<std::string, std::string> query;
    HttpResponse refusal;
    auto who = AuthorizeUpgrade(req_, ctx_->auth, Scope::kWorker, &query, &refusal);
    if (!who.ok()) return Refuse(refusal);
    ns_ = who->ns;
    ws_.read_message_max(ctx_->max_message_bytes);
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "baton"); }));
    ws_.async_accept(req_, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return;
      self->channel_ = std::make_shared<SessionChannel>(
          self->weak_from_this(), self->ws_.get_executor(), self->ctx_->engine);
      self->Read();
    });
  }

  void Read() {
    ws_.async_read(in_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->Ended();
      std::string text = beast::buffers_to_string(self->in_.data());
      self->in_.consume(self->in_.size());
      self->OnText(text);
      self->Read();  // until the close completes: it ends with an error here
    });
  }

  void SendError(const Status& s, const std::string& assignment_id = "") {
    Queue(protocol::ToText(
        protocol::ServerMessage(protocol::ProtocolError{s.code(), s.message(), assignment_id})));
  }

  // A frame holds one message or a batch (docs/worker-protocol.md): all of them go to
  // the coordinator in one engine turn, in order, and their answers come back together.
  void OnText(const std::string& text) {
    Result<std::vector<protocol::WorkerMessage>> parsed = protocol::ParseWorkerFrameText(text);
    if (!parsed.ok()) return SendError(parsed.status());
    std::vector<protocol::WorkerMessage> messages = std::move(parsed.value());
    if (ctx_->wire != nullptr) {
      ++ctx_->wire->frames_received;
      ctx_->wire->messages_received += messages.size();
    }
    const bool is_register = std::holds_alternative<protocol::Register>(messages.front());
    if (worker_id_.empty() && !is_register) {
      return SendError(Status(errc::kValidation, "the first message must be 'register'"));
    }
    if (!worker_id_.empty() && is_register) {
      return SendError(Status(errc::kValidation, "this connection is registered already"));
    }
    if (is_register) {
      // Whatever comes next is about this worker, even before the engine answers.
      const auto& reg = std::get<protocol::Register>(messages.front());
      worker_id_ = reg.worker_id;
      channel_->SetBatching(reg.batching);
    }
    std::weak_ptr<WorkerSession> weak = weak_from_this();
    auto executor = ws_.get_executor();
    workers::Coordinator* coordinator = ctx_->coordinator;
    ctx_->engine->Post([weak, executor, coordinator, ns = ns_, worker = worker_id_,
                        channel = channel_, messages = std::move(messages)](Engine& engine) {
      std::vector<protocol::ServerMessage> answers;
      bool close = false;
      // One batch for the frame's writes: an ack and a result of the same command in
      // one frame write its assignment once; a small frame's commit with the engine's
      // answer to them.
      std::optional<Engine::JoinedTurn> turn;
      JoinSmallBody(turn, engine, messages.size());
      auto group = coordinator->GroupWrites();
      for (const protocol::WorkerMessage& message : messages) {
        if (close) break;  // nothing after a deregistration or a refused registration
        if (const auto* reg = std::get_if<protocol::Register>(&message)) {
          Result<protocol::Registered> r = coordinator->Register(ns, *reg, channel);
          if (r.ok()) {
            r->batching = true;  // this transport reads batch frames
            answers.emplace_back(*r);
          } else {
            answers.emplace_back(
                protocol::ProtocolError{r.status().code(), r.status().message(), ""});
            close = true;
          }
          continue;
        }
        const bool deregister = std::holds_alternative<protocol::Deregister>(message);
        Status s =
            deregister ? coordinator->Deregister(worker) : coordinator->OnMessage(worker, message);
        if (!s.ok()) {
          std::string assignment;
          if (s.code() == errc::kStaleAssignment) {
            std::visit(
                [&](const auto& x) {
                  if constexpr (requires { x.assignment_id; }) assignment = x.assignment_id;
                },
                message);
          }
          answers.emplace_back(protocol::ProtocolError{s.code(), s.message(), assignment});
        }
        close = deregister || s.code() == errc::kNotFound;
      }
      if (answers.empty() && !close) return;
      for (const protocol::ServerMessage& answer : answers) channel->Send(answer);
      if (close) channel->Close();
    });
  }

  void CloseNow() {
    ws_.async_close(websocket::close_code::normal,
                    [self = shared_from_this()](beast::error_code) {});
  }

  void Pump() {
    if (writing_ || outbox_.empty() || ended_) return;
    writing_ = true;
    ws_.text(true);
    ws_.async_write(net::buffer(outbox_.front().first),
                    [self = shared_from_this()](beast::error_code ec, size_t) {
                      self->writing_ = false;
                      if (ec) return self->Ended();
                      self->queued_messages_ -= self->outbox_.front().second;
                      self->outbox_.pop_front();
                      if (self->closing_ && (self->outbox_.empty() || self->overflow_)) {
                        return self->CloseNow();
                      }
                      self->Pump();
                    });
  }

  // The connection is gone: the worker keeps its work until its heartbeat deadline.
  void Ended() {
    if (ended_) return;
    ended_ = true;
    if (worker_id_.empty() || !channel_) return;
    workers::Coordinator* coordinator = ctx_->coordinator;
    ctx_->engine->Post([coordinator, worker = worker_id_, channel = channel_](Engine&) {
      coordinator->Disconnected(worker, channel.get());
    });
  }

  websocket::stream<beast::tcp_stream> ws_;
  std::shared_ptr<WorkerSessionContext> ctx_;
  http::request<http::string_body> req_;
  beast::flat_buffer in_;
  std::string ns_;
  std::string worker_id_;
  std::shared_ptr<SessionChannel> channel_;
  std::deque<std::pair<std::string, size_t>> outbox_;  // frames and their message counts
  size_t queued_messages_ = 0;                         // in outbox_, at most max_queued
  bool writing_ = false;
  bool closing_ = false;   // closes once the outbox is written
  bool ended_ = false;     // the connection is gone
  bool overflow_ = false;  // closing because the worker does not read
};

void SessionChannel::Send(const protocol::ServerMessage& message) {
  // `registered` cannot be part of a batch (the worker refuses such a frame whole).
  Pending p{protocol::ToText(message), std::holds_alternative<protocol::Registered>(message)};
  bool first;
  {
    std::lock_guard lock(mu_);
    first = pending_.empty() && !close_after_;
    pending_.push_back(std::move(p));
  }
  if (first) PostFlush();
}

void SessionChannel::Close() {
  bool first;
  {
    std::lock_guard lock(mu_);
    first = pending_.empty() && !close_after_;
    close_after_ = true;
  }
  if (first) PostFlush();
}

void SessionChannel::PostFlush() {
  engine_->AfterCurrentTasks(
      [this, keep = shared_from_this()] { net::post(executor_, [this, keep] { Flush(); }); });
}

void SessionChannel::Flush() {
  std::vector<Pending> pending;
  bool close, batching;
  {
    std::lock_guard lock(mu_);
    pending.swap(pending_);
    close = std::exchange(close_after_, false);
    batching = batching_;
  }
  auto self = session_.lock();
  if (!self) return;
  std::vector<std::string> run;  // consecutive texts that may share frames
  auto send_run = [&] {
    for (protocol::Frame& f : protocol::BatchFrames(std::move(run))) {
      self->Queue(std::move(f.text), f.messages);
    }
    run.clear();
  };
  for (Pending& p : pending) {
    if (!batching || p.solo) {
      send_run();
      self->Queue(std::move(p.text));
    } else {
      run.push_back(std::move(p.text));
    }
  }
  send_run();
  if (close) self->Close();
}

}  // namespace

void StartWorkerSession(tcp::socket socket, http::request<http::string_body> request,
                        std::shared_ptr<WorkerSessionContext> context) {
  std::make_shared<WorkerSession>(std::move(socket), std::move(context))->Run(std::move(request));
}

}  // namespace baton::server
