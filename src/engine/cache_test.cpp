// Result caching in the engine: hits, misses, TTL, keys, single-flight, and durability.
#include "support/sim_harness.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using testing::SimHarness;

constexpr const char* kCached = R"(
name: etl
inputs: {day: string}
steps:
  - {id: extract, type: shell, run: ["extract", "{{ inputs.day }}"], cache: {ttl: 1h}}
  - {id: report, type: noop, depends_on: [extract], with: "{{ steps.extract.output }}"}
)";

int Hits(const SimHarness& h, const std::string& id) {
  int n = 0;
  for (const auto& e : h.log.events) n += e.execution_id == id && e.type == "step.cached";
  return n;
}

TEST(Cache, ASecondRunOfTheSameStepIsServedFromTheCache) {
  SimHarness h;
  h.runner->script["extract"] = {{10, "", Json{{"rows", 42}}}};
  std::string first = h.Run(kCached, {{"day", "mon"}});
  std::string second = h.Run(kCached, {{"day", "mon"}});
  EXPECT_EQ(h.runner->CallsFor("extract"), 1);
  EXPECT_EQ(h.Execution(second).status, ExecutionStatus::kCompleted);
  StepRecord st = h.Step(second, "extract");
  EXPECT_EQ(st.status, StepStatus::kCached);
  EXPECT_EQ(st.attempts, 0);
  EXPECT_EQ(st.output, Json({{"rows", 42}}));
  EXPECT_EQ(h.Step(second, "report").output, Json({{"rows", 42}}));
  EXPECT_EQ(Hits(h, second), 1);
  for (const auto& e : h.log.events) {
    if (e.execution_id == second && e.type == "step.cached") {
      EXPECT_EQ(e.data["execution_id"], first);
      EXPECT_EQ(e.data["key"].get<std::string>().size(), 64u);
    }
  }
  EngineStats stats = h.engine->Stats();
  EXPECT_EQ(stats.cache_hits, 1u);
  EXPECT_EQ(stats.cache_misses, 1u);
  EXPECT_EQ(stats.cache_entries, 1u);
  // Another input is another key.
  h.Run(kCached, {{"day", "tue"}});
  EXPECT_EQ(h.runner->CallsFor("extract"), 2);
}

TEST(Cache, EntriesExpireAfterTheirTtl) {
  SimHarness h;
  h.Run(kCached, {{"day", "mon"}});
  h.clock.Advance(Duration(3'600'001));
  std::string later = h.Run(kCached, {{"day", "mon"}});
  EXPECT_EQ(h.runner->CallsFor("extract"), 2);
  EXPECT_EQ(h.Step(later, "extract").status, StepStatus::kCompleted);
  EXPECT_EQ(h.engine->Stats().cache_evictions, 1u);
}

TEST(Cache, OnlySuccessfulResultsAreStored) {
  SimHarness h;
  h.runner->script["extract"] = {{10, "EXIT_NONZERO"}, {10, "", Json("ok")}};
  std::string failed = h.Run(kCached, {{"day", "mon"}});
  EXPECT_EQ(h.Execution(failed).status, ExecutionStatus::kFailed);
  EXPECT_TRUE(h.store->ListCacheEntries("")->empty());
}

TEST(Cache, IdenticalStepsRunningAtOnceRunOnce) {
  SimHarness h;
  h.runner->script["extract"] = {{1000, "", Json("rows")}};
  std::string a = h.StartOnly(kCached, {{"day", "mon"}});
  std::string b = h.StartOnly(kCached, {{"day", "mon"}});
  h.loop->RunUntilIdle(h.clock.Now() + 100);
  // b waits for a's run, and says so.
  Result<std::vector<StepWait>> why = Status(errc::kNotFound, "not asked");
  h.loop->Post([&] { why = h.engine->Why(b); });
  h.loop->RunReady();
  ASSERT_TRUE(why.ok());
  EXPECT_EQ((*why)[0].kind, "cache");
  EXPECT_EQ((*why)[0].steps, std::vector<std::string>{a + "/extract"});
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.runner->CallsFor("extract"), 1);
  EXPECT_EQ(h.Step(b, "extract").status, StepStatus::kCached);
  EXPECT_EQ(h.Step(b, "extract").output, Json("rows"));
  EXPECT_EQ(h.Execution(b).status, ExecutionStatus::kCompleted);
}

TEST(Cache, AWaiterRunsItselfWhenTheFirstRunFails) {
  SimHarness h;
  h.runner->script["extract"] = {{1000, "EXIT_NONZERO"}};
  std::string a = h.StartOnly(kCached, {{"day", "mon"}});
  std::string b = h.StartOnly(kCached, {{"day", "mon"}});
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.runner->CallsFor("extract"), 2);
  EXPECT_EQ(h.Execution(a).status, ExecutionStatus::kFailed);
  EXPECT_EQ(h.Execution(b).status, ExecutionStatus::kFailed);
}

TEST(Cache, AnEntrySurvivesACrashAndServesTheNextRun) {
  SimHarness h;
  h.runner->script["extract"] = {{10, "", Json("rows")}};
  h.Run(kCached, {{"day", "mon"}});
  h.Crash();
  std::string after = h.Run(kCached, {{"day", "mon"}});
  EXPECT_EQ(h.runner->CallsFor("extract"), 0);  // the new runner never ran it
  EXPECT_EQ(h.Step(after, "extract").status, StepStatus::kCached);
  EXPECT_EQ(h.Step(after, "extract").output, Json("rows"));
  // The hit's use count is stored too.
  auto stored = *h.store->ListCacheEntries("");
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].hits, 1);
}

TEST(Cache, AnExplicitKeyIsSharedAcrossWorkflowsAndClearingRemovesIt) {
  SimHarness h;
  h.runner->script["fetch"] = {{10, "", Json("model")}};
  constexpr const char* kA = R"(
name: a
steps:
  - {id: fetch, type: shell, run: x, cache: {key: "model-{{ inputs.v }}"}}
)";
  constexpr const char* kB = R"(
name: b
steps:
  - {id: fetch, type: shell, run: y, cache: {key: "model-{{ inputs.v }}"}}
)";
  h.Run(kA, {{"v", 1}});
  std::string b = h.Run(kB, {{"v", 1}});
  EXPECT_EQ(h.Step(b, "fetch").status, StepStatus::kCached);
  Result<size_t> cleared = Status(errc::kNotFound, "not asked");
  h.loop->Post([&] { cleared = h.engine->ClearCache(kDefaultNamespace, "", "a", ""); });
  h.loop->RunUntilIdle();
  ASSERT_TRUE(cleared.ok());
  EXPECT_EQ(*cleared, 1u);
  EXPECT_TRUE(h.store->ListCacheEntries("")->empty());
  h.Run(kB, {{"v", 1}});
  EXPECT_EQ(h.runner->CallsFor("fetch"), 2);
}

}  // namespace
}  // namespace baton
