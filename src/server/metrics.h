// Prometheus metrics: an ExecutionObserver counting what the engine commits, plus
// snapshots of the engine's and the store writer's own counters.
//
// Threading: OnEvent runs on the engine thread, Render() on I/O threads; one mutex.
#pragma once

#include <baton/commit_queue.h>
#include <baton/engine.h>

#include "server/triggers/deliverer.h"
#include "workers/coordinator.h"

#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace baton::server {

// Worker traffic: WebSocket frames and the messages in them (a batch frame holds
// several), counted by the sessions on I/O threads; and the long-poll requests that carry
// worker messages (POST .../batch holds several), counted by their routes.
struct WorkerWireCounters {
  std::atomic<uint64_t> frames_received{0}, messages_received{0};
  std::atomic<uint64_t> frames_sent{0}, messages_sent{0};
  std::atomic<uint64_t> longpoll_requests{0}, longpoll_messages{0};
};

class ServerMetrics final : public ExecutionObserver {
 public:
  void OnEvent(const EventRecord& event, const ExecutionProgress& progress) override;
  void OnStoreError(const Status& status) override;

  // Where the `baton_executions` gauge reads from, at each Render() (any thread): the
  // engine's LiveCounts(). Set once, before the server serves.
  void SetLiveSource(std::function<LiveExecutions()> source) { live_source_ = std::move(source); }
  // Engine-thread snapshots, taken periodically by the server.
  void SetEngineStats(const EngineStats& stats, const CommitQueue::Stats& commits, TimeMs now);
  void SetDeliveryStats(const Deliverer::Stats& stats);
  // The coordinator's counters and its workers by status ("ONLINE" -> n).
  void SetCoordinatorStats(const workers::CoordinatorStats& stats,
                           std::map<std::string, int> workers, size_t waiting);
  // The engine's circuit breakers (engine thread, with SetEngineStats).
  void SetBreakers(std::vector<BreakerRecord> breakers);
  // A dead letter discarded through the API.
  void CountDiscardedDeadLetter() { ++dead_letters_discarded_; }
  // HTTP requests by status class, counted by sessions.
  void CountRequest(int status);

  std::string Render() const;
  // When the engine last reported (health: a stuck loop stops reporting).
  TimeMs last_engine_report() const;
  // The engine answered at `now` without a report (it has just started): /health counts
  // from here until the first report, instead of from 0 (which read as "not responding"
  // to a request that came before the first periodic report).
  void NoteEngineAlive(TimeMs now);
  uint64_t store_errors() const;
  // The last store error while the most recent batch was refused; nullopt once a batch
  // commits again (health: "degraded").
  std::optional<std::string> StoreFailing() const;
  // Exceptions the router's boundary caught (each answered 500 INTERNAL).
  std::atomic<uint64_t>* handler_exceptions() { return &handler_exceptions_; }
  WorkerWireCounters* worker_wire() { return &worker_wire_; }

 private:
  static constexpr std::array<double, 12> kBuckets = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5,
                                                      1,     5,     10,   60,   300, 1800};
  mutable std::mutex mu_;
  // The engine's live executions by status (Engine::LiveCounts): it counts them as they
  // change, so this keeps no entry per execution. Unset: all zero.
  std::function<LiveExecutions()> live_source_;
  std::map<std::string, uint64_t> finished_;  // terminal status -> count
  uint64_t executions_started_ = 0;
  uint64_t steps_started_ = 0, steps_completed_ = 0, steps_failed_ = 0, steps_retried_ = 0,
           steps_slow_ = 0;
  std::array<uint64_t, kBuckets.size()> duration_buckets_{};
  uint64_t duration_count_ = 0;
  double duration_sum_s_ = 0;
  EngineStats engine_;
  CommitQueue::Stats commits_;
  Deliverer::Stats deliveries_;
  workers::CoordinatorStats coordinator_;
  std::map<std::string, int> workers_;
  size_t waiting_assignments_ = 0;
  TimeMs engine_report_at_ = 0;
  uint64_t store_errors_ = 0;
  std::string last_store_error_;
  bool store_failing_ = false;
  std::map<int, uint64_t> requests_;  // 2, 3, 4, 5 (status / 100)
  std::atomic<uint64_t> handler_exceptions_{0};
  WorkerWireCounters worker_wire_;
  uint64_t dead_letters_written_ = 0, dead_letters_replayed_ = 0, executions_stalled_ = 0;
  std::atomic<uint64_t> dead_letters_discarded_{0};
  std::vector<BreakerRecord> breakers_;
};

}  // namespace baton::server
