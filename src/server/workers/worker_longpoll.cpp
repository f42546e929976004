// The HTTP long-poll transport for workers (docs/worker-protocol.md): the same messages
// and semantics as the WebSocket, for clients that cannot hold a socket.
//
// A registration gets a mailbox: the coordinator's channel for that worker. Commands and
// cancels wait in it (bounded) until the worker polls; a poll with nothing to take
// waits up to `wait` ms for the first message. A poll counts as a heartbeat. A newer
// registration of the same worker closes the old mailbox (a poll parked on it gets 409).
// Every mailbox lives on the engine thread, like the coordinator that sends into it.
#include "server/api.h"
#include "server/metrics.h"
#include "server/workers/frame_turn.h"
#include "workers/coordinator.h"

#include <deque>
#include <map>
#include <optional>

namespace baton::server {
namespace {

constexpr int64_t kDefaultWaitMs = 25'000;
constexpr int64_t kMaxWaitMs = 60'000;
constexpr size_t kMaxQueued = 10'000;

class Mailbox final : public workers::WorkerChannel {
 public:
  explicit Mailbox(EventLoop* loop) : loop_(loop) {}
  ~Mailbox() override {
    if (timer_) loop_->CancelTimer(timer_);
  }

  // Engine thread (the coordinator sends from there).
  void Send(const protocol::ServerMessage& message) override {
    if (closed_) return;
    if (queued_.size() >= kMaxQueued) queued_.pop_front();  // re-sent when it registers again
    queued_.push_back(protocol::ToJson(message));
    if (parked_) Answer();
  }
  void Close() override {
    closed_ = true;
    if (parked_) Answer();
  }

  void Poll(Responder respond, int64_t wait_ms) {
    if (parked_) Answer();  // one poll at a time: the older one returns (empty)
    parked_ = std::move(respond);
    if (!queued_.empty() || closed_ || wait_ms == 0) return Answer();
    timer_ = loop_->ScheduleAfter(Duration(wait_ms), [this] {
      timer_ = 0;
      Answer();
    });
  }

 private:
  void Answer() {
    if (timer_) {
      loop_->CancelTimer(timer_);
      timer_ = 0;
    }
    if (!parked_) return;
    Responder respond = std::move(parked_);
    parked_ = nullptr;
    if (closed_ && queued_.empty()) {
      return respond(ErrorResponse(409, errc::kConflict,
                                   "this worker registered again elsewhere; this session ended"));
    }
    Json messages = Json::array();
    for (Json& m : queued_) messages.push_back(std::move(m));
    queued_.clear();
    respond(JsonResponse(200, {{"messages", messages}}));
  }

  EventLoop* loop_;
  std::deque<Json> queued_;
  Responder parked_;
  TimerId timer_ = 0;
  bool closed_ = false;
};

// The worker's message in the body; the route fixes its type.
Result<protocol::WorkerMessage> BodyMessage(const HttpRequest& request, const char* type) {
  Result<Json> body = ParseJsonBody(request);
  if (!body.ok()) return body.status();
  Json& j = body.value();
  if (!j.contains("type")) j["type"] = type;
  if (j["type"] != type) {
    return Status(errc::kValidation, std::string("field 'type': this route takes '") + type +
                                         "' messages, got " + j["type"].dump());
  }
  return protocol::ParseWorkerMessage(j);
}

std::string AssignmentOf(const protocol::WorkerMessage& message) {
  std::string assignment;
  std::visit(
      [&](const auto& x) {
        if constexpr (requires { x.assignment_id; }) assignment = x.assignment_id;
      },
      message);
  return assignment;
}

Json RefusalDetails(const Status& s, const std::string& assignment) {
  if (s.code() == errc::kStaleAssignment) return Json{{"assignmentId", assignment}};
  return Json::object();
}

// The body of POST .../batch: a `batch` of worker messages (docs/worker-protocol.md).
// One message that does not parse refuses the whole body, naming its index.
Result<std::vector<protocol::WorkerMessage>> BodyBatch(const HttpRequest& request) {
  Result<Json> body = ParseJsonBody(request);
  if (!body.ok()) return body.status();
  if (!body->is_object() || body->value("type", "") != "batch") {
    return Status(errc::kValidation, "field 'type': this route takes a 'batch' of messages");
  }
  return protocol::ParseWorkerFrame(*body);
}

HttpResponse Refusal(const Status& s, const std::string& assignment) {
  return ErrorResponse(s, RefusalDetails(s, assignment));
}

// Engine thread.
bool Registered(ApiContext& ctx, const std::string& id, const std::string& ns) {
  const workers::WorkerEntry* w = ctx.coordinator->registry().Find(id);
  return w != nullptr && w->ns == ns;
}

HttpResponse NotRegistered(const std::string& id) {
  return ErrorResponse(404, errc::kNotFound,
                       "worker '" + id + "' is not registered; register again");
}

// Any thread: one request carrying `messages` worker messages.
void CountReceived(ApiContext& ctx, size_t messages) {
  if (ctx.metrics == nullptr) return;
  ++ctx.metrics->worker_wire()->longpoll_requests;
  ctx.metrics->worker_wire()->longpoll_messages += messages;
}

using Mailboxes = std::map<std::string, std::shared_ptr<Mailbox>>;

// Engine thread. The worker leaves: OFFLINE, and a poll parked on its mailbox returns.
Status Deregister(ApiContext& ctx, Mailboxes& mailboxes, const std::string& id) {
  Status s = ctx.coordinator->Deregister(id);
  if (!s.ok()) return s;
  if (auto it = mailboxes.find(id); it != mailboxes.end()) {
    it->second->Close();
    mailboxes.erase(it);
  }
  return Status::Ok();
}

// Engine thread. The messages of one `batch` body, in order, each answered on its own
// (`ok`, `heartbeat.ok` or the error a single request would have got); nothing after a
// `deregister` is handled, as on the WebSocket.
Json HandleBatch(ApiContext& ctx, Mailboxes& mailboxes, const std::string& id,
                 const std::vector<protocol::WorkerMessage>& messages) {
  Json results = Json::array();
  // One batch for the body's writes; a small body's commit with the engine's answer.
  std::optional<Engine::JoinedTurn> turn;
  JoinSmallBody(turn, *ctx.engine->engine(), messages.size());
  auto group = ctx.coordinator->GroupWrites();
  for (const protocol::WorkerMessage& message : messages) {
    const bool heartbeat = std::holds_alternative<protocol::Heartbeat>(message);
    const bool leaving = std::holds_alternative<protocol::Deregister>(message);
    const Status s =
        leaving ? Deregister(ctx, mailboxes, id) : ctx.coordinator->OnMessage(id, message);
    if (s.ok()) {
      results.push_back({{"type", heartbeat ? "heartbeat.ok" : "ok"}});
    } else {
      results.push_back({{"error",
                          {{"code", s.code()},
                           {"message", s.message()},
                           {"details", RefusalDetails(s, AssignmentOf(message))}}}});
    }
    if (leaving) break;
  }
  return results;
}

}  // namespace

void AddWorkerLongPollRoutes(Router& router, ApiContext& ctx) {
  // Engine thread only.
  auto mailboxes = std::make_shared<Mailboxes>();

  router.Add("POST", "/api/v1/workers/register", Scope::kWorker,
             "Register a long-polling worker (body: a register message)",
             [&ctx, mailboxes](const Call& call, Responder respond) {
               auto m = BodyMessage(*call.request, protocol::Register::kType);
               if (!m.ok()) return respond(ErrorResponse(m.status()));
               ctx.engine->Post([&ctx, mailboxes, respond, ns = call.principal.ns,
                                 reg = std::get<protocol::Register>(*m)](Engine&) {
                 auto box = std::make_shared<Mailbox>(ctx.engine->loop());
                 auto r = ctx.coordinator->Register(ns, reg, box);
                 if (!r.ok()) return respond(ErrorResponse(r.status()));
                 (*mailboxes)[reg.worker_id] = box;
                 respond(JsonResponse(200, protocol::ToJson(protocol::ServerMessage(*r))));
               });
             });

  // A message from a registered worker of the caller's namespace, to the coordinator.
  auto forward = [&ctx, mailboxes](const char* type, Json ok) {
    return [&ctx, mailboxes, type, ok](const Call& call, Responder respond) {
      auto m = BodyMessage(*call.request, type);
      if (!m.ok()) return respond(ErrorResponse(m.status()));
      CountReceived(ctx, 1);
      ctx.engine->Post([&ctx, mailboxes, respond, ok, ns = call.principal.ns, id = call.Param("id"),
                        message = std::move(*m)](Engine& engine) {
        if (!Registered(ctx, id, ns)) return respond(NotRegistered(id));
        auto turn = engine.JoinTurn();  // a result commits with the step's completion
        Status s = ctx.coordinator->OnMessage(id, message);
        if (!s.ok()) return respond(Refusal(s, AssignmentOf(message)));
        respond(JsonResponse(200, ok));
      });
    };
  };
  router.Add("POST", "/api/v1/workers/{id}/heartbeat", Scope::kWorker,
             "A long-polling worker's heartbeat (body: a heartbeat message)",
             forward(protocol::Heartbeat::kType, Json{{"type", "heartbeat.ok"}}));
  router.Add("POST", "/api/v1/workers/{id}/ack", Scope::kWorker,
             "Accept or reject a command (body: command.ack); 409 STALE_ASSIGNMENT",
             forward(protocol::CommandAck::kType, Json{{"type", "ok"}}));
  router.Add("POST", "/api/v1/workers/{id}/progress", Scope::kWorker,
             "Progress and checkpoint of a command (body: command.progress)",
             forward(protocol::CommandProgress::kType, Json{{"type", "ok"}}));
  router.Add("POST", "/api/v1/workers/{id}/result", Scope::kWorker,
             "The result of a command (body: command.result); 409 STALE_ASSIGNMENT",
             forward(protocol::CommandResult::kType, Json{{"type", "ok"}}));

  router.Add("POST", "/api/v1/workers/{id}/deregister", Scope::kWorker,
             "A worker leaving: OFFLINE, no more heartbeats expected",
             [&ctx, mailboxes](const Call& call, Responder respond) {
               ctx.engine->Post([&ctx, mailboxes, respond, ns = call.principal.ns,
                                 id = call.Param("id")](Engine&) {
                 if (!Registered(ctx, id, ns)) {
                   return respond(ErrorResponse(404, errc::kNotFound, "no worker '" + id + "'"));
                 }
                 Status s = Deregister(ctx, *mailboxes, id);
                 if (!s.ok()) return respond(ErrorResponse(s));
                 respond(JsonResponse(200, {{"type", "ok"}}));
               });
             });

  // Several messages in one request: what a busy worker has to say, at the cost of one.
  router.Add(
      "POST", "/api/v1/workers/{id}/batch", Scope::kWorker,
      "Several messages of a long-polling worker in one request (body: a batch of up "
      "to 1000 heartbeat, command.ack, command.progress, command.result or deregister "
      "messages); answers {results: [...]}, one per message handled, in order",
      [&ctx, mailboxes](const Call& call, Responder respond) {
        auto parsed = BodyBatch(*call.request);
        if (!parsed.ok()) return respond(ErrorResponse(parsed.status()));
        CountReceived(ctx, parsed->size());
        ctx.engine->Post([&ctx, mailboxes, respond, ns = call.principal.ns, id = call.Param("id"),
                          messages = std::move(parsed).value()](Engine&) {
          if (!Registered(ctx, id, ns)) return respond(NotRegistered(id));
          respond(JsonResponse(200, {{"results", HandleBatch(ctx, *mailboxes, id, messages)}}));
        });
      });

  router.Add("GET", "/api/v1/workers/{id}/poll", Scope::kWorker,
             "Commands and cancels for a long-polling worker: ?wait=MS (default 25000, max "
             "60000); counts as a heartbeat",
             [&ctx, mailboxes](const Call& call, Responder respond) {
               int64_t wait = kDefaultWaitMs;
               if (auto it = call.request->query.find("wait"); it != call.request->query.end()) {
                 const std::string& t = it->second;
                 if (t.empty() || t.size() > 6 ||
                     t.find_first_not_of("0123456789") != std::string::npos ||
                     std::stoll(t) > kMaxWaitMs) {
                   return respond(FieldError(
                       "wait", "expected milliseconds from 0 to " + std::to_string(kMaxWaitMs)));
                 }
                 wait = std::stoll(t);
               }
               ctx.engine->Post([&ctx, mailboxes, respond, wait, ns = call.principal.ns,
                                 id = call.Param("id")](Engine&) {
                 const workers::WorkerEntry* w = ctx.coordinator->registry().Find(id);
                 auto box = mailboxes->find(id);
                 if (w == nullptr || w->ns != ns || box == mailboxes->end()) {
                   return respond(ErrorResponse(
                       404, errc::kNotFound,
                       "worker '" + id + "' has no long-poll registration; register again"));
                 }
                 if (Status s = ctx.coordinator->Touch(id); !s.ok()) {
                   return respond(ErrorResponse(s));
                 }
                 box->second->Poll(respond, wait);
               });
             });
}

}  // namespace baton::server
