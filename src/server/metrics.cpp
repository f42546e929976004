#include "server/metrics.h"

#include <algorithm>
#include <sstream>

namespace baton::server {
namespace {

// A Prometheus label value: backslash, double quote and newline escaped.
std::string LabelValue(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

void ServerMetrics::OnEvent(const EventRecord& e, const ExecutionProgress& p) {
  std::lock_guard lock(mu_);
  store_failing_ = false;  // a batch committed: the store takes writes again
  const std::string& t = e.type;
  if (t == "execution.started") ++executions_started_;
  if (t == "execution.stalled") ++executions_stalled_;
  if (t == "execution.retried" && e.data.is_object()) {
    if (auto it = e.data.find("dead_letters_replayed"); it != e.data.end() && it->is_array()) {
      dead_letters_replayed_ += it->size();
    }
  }
  if (t.rfind("execution.", 0) == 0) {
    // The event's own kind, not `p.status`: progress is computed after the whole batch,
    // so an execution that starts and finishes in one batch is already terminal there.
    // (The live ones are the engine's to count: SetLiveSource.)
    static const std::map<std::string, const char*> kTerminal = {
        {"execution.completed", "completed"},
        {"execution.failed", "failed"},
        {"execution.timed_out", "timeout"},
        {"execution.cancelled", "cancelled"}};
    if (auto it = kTerminal.find(t); it != kTerminal.end()) ++finished_[it->second];
    return;
  }
  if (t == "step.started") {
    ++steps_started_;
    return;
  }
  const bool completed = t == "step.completed";
  const bool failed = t == "step.failed" || t == "step.timed_out";
  if (t == "step.retrying") ++steps_retried_;
  if (t == "step.slow") ++steps_slow_;
  if (completed) ++steps_completed_;
  if (failed) {
    ++steps_failed_;
    ++dead_letters_written_;  // every step that fails for good leaves one
  }
  // The attempt's duration, from its start (or dispatch) as the engine hands it: 0 when
  // this engine did not see it begin (reattached after a restart).
  if ((!completed && !failed) || p.attempt_began <= 0) return;
  const double seconds = static_cast<double>(e.time - p.attempt_began) / 1000.0;
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++duration_buckets_[i];
  }
  ++duration_count_;
  duration_sum_s_ += seconds;
}

void ServerMetrics::OnStoreError(const Status& status) {
  std::lock_guard lock(mu_);
  ++store_errors_;
  last_store_error_ = status.message();
  store_failing_ = true;
}

std::optional<std::string> ServerMetrics::StoreFailing() const {
  std::lock_guard lock(mu_);
  if (!store_failing_) return std::nullopt;
  return last_store_error_;
}

void ServerMetrics::SetEngineStats(const EngineStats& stats, const CommitQueue::Stats& commits,
                                   TimeMs now) {
  std::lock_guard lock(mu_);
  engine_ = stats;
  commits_ = commits;
  engine_report_at_ = now;
}

void ServerMetrics::SetDeliveryStats(const Deliverer::Stats& stats) {
  std::lock_guard lock(mu_);
  deliveries_ = stats;
}

void ServerMetrics::SetCoordinatorStats(const workers::CoordinatorStats& stats,
                                        std::map<std::string, int> workers, size_t waiting) {
  std::lock_guard lock(mu_);
  coordinator_ = stats;
  workers_ = std::move(workers);
  waiting_assignments_ = waiting;
}

void ServerMetrics::SetBreakers(std::vector<BreakerRecord> breakers) {
  std::lock_guard lock(mu_);
  breakers_ = std::move(breakers);
}

void ServerMetrics::CountRequest(int status) {
  std::lock_guard lock(mu_);
  ++requests_[status / 100];
}

void ServerMetrics::NoteEngineAlive(TimeMs now) {
  std::lock_guard lock(mu_);
  engine_report_at_ = std::max(engine_report_at_, now);
}

TimeMs ServerMetrics::last_engine_report() const {
  std::lock_guard lock(mu_);
  return engine_report_at_;
}

uint64_t ServerMetrics::store_errors() const {
  std::lock_guard lock(mu_);
  return store_errors_;
}

std::string ServerMetrics::Render() const {
  std::lock_guard lock(mu_);
  std::ostringstream o;
  auto help = [&](const char* name, const char* type, const char* text) {
    o << "# HELP " << name << ' ' << text << "\n# TYPE " << name << ' ' << type << '\n';
  };
  help("baton_executions", "gauge",
       "Live executions by status: running, paused, queued for a slot (pending: always 0).");
  const LiveExecutions live = live_source_ ? live_source_() : LiveExecutions{};
  const std::pair<const char*, int64_t> by_status[] = {
      {"paused", live.paused}, {"pending", 0}, {"queued", live.queued}, {"running", live.running}};
  for (const auto& [st, n] : by_status) {
    o << "baton_executions{status=\"" << st << "\"} " << n << '\n';
  }
  help("baton_executions_finished_total", "counter",
       "Executions that reached a terminal status since the server started.");
  for (const char* st : {"completed", "failed", "timeout", "cancelled"}) {
    auto it = finished_.find(st);
    o << "baton_executions_finished_total{status=\"" << st << "\"} "
      << (it == finished_.end() ? 0 : it->second) << '\n';
  }
  help("baton_executions_started_total", "counter", "Executions started.");
  o << "baton_executions_started_total " << executions_started_ << '\n';
  help("baton_steps_total", "counter", "Step transitions by kind.");
  o << "baton_steps_total{event=\"started\"} " << steps_started_ << '\n'
    << "baton_steps_total{event=\"completed\"} " << steps_completed_ << '\n'
    << "baton_steps_total{event=\"failed\"} " << steps_failed_ << '\n'
    << "baton_steps_total{event=\"retried\"} " << steps_retried_ << '\n'
    << "baton_steps_total{event=\"slow\"} " << steps_slow_ << '\n';
  help("baton_executions_stalled_total", "counter",
       "execution.stalled events: running executions with no event for --stall-after.");
  o << "baton_executions_stalled_total " << executions_stalled_ << '\n';
  help("baton_dead_letters_total", "counter",
       "Dead-letter entries written (a step failed for good), replayed and discarded.");
  o << "baton_dead_letters_total{event=\"written\"} " << dead_letters_written_ << '\n'
    << "baton_dead_letters_total{event=\"replayed\"} " << dead_letters_replayed_ << '\n'
    << "baton_dead_letters_total{event=\"discarded\"} " << dead_letters_discarded_ << '\n';
  help("baton_cache_total", "counter",
       "Steps with cache: served from the cache (hit) or run (miss); entries evicted.");
  o << "baton_cache_total{event=\"hit\"} " << engine_.cache_hits << '\n'
    << "baton_cache_total{event=\"miss\"} " << engine_.cache_misses << '\n'
    << "baton_cache_total{event=\"eviction\"} " << engine_.cache_evictions << '\n';
  help("baton_cache_entries", "gauge", "Cached step results held.");
  o << "baton_cache_entries " << engine_.cache_entries << '\n';
  help("baton_cache_bytes", "gauge", "Bytes of cached step outputs held.");
  o << "baton_cache_bytes " << engine_.cache_bytes << '\n';
  help("baton_circuit_open_rejections_total", "counter",
       "Attempts refused (CIRCUIT_OPEN) because their circuit breaker was open.");
  o << "baton_circuit_open_rejections_total " << engine_.circuit_open_rejections << '\n';
  // Per key: the keys come from workflow definitions, so their number is bounded by
  // them (and by the engine's limit on distinct keys); the listing is capped as well.
  constexpr size_t kMaxBreakerSeries = 1000;
  help("baton_circuit_breaker_state", "gauge",
       "1 for the state each circuit breaker is in (closed, open, half_open), else 0.");
  for (size_t i = 0; i < breakers_.size() && i < kMaxBreakerSeries; ++i) {
    const BreakerRecord& b = breakers_[i];
    for (const char* st : {kBreakerClosed, kBreakerOpen, kBreakerHalfOpen}) {
      o << "baton_circuit_breaker_state{namespace=\"" << LabelValue(b.ns) << "\",key=\""
        << LabelValue(b.key) << "\",state=\"" << st << "\"} " << (b.state == st ? 1 : 0) << '\n';
    }
  }
  help("baton_circuit_breaker_trips_total", "counter", "Times each circuit breaker opened.");
  for (size_t i = 0; i < breakers_.size() && i < kMaxBreakerSeries; ++i) {
    const BreakerRecord& b = breakers_[i];
    o << "baton_circuit_breaker_trips_total{namespace=\"" << LabelValue(b.ns) << "\",key=\""
      << LabelValue(b.key) << "\"} " << b.trips << '\n';
  }
  help("baton_step_duration_seconds", "histogram",
       "Step attempt duration, dispatch to completion or failure.");
  for (size_t i = 0; i < kBuckets.size(); ++i) {  // counts are cumulative already
    o << "baton_step_duration_seconds_bucket{le=\"" << kBuckets[i] << "\"} " << duration_buckets_[i]
      << '\n';
  }
  o << "baton_step_duration_seconds_bucket{le=\"+Inf\"} " << duration_count_ << '\n'
    << "baton_step_duration_seconds_sum " << duration_sum_s_ << '\n'
    << "baton_step_duration_seconds_count " << duration_count_ << '\n';
  help("baton_ready_queue_depth", "gauge", "Steps ready and waiting for capacity.");
  o << "baton_ready_queue_depth " << engine_.ready_queue_depth << '\n';
  help("baton_executions_queued", "gauge",
       "Executions waiting for a concurrency slot (a workflow's concurrency, or "
       "--max-running-executions).");
  o << "baton_executions_queued " << engine_.executions_queued << '\n';
  help("baton_executions_concurrency_cancelled_total", "counter",
       "Executions cancelled by a concurrency policy (cancel_newest, cancel_oldest).");
  o << "baton_executions_concurrency_cancelled_total " << engine_.concurrency_cancelled << '\n';
  help("baton_child_executions_started_total", "counter",
       "Child workflow executions started by `type: workflow` steps.");
  o << "baton_child_executions_started_total " << engine_.children_started << '\n';
  help("baton_executions_abandoned_total", "counter",
       "Executions dropped from memory after the store refused a batch of theirs.");
  o << "baton_executions_abandoned_total " << engine_.executions_abandoned << '\n';
  help("baton_store_commits_total", "counter", "Store transactions (group commits).");
  o << "baton_store_commits_total " << commits_.commits << '\n';
  help("baton_store_commit_batches_total", "counter",
       "Decide batches written; divided by commits, the mean group size.");
  o << "baton_store_commit_batches_total " << commits_.batches << '\n';
  help("baton_store_commit_group_max", "gauge", "Most batches in one transaction.");
  o << "baton_store_commit_group_max " << commits_.max_group_seen << '\n';
  help("baton_store_commit_seconds_total", "counter",
       "Time inside store commits; divided by commits, the mean latency.");
  o << "baton_store_commit_seconds_total " << commits_.total_commit_ms / 1000.0 << '\n';
  help("baton_store_rows_written_total", "counter",
       "Records written by committed transactions, by table; divided by steps, the write "
       "amplification of a workload.");
  const std::pair<const char*, uint64_t> rows[] = {
      {"executions", commits_.execution_rows},   {"steps", commits_.step_rows},
      {"attempts", commits_.attempt_rows},       {"events", commits_.event_rows},
      {"assignments", commits_.assignment_rows}, {"other", commits_.other_rows}};
  for (const auto& [table, n] : rows) {
    o << "baton_store_rows_written_total{table=\"" << table << "\"} " << n << '\n';
  }
  help("baton_store_errors_total", "counter", "Batches the store refused.");
  o << "baton_store_errors_total " << store_errors_ << '\n';
  help("baton_http_handler_exceptions_total", "counter",
       "Requests whose handler threw; each was answered 500 INTERNAL and logged with an id.");
  o << "baton_http_handler_exceptions_total " << handler_exceptions_.load() << '\n';
  help("baton_deliveries_total", "counter",
       "Notifications and trigger starts that ended, and failed attempts retried.");
  o << "baton_deliveries_total{outcome=\"delivered\"} " << deliveries_.delivered << '\n'
    << "baton_deliveries_total{outcome=\"failed\"} " << deliveries_.failed << '\n'
    << "baton_deliveries_total{outcome=\"retried\"} " << deliveries_.retried << '\n';
  help("baton_deliveries_pending", "gauge", "Deliveries waiting for their next attempt.");
  o << "baton_deliveries_pending " << deliveries_.pending << '\n';
  help("baton_workers", "gauge", "Remote workers by status.");
  for (const char* st : {"ONLINE", "UNHEALTHY", "DRAINING", "OFFLINE"}) {
    auto it = workers_.find(st);
    o << "baton_workers{status=\"" << st << "\"} " << (it == workers_.end() ? 0 : it->second)
      << '\n';
  }
  help("baton_worker_frames_total", "counter",
       "WebSocket frames from and to connected workers (a batch frame holds several messages).");
  o << "baton_worker_frames_total{direction=\"received\"} " << worker_wire_.frames_received << '\n'
    << "baton_worker_frames_total{direction=\"sent\"} " << worker_wire_.frames_sent << '\n';
  help("baton_worker_messages_total", "counter",
       "Worker protocol messages from and to connected workers over WebSocket.");
  o << "baton_worker_messages_total{direction=\"received\"} " << worker_wire_.messages_received
    << '\n'
    << "baton_worker_messages_total{direction=\"sent\"} " << worker_wire_.messages_sent << '\n';
  help("baton_worker_longpoll_requests_total", "counter",
       "Requests of long-polling workers that carry messages (POST .../batch carries several).");
  o << "baton_worker_longpoll_requests_total " << worker_wire_.longpoll_requests << '\n';
  help("baton_worker_longpoll_messages_total", "counter",
       "Worker protocol messages received from long-polling workers.");
  o << "baton_worker_longpoll_messages_total " << worker_wire_.longpoll_messages << '\n';
  help("baton_assignments_waiting", "gauge", "Command steps waiting for a worker that fits.");
  o << "baton_assignments_waiting " << waiting_assignments_ << '\n';
  help("baton_dispatch_latency_seconds", "histogram",
       "A command step's start (its dispatch durable) to its worker's accepted ack "
       "(or its result, when that came without an ack).");
  uint64_t cumulative = 0;
  for (size_t i = 0; i < std::size(workers::CoordinatorStats::kLatencyBucketsUs); ++i) {
    cumulative += coordinator_.latency_counts[i];
    o << "baton_dispatch_latency_seconds_bucket{le=\""
      << workers::CoordinatorStats::kLatencyBucketsUs[i] / 1e6 << "\"} " << cumulative << '\n';
  }
  o << "baton_dispatch_latency_seconds_bucket{le=\"+Inf\"} " << coordinator_.latency_total << '\n'
    << "baton_dispatch_latency_seconds_sum " << coordinator_.latency_sum_us / 1e6 << '\n'
    << "baton_dispatch_latency_seconds_count " << coordinator_.latency_total << '\n';
  // Summaries: exact quantiles over the last 4096 acks (what bench/ quotes), with the
  // sum and count of every ack, as Prometheus summaries carry them.
  auto summary = [&](const char* name, const char* text, int64_t p50_us, int64_t p99_us,
                     uint64_t sum_us, uint64_t count) {
    help(name, "summary", text);
    o << name << "{quantile=\"0.5\"} " << p50_us / 1e6 << '\n'
      << name << "{quantile=\"0.99\"} " << p99_us / 1e6 << '\n'
      << name << "_sum " << sum_us / 1e6 << '\n'
      << name << "_count " << count << '\n';
  };
  summary("baton_dispatch_latency_recent_seconds",
          "The dispatch durable (its start) to the accepted ack; quantiles over the last 4096.",
          coordinator_.latency_p50_us, coordinator_.latency_p99_us, coordinator_.latency_sum_us,
          coordinator_.latency_total);
  summary("baton_dispatch_prepared_latency_seconds",
          "From the engine preparing a command step's dispatch (before the commit that makes "
          "it durable) to the accepted ack; quantiles over the last 4096.",
          coordinator_.prepared_latency_p50_us, coordinator_.prepared_latency_p99_us,
          coordinator_.prepared_latency_sum_us, coordinator_.prepared_latency_total);
  help("baton_commands_dispatched_total", "counter", "Commands sent to workers.");
  o << "baton_commands_dispatched_total " << coordinator_.dispatched << '\n';
  help("baton_commands_placed_at_prepare_total", "counter",
       "Commands whose assignment was committed with the engine's dispatch (no write of "
       "its own).");
  o << "baton_commands_placed_at_prepare_total " << coordinator_.placed_at_prepare << '\n';
  help("baton_reassignments_total", "counter",
       "Assignments moved off a lost worker (moved), or failed WORKER_LOST (lost).");
  o << "baton_reassignments_total{outcome=\"moved\"} " << coordinator_.reassigned << '\n'
    << "baton_reassignments_total{outcome=\"lost\"} " << coordinator_.lost << '\n';
  help("baton_heartbeat_misses_total", "counter", "Workers that went UNHEALTHY.");
  o << "baton_heartbeat_misses_total " << coordinator_.heartbeat_misses << '\n';
  help("baton_stale_messages_total", "counter",
       "Acks, progress and results refused STALE_ASSIGNMENT.");
  o << "baton_stale_messages_total " << coordinator_.stale << '\n';
  help("baton_http_requests_total", "counter", "HTTP responses by status class.");
  for (int c : {2, 3, 4, 5}) {
    auto it = requests_.find(c);
    o << "baton_http_requests_total{code=\"" << c << "xx\"} "
      << (it == requests_.end() ? 0 : it->second) << '\n';
  }
  return o.str();
}

}  // namespace baton::server
