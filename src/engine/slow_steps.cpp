// Stuck-work detection (seed 004's anomaly monitor): an attempt running far past what
// the step usually takes gets one `step.slow` event, so an operator hears of it before
// its timeout (if it has one at all). Nothing else changes: the attempt runs on.
// An attempt whose runner says when its work begins (Runner::ReportsStart: a worker's
// ack, a free local slot) is watched, and its duration learned, from its step.started:
// a step waiting in a backlog for a worker is not running slowly.
#include "engine/engine_impl.h"

#include <algorithm>
#include <optional>

namespace baton {

using engine::DurationHistory;
using engine::StepState;

namespace {

constexpr int64_t kSlowFactor = 3;         // times the p95 of the step's recent attempts
constexpr int64_t kMinThresholdMs = 1000;  // below this, "slow" is noise

std::string HistoryKey(const engine::ExecState& ex, const StepDef& def) {
  return ex.rec.ns + '\0' + ex.def->name + '\0' + def.id;
}

int64_t P95(const DurationHistory& h) {
  std::vector<int64_t> v(h.ms.begin(), h.ms.begin() + static_cast<long>(h.count));
  const size_t k = (v.size() * 95 + 99) / 100 - 1;  // nearest rank
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

}  // namespace

TimeMs Engine::Impl::RunningSince(const StepState& st) {
  return st.rec.started_at + std::max(st.run_delay_ms, 0);  // run_delay_ms < 0: not begun
}

void Engine::Impl::RecordDuration(const engine::ExecState& ex, int step, int64_t ms) {
  const StepDef& def = *ex.steps[step].def;
  if (def.type == StepType::kWait || def.type == StepType::kNoop) return;  // not work
  DurationHistory& h = durations_[HistoryKey(ex, def)];
  h.ms[h.next] = std::max<int64_t>(ms, 0);
  h.next = (h.next + 1) % DurationHistory::kSize;
  h.count = std::min(h.count + 1, DurationHistory::kSize);
}

std::optional<Engine::Impl::SlowBasis> Engine::Impl::SlowBasisOf(const engine::ExecState& ex,
                                                                 const StepDef& def) const {
  SlowBasis basis;
  if (def.extra().expected_duration && def.extra().expected_duration->count() > 0) {
    basis.threshold_ms = def.extra().expected_duration->count();
    return basis;
  }
  auto it = durations_.find(HistoryKey(ex, def));
  if (it == durations_.end() || it->second.count < DurationHistory::kMinSamples) {
    return std::nullopt;
  }
  basis.p95_ms = P95(it->second);
  basis.samples = it->second.count;
  basis.threshold_ms = std::max(kSlowFactor * basis.p95_ms, kMinThresholdMs);
  return basis;
}

void Engine::Impl::ArmSlowWatch(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  CancelSlowWatch(*ex, step);
  const StepDef& def = *st.def;
  if (!st.in_flight || st.Fan() || def.type == StepType::kWait) return;
  if (std::optional<SlowBasis> basis = SlowBasisOf(*ex, def)) {
    // Timed on the monotonic clock, as an attempt timeout is: a step of the wall clock
    // neither makes the run slow early nor late (clock_jump_test.cpp). The run began now
    // (its step.started, or its dispatch), which RunningSince says on the wall clock.
    const Clock& clock = loop_->clock();
    st.slow_since = clock.MonotonicMs() - (clock.Now() - RunningSince(st));
    ArmSlowWatchAfter(*ex, step, basis->threshold_ms);
  }
}

void Engine::Impl::ArmSlowWatchAfter(engine::ExecState& ex, int step, int64_t threshold_ms) {
  // A deadline in the engine's heap, not a loop timer per running step (step_deadlines.h).
  deadlines_.Arm(ex, step, engine::DeadlineKind::kSlow, ex.steps[step].slow_since + threshold_ms);
  ScheduleDeadlines();
}

void Engine::Impl::CancelSlowWatch(engine::ExecState& ex, int step) {
  deadlines_.Disarm(ex, step, engine::DeadlineKind::kSlow);
}

void Engine::Impl::OnSlow(const ExecPtr& ex, int step) {
  if (ex->finished) return;
  StepState& st = ex->steps[step];
  if (!st.in_flight) return;
  // Judged by what the step's history says now: it may have grown slower since the watch
  // was armed (then the watch moves on to the new bar), or faster (the attempt is past
  // the new bar as well, which the event reports; it is not reported any earlier).
  std::optional<SlowBasis> basis = SlowBasisOf(*ex, *st.def);
  if (!basis) return;
  const int64_t running_ms = loop_->clock().MonotonicMs() - st.slow_since;
  if (running_ms < basis->threshold_ms) return ArmSlowWatchAfter(*ex, step, basis->threshold_ms);
  TurnGuard turn(this);
  Json threshold;
  if (basis->samples == 0) {
    threshold = {{"expected_duration_ms", basis->threshold_ms}};
  } else {
    threshold = {{"p95_ms", basis->p95_ms}, {"samples", basis->samples}, {"factor", kSlowFactor}};
  }
  threshold["threshold_ms"] = basis->threshold_ms;
  threshold["running_ms"] = running_ms;
  ++stats_.steps_slow;
  // A report about the step, not progress of the execution: its stall clock runs on.
  const TimeMs last_activity = ex->last_activity;
  const bool stall_reported = ex->stall_reported;
  Emit(*ex, "step.slow", step, std::move(threshold), st.rec.attempts);
  ex->last_activity = last_activity;
  ex->stall_reported = stall_reported;
}

}  // namespace baton
