#include <baton/event_loop.h>

#include <gtest/gtest.h>

#include <thread>
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
}  // namespace baton
