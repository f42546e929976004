// Why is it waiting: for each open step of a running execution, the one thing that
// holds it, read off the live state (the store cannot say whether a ready step waits
// for a slot, or which signal a running wait step lacks).
#include "engine/engine_impl.h"

#include <algorithm>

namespace baton {

using engine::ExecState;
using engine::StepState;

namespace {

// When a `wait` step on a duration or a time ends; 0 when not known.
TimeMs TimerEnd(const StepState& st) {
  const Json& spec =
      st.resolved_input && st.resolved_input->is_object() ? *st.resolved_input : st.def->spec;
  if (auto d = spec.find("duration"); d != spec.end()) {
    Result<Duration> parsed = ParseDuration(*d);
    return parsed.ok() && st.rec.started_at ? st.rec.started_at + parsed->count() : 0;
  }
  if (auto u = spec.find("until"); u != spec.end() && u->is_string()) {
    return ParseUtcTime(u->get<std::string>()).value_or(0);
  }
  return 0;
}

}  // namespace

Result<std::vector<StepWait>> Engine::Impl::Why(const std::string& id) const {
  ExecPtr ex = Find(id);
  if (!ex || ex->finished) return Status(errc::kNotFound, "execution '" + id + "' is not running");
  std::vector<std::string> running;
  for (const StepState& st : ex->steps) {
    if (st.in_flight && st.uses_capacity)
      running.push_back(st.def->id);  // what max_parallel counts
  }
  std::vector<StepWait> out;
  for (size_t i = 0; i < ex->steps.size(); ++i) {
    const StepState& st = ex->steps[i];
    if (IsTerminal(st.rec.status)) continue;
    StepWait& w = out.emplace_back();
    w.step_id = st.def->id;
    w.status = st.rec.status;
    w.attempt = st.rec.attempts;
    w.max_attempts = st.def->retry.max_attempts;
    if (ex->rec.status == ExecutionStatus::kQueued) {
      // Nothing starts before the execution has its slot.
      if (ex->holds_group_slot || ex->ConcurrencyGroup().empty()) {
        w.kind = "max_running";
        w.limit = options_.max_running_executions;
      } else {
        w.kind = "concurrency";
        w.limit = ex->def->concurrency->limit;
        const std::string& group = ex->ConcurrencyGroup();
        w.breaker = group.substr(group.rfind('\n') + 1);  // the rendered key
        w.steps = SlotHolders(*ex);
      }
      continue;
    }
    switch (st.rec.status) {
      case StepStatus::kPending:
        w.kind = "upstream";
        for (int up : ex->Plan()->graph.Upstream(static_cast<int>(i))) {
          if (!IsTerminal(ex->steps[up].rec.status)) w.steps.push_back(ex->steps[up].def->id);
        }
        if (w.steps.empty()) w.kind = ex->paused() ? "paused" : "scheduling";
        break;
      case StepStatus::kReady:
        if (st.guards && st.guards->pool_waiting) {
          w.kind = "pool";
          w.breaker = st.def->extra().pool;
          auto pool = pools_.find({ex->rec.ns, st.def->extra().pool});
          if (pool != pools_.end()) {
            w.limit = pool->second.rec.slots;
            w.steps = pool->second.holders;
          }
        } else if (st.CacheWaiting()) {
          w.kind = "cache";
          for (const auto& [flight_id, flight] : cache_flights_) {
            for (const auto& [weak, waiting] : flight.waiters) {
              if (waiting == static_cast<int>(i) && weak.lock() == ex) w.steps = {flight.leader};
            }
          }
        } else if (ex->paused()) {
          w.kind = "paused";
        } else if (ex->def->max_parallel > 0 && ex->in_flight >= ex->def->max_parallel) {
          w.kind = "max_parallel";
          w.limit = ex->def->max_parallel;
          w.steps = running;
        } else if (capacity_used_ >= capacity_) {
          w.kind = "capacity";
          w.limit = capacity_;
        } else {
          w.kind = "scheduling";
        }
        break;
      case StepStatus::kWaitingRetry:
        w.kind = ex->paused() ? "paused" : "retry_backoff";
        w.error = st.rec.error;
        if (!ex->paused() && st.rec.error.is_object() &&
            st.rec.error.value("code", "") == errc::kCircuitOpen) {
          w.kind = "breaker";
          const Json& details = st.rec.error.contains("details") ? st.rec.error["details"] : Json();
          if (details.is_object()) w.breaker = details.value("key", "");
        }
        w.until = st.rec.retry_at;
        // The budget counts attempts since the last retry of the execution.
        w.attempt = st.rec.attempts - st.rec.attempt_base;
        break;
      default:  // dispatched or running: an attempt is out
        w.since = st.rec.started_at;
        w.until = st.rec.deadline;
        if (const engine::FanOut* fan = st.Fan()) {
          w.kind = "instances";
          w.done = fan->done;
          w.total = fan->items.is_array() ? fan->items.size() : 0;
          // Which items run now, and how many have started: an item below `limit` that
          // is not running has finished, one at or above it has not started.
          w.limit = static_cast<int>(fan->next);
          std::vector<size_t> items;
          for (const auto& [assignment, item] : fan->live) items.push_back(item);
          std::sort(items.begin(), items.end());
          for (size_t item : items) w.steps.push_back(std::to_string(item));
        } else if (const std::string* signal = SignalWaitedFor(*st.def)) {
          w.kind = "signal";
          w.signal = *signal;
        } else if (st.def->type == StepType::kWait) {
          w.kind = "timer";
          w.until = TimerEnd(st);
        } else if (st.def->type == StepType::kWorkflow) {
          w.kind = "child";
          if (!st.ChildId().empty()) w.steps = {st.ChildId()};
        } else {
          w.kind = "running";
        }
        break;
    }
  }
  return out;
}

}  // namespace baton
