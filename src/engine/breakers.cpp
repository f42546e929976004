// Circuit breakers (DESIGN.md §3): a step's attempt asks its breaker before it starts and
// reports how it ended. Breakers are shared by every execution of a namespace and change
// in the batch of the attempt that changed them, so they survive a restart as they were.
#include "engine/engine_impl.h"

#include "expr/template.h"

#include <algorithm>
#include <cctype>

namespace baton {

using engine::ExecState;
using engine::StepState;

namespace {

// Failures that say nothing about the dependency behind the breaker: the step's own
// mistakes, cancellations, the engine's or a worker's troubles, and the breaker itself.
bool CountsAgainstBreaker(const std::string& code) {
  return code != errc::kCancelled && code != errc::kTemplateError && code != errc::kValidation &&
         code != errc::kConditionError && code != errc::kUnsupportedStepType &&
         code != errc::kCircuitOpen && code != errc::kEngineRestart && code != errc::kWorkerLost &&
         code != errc::kStaleAssignment;
}

// "api.example.com:8443" from "https://user@API.example.com:8443/v1?x"; "" when the URL
// has no scheme or its host is a template.
std::string UrlHost(const std::string& url) {
  size_t start = url.find("://");
  if (start == std::string::npos) return "";
  start += 3;
  size_t end = url.find_first_of("/?#", start);
  std::string host = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (size_t at = host.rfind('@'); at != std::string::npos) host.erase(0, at + 1);
  if (host.find("{{") != std::string::npos) return "";
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return host;
}

void ApplyThresholds(const CircuitBreakerSpec& spec, BreakerRecord& rec) {
  rec.failure_threshold = spec.failure_threshold;
  rec.recovery_timeout_ms = spec.recovery_timeout.count();
  rec.success_threshold = spec.success_threshold;
}

}  // namespace

Result<std::string> Engine::Impl::BreakerKey(const ExecState& ex, int step, const Json& spec) {
  const StepDef& def = *ex.steps[step].def;
  const CircuitBreakerSpec& cb = *def.extra().circuit_breaker;
  std::string key;
  if (!cb.key.empty()) {
    if (cb.key.find("{{") == std::string::npos) {
      key = cb.key;
    } else {
      engine::ExecScope scope(ex);
      Result<Json> rendered = expr::Render(Json(cb.key), scope);
      if (!rendered.ok()) return rendered.status();
      key = rendered->is_string() ? rendered->get<std::string>() : rendered->dump();
    }
  } else if (def.type == StepType::kHttp) {
    auto request = spec.find("request");
    if (request != spec.end() && request->is_object()) {
      auto url = request->find("url");
      if (url != request->end() && url->is_string()) key = UrlHost(url->get<std::string>());
    }
  } else if (def.type == StepType::kCommand) {
    auto command = spec.find("command");
    if (command != spec.end() && command->is_string()) key = command->get<std::string>();
  }
  if (key.empty() || key.size() > 253) {
    return Status(errc::kValidation,
                  "step '" + def.id + "': circuit_breaker: " +
                      (key.empty() ? std::string("cannot tell which dependency it stands for ")
                                   : "the key is longer than 253 bytes ") +
                      "(set circuit_breaker.key)");
  }
  return key;
}

void Engine::Impl::SaveBreaker(engine::Breaker& b) {
  b.rec.updated_at = loop_->Now();
  batch_.breakers.push_back(b.rec);
}

bool Engine::Impl::PassBreaker(const ExecPtr& ex, int step, const Json& spec) {
  StepState& st = ex->steps[step];
  const StepDef& def = *st.def;
  Result<std::string> key = BreakerKey(*ex, step, spec);
  auto refuse = [&](Status why, Json details) {
    st.resolved_input = MakeSpec(spec);
    FailAttempt(ex, step, StepStatus::kFailed, why, std::move(details));
    return false;
  };
  if (!key.ok()) return refuse(key.status(), nullptr);
  auto [it, inserted] = breakers_.try_emplace({ex->rec.ns, *key});
  engine::Breaker& b = it->second;
  if (inserted) {
    if (breakers_.size() > kMaxBreakers) {
      breakers_.erase(it);
      return refuse(Status(errc::kValidation, "more than " + std::to_string(kMaxBreakers) +
                                                  " circuit breaker keys; use fewer distinct keys"),
                    nullptr);
    }
    b.rec.ns = ex->rec.ns;
    b.rec.key = *key;
  }
  ApplyThresholds(*def.extra().circuit_breaker, b.rec);
  const TimeMs now = loop_->Now();
  const std::string attempt_id = ex->rec.id + "/" + def.id + "/" + std::to_string(st.rec.attempts);
  if (b.rec.state == kBreakerOpen && now >= b.rec.probe_at) {
    b.rec.state = kBreakerHalfOpen;
    b.rec.successes = 0;
    b.probe.clear();
    Emit(*ex, "breaker.half_opened", step, {{"key", b.rec.key}}, st.rec.attempts);
    SaveBreaker(b);
  }
  if (b.rec.state == kBreakerHalfOpen && (b.probe.empty() || now >= b.rec.probe_at)) {
    // This attempt is the probe; should it never answer, another may go after
    // recovery_timeout.
    b.probe = attempt_id;
    b.rec.probe_at = now + b.rec.recovery_timeout_ms;
    SaveBreaker(b);
  } else if (b.rec.state != kBreakerClosed) {
    ++stats_.circuit_open_rejections;
    st.Guards().retry_floor = b.rec.probe_at;
    std::string last = b.rec.last_error.is_object() ? b.rec.last_error.value("code", "") : "";
    return refuse(
        Status(errc::kCircuitOpen,
               "circuit breaker '" + b.rec.key + "' is " +
                   (b.rec.state == kBreakerOpen ? "open" : "half-open with a probe in flight") +
                   " after " + std::to_string(b.rec.failures) + " consecutive failures" +
                   (last.empty() ? "" : " (last: " + last + ")") + "; the next probe may go in " +
                   FormatDuration(Duration(std::max<TimeMs>(0, b.rec.probe_at - now)))),
        {{"key", b.rec.key}, {"state", b.rec.state}, {"probe_at", b.rec.probe_at}});
  }
  st.Guards().breaker_key = *key;
  return true;
}

void Engine::Impl::SettleBreaker(const ExecPtr& ex, int step, const Json* error) {
  StepState& st = ex->steps[step];
  auto it = breakers_.find({ex->rec.ns, st.BreakerKey()});
  st.Guards().breaker_key.clear();
  if (it == breakers_.end()) return;
  engine::Breaker& b = it->second;
  const TimeMs now = loop_->Now();
  const std::string attempt_id =
      ex->rec.id + "/" + st.def->id + "/" + std::to_string(st.rec.attempts);
  const bool probe = !b.probe.empty() && b.probe == attempt_id;
  if (probe) b.probe.clear();
  const std::string code = error ? error->value("code", "") : "";
  if (error && !CountsAgainstBreaker(code)) {
    if (probe && b.rec.state == kBreakerHalfOpen) {
      b.rec.probe_at = now;  // no verdict: the next attempt probes at once
      SaveBreaker(b);
    }
    return;
  }
  if (!error) {
    if (b.rec.state == kBreakerHalfOpen) {
      if (++b.rec.successes >= b.rec.success_threshold) {
        b.rec.state = kBreakerClosed;
        b.rec.failures = 0;
        b.rec.successes = 0;
        b.rec.probe_at = 0;
        Emit(*ex, "breaker.closed", step, {{"key", b.rec.key}}, st.rec.attempts);
      } else {
        b.rec.probe_at = now;  // the next probe may go
      }
      SaveBreaker(b);
    } else if (b.rec.state == kBreakerClosed && b.rec.failures != 0) {
      b.rec.failures = 0;
      SaveBreaker(b);
    }
    return;
  }
  ++b.rec.failures;
  b.rec.last_error = {{"code", code}, {"message", error->value("message", "")}};
  if (b.rec.state == kBreakerHalfOpen ||
      (b.rec.state == kBreakerClosed && b.rec.failures >= b.rec.failure_threshold)) {
    b.rec.state = kBreakerOpen;
    b.rec.successes = 0;
    b.rec.opened_at = now;
    b.rec.probe_at = now + b.rec.recovery_timeout_ms;
    ++b.rec.trips;
    Emit(*ex, "breaker.opened", step,
         {{"key", b.rec.key},
          {"failures", b.rec.failures},
          {"probe_at", b.rec.probe_at},
          {"error", b.rec.last_error}},
         st.rec.attempts);
  }
  if (b.rec.state == kBreakerOpen)
    st.Guards().retry_floor = b.rec.probe_at;  // a retry before it is refused
  SaveBreaker(b);
}

void Engine::Impl::AdoptBreakers(std::vector<BreakerRecord> records) {
  breakers_.clear();
  for (BreakerRecord& r : records) {
    engine::Breaker& b = breakers_[{r.ns, r.key}];
    b.rec = std::move(r);
  }
}

void Engine::Impl::MergeBreakers(std::vector<BreakerRecord> stored) {
  for (BreakerRecord& r : stored) {
    auto it = breakers_.find({r.ns, r.key});
    if (it == breakers_.end()) {
      if (breakers_.size() >= kMaxBreakers) continue;
      breakers_[{r.ns, r.key}].rec = std::move(r);
    } else if (r.updated_at > it->second.rec.updated_at) {
      // A probe this engine has in flight keeps its id: its verdict settles as usual.
      it->second.rec = std::move(r);
    }
  }
}

std::vector<BreakerRecord> Engine::Impl::ListBreakers(const std::string& ns) const {
  std::vector<BreakerRecord> out;
  auto it = ns.empty() ? breakers_.begin() : breakers_.lower_bound({ns, ""});
  for (; it != breakers_.end() && (ns.empty() || it->first.first == ns); ++it) {
    out.push_back(it->second.rec);
  }
  return out;
}

Result<BreakerRecord> Engine::Impl::ResetBreaker(const std::string& ns, const std::string& key) {
  auto it = breakers_.find({ns, key});
  if (it == breakers_.end()) {
    return Status(errc::kNotFound, "no circuit breaker '" + key + "' in namespace " + ns);
  }
  TurnGuard turn(this);
  engine::Breaker& b = it->second;
  b.rec.state = kBreakerClosed;
  b.rec.failures = 0;
  b.rec.successes = 0;
  b.rec.probe_at = 0;
  b.probe.clear();
  SaveBreaker(b);
  return b.rec;
}

}  // namespace baton
