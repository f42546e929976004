// EventRecord::position: the engine numbers events across executions in commit order,
// and an engine over a store that has events numbers after them.
#include "support/sim_harness.h"

#include <gtest/gtest.h>

#include <map>

namespace baton {
namespace {

using testing::SimHarness;

constexpr const char* kTwoSteps = R"(
name: two
steps:
  - {id: a, type: shell, run: a, with: {sim_ms: 10}}
  - {id: b, type: shell, run: b, depends_on: [a], with: {sim_ms: 25}}
)";

std::vector<EventRecord> AllStored(Store* store) {
  EventQuery q;
  q.ns = kDefaultNamespace;
  auto events = store->ListEvents(q);
  EXPECT_TRUE(events.ok()) << events.status().ToString();
  return events.ok() ? *events : std::vector<EventRecord>{};
}

// Positions strictly increase over the whole list, and with seq within each execution.
void ExpectOrdered(const std::vector<EventRecord>& events) {
  std::map<std::string, int64_t> last_seq;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_GT(events[i].position, i == 0 ? 0 : events[i - 1].position) << i;
    int64_t& seq = last_seq[events[i].execution_id];
    EXPECT_GT(events[i].seq, seq) << events[i].execution_id << " at position "
                                  << events[i].position;
    seq = events[i].seq;
  }
}

TEST(EventPosition, IncreasesAcrossInterleavedExecutionsInCommitOrder) {
  SimHarness h;
  std::string first = h.StartOnly(kTwoSteps);
  std::string second = h.StartOnly(kTwoSteps);
  h.loop->RunUntilIdle();
  ASSERT_EQ(h.Execution(first).status, ExecutionStatus::kCompleted);
  ASSERT_EQ(h.Execution(second).status, ExecutionStatus::kCompleted);

  std::vector<EventRecord> stored = AllStored(h.store.get());
  ASSERT_EQ(stored.size(),
            h.store->GetEvents(first, 0, 0)->size() + h.store->GetEvents(second, 0, 0)->size());
  ExpectOrdered(stored);
  // The two logs interleave: the second started before the first finished.
  EXPECT_EQ(stored.front().execution_id, first);
  EXPECT_EQ(stored.back().execution_id, second);
  EXPECT_LT(h.store->GetEvents(second, 0, 1)->front().position,
            h.store->GetEvents(first, 0, 0)->back().position);
  // Observers hear of events in position order, with the stored positions.
  ASSERT_EQ(h.log.events.size(), stored.size());
  for (size_t i = 0; i < stored.size(); ++i) {
    EXPECT_EQ(h.log.events[i].position, stored[i].position) << i;
    EXPECT_EQ(h.log.events[i].execution_id, stored[i].execution_id) << i;
  }
  EXPECT_EQ(*h.store->LastEventPosition(), stored.back().position);
}

TEST(EventPosition, ContinuesAfterTheStoredMaximumAcrossARestart) {
  SimHarness h;
  h.Run(kTwoSteps);
  const int64_t before = *h.store->LastEventPosition();
  ASSERT_GT(before, 0);

  // A crash mid-run: the fresh engine (seeded by the harness, as every host of an engine
  // does) numbers the recovered execution's events and a new one's after `before`.
  std::string interrupted = h.StartOnly(kTwoSteps);
  h.loop->RunUntilIdle(h.clock.Now() + 20);  // a is done, b runs until +35
  ASSERT_EQ(h.Step(interrupted, "b").status, StepStatus::kRunning);
  const int64_t at_crash = *h.store->LastEventPosition();
  ASSERT_GT(at_crash, before);
  h.Crash();
  h.log.events.clear();
  h.loop->Post([&] { ASSERT_TRUE(RecoverExecutions(h.store.get(), h.engine.get()).ok()); });
  h.loop->RunUntilIdle();
  ASSERT_EQ(h.Execution(interrupted).status, ExecutionStatus::kCompleted);
  std::string fresh = h.Run(kTwoSteps);

  std::vector<EventRecord> stored = AllStored(h.store.get());
  ExpectOrdered(stored);
  size_t after_crash = 0;
  for (const EventRecord& e : stored) after_crash += e.position > at_crash;
  ASSERT_FALSE(h.log.events.empty());
  EXPECT_EQ(h.log.events.front().position, at_crash + 1);  // no gap, no reuse
  EXPECT_EQ(after_crash, h.log.events.size());
  EXPECT_EQ(h.store->GetEvents(fresh, 0, 1)->front().position,
            h.store->GetEvents(interrupted, 0, 0)->back().position + 1);
}

TEST(EventPosition, SeedingNeverMovesNumberingBack) {
  SimHarness h;
  h.loop->Post([&] {
    h.engine->SetLastEventPosition(100);
    h.engine->SetLastEventPosition(5);
  });
  h.loop->RunReady();
  std::string id = h.Run(kTwoSteps);
  EXPECT_EQ(h.store->GetEvents(id, 0, 1)->front().position, 101);
}

}  // namespace
}  // namespace baton
