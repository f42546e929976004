#include <baton/event_loop.h>

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace baton {
namespace {

TEST(SimEventLoop, FiresTimersInVirtualTimeOrder) {
  SimClock clock(1000);
  SimEventLoop loop(&clock);
  std::vector<int> order;
  loop.ScheduleAt(5000, [&] { order.push_back(2); });
  loop.ScheduleAt(2000, [&] { order.push_back(1); });
  TimerId cancelled = loop.ScheduleAt(3000, [&] { order.push_back(99); });
  loop.CancelTimer(cancelled);
  loop.Post([&] { order.push_back(0); });
  loop.RunUntilIdle();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(clock.Now(), 5000);
}

TEST(TimerQueue, EqualDeadlinesFireInSchedulingOrder) {
  TimerQueue q;
  std::vector<int> order;
  std::vector<TimerId> ids;
  for (int i = 0; i < 100; ++i) ids.push_back(q.Add(50, [&order, i] { order.push_back(i); }));
  for (int i = 0; i < 100; i += 3) q.Cancel(ids[i]);
  while (auto task = q.PopDue(50)) task();
  std::vector<int> expected;
  for (int i = 0; i < 100; ++i)
    if (i % 3 != 0) expected.push_back(i);
  EXPECT_EQ(order, expected);
  EXPECT_TRUE(q.empty());
}

// A slot is reused once its timer fires or is cancelled; the id that named the old timer
// must not reach the new one.
TEST(TimerQueue, AStaleIdCancelsNothingEvenWhenItsSlotIsReused) {
  TimerQueue q;
  int fired = 0;
  const TimerId first = q.Add(10, [&] { ++fired; });
  ASSERT_NE(first, 0u);
  q.PopDue(10)();
  const TimerId second = q.Add(20, [&] { fired += 10; });
  EXPECT_NE(second, first);
  q.Cancel(first);  // stale: fired already
  q.Cancel(first);
  ASSERT_EQ(q.size(), 1u);
  q.Cancel(second);
  q.Cancel(second);  // twice is nothing
  const TimerId third = q.Add(30, [&] { fired += 100; });
  q.Cancel(second);  // stale: cancelled already
  q.Cancel(0);
  q.Cancel(~TimerId{0});
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q.NextTime(), 30);
  EXPECT_EQ(q.PopDue(29), nullptr);
  q.PopDue(30)();
  EXPECT_EQ(fired, 101);
  EXPECT_NE(third, 0u);
}

// Against a model (an ordered map by (time, scheduling order)): random adds, cancels of
// live and stale ids, and pops, with many equal times.
TEST(TimerQueue, MatchesAnOrderedMapUnderRandomAddsCancelsAndPops) {
  TimerQueue q;
  std::map<std::pair<TimeMs, int>, int> model;  // (when, n) -> n
  std::vector<std::pair<TimerId, std::pair<TimeMs, int>>> issued;
  std::mt19937 rng(7);
  std::vector<int> fired, expected;
  TimeMs now = 0;
  for (int n = 0; n < 20'000; ++n) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 5) {
      const TimeMs when = now + static_cast<TimeMs>(rng() % 50);
      issued.push_back({q.Add(when, [&fired, n] { fired.push_back(n); }), {when, n}});
      model.emplace(std::make_pair(when, n), n);
    } else if (op < 8 && !issued.empty()) {
      const auto& [id, key] = issued[rng() % issued.size()];
      q.Cancel(id);  // live or stale: the model drops it only if live
      model.erase(key);
    } else {
      now += static_cast<TimeMs>(rng() % 5);
      while (auto task = q.PopDue(now)) task();
      while (!model.empty() && model.begin()->first.first <= now) {
        expected.push_back(model.begin()->second);
        model.erase(model.begin());
      }
      ASSERT_EQ(fired, expected);
    }
    ASSERT_EQ(q.size(), model.size());
    if (!model.empty()) {
      ASSERT_EQ(q.NextTime(), model.begin()->first.first);
    }
  }
  EXPECT_GT(expected.size(), 1'000u);
}

TEST(SimEventLoop, StopsAtLimit) {
  SimClock clock(0);
  SimEventLoop loop(&clock);
  int fired = 0;
  loop.ScheduleAt(10, [&] { ++fired; });
  loop.ScheduleAt(1'000'000, [&] { ++fired; });
  loop.RunUntilIdle(100);
  EXPECT_EQ(fired, 1);
  EXPECT_TRUE(loop.HasTimers());
}

TEST(RealEventLoop, RunsPostedTasksFromOtherThreadsAndStops) {
  RealEventLoop loop;
  int count = 0;
  std::thread producer([&] {
    for (int i = 0; i < 100; ++i) loop.Post([&] { ++count; });
    loop.Post([&] { loop.Stop(); });
  });
  loop.Run();
  producer.join();
  EXPECT_EQ(count, 100);
}

TEST(RealEventLoop, FiresTimer) {
  RealEventLoop loop;
  bool fired = false;
  loop.Post([&] {
    loop.ScheduleAfter(Duration(5), [&] {
      fired = true;
      loop.Stop();
    });
  });
  loop.Run();
  EXPECT_TRUE(fired);
}

TEST(SimEventLoop, TimersWaitOnTheMonotonicClockNotTheWallClock) {
  SimClock clock(1'700'000'000'000);
  SimEventLoop loop(&clock);
  int fired = 0;
  loop.ScheduleAfter(Duration(1000), [&] { ++fired; });
  clock.JumpWall(Duration(3'600'000));  // an hour forward: nothing is due
  loop.RunReady();
  EXPECT_EQ(fired, 0);
  clock.JumpWall(Duration(-7'200'000));  // two hours back: still due in 1 s
  const int64_t mono = clock.MonotonicMs();
  loop.RunUntilIdle();
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(clock.MonotonicMs() - mono, 1000);
  // A timer armed after the jumps is relative to the wall clock as it is then.
  loop.ScheduleAt(clock.Now() + 500, [&] { ++fired; });
  loop.RunUntilIdle();
  EXPECT_EQ(fired, 2);
  EXPECT_EQ(clock.MonotonicMs() - mono, 1500);
}

}  // namespace
// The idle hook runs once the posted tasks are done, before the loop waits; a task it
// posts runs instead of the wait.
TEST(RealEventLoop, IdleHookRunsBeforeWaitingAndMayPost) {
  RealEventLoop loop;
  std::vector<std::string> seen;  // the loop's thread only
  int idles = 0;
  loop.SetIdleHook([&] {
    seen.emplace_back("idle");
    if (++idles == 1) loop.Post([&] { seen.emplace_back("posted by the hook"); });
    if (idles == 2) loop.Stop();
  });
  loop.Post([&] { seen.emplace_back("task"); });
  std::thread t([&] { loop.Run(); });
  t.join();
  EXPECT_EQ(seen, (std::vector<std::string>{"task", "idle", "posted by the hook", "idle"}));
}

// The busy hook runs when the loop, done with its tasks, finds others posted meanwhile:
// before it runs them, where it would otherwise have called the idle hook.
TEST(RealEventLoop, BusyHookRunsWhenMoreTasksArePostedMeanwhile) {
  RealEventLoop loop;
  std::vector<std::string> seen;  // the loop's thread only
  loop.SetIdleHook([&] {
    seen.emplace_back("idle");
    loop.Stop();
  });
  loop.SetBusyHook([&] { seen.emplace_back("busy"); });
  loop.Post([&] {
    seen.emplace_back("first");
    loop.Post([&] { seen.emplace_back("posted by the first"); });
  });
  std::thread t([&] { loop.Run(); });
  t.join();
  EXPECT_EQ(seen, (std::vector<std::string>{"first", "busy", "posted by the first", "idle"}));
}

}  // namespace baton
