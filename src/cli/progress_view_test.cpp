#include "cli/progress_view.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace baton::cli {
namespace {

// What has been written to `f` so far.
std::string Written(FILE* f) {
  std::fflush(f);
  long end = std::ftell(f);
  std::string out(static_cast<size_t>(end), '\0');
  std::rewind(f);
  size_t n = std::fread(out.data(), 1, out.size(), f);
  out.resize(n);
  std::fseek(f, 0, SEEK_END);
  return out;
}

EventRecord Event(const std::string& type, const std::string& step) {
  EventRecord e;
  e.execution_id = "ex1";
  e.type = type;
  e.step_id = step;
  e.attempt = step.empty() ? 0 : 1;
  e.time = 1'700'000'000'000;
  return e;
}

TEST(ProgressView, EventLinesOfOneTurnAreWrittenTogetherWhenTheTurnEnds) {
  FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  SimClock clock{1'700'000'000'000};
  SimEventLoop loop(&clock);
  std::string finished;
  {
    ProgressView view(out, /*live=*/false, /*quiet=*/false, &loop);
    view.on_finished = [&](const std::string& id, ExecutionStatus) { finished = id; };
    ExecutionProgress p;
    view.OnEvent(Event("execution.started", ""), p);
    view.OnEvent(Event("step.dispatched", "a"), p);
    view.OnEvent(Event("step.completed", "a"), p);
    EXPECT_EQ(Written(out), "");  // held while the turn delivers its events
    loop.RunReady();              // the turn is over
    std::string text = Written(out);
    EXPECT_NE(text.find("execution.started"), std::string::npos) << text;
    EXPECT_NE(text.find("step.completed a attempt=1"), std::string::npos) << text;

    view.OnEvent(Event("step.dispatched", "b"), p);
    Json data = {{"status", "completed"}};
    EventRecord end = Event("execution.completed", "");
    end.data = data;
    view.OnEvent(end, p);
    // The execution's end is written at once: the caller prints its summary next.
    text = Written(out);
    EXPECT_NE(text.find("step.dispatched b"), std::string::npos) << text;
    EXPECT_NE(text.find("execution.completed"), std::string::npos) << text;
    EXPECT_EQ(finished, "ex1");

    view.OnEvent(Event("step.dispatched", "c"), p);
  }  // a line still held when the view goes is written, not lost
  EXPECT_NE(Written(out).find("step.dispatched c"), std::string::npos);
  std::fclose(out);
}

TEST(ProgressView, WithoutALoopEachLineIsWrittenAsItComes) {
  FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  ProgressView view(out, /*live=*/false, /*quiet=*/false);
  view.OnEvent(Event("step.dispatched", "a"), ExecutionProgress{});
  EXPECT_NE(Written(out).find("step.dispatched a"), std::string::npos);
  std::fclose(out);
}

// Issue 16: the live view called a step no worker had taken "dispatched"; it is queued
// until it starts, then running.
TEST(ProgressView, TheLiveViewShowsAStepQueuedUntilItStarts) {
  FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  ProgressView view(out, /*live=*/true, /*quiet=*/false);
  view.OnEvent(Event("execution.started", ""), ExecutionProgress{});
  view.OnEvent(Event("step.dispatched", "fetch"), ExecutionProgress{});
  std::string text = Written(out);
  EXPECT_NE(text.find("fetch"), std::string::npos) << text;
  EXPECT_NE(text.find("queued"), std::string::npos) << text;
  EXPECT_EQ(text.find("dispatched"), std::string::npos) << text;
  view.OnEvent(Event("step.started", "fetch"), ExecutionProgress{});
  text = Written(out);
  EXPECT_NE(text.find("running"), std::string::npos) << text;
  std::fclose(out);
}

// Each kind of event line carries its detail: a completed step its duration, a failed one
// its error, a retry its delay, a skip its reason, progress its percentage; the live
// view marks each outcome and removes the step from the running list.
TEST(ProgressView, EachEventLineCarriesItsDetail) {
  FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  ProgressView view(out, /*live=*/false, /*quiet=*/false);
  EventRecord dispatched = Event("step.dispatched", "a");
  view.OnEvent(dispatched, ExecutionProgress{});
  EventRecord progress = Event("step.progress", "a");
  progress.data = Json{{"progress", 40}};
  view.OnEvent(progress, ExecutionProgress{});
  EventRecord retrying = Event("step.retrying", "a");
  retrying.time += 1'250;
  retrying.data = Json{{"delay_ms", 2'000}, {"error", {{"code", "EXIT_1"}, {"message", "boom"}}}};
  view.OnEvent(retrying, ExecutionProgress{});
  view.OnEvent(dispatched, ExecutionProgress{});
  EventRecord completed = Event("step.completed", "a");
  completed.time += 1'250;
  view.OnEvent(completed, ExecutionProgress{});
  EventRecord skipped = Event("step.skipped", "b");
  skipped.data = Json{{"reason", "when was false"}};
  view.OnEvent(skipped, ExecutionProgress{});
  EventRecord failed = Event("step.timed_out", "c");
  failed.data = Json{{"error", {{"code", "TIMEOUT"}, {"message", "after 1s"}}}};
  view.OnEvent(failed, ExecutionProgress{});
  const std::string text = Written(out);
  EXPECT_NE(text.find("step.progress a attempt=1 40%"), std::string::npos) << text;
  EXPECT_NE(text.find("step.retrying a attempt=1 delay=2.0s EXIT_1: boom"), std::string::npos)
      << text;
  EXPECT_NE(text.find("step.completed a attempt=1 (1.3s)"), std::string::npos) << text;
  EXPECT_NE(text.find("step.skipped b attempt=1 (when was false)"), std::string::npos) << text;
  EXPECT_NE(text.find("step.timed_out c attempt=1 TIMEOUT: after 1s"), std::string::npos) << text;
  std::fclose(out);

  FILE* live_out = std::tmpfile();
  ASSERT_NE(live_out, nullptr);
  ProgressView live(live_out, /*live=*/true, /*quiet=*/false);
  live.OnEvent(Event("execution.started", ""), ExecutionProgress{});
  live.OnEvent(dispatched, ExecutionProgress{});
  live.OnEvent(completed, ExecutionProgress{});
  live.OnEvent(failed, ExecutionProgress{});
  live.Finish();
  const std::string drawn = Written(live_out);
  EXPECT_NE(drawn.find("\u2714\x1b[0m a"), std::string::npos) << drawn;
  EXPECT_NE(drawn.find("1.3s"), std::string::npos) << drawn;
  EXPECT_NE(drawn.find("\u2718\x1b[0m c"), std::string::npos) << drawn;
  EXPECT_NE(drawn.find("TIMEOUT: after 1s"), std::string::npos) << drawn;
  std::fclose(live_out);
}

}  // namespace
}  // namespace baton::cli
