// Stalled executions (seed 004's anomaly monitor): one that runs but has emitted no event
// for EngineOptions::stall_after gets an `execution.stalled` event saying what its open
// steps wait for. A single sweep timer checks every active execution a few times per
// stall_after, so the cost is nothing per event and O(active executions) per sweep.
#include "engine/engine_impl.h"

#include <algorithm>

namespace baton {
namespace {

// Waiting for these is waiting by design (an approval, a timer, a backoff), not being
// stuck.
bool WaitsByDesign(const std::string& kind) {
  return kind == "signal" || kind == "timer" || kind == "paused" || kind == "retry_backoff" ||
         kind == "breaker" || kind == "cache";
}

}  // namespace

void Engine::Impl::ArmStallSweep() {
  if (options_.stall_after.count() <= 0 || stall_sweep_ != 0) return;
  // Four sweeps per stall_after: a stall is reported at most a quarter late.
  const Duration every = std::max(Duration(250), options_.stall_after / 4);
  stall_sweep_ = loop_->ScheduleAfter(every, [this] {
    stall_sweep_ = 0;
    SweepStalls();
    if (active_ > 0) ArmStallSweep();
  });
}

void Engine::Impl::SweepStalls() {
  const TimeMs now = loop_->Now();
  const int64_t after = options_.stall_after.count();
  std::vector<ExecPtr> stalled;
  for (const ExecPtr& ex : executions_) {
    if (ex->finished || ex->paused() || ex->stall_reported) continue;
    if (now - ex->last_activity < after) continue;
    stalled.push_back(ex);
  }
  if (stalled.empty()) return;
  TurnGuard turn(this);
  for (const ExecPtr& ex : stalled) {
    auto waits = Why(ex->rec.id);
    if (!waits.ok()) continue;
    // Steps waiting for upstream ones say nothing of their own: the execution waits by
    // design when the steps it waits on do.
    Json waiting = Json::array();
    bool stuck = false, by_design = false;
    for (const StepWait& w : *waits) {
      by_design = by_design || WaitsByDesign(w.kind);
      stuck = stuck || (w.kind != "upstream" && !WaitsByDesign(w.kind));
      waiting.push_back({{"step_id", w.step_id}, {"kind", w.kind}});
    }
    if (by_design && !stuck) continue;
    const TimeMs since = ex->last_activity;
    ++stats_.executions_stalled;
    Emit(*ex, "execution.stalled", -1,
         {{"idle_ms", now - since}, {"stall_after_ms", after}, {"waiting", std::move(waiting)}});
    // The report is not activity: the clock keeps running, and it is reported once per
    // stretch of silence.
    ex->last_activity = since;
    ex->stall_reported = true;
  }
}

}  // namespace baton
