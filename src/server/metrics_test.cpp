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

TEST(ServerMetrics, LiveExecutionsAreCountedByTheirLatestStatus) {
  ServerMetrics m;
  ExecutionProgress p;
  for (const char* id : {"a", "b", "c", "d"}) m.OnEvent(Event(id, "execution.started"), p);
  m.OnEvent(Event("b", "execution.paused"), p);
  m.OnEvent(Event("c", "execution.queued"), p);
  m.OnEvent(Event("a", "step.completed"), p);  // not an execution's event: no change
  m.OnEvent(Event("d", "execution.completed"), p);
  std::string text = m.Render();
  EXPECT_EQ(Gauge(text, "running"), 1) << text;
  EXPECT_EQ(Gauge(text, "paused"), 1);
  EXPECT_EQ(Gauge(text, "queued"), 1);
  EXPECT_EQ(Gauge(text, "pending"), 0);  // always listed

  m.OnEvent(Event("b", "execution.resumed"), p);
  m.OnEvent(Event("b", "execution.resumed"), p);  // the same status again counts once
  m.OnEvent(Event("c", "execution.started"), p);
  m.OnEvent(Event("a", "execution.failed"), p);
  m.OnEvent(Event("a", "execution.failed"), p);  // no longer live: nothing to take off
  text = m.Render();
  EXPECT_EQ(Gauge(text, "running"), 2) << text;
  EXPECT_EQ(Gauge(text, "paused"), 0);
  EXPECT_EQ(Gauge(text, "queued"), 0);
  for (const char* id : {"b", "c"}) m.OnEvent(Event(id, "execution.cancelled"), p);
  text = m.Render();
  EXPECT_EQ(Gauge(text, "running"), 0) << text;
  EXPECT_NE(text.find("baton_executions_finished_total{status=\"cancelled\"} 2"),
            std::string::npos);
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
