// The last hour of each namespace's work, minute by minute, for the dashboard's overview:
// executions started and finished, steps finished, and how long steps ran (p50/p99); and
// the executions the engine reported stalled that have not moved since.
//
// An ExecutionObserver of this instance's engine, kept in memory: it starts empty when
// the server starts, and with several instances each one counts its own engine's work
// (the page says so). Times are the events' own (the engine's clock), so a simulated
// clock drives it in tests.
//
// Threading: OnEvent runs on the engine thread, Read() on I/O threads; one mutex.
#pragma once

#include <baton/engine.h>

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace baton::server {

class ActivityWindow final : public ExecutionObserver {
 public:
  static constexpr int kMinutes = 60;

  // Namespaces tracked at once, and stalled executions listed per namespace: bounds, so
  // a flood of namespaces or stalls cannot grow the server without limit. A namespace
  // past the bound is not counted (its overview is empty).
  explicit ActivityWindow(size_t max_namespaces = 256, size_t max_stalled = 1000);

  void OnEvent(const EventRecord& event, const ExecutionProgress& progress) override;
  void OnStoreError(const Status&) override {}

  struct Minute {
    TimeMs start = 0;  // the minute's first millisecond
    // Started counts retries too (a new run); failed counts failed, timed out and
    // cancelled.
    uint64_t executions_started = 0, executions_completed = 0, executions_failed = 0;
    uint64_t steps_completed = 0, steps_failed = 0;
    // Of the steps that finished (completed or failed) in the minute, by how long their
    // last attempt ran; -1 when none finished. Within 10 % (log-scale buckets).
    int64_t step_p50_ms = -1, step_p99_ms = -1;
  };
  struct Stalled {
    std::string execution_id;
    std::string workflow;
    TimeMs since = 0;
  };
  struct View {
    std::vector<Minute> minutes;   // kMinutes of them, oldest first, the last one `now`'s
    Minute total;                  // the whole hour (its start: the first minute's)
    std::vector<Stalled> stalled;  // longest stalled first
  };
  View Read(const std::string& ns, TimeMs now) const;

 private:
  // Durations by bucket: bucket 0 is under 1 ms, bucket i (1..) is [1.2^(i-1), 1.2^i) ms;
  // the last one holds everything longer (about four months and up).
  static constexpr size_t kBuckets = 128;
  using Histogram = std::array<uint32_t, kBuckets>;
  struct Bucket {
    int64_t minute = -1;  // minutes since the epoch; -1: unused
    Minute counts;
    Histogram durations{};
  };
  struct Namespace {
    std::array<Bucket, kMinutes> ring;       // by minute % kMinutes
    std::map<std::string, Stalled> stalled;  // by execution id
  };
  Bucket& At(Namespace& n, TimeMs t);
  static size_t BucketOf(int64_t ms);
  static int64_t Quantile(const Histogram& h, double q);

  const size_t max_namespaces_;
  const size_t max_stalled_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Namespace> namespaces_;
};

}  // namespace baton::server
