#include "engine/step_deadlines.h"

#include "engine/execution_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

namespace baton::engine {
namespace {

// Executions of `steps` steps each, as the deadlines see them (only `steps` is touched).
std::vector<std::unique_ptr<ExecState>> Executions(int n, int steps) {
  std::vector<std::unique_ptr<ExecState>> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(std::make_unique<ExecState>());
    out.back()->steps.resize(static_cast<size_t>(steps));
  }
  return out;
}

constexpr DeadlineKind kTimeout = DeadlineKind::kAttemptTimeout;
constexpr DeadlineKind kHeartbeat = DeadlineKind::kHeartbeat;
constexpr DeadlineKind kSlow = DeadlineKind::kSlow;
constexpr int kKinds = 3;

TEST(StepDeadlines, FiresEarliestFirstAndTiesInArmingOrder) {
  auto execs = Executions(2, 2);
  StepDeadlines d;
  d.Arm(*execs[0], 0, kTimeout, 30);
  d.Arm(*execs[1], 1, kTimeout, 10);
  d.Arm(*execs[0], 1, kHeartbeat, 10);
  d.Arm(*execs[1], 0, kTimeout, 20);
  d.Arm(*execs[0], 1, kTimeout, 10);
  d.Arm(*execs[1], 1, kSlow, 25);
  EXPECT_EQ(d.NextTime(), 10);
  EXPECT_FALSE(d.PopDue(9));
  std::vector<std::tuple<ExecState*, int, DeadlineKind>> fired;
  while (auto due = d.PopDue(100)) fired.push_back({due->ex, due->step, due->kind});
  const std::vector<std::tuple<ExecState*, int, DeadlineKind>> want = {
      {execs[1].get(), 1, kTimeout}, {execs[0].get(), 1, kHeartbeat},
      {execs[0].get(), 1, kTimeout}, {execs[1].get(), 0, kTimeout},
      {execs[1].get(), 1, kSlow},    {execs[0].get(), 0, kTimeout}};
  EXPECT_EQ(fired, want);
  for (const auto& ex : execs) {
    for (const StepState& st : ex->steps) {
      EXPECT_FALSE(st.timer_is_deadline);
      EXPECT_FALSE(st.heartbeat_armed);
      EXPECT_FALSE(st.slow_armed);
      EXPECT_EQ(st.timer, 0u);
      EXPECT_EQ(st.heartbeat_deadline, 0u);
      EXPECT_EQ(st.slow_watch, 0u);
    }
  }
}

TEST(StepDeadlines, ArmingAgainReplacesAndDisarmAllLeavesNoneOfTheExecution) {
  auto execs = Executions(2, 3);
  StepDeadlines d;
  d.Arm(*execs[0], 2, kTimeout, 50);
  d.Arm(*execs[0], 2, kTimeout, 5);  // the step's new attempt: one deadline, the new one
  EXPECT_EQ(d.size(), 1u);
  EXPECT_EQ(d.NextTime(), 5);
  d.Arm(*execs[0], 2, kHeartbeat, 40);  // the other kind: beside it
  d.Arm(*execs[0], 2, kHeartbeat, 45);  // a progress report: moved, not added
  d.Arm(*execs[0], 2, kSlow, 60);       // the third kind: beside both
  EXPECT_EQ(d.size(), 3u);
  d.Disarm(*execs[0], 2, kTimeout);
  EXPECT_EQ(d.NextTime(), 45);
  d.Arm(*execs[0], 0, kTimeout, 7);
  d.Arm(*execs[1], 1, kHeartbeat, 6);
  d.DisarmAll(*execs[0]);
  EXPECT_EQ(d.size(), 1u);
  d.Disarm(*execs[0], 1, kTimeout);  // never armed: nothing
  d.Disarm(*execs[1], 1, kTimeout);  // not this kind: nothing
  auto due = d.PopDue(100);
  ASSERT_TRUE(due);
  EXPECT_EQ(due->ex, execs[1].get());
  EXPECT_EQ(due->step, 1);
  EXPECT_EQ(due->kind, kHeartbeat);
  EXPECT_TRUE(d.empty());
}

// Against an ordered map under random arms, re-arms, disarms and pops of every kind: the
// same firing order, size and next time throughout, and every step's record of its places
// is right (a wrong one would remove another deadline).
TEST(StepDeadlines, MatchesAnOrderedMapUnderRandomOperations) {
  constexpr int kExecs = 40, kSteps = 5;
  auto execs = Executions(kExecs, kSteps);
  StepDeadlines d;
  // A deadline's number: (exec * kSteps + step) * kKinds + kind.
  std::map<std::pair<TimeMs, int>, int> model;  // (when, arming number) -> deadline number
  std::map<int, std::pair<TimeMs, int>> armed;  // deadline number -> its model key
  std::mt19937 rng(11);
  std::vector<int> fired, expected;
  TimeMs now = 0;
  for (int n = 0; n < 20'000; ++n) {
    const int op = static_cast<int>(rng() % 10);
    const int who = static_cast<int>(rng() % (kExecs * kSteps * kKinds));
    ExecState& ex = *execs[static_cast<size_t>(who / kKinds / kSteps)];
    const int step = who / kKinds % kSteps;
    const auto kind = static_cast<DeadlineKind>(who % kKinds);
    if (op < 5) {
      const TimeMs when = now + static_cast<TimeMs>(rng() % 50);
      d.Arm(ex, step, kind, when);
      if (auto was = armed.find(who); was != armed.end()) model.erase(was->second);
      model[{when, n}] = who;
      armed[who] = {when, n};
    } else if (op < 7) {
      d.Disarm(ex, step, kind);
      if (auto was = armed.find(who); was != armed.end()) {
        model.erase(was->second);
        armed.erase(was);
      }
    } else if (op < 8) {
      d.DisarmAll(ex);
      const int first = who / kKinds / kSteps * kSteps * kKinds;
      for (int key = first; key < first + kSteps * kKinds; ++key) {
        if (auto was = armed.find(key); was != armed.end()) {
          model.erase(was->second);
          armed.erase(was);
        }
      }
    } else {
      now += static_cast<TimeMs>(rng() % 5);
      while (auto due = d.PopDue(now)) {
        const auto at = std::find_if(execs.begin(), execs.end(),
                                     [&](const auto& e) { return e.get() == due->ex; });
        fired.push_back((static_cast<int>(at - execs.begin()) * kSteps + due->step) * kKinds +
                        static_cast<int>(due->kind));
      }
      while (!model.empty() && model.begin()->first.first <= now) {
        expected.push_back(model.begin()->second);
        armed.erase(model.begin()->second);
        model.erase(model.begin());
      }
      ASSERT_EQ(fired, expected);
    }
    ASSERT_EQ(d.size(), model.size());
    if (!model.empty()) {
      ASSERT_EQ(d.NextTime(), model.begin()->first.first);
    }
    for (int e = 0; e < kExecs; ++e) {
      for (int s = 0; s < kSteps; ++s) {
        const StepState& st = execs[static_cast<size_t>(e)]->steps[static_cast<size_t>(s)];
        const int key = (e * kSteps + s) * kKinds;
        ASSERT_EQ(st.timer_is_deadline, armed.count(key + 0) == 1);
        ASSERT_EQ(st.heartbeat_armed, armed.count(key + 1) == 1);
        ASSERT_EQ(st.slow_armed, armed.count(key + 2) == 1);
      }
    }
  }
  EXPECT_GT(expected.size(), 1'000u);
}

}  // namespace
}  // namespace baton::engine
