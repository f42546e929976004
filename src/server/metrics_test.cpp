#include "server/metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace baton::server {
namespace {

EventRecord Event(const std::string& execution, const std::string& type) {
  EventRecord e;
  e.execution_id = execution;
  e.type = type;
  return e;
}

// The value of one `baton_executions{status="..."}` line, or -1 when it is missing.
long long Gauge(const std::string& text, const std::string& status) {
  const std::string key = "baton_executions{status=\"" + status + "\"} ";
  size_t at = text.find(key);
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + key.size()));
}

// The live gauge is the engine's count (Engine::LiveCounts, tested with the engine): read
// at each scrape, every status listed; terminal events count as finished here.
// /health counts the engine's silence from its last report. Before the first one, from
// when the server saw it alive at its start, not from 0.
TEST(ServerMetrics, TheEngineIsAliveFromItsStartUntilItsFirstReport) {
  ServerMetrics m;
  EXPECT_EQ(m.last_engine_report(), 0);
  m.NoteEngineAlive(1'000);
  EXPECT_EQ(m.last_engine_report(), 1'000);
  m.SetEngineStats({}, {}, 1'500);
  EXPECT_EQ(m.last_engine_report(), 1'500);
  m.NoteEngineAlive(1'200);  // never back
  EXPECT_EQ(m.last_engine_report(), 1'500);
}

TEST(ServerMetrics, TheLiveGaugeReadsTheEnginesCountsAtEachScrape) {
  ServerMetrics m;
  std::string text = m.Render();  // no source yet: listed, zero
  for (const char* st : {"running", "paused", "queued", "pending"}) {
    EXPECT_EQ(Gauge(text, st), 0) << st << "\n" << text;
  }
  LiveExecutions live{.running = 2, .paused = 1, .queued = 3};
  m.SetLiveSource([&] { return live; });
  text = m.Render();
  EXPECT_EQ(Gauge(text, "running"), 2) << text;
  EXPECT_EQ(Gauge(text, "paused"), 1);
  EXPECT_EQ(Gauge(text, "queued"), 3);
  EXPECT_EQ(Gauge(text, "pending"), 0);
  live.running = 0;
  EXPECT_EQ(Gauge(m.Render(), "running"), 0);  // not a snapshot: the count now

  ExecutionProgress p;
  for (const char* id : {"b", "c"}) m.OnEvent(Event(id, "execution.cancelled"), p);
  m.OnEvent(Event("a", "execution.started"), p);
  text = m.Render();
  EXPECT_NE(text.find("baton_executions_finished_total{status=\"cancelled\"} 2"),
            std::string::npos);
  EXPECT_NE(text.find("baton_executions_started_total 1"), std::string::npos);
}

// Step durations come from when each attempt began, as the engine hands it with the
// event that ends the attempt; an attempt whose beginning is unknown (taken over after a
// restart) counts as completed or failed without a duration.
TEST(ServerMetrics, StepDurationsRunFromWhenTheAttemptBegan) {
  ServerMetrics m;
  ExecutionProgress p;
  EventRecord e = Event("a", "step.completed");
  e.step_id = "s";
  e.time = 10'000;
  p.attempt_began = 9'000;  // 1 s
  m.OnEvent(e, p);
  e.type = "step.failed";
  e.time = 20'000;
  p.attempt_began = 19'997;  // 3 ms
  m.OnEvent(e, p);
  e.type = "step.completed";
  p.attempt_began = 0;  // not known
  m.OnEvent(e, p);
  e.type = "step.retrying";  // ends an attempt, but not the step: no duration
  p.attempt_began = 1'000;
  m.OnEvent(e, p);
  const std::string text = m.Render();
  EXPECT_NE(text.find("\nbaton_step_duration_seconds_count 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nbaton_step_duration_seconds_bucket{le=\"0.005\"} 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\nbaton_step_duration_seconds_bucket{le=\"1\"} 2\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\nbaton_step_duration_seconds_sum 1.003\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace baton::server
