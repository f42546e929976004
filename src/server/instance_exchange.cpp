#include "server/instance_exchange.h"

#include <cstdio>
#include <future>
#include <memory>
#include <set>
#include <utility>

namespace baton::server {

Json InstanceExchange::RequestJson(const RunRequest& r) {
  return Json{{"execution_id", r.execution_id},
              {"step_id", r.step_id},
              {"attempt", r.attempt},
              {"assignment_id", r.assignment_id},
              {"type", ToString(r.type)},
              {"spec", *r.spec},
              {"timeout_ms", r.timeout.count()},
              {"ns", r.ns},
              {"priority", r.priority},
              {"step_index", r.step_index}};
}

RunRequest InstanceExchange::RequestFrom(const Json& j) {
  RunRequest r;
  if (!j.is_object()) return r;
  r.execution_id = j.value("execution_id", "");
  r.step_id = j.value("step_id", "");
  r.attempt = j.value("attempt", 1);
  r.assignment_id = j.value("assignment_id", "");
  r.type = ParseStepType(j.value("type", "command")).value_or(StepType::kCommand);
  r.spec = MakeSpec(j.value("spec", Json::object()));
  r.timeout = Duration(j.value("timeout_ms", int64_t{0}));
  r.ns = j.value("ns", "");
  r.priority = j.value("priority", 1);
  r.step_index = j.value("step_index", 0);
  return r;
}

Json InstanceExchange::ResultJson(const RunResult& r) {
  Json j{{"ok", r.status.ok()}, {"output", r.output}, {"exit_code", r.exit_code}};
  if (!r.status.ok()) {
    j["error"] = {
        {"code", r.status.code()}, {"message", r.status.message()}, {"details", r.error_details}};
  }
  return j;
}

RunResult InstanceExchange::ResultFrom(const Json& j) {
  RunResult r;
  if (!j.is_object()) {
    r.status = Status(errc::kStore, "another instance reported an unreadable result");
    return r;
  }
  r.output = j.value("output", Json());
  r.exit_code = j.value("exit_code", -1);
  if (!j.value("ok", false)) {
    const Json e = j.value("error", Json::object());
    std::string code = e.is_object() ? e.value("code", "") : "";
    if (code.empty()) code = errc::kStore;
    r.status = Status(code, e.is_object() ? e.value("message", "") : "");
    if (e.is_object()) r.error_details = e.value("details", Json());
  }
  return r;
}

void InstanceExchange::Start() {
  thread_ = std::thread([this] { Run(); });
}

void InstanceExchange::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  board_->Wake();
  if (thread_.joinable()) thread_.join();
}

void InstanceExchange::Queue(std::function<void(std::unique_lock<std::mutex>&)> add) {
  {
    std::unique_lock lock(mu_);
    add(lock);
  }
  board_->Wake();
}

void InstanceExchange::Offer(const RunRequest& request) {
  Queue([&](auto&) {
    offers_.push_back({request.assignment_id, request.ns, request.priority, RequestJson(request)});
  });
}

void InstanceExchange::Withdraw(const std::string& dispatch_id) {
  Queue([&](auto&) {
    // Not published yet: nothing to take back from the board.
    if (std::erase_if(offers_, [&](const auto& o) { return o.id == dispatch_id; }) > 0) return;
    withdrawals_.push_back(dispatch_id);
  });
}

void InstanceExchange::GiveBack(const std::string& dispatch_id) {
  Queue([&](auto&) { give_backs_.push_back(dispatch_id); });
}

void InstanceExchange::Ask(const std::string& instance, ControlRequest request,
                           std::function<void(Status, Json)> done) {
  Queue([&](auto&) { asks_.push_back({instance, std::move(request), std::move(done)}); });
}

void InstanceExchange::Relay() {
  std::vector<Asking> asks;
  std::vector<Answering> answers;
  {
    std::lock_guard lock(mu_);
    asks.swap(asks_);
    answers.swap(answers_);
  }
  const auto now = std::chrono::steady_clock::now();
  for (Asking& a : asks) {
    auto id = relay_->Ask(a.instance, a.request);
    if (!id.ok()) {
      a.done(id.status(), Json());
      continue;
    }
    waiting_[*id] = {std::move(a.done), now + kAskTimeout};
  }
  for (size_t i = 0; i < answers.size(); ++i) {
    if (Status s = relay_->Answer(answers[i].id, answers[i].status, answers[i].result); !s.ok()) {
      Complain("answering another instance", s);
      std::lock_guard lock(mu_);
      answers_.insert(answers_.end(), std::make_move_iterator(answers.begin() + i),
                      std::make_move_iterator(answers.end()));
      break;
    }
  }
  if (apply_) {
    auto asked = relay_->Asked();
    if (!asked.ok()) {
      Complain("reading the requests of other instances", asked.status());
    } else if (!asked->empty()) {
      host_->Post([this, asked = std::move(asked).value()](Engine& engine) {
        for (const ControlRequest& r : asked) {
          apply_(engine, r, [this, id = r.id](Status status, Json result) {
            Queue([&](auto&) { answers_.push_back({id, std::move(status), std::move(result)}); });
          });
        }
      });
    }
  }
  if (waiting_.empty()) return;
  std::vector<int64_t> ids;
  for (const auto& [id, w] : waiting_) ids.push_back(id);
  auto came = relay_->Answers(ids);
  if (!came.ok()) {
    Complain("reading the answers of other instances", came.status());
  } else {
    for (ControlAnswer& a : *came) {
      auto it = waiting_.find(a.id);
      if (it == waiting_.end()) continue;
      auto done = std::move(it->second.done);
      waiting_.erase(it);
      done(std::move(a.status), std::move(a.result));
    }
  }
  std::vector<int64_t> late;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (it->second.until > std::chrono::steady_clock::now()) {
      ++it;
      continue;
    }
    late.push_back(it->first);
    it->second.done(Status("UNAVAILABLE",
                           "the instance that holds the execution did not answer "
                           "within 10 s (it may have stopped: try again once "
                           "another instance has taken the execution over)"),
                    Json());
    it = waiting_.erase(it);
  }
  if (Status s = relay_->Forget(late); !s.ok()) Complain("dropping unanswered requests", s);
}

void InstanceExchange::Adopted(const std::string& dispatch_id) {
  Queue([&](auto&) {
    // Its reports queued before are for the board's copy, which goes.
    std::erase_if(reports_, [&](const Report& r) { return r.id == dispatch_id; });
    drops_.push_back(dispatch_id);
  });
}

template <class F>
auto InstanceExchange::OnEngine(F f) -> decltype(f()) {
  using R = decltype(f());
  auto promise = std::make_shared<std::promise<R>>();
  auto future = promise->get_future();
  host_->Post([promise, f = std::move(f)](Engine&) mutable { promise->set_value(f()); });
  while (future.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    std::lock_guard lock(mu_);
    if (stopping_) return R{};  // the engine may stop before it runs
  }
  return future.get();
}

void InstanceExchange::Complain(const std::string& what, const Status& s) {
  const auto now = std::chrono::steady_clock::now();
  if (now < quiet_until_) return;
  quiet_until_ = now + std::chrono::seconds(5);
  std::fprintf(stderr, "baton: %s: %s (trying again)\n", what.c_str(), s.message().c_str());
}

void InstanceExchange::Run() {
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    if (!Turn()) continue;
    auto woken = board_->Wait(kPoll);
    if (!woken.ok()) {
      Complain("waiting for work offered between instances", woken.status());
      std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a database that is gone
    }
  }
}

bool InstanceExchange::Turn() {
  Flush();
  Relay();
  const auto now = std::chrono::steady_clock::now();
  if (now >= next_renewal_) {
    next_renewal_ = now + lease_ / 3;
    Renew();
  }
  if (now >= next_sweep_) {
    next_sweep_ = now + kPoll;
    // Dispatches whose workers went away meanwhile: offered (or given back) now.
    host_->Post([c = coordinator_](Engine&) { c->OfferStranded(); });
  }
  if (leading_ && now >= next_clean_ && leading_()) {
    next_clean_ = now + kCleanEvery;
    // Older than two leases: whatever an instance that died left there was taken over
    // (and offered again if still needed) by then.
    auto removed = board_->Sweep(2 * lease_);
    if (!removed.ok()) Complain("removing offers nobody needs", removed.status());
  }
  Collect();
  return TakeOpen();
}

void InstanceExchange::Flush() {
  std::vector<OfferBoard::Offer> offers;
  std::vector<std::string> withdrawals, give_backs, drops;
  std::deque<Report> reports;
  {
    std::lock_guard lock(mu_);
    offers.swap(offers_);
    withdrawals.swap(withdrawals_);
    give_backs.swap(give_backs_);
    drops.swap(drops_);
    reports.swap(reports_);
  }
  auto keep = [this](auto& from, auto& into) {
    std::lock_guard lock(mu_);
    into.insert(into.begin(), std::make_move_iterator(from.begin()),
                std::make_move_iterator(from.end()));
  };
  if (Status s = board_->Publish(offers); !s.ok()) {
    Complain("offering dispatches to the other instances", s);
    keep(offers, offers_);
  }
  if (Status s = board_->Withdraw(withdrawals); !s.ok()) {
    Complain("withdrawing offered dispatches", s);
    keep(withdrawals, withdrawals_);
  }
  auto settle = [this](std::vector<std::string>& ids, bool drop, std::vector<std::string>& again) {
    for (const std::string& id : ids) {
      auto it = taken_.find(id);
      if (it == taken_.end()) continue;
      Status s = drop ? board_->Drop(id, it->second) : board_->GiveBack(id, it->second);
      if (!s.ok()) {
        Complain("giving a dispatch back to the board", s);
        again.push_back(id);
        continue;
      }
      taken_.erase(it);
    }
  };
  std::vector<std::string> again_give, again_drop;
  settle(give_backs, false, again_give);
  settle(drops, true, again_drop);
  keep(again_give, give_backs_);
  keep(again_drop, drops_);
  while (!reports.empty()) {
    Report& r = reports.front();
    auto it = taken_.find(r.id);
    if (it == taken_.end()) {  // lost meanwhile: its owner no longer listens to this taking
      reports.pop_front();
      continue;
    }
    auto sent = board_->Report(r.id, it->second, r.status, r.result);
    if (!sent.ok()) {
      Complain("reporting to the instance that offered a dispatch", sent.status());
      std::lock_guard lock(mu_);
      reports_.insert(reports_.begin(), std::make_move_iterator(reports.begin()),
                      std::make_move_iterator(reports.end()));
      return;
    }
    if (!*sent || r.status == "done") {
      if (!*sent && r.status != "done") {
        host_->Post([c = coordinator_, id = r.id](Engine&) { c->DropForeign(id); });
      }
      taken_.erase(it);
    }
    reports.pop_front();
  }
}

void InstanceExchange::Renew() {
  if (taken_.empty()) return;
  auto held = board_->Renew();
  if (!held.ok())
    return Complain("renewing the dispatches taken from other instances", held.status());
  std::set<std::pair<std::string, int64_t>> still(held->begin(), held->end());
  for (auto it = taken_.begin(); it != taken_.end();) {
    if (still.count(*it) > 0) {
      ++it;
      continue;
    }
    // Withdrawn by its owner, or open again after this instance failed to renew in time.
    host_->Post([c = coordinator_, id = it->first](Engine&) { c->DropForeign(id); });
    it = taken_.erase(it);
  }
}

void InstanceExchange::Collect() {
  // Only what the coordinator has on offer now: a result for a step not re-attached yet
  // (this instance is taking an execution over) stays on the board until it is.
  // Called with none too: the board then removes the results collected before that
  // the store shows committed.
  const std::vector<std::string> ids = OnEngine([c = coordinator_] { return c->OfferedIds(); });
  auto news = board_->Collect(ids);
  if (!news.ok()) return Complain("collecting results from the other instances", news.status());
  if (news->empty()) return;
  host_->Post([c = coordinator_, news = std::move(news).value()](Engine&) {
    for (const OfferedDispatch& d : news) {
      if (d.status == "running") {
        c->OfferStarted(d.id);
        if (d.result.is_object() && d.result.contains("progress")) {
          c->OfferProgress(d.id, d.result.value("progress", 0), d.result.value("data", Json()));
        }
      } else {
        c->OfferDone(d.id, ResultFrom(d.result));
      }
    }
  });
}

bool InstanceExchange::TakeOpen() {
  auto open = board_->Open(kTakeBatch);
  if (!open.ok()) {
    Complain("reading work offered by the other instances", open.status());
    return true;
  }
  if (open->empty()) return true;
  std::vector<RunRequest> requests;
  for (const OfferedDispatch& d : *open) requests.push_back(RequestFrom(d.request));
  const std::vector<size_t> fit =
      OnEngine([c = coordinator_, requests] { return c->Takeable(requests); });
  if (fit.empty()) return true;
  std::vector<std::string> ids;
  for (size_t i : fit) ids.push_back((*open)[i].id);
  auto taken = board_->Take(ids);
  if (!taken.ok()) {
    Complain("taking work offered by the other instances", taken.status());
    return true;
  }
  std::vector<RunRequest> runs;
  for (const OfferedDispatch& d : *taken) {
    taken_[d.id] = d.take;
    runs.push_back(RequestFrom(d.request));
  }
  host_->Post([this, runs = std::move(runs)](Engine&) {
    for (const RunRequest& r : runs) {
      RunFunctions cb;
      const std::string id = r.assignment_id;
      cb.on_started = [this, id] {
        Queue([&](auto&) { reports_.push_back({id, "running", {}}); });
      };
      cb.on_progress = [this, id](int progress, Json data) {
        Json report = {{"progress", progress}, {"data", std::move(data)}};
        Queue([&](auto&) {
          // Only the last progress not sent yet matters.
          for (Report& queued : reports_) {
            if (queued.id == id && queued.status == "running" && queued.result.is_object()) {
              queued.result = std::move(report);
              return;
            }
          }
          reports_.push_back({id, "running", std::move(report)});
        });
      };
      cb.on_done = [this, id](RunResult result) {
        Queue([&](auto&) { reports_.push_back({id, "done", ResultJson(result)}); });
      };
      // This instance's own offer, come home: the board's copy goes.
      if (!coordinator_->TakeForeign(r, std::move(cb))) {
        Queue([&](auto&) { drops_.push_back(id); });
      }
    }
  });
  return taken->size() < kTakeBatch;
}

}  // namespace baton::server
