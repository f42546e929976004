#include "store/postgres/pg_offer_board.h"

#include "store/postgres/pg_arrays.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>
#include <vector>

namespace baton::pg {

namespace {

// An offer made again (after a takeover) keeps its state: only the owner changes, and
// the new owner has not seen it start.
const std::string kPublish =
    "INSERT INTO offered_dispatches (id, ns, owner, priority, offered_at, request, status) "
    "VALUES ($1, $2, $3, $4, baton_now_ms(), $5, 'open') "
    "ON CONFLICT (id) DO UPDATE SET owner = EXCLUDED.owner, started_seen = false";

const std::string kWithdraw =
    "DELETE FROM offered_dispatches WHERE id = ANY($1::text[]) AND owner = $2";

const std::string kReopenExpired =
    "UPDATE offered_dispatches SET status = 'open', taker = NULL, lease_until = NULL "
    "WHERE status IN ('taken', 'running') AND lease_until < baton_now_ms()";

const std::string kOpen =
    "SELECT id, owner, take, status, request FROM offered_dispatches WHERE status = 'open' "
    "ORDER BY priority DESC, offered_at LIMIT $1";

// Row locks make two takers of one row wait for each other; the second finds it no
// longer open (READ COMMITTED evaluates the condition again on the new row).
const std::string kTake =
    "UPDATE offered_dispatches SET status = 'taken', taker = $1, take = take + 1, "
    "lease_until = baton_now_ms() + $2 WHERE id = ANY($3::text[]) AND status = 'open' "
    "RETURNING id, owner, take, status, request";

// A report while running carries the progress, which the owner has not seen yet.
const std::string kReport =
    "UPDATE offered_dispatches SET status = $4, result = $5, lease_until = baton_now_ms() + $6, "
    "started_seen = false "
    "WHERE id = $1 AND taker = $2 AND take = $3 AND status IN ('taken', 'running')";

const std::string kGiveBack =
    "UPDATE offered_dispatches SET status = 'open', taker = NULL, lease_until = NULL "
    "WHERE id = $1 AND taker = $2 AND take = $3 AND status IN ('taken', 'running')";

const std::string kDrop =
    "DELETE FROM offered_dispatches WHERE id = $1 AND taker = $2 AND take = $3";

const std::string kRenewTakes =
    "UPDATE offered_dispatches SET lease_until = baton_now_ms() + $2 "
    "WHERE taker = $1 AND status IN ('taken', 'running') RETURNING id, take";

const std::string kStarted =
    "UPDATE offered_dispatches SET started_seen = true "
    "WHERE owner = $1 AND id = ANY($2::text[]) AND status = 'running' AND NOT started_seen "
    "RETURNING id, take, result";

// A done offer's result is collected once (started_seen); a takeover's Publish() clears
// it, so that a new owner collects it again.
const std::string kCollectDone =
    "UPDATE offered_dispatches SET started_seen = true "
    "WHERE owner = $1 AND id = ANY($2::text[]) AND status = 'done' AND NOT started_seen "
    "RETURNING id, take, result";

// An offer nobody needs any more: its execution finished or is gone, or its attempt
// ended (the owner committed the result). `o` is the offer's row.
const std::string kUnneeded =
    "(NOT EXISTS (SELECT 1 FROM executions e WHERE e.id = (o.request::json ->> 'execution_id') "
    "AND e.status IN ('pending', 'running', 'paused', 'queued')) "
    "OR EXISTS (SELECT 1 FROM attempts a WHERE a.execution_id = (o.request::json ->> "
    "'execution_id') AND a.step_id = (o.request::json ->> 'step_id') "
    "AND a.attempt = (o.request::json ->> 'attempt')::bigint "
    "AND a.status NOT IN ('pending', 'ready', 'dispatched', 'running', 'waiting_retry')))";

// The owner's results collected before, once the store shows them committed.
const std::string kRemoveCollected =
    "DELETE FROM offered_dispatches o WHERE owner = $1 AND status = 'done' AND started_seen AND " +
    kUnneeded;

const std::string kSweepOffers =
    "DELETE FROM offered_dispatches o WHERE offered_at < baton_now_ms() - $1 AND " + kUnneeded;

const std::string kSweepRequests =
    "DELETE FROM control_requests WHERE asked_at < baton_now_ms() - $1";

Json ParsedOrNull(const std::optional<std::string>& text) {
  if (!text) return Json();
  Json j = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? Json() : j;
}

std::string Dumped(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Rows of (id, owner, take, status, request).
std::vector<OfferedDispatch> Offers(const Rows& rows) {
  std::vector<OfferedDispatch> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    OfferedDispatch d;
    d.id = rows.at(i, 0).value_or("");
    d.owner = rows.at(i, 1).value_or("");
    d.take = std::stoll(rows.at(i, 2).value_or("0"));
    d.status = rows.at(i, 3).value_or("");
    d.request = ParsedOrNull(rows.at(i, 4));
    out.push_back(std::move(d));
  }
  return out;
}

const std::string kAsk =
    "INSERT INTO control_requests (instance, execution_id, op, args, asked_at) "
    "VALUES ($1, $2, $3, $4, baton_now_ms()) RETURNING id";

const std::string kAsked =
    "UPDATE control_requests SET taken = true WHERE instance = $1 AND NOT taken "
    "RETURNING id, execution_id, op, args";

const std::string kAnswer =
    "UPDATE control_requests SET answered = true, code = $2, message = $3, result = $4 "
    "WHERE id = $1";

const std::string kAnswers =
    "DELETE FROM control_requests WHERE id = ANY($1::bigint[]) AND answered "
    "RETURNING id, code, message, result";

const std::string kForget = "DELETE FROM control_requests WHERE id = ANY($1::bigint[])";

}  // namespace

PgOfferBoard::PgOfferBoard(std::string url, Connection::Options options, std::string instance,
                           Duration lease)
    : url_(std::move(url)), options_(options), instance_(std::move(instance)), lease_(lease) {
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
}

PgOfferBoard::~PgOfferBoard() {
  for (int fd : wake_) {
    if (fd >= 0) close(fd);
  }
}

Result<Connection*> PgOfferBoard::Ready() {
  if (conn_ && conn_->ok()) return &*conn_;
  conn_.reset();
  auto c = Connection::Open(url_, options_);
  if (!c.ok()) return c.status();
  if (Status s = c->Script("LISTEN baton_offers", "listening for offered work"); !s.ok()) return s;
  conn_.emplace(std::move(c).value());
  return &*conn_;
}

Result<Rows> PgOfferBoard::Exec(const std::string& sql,
                                const std::vector<std::optional<std::string>>& params,
                                const char* what) {
  auto c = Ready();
  if (!c.ok()) return c.status();
  return (*c)->Exec(sql, params, what);
}

Status PgOfferBoard::Publish(const std::vector<Offer>& offers) {
  for (const Offer& o : offers) {
    auto done =
        Exec(kPublish, {o.id, o.ns, instance_, std::to_string(o.priority), Dumped(o.request)},
             "offering a dispatch to the other instances");
    if (!done.ok()) return done.status();
  }
  return Status::Ok();
}

Status PgOfferBoard::Withdraw(const std::vector<std::string>& ids) {
  if (ids.empty()) return Status::Ok();
  auto done = Exec(kWithdraw, {TextArray(ids), instance_}, "withdrawing offered dispatches");
  return done.ok() ? Status::Ok() : done.status();
}

Result<std::vector<OfferedDispatch>> PgOfferBoard::Open(size_t limit) {
  auto reopened = Exec(kReopenExpired, {}, "reopening offers whose taker stopped");
  if (!reopened.ok()) return reopened.status();
  auto rows = Exec(kOpen, {std::to_string(limit)}, "reading open offers");
  if (!rows.ok()) return rows.status();
  return Offers(*rows);
}

Result<std::vector<OfferedDispatch>> PgOfferBoard::Take(const std::vector<std::string>& ids) {
  if (ids.empty()) return std::vector<OfferedDispatch>{};
  auto rows = Exec(kTake, {instance_, std::to_string(lease_.count()), TextArray(ids)},
                   "taking offered dispatches");
  if (!rows.ok()) return rows.status();
  return Offers(*rows);
}

Result<bool> PgOfferBoard::Report(const std::string& id, int64_t take, const std::string& status,
                                  const Json& result) {
  auto rows = Exec(kReport,
                   {id, instance_, std::to_string(take), status,
                    result.is_null() ? std::nullopt : std::optional<std::string>(Dumped(result)),
                    std::to_string(lease_.count())},
                   "reporting on a taken dispatch");
  if (!rows.ok()) return rows.status();
  return rows->affected() == 1;
}

Status PgOfferBoard::GiveBack(const std::string& id, int64_t take) {
  auto rows = Exec(kGiveBack, {id, instance_, std::to_string(take)}, "giving a dispatch back");
  return rows.ok() ? Status::Ok() : rows.status();
}

Status PgOfferBoard::Drop(const std::string& id, int64_t take) {
  auto rows = Exec(kDrop, {id, instance_, std::to_string(take)}, "dropping a taken offer");
  return rows.ok() ? Status::Ok() : rows.status();
}

Result<std::vector<std::pair<std::string, int64_t>>> PgOfferBoard::Renew() {
  auto rows = Exec(kRenewTakes, {instance_, std::to_string(lease_.count())},
                   "renewing the dispatches this instance took");
  if (!rows.ok()) return rows.status();
  std::vector<std::pair<std::string, int64_t>> out;
  for (size_t i = 0; i < rows->size(); ++i) {
    out.emplace_back(rows->at(i, 0).value_or(""), std::stoll(rows->at(i, 1).value_or("0")));
  }
  return out;
}

Result<std::vector<OfferedDispatch>> PgOfferBoard::Collect(const std::vector<std::string>& ids) {
  std::vector<OfferedDispatch> out;
  auto removed = Exec(kRemoveCollected, {instance_}, "removing results of offers committed");
  if (!removed.ok()) return removed.status();
  if (ids.empty()) return out;
  const std::string listed = TextArray(ids);
  auto started = Exec(kStarted, {instance_, listed}, "reading offers that started");
  if (!started.ok()) return started.status();
  for (size_t i = 0; i < started->size(); ++i) {
    OfferedDispatch d;
    d.id = started->at(i, 0).value_or("");
    d.take = std::stoll(started->at(i, 1).value_or("0"));
    d.owner = instance_;
    d.status = "running";
    d.result = ParsedOrNull(started->at(i, 2));  // the last progress reported, if any
    out.push_back(std::move(d));
  }
  auto done = Exec(kCollectDone, {instance_, listed}, "collecting results of offers");
  if (!done.ok()) return done.status();
  for (size_t i = 0; i < done->size(); ++i) {
    OfferedDispatch d;
    d.id = done->at(i, 0).value_or("");
    d.take = std::stoll(done->at(i, 1).value_or("0"));
    d.owner = instance_;
    d.status = "done";
    d.result = ParsedOrNull(done->at(i, 2));
    out.push_back(std::move(d));
  }
  return out;
}

Result<size_t> PgOfferBoard::Sweep(Duration older_than) {
  const std::string age = std::to_string(older_than.count());
  auto offers = Exec(kSweepOffers, {age}, "removing offers nobody needs");
  if (!offers.ok()) return offers.status();
  auto requests = Exec(kSweepRequests, {age}, "removing old control requests");
  if (!requests.ok()) return requests.status();
  return offers->affected() + requests->affected();
}

Result<bool> PgOfferBoard::Wait(Duration timeout) {
  auto c = Ready();
  if (!c.ok()) return c.status();
  // A notification that arrived with an earlier answer is already read: news now.
  auto early = (*c)->TakeNotifications("reading notifications");
  if (!early.ok()) return early.status();
  if (*early > 0) return false;
  pollfd fds[2] = {{(*c)->socket(), POLLIN, 0}, {wake_[0], POLLIN, 0}};
  const int n = poll(fds, wake_[0] >= 0 ? 2 : 1, static_cast<int>(timeout.count()));
  if (n < 0 && errno != EINTR) return Status(errc::kStore, "waiting for offered work failed");
  bool woken = false;
  if (wake_[0] >= 0 && (fds[1].revents & POLLIN) != 0) {
    char buf[64];
    while (read(wake_[0], buf, sizeof buf) > 0) {
    }
    woken = true;
  }
  if ((fds[0].revents & (POLLIN | POLLERR | POLLHUP)) != 0) {
    auto notes = (*c)->TakeNotifications("reading notifications");
    if (!notes.ok()) return notes.status();
  }
  return woken;
}

void PgOfferBoard::Wake() {
  if (wake_[1] < 0) return;
  const char one = 1;
  [[maybe_unused]] ssize_t n = write(wake_[1], &one, 1);  // full pipe: already woken
}

Result<int64_t> PgOfferBoard::Ask(const std::string& instance, const ControlRequest& request) {
  auto rows = Exec(kAsk, {instance, request.execution_id, request.op, Dumped(request.args)},
                   "asking another instance");
  if (!rows.ok()) return rows.status();
  if (rows->size() != 1) return Status(errc::kStore, "asking another instance: no request id");
  return std::stoll(rows->at(0, 0).value_or("0"));
}

Result<std::vector<ControlRequest>> PgOfferBoard::Asked() {
  auto rows = Exec(kAsked, {instance_}, "reading requests of other instances");
  if (!rows.ok()) return rows.status();
  std::vector<ControlRequest> out;
  for (size_t i = 0; i < rows->size(); ++i) {
    ControlRequest r;
    r.id = std::stoll(rows->at(i, 0).value_or("0"));
    r.execution_id = rows->at(i, 1).value_or("");
    r.op = rows->at(i, 2).value_or("");
    r.args = ParsedOrNull(rows->at(i, 3));
    out.push_back(std::move(r));
  }
  return out;
}

Status PgOfferBoard::Answer(int64_t id, const Status& status, const Json& result) {
  auto rows = Exec(kAnswer,
                   {std::to_string(id), status.code(), status.message(),
                    result.is_null() ? std::nullopt : std::optional<std::string>(Dumped(result))},
                   "answering another instance");
  return rows.ok() ? Status::Ok() : rows.status();
}

Result<std::vector<ControlAnswer>> PgOfferBoard::Answers(const std::vector<int64_t>& ids) {
  std::vector<ControlAnswer> out;
  if (ids.empty()) return out;
  auto rows = Exec(kAnswers, {IntArray(ids)}, "reading answers of other instances");
  if (!rows.ok()) return rows.status();
  for (size_t i = 0; i < rows->size(); ++i) {
    ControlAnswer a;
    a.id = std::stoll(rows->at(i, 0).value_or("0"));
    const std::string code = rows->at(i, 1).value_or("");
    if (!code.empty()) a.status = Status(code, rows->at(i, 2).value_or(""));
    a.result = ParsedOrNull(rows->at(i, 3));
    out.push_back(std::move(a));
  }
  return out;
}

Status PgOfferBoard::Forget(const std::vector<int64_t>& ids) {
  if (ids.empty()) return Status::Ok();
  auto rows = Exec(kForget, {IntArray(ids)}, "dropping requests nobody reads");
  return rows.ok() ? Status::Ok() : rows.status();
}

}  // namespace baton::pg
