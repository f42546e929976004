// The runners every engine has: noop (completes at once) and wait (a timer).
#include "engine/engine_impl.h"

#include <ctime>
#include <unordered_map>

namespace baton {
namespace {

class NoopRunner final : public Runner {
 public:
  void Start(const RunRequest& request, RunCallbacks cb) override {
    RunResult r;
    auto it = request.spec->find("with");
    if (it != request.spec->end()) r.output = *it;
    cb.Done(std::move(r));
  }
  void Cancel(const std::string&) override {}
};

}  // namespace

std::optional<TimeMs> ParseUtcTime(const std::string& s) {
  std::tm tm{};
  int ms = 0;
  char tail[8] = {0};
  int n = std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%1[Z]", &tm.tm_year, &tm.tm_mon,
                      &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, tail);
  if (n != 8) {
    ms = 0;
    n = std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%1[Z]", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &tm.tm_sec, tail);
    if (n != 7) return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<TimeMs>(timegm(&tm)) * 1000 + ms;
}

namespace {

// Runs on the engine's loop: a wait is a timer there, so in tests it passes in virtual
// time.
class WaitRunner final : public Runner {
 public:
  explicit WaitRunner(EventLoop* loop) : loop_(loop) {}

  void Start(const RunRequest& request, RunCallbacks cb) override {
    TimeMs when = 0;
    if (auto it = request.spec->find("duration"); it != request.spec->end()) {
      Result<Duration> d = ParseDuration(*it);
      if (!d.ok()) return Fail(cb, "wait: field 'duration': " + d.status().message());
      when = loop_->Now() + d->count();
    } else if (auto until = request.spec->find("until"); until != request.spec->end()) {
      std::optional<TimeMs> t;
      if (until->is_string()) t = ParseUtcTime(until->get<std::string>());
      if (!t) return Fail(cb, "wait: field 'until': expected a UTC time like 2026-01-02T03:04:05Z");
      when = *t;
    } else {
      return Fail(cb, "wait: needs 'duration' or 'until'");
    }
    cb.Started();
    const std::string id = request.assignment_id;
    TimerId timer = loop_->ScheduleAt(when, [this, id, cb] {
      waits_.erase(id);
      cb.Done(RunResult{});
    });
    waits_[id] = {timer, std::move(cb)};
  }

  void Cancel(const std::string& assignment_id) override {
    auto it = waits_.find(assignment_id);
    if (it == waits_.end()) return;
    loop_->CancelTimer(it->second.timer);
    auto done = it->second.done;
    waits_.erase(it);
    RunResult r;
    r.status = Status(errc::kCancelled, "cancelled");
    done.Done(std::move(r));
  }

 private:
  static void Fail(RunCallbacks& cb, const std::string& message) {
    RunResult r;
    r.status = Status(errc::kValidation, message);
    cb.Done(std::move(r));
  }
  struct Pending {
    TimerId timer;
    RunCallbacks done;
  };
  EventLoop* loop_;
  std::unordered_map<std::string, Pending> waits_;
};

}  // namespace

std::unique_ptr<Runner> NewNoopRunner() {
  return std::make_unique<NoopRunner>();
}
std::unique_ptr<Runner> NewWaitRunner(EventLoop* loop) {
  return std::make_unique<WaitRunner>(loop);
}

}  // namespace baton
