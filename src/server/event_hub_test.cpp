#include "server/event_hub.h"

#include "server/views.h"

#include <gtest/gtest.h>

namespace baton::server {
namespace {

// The reference rendering: EventJson plus the feed's members, as a DOM.
Json Reference(const EventRecord& e, const ExecutionProgress& p) {
  Json j = EventJson(e);
  j["workflow"] = p.workflow;
  j["progress"] = {
      {"status", ToString(p.status)}, {"percent", p.percent},       {"layer", p.layer},
      {"layers", p.layers},           {"steps_done", p.steps_done}, {"steps_total", p.steps_total}};
  return j;
}

TEST(FeedJson, SaysWhatTheEventViewAndProgressSay) {
  ExecutionProgress p;
  p.execution_id = "01abc";
  p.status = ExecutionStatus::kRunning;
  p.percent = 42;
  p.layer = 2;
  p.layers = 3;
  p.steps_done = 4;
  p.steps_total = 10;
  p.workflow = "deploy";
  EventRecord e;
  e.execution_id = "01abc";
  e.seq = 7;
  e.position = 1234567890123;
  e.type = "step.completed";
  e.time = 1'764'000'000'123;
  e.step_id = "train";
  e.attempt = 2;
  e.data = {{"output", {{"quote", "say \"hi\"\\n\tend"}, {"n", 1.5}}}, {"list", {1, nullptr}}};
  const std::string text = FeedJson(e, p);
  EXPECT_EQ(Json::parse(text), Reference(e, p)) << text;

  // No step, no attempt, odd strings: escaped, and invalid UTF-8 replaced, not thrown.
  e.step_id.clear();
  e.attempt = 0;
  e.type = "execution.started";
  p.workflow = "w\"ith\x01quote";
  e.data = {{"bad", std::string("\xff\xfe", 2)}};
  const std::string odd = FeedJson(e, p);
  Json parsed = Json::parse(odd);
  EXPECT_FALSE(parsed.contains("step_id"));
  EXPECT_FALSE(parsed.contains("attempt"));
  EXPECT_EQ(parsed["workflow"], "w\"ith\x01quote");
  EXPECT_EQ(parsed["data"]["bad"], "\xef\xbf\xbd\xef\xbf\xbd");
}

}  // namespace
}  // namespace baton::server
