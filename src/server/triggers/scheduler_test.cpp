// The scheduler in virtual time: fire times, overlap policies, missed fires, restarts.
#include "server/triggers/scheduler.h"

#include <baton/event_loop.h>
#include <baton/memory_store.h>

#include <gtest/gtest.h>

#include <set>

namespace baton::server {
namespace {

// 2026-01-05 10:00:00 UTC, a Monday.
constexpr TimeMs kStart = 1'767'607'200'000;
constexpr TimeMs kMinute = 60'000;

struct Fixture {
  SimClock clock{kStart};
  std::unique_ptr<SimEventLoop> loop = std::make_unique<SimEventLoop>(&clock);
  std::unique_ptr<Store> store = NewMemoryStore();
  std::vector<std::pair<TimeMs, std::string>> started;  // (when, idempotency key)
  std::set<std::string> keys_seen;
  std::set<std::string> running;
  std::vector<std::string> cancelled;
  std::unique_ptr<Scheduler> scheduler;

  Fixture() { Reset(); }
  // A fresh scheduler over the same store, at the clock's current time (a restart).
  void Reset() {
    scheduler.reset();
    loop = std::make_unique<SimEventLoop>(&clock);
    Scheduler::Hooks hooks;
    hooks.start = [this](const ScheduleRecord&, const std::string& key,
                         std::function<void(Result<std::string>)> done) {
      // Like the server: a repeated key returns the first execution.
      std::string id = "exec-" + key;
      if (keys_seen.insert(key).second) {
        started.emplace_back(clock.Now(), key);
        running.insert(id);
      }
      done(id);
    };
    hooks.running = [this](const std::string& id) { return running.count(id) > 0; };
    hooks.cancel = [this](const std::string& id, const std::string&) {
      cancelled.push_back(id);
      running.erase(id);
    };
    scheduler = std::make_unique<Scheduler>(loop.get(), store.get(), hooks);
  }
  ScheduleRecord Make(const std::string& cron, const std::string& overlap = "allow",
                      const std::string& catchup = "skip") {
    ScheduleRecord r;
    r.id = "sch_1";
    r.name = "every";
    r.workflow = "wf";
    r.cron = cron;
    r.overlap = overlap;
    r.catchup = catchup;
    return r;
  }
  void FinishAll() { running.clear(); }
};

TEST(Scheduler, FiresAtEachCronTimeAndStoresTheNextOne) {
  Fixture f;
  ASSERT_TRUE(f.scheduler->Put(f.Make("*/15 * * * *")).ok());
  EXPECT_EQ(f.store->ListSchedules("")->front().next_fire_at, kStart + 15 * kMinute);
  f.loop->RunUntilIdle(kStart + 61 * kMinute);
  ASSERT_EQ(f.started.size(), 4u);  // 10:15, 10:30, 10:45, 11:00
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(f.started[i].first, kStart + static_cast<TimeMs>(15 * (i + 1)) * kMinute);
  }
  ScheduleRecord stored = f.store->ListSchedules("")->front();
  EXPECT_EQ(stored.next_fire_at, kStart + 75 * kMinute);
  EXPECT_EQ(stored.last_fire_at, kStart + 60 * kMinute);
  EXPECT_EQ(stored.last_execution_id, "exec-" + f.started.back().second);
}

TEST(Scheduler, OverlapPolicies) {
  for (const char* policy : {"skip", "allow", "cancel_old"}) {
    Fixture f;
    ASSERT_TRUE(f.scheduler->Put(f.Make("* * * * *", policy)).ok());
    f.loop->RunUntilIdle(kStart + 3 * kMinute);  // 3 fires, none of the runs finishes
    if (std::string(policy) == "skip") {
      EXPECT_EQ(f.started.size(), 1u) << policy;
    } else {
      EXPECT_EQ(f.started.size(), 3u) << policy;
    }
    EXPECT_EQ(f.cancelled.size(), std::string(policy) == "cancel_old" ? 2u : 0u) << policy;
    f.FinishAll();
    f.loop->RunUntilIdle(kStart + 4 * kMinute);
    EXPECT_EQ(f.started.size(), std::string(policy) == "skip" ? 2u : 4u) << policy;
  }
}

TEST(Scheduler, MissedFiresAfterDowntimeRunOnceOrNotAtAll) {
  for (const char* catchup : {"skip", "once"}) {
    Fixture f;
    ASSERT_TRUE(f.scheduler->Put(f.Make("0 * * * *", "allow", catchup)).ok());  // hourly
    f.loop->RunUntilIdle(kStart + 61 * kMinute);
    ASSERT_EQ(f.started.size(), 1u);
    // Down from 11:01 to 15:30: the 12:00 ... 15:00 fires were missed.
    f.clock.Set(kStart + 330 * kMinute);
    f.Reset();
    ASSERT_TRUE(f.scheduler->Load().ok());
    f.loop->RunReady();
    const bool once = std::string(catchup) == "once";
    EXPECT_EQ(f.started.size(), once ? 2u : 1u) << catchup;
    if (once) {  // keyed by the first missed fire, 12:00
      EXPECT_EQ(f.started.back().second,
                "schedule/sch_1/" + std::to_string(kStart + 120 * kMinute));
    }
    // Either way the next fire is 16:00, not one of the missed ones.
    EXPECT_EQ(f.store->ListSchedules("")->front().next_fire_at, kStart + 360 * kMinute);
    f.loop->RunUntilIdle(kStart + 361 * kMinute);
    EXPECT_EQ(f.started.size(), once ? 3u : 2u) << catchup;
  }
}

TEST(Scheduler, ARepeatedFireAfterACrashStartsNothingNew) {
  Fixture f;
  ASSERT_TRUE(f.scheduler->Put(f.Make("*/5 * * * *", "allow", "once")).ok());
  f.loop->RunUntilIdle(kStart + 5 * kMinute);
  ASSERT_EQ(f.started.size(), 1u);
  // As if the process died after starting the run but before moving next_fire_at on.
  ScheduleRecord stale = f.store->ListSchedules("")->front();
  stale.next_fire_at = kStart + 5 * kMinute;
  WriteBatch b;
  b.schedules = {stale};
  ASSERT_TRUE(f.store->Commit(b).ok());
  f.clock.Set(kStart + 6 * kMinute);
  f.Reset();
  ASSERT_TRUE(f.scheduler->Load().ok());
  f.loop->RunReady();
  EXPECT_EQ(f.started.size(), 1u);  // the same key: the first execution, not a second
  EXPECT_EQ(f.store->ListSchedules("")->front().next_fire_at, kStart + 10 * kMinute);
}

TEST(Scheduler, NamedZonesAndBadFieldsAreChecked) {
  Fixture f;
  ScheduleRecord r = f.Make("0 9 * * *");
  r.timezone = "Asia/Kolkata";  // 09:00 IST = 03:30 UTC
  ASSERT_TRUE(f.scheduler->Put(r).ok());
  EXPECT_EQ(f.store->ListSchedules("")->front().next_fire_at,
            kStart + (24 * 60 - 10 * 60 + 3 * 60 + 30) * kMinute);
  r.cron = "61 * * * *";
  EXPECT_NE(f.scheduler->Put(r).message().find("field 'cron'"), std::string::npos);
  r.cron = "* * * * *";
  r.timezone = "Mars/Olympus";
  EXPECT_NE(f.scheduler->Put(r).message().find("field 'timezone'"), std::string::npos);
  r.timezone = "UTC";
  r.overlap = "queue";
  EXPECT_NE(f.scheduler->Put(r).message().find("field 'overlap'"), std::string::npos);
}

}  // namespace
}  // namespace baton::server
