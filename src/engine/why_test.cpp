// Engine::Why on the simulated clock: the kinds the server test cannot reach cheaply.
#include "support/sim_harness.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using testing::SimHarness;

std::map<std::string, StepWait> WhyNow(SimHarness& h, const std::string& id) {
  std::map<std::string, StepWait> out;
  h.loop->Post([&] {
    auto waits = h.engine->Why(id);
    ASSERT_TRUE(waits.ok()) << waits.status().ToString();
    for (StepWait& w : *waits) out[w.step_id] = std::move(w);
  });
  h.loop->RunReady();
  return out;
}

TEST(EngineWhy, ASlotShortageAFanOutAndARetryAreNamed) {
  EngineOptions options;
  options.parallel = 1;
  SimHarness h(options);
  std::string id = h.StartOnly(R"(
name: crowded
inputs: {items: {type: array, default: [1, 2, 3]}}
steps:
  - {id: long, type: shell, run: long, with: {sim_ms: 60000}}
  - {id: queued, type: shell, run: queued}
  - {id: fan, type: shell, run: f, for_each: "{{ inputs.items }}", with: {sim_ms: 5000},
     depends_on: [long]}
  - {id: flaky, type: wait, duration: 1s}
)");
  h.loop->RunUntilIdle(h.clock.Now() + 100);
  auto why = WhyNow(h, id);
  EXPECT_EQ(why["long"].kind, "running");
  EXPECT_EQ(why["long"].attempt, 1);
  EXPECT_EQ(why["queued"].kind, "capacity");
  EXPECT_EQ(why["queued"].limit, 1);
  EXPECT_EQ(why["fan"].kind, "upstream");
  EXPECT_EQ(why["fan"].steps, std::vector<std::string>{"long"});
  EXPECT_EQ(why["flaky"].kind, "timer");
  EXPECT_EQ(why["flaky"].until, why["flaky"].since + 1000);

  h.loop->RunUntilIdle(h.clock.Now() + 66'000);  // long and queued are done
  why = WhyNow(h, id);
  EXPECT_EQ(why["fan"].kind, "instances");
  EXPECT_EQ(why["fan"].done, 1u);
  EXPECT_EQ(why["fan"].total, 3u);
  // Started = finished + running; the running ones by item index.
  EXPECT_GE(why["fan"].limit, 2);
  EXPECT_EQ(why["fan"].steps.size(), static_cast<size_t>(why["fan"].limit) - why["fan"].done);
  for (const std::string& item : why["fan"].steps) EXPECT_LT(std::stoul(item), 3u) << item;

  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  h.loop->Post([&] { EXPECT_EQ(h.engine->Why(id).status().code(), errc::kNotFound); });
  h.loop->RunReady();
}

TEST(EngineWhy, ARetryBackoffSaysWhichAttemptFailedAndWhenTheNextStarts) {
  SimHarness h;
  h.runner->script["flaky"] = {{10, "EXIT_NONZERO"}, {10}};
  std::string id = h.StartOnly(R"(
name: backoff
steps:
  - {id: flaky, type: shell, run: x, retry: {max_attempts: 4, initial_delay: 1m}}
)");
  h.loop->RunUntilIdle(h.clock.Now() + 1000);
  auto why = WhyNow(h, id);
  EXPECT_EQ(why["flaky"].kind, "retry_backoff");
  EXPECT_EQ(why["flaky"].attempt, 1);
  EXPECT_EQ(why["flaky"].max_attempts, 4);
  EXPECT_EQ(why["flaky"].error["code"], "EXIT_NONZERO");
  EXPECT_EQ(why["flaky"].until, h.Step(id, "flaky").retry_at);
  EXPECT_GT(why["flaky"].until, h.clock.Now());
}

}  // namespace
}  // namespace baton
