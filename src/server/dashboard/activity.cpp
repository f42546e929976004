#include "server/dashboard/activity.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace baton::server {
namespace {

constexpr TimeMs kMinuteMs = 60'000;
constexpr double kGrowth = 1.2;  // each duration bucket 20 % wider than the one before

void Add(ActivityWindow::Minute& into, const ActivityWindow::Minute& m) {
  into.executions_started += m.executions_started;
  into.executions_completed += m.executions_completed;
  into.executions_failed += m.executions_failed;
  into.steps_completed += m.steps_completed;
  into.steps_failed += m.steps_failed;
}

}  // namespace

ActivityWindow::ActivityWindow(size_t max_namespaces, size_t max_stalled)
    : max_namespaces_(max_namespaces), max_stalled_(max_stalled) {}

size_t ActivityWindow::BucketOf(int64_t ms) {
  if (ms < 1) return 0;
  const double b = std::floor(std::log(static_cast<double>(ms)) / std::log(kGrowth)) + 1;
  return std::min(static_cast<size_t>(b), kBuckets - 1);
}

// The bucket's geometric middle: at most ~10 % from any duration in it.
int64_t ActivityWindow::Quantile(const Histogram& h, double q) {
  uint64_t total = 0;
  for (uint32_t n : h) total += n;
  if (total == 0) return -1;
  const uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(total)));
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += h[i];
    if (seen >= std::max<uint64_t>(rank, 1)) {
      if (i == 0) return 0;
      const double low = std::pow(kGrowth, static_cast<double>(i) - 1);
      return static_cast<int64_t>(std::llround(low * std::sqrt(kGrowth)));
    }
  }
  return -1;
}

ActivityWindow::Bucket& ActivityWindow::At(Namespace& n, TimeMs t) {
  const int64_t minute = t / kMinuteMs;
  Bucket& b = n.ring[static_cast<size_t>(((minute % kMinutes) + kMinutes) % kMinutes)];
  if (b.minute != minute) {
    b = Bucket{};
    b.minute = minute;
    b.counts.start = minute * kMinuteMs;
  }
  return b;
}

void ActivityWindow::OnEvent(const EventRecord& e, const ExecutionProgress& p) {
  std::lock_guard lock(mu_);
  auto it = namespaces_.find(p.ns);
  if (it == namespaces_.end()) {
    if (namespaces_.size() >= max_namespaces_) return;
    it = namespaces_.emplace(p.ns, Namespace{}).first;
  }
  Namespace& n = it->second;
  const std::string& t = e.type;

  // A stalled execution is listed until something happens to it.
  if (t == "execution.stalled") {
    if (n.stalled.size() < max_stalled_ || n.stalled.count(e.execution_id)) {
      n.stalled.try_emplace(e.execution_id, Stalled{e.execution_id, p.workflow, e.time});
    }
    return;
  }
  if (t != "step.slow") n.stalled.erase(e.execution_id);

  if (t.rfind("execution.", 0) == 0) {
    Bucket& b = At(n, e.time);
    // A retry starts the execution's run again: it counts as a start, so that starts
    // and ends add up.
    if (t == "execution.started" || t == "execution.retried") ++b.counts.executions_started;
    if (t == "execution.completed") ++b.counts.executions_completed;
    const bool failed =
        t == "execution.failed" || t == "execution.timed_out" || t == "execution.cancelled";
    if (failed) ++b.counts.executions_failed;
    return;
  }
  const bool completed = t == "step.completed";
  const bool failed = t == "step.failed" || t == "step.timed_out";
  if (!completed && !failed) return;
  Bucket& b = At(n, e.time);
  ++(completed ? b.counts.steps_completed : b.counts.steps_failed);
  // How long the attempt ran, from its start (or dispatch) as the engine hands it; not
  // known for one this engine did not see begin (reattached after a restart).
  if (p.attempt_began > 0) ++b.durations[BucketOf(e.time - p.attempt_began)];
}

ActivityWindow::View ActivityWindow::Read(const std::string& ns, TimeMs now) const {
  View v;
  const int64_t last = now / kMinuteMs;
  std::lock_guard lock(mu_);
  const auto it = namespaces_.find(ns);
  Histogram hour{};
  for (int64_t minute = last - kMinutes + 1; minute <= last; ++minute) {
    Minute m;
    m.start = minute * kMinuteMs;
    if (it != namespaces_.end()) {
      const Bucket& b =
          it->second.ring[static_cast<size_t>(((minute % kMinutes) + kMinutes) % kMinutes)];
      if (b.minute == minute) {
        m = b.counts;
        m.step_p50_ms = Quantile(b.durations, 0.50);
        m.step_p99_ms = Quantile(b.durations, 0.99);
        for (size_t i = 0; i < kBuckets; ++i) hour[i] += b.durations[i];
      }
    }
    Add(v.total, m);
    v.minutes.push_back(m);
  }
  v.total.start = v.minutes.front().start;
  v.total.step_p50_ms = Quantile(hour, 0.50);
  v.total.step_p99_ms = Quantile(hour, 0.99);
  if (it != namespaces_.end()) {
    for (const auto& [id, s] : it->second.stalled) v.stalled.push_back(s);
    std::sort(v.stalled.begin(), v.stalled.end(), [](const Stalled& a, const Stalled& b) {
      return std::tie(a.since, a.execution_id) < std::tie(b.since, b.execution_id);
    });
  }
  return v;
}

}  // namespace baton::server
