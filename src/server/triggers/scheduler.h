// Fires cron schedules: starts their workflow at each fire time, on the engine's loop.
//
// Fire times come from the stored `next_fire_at`, so they survive restarts. Each fire
// starts its execution with the idempotency key "schedule/<id>/<fire time>": a fire
// that is repeated after a crash (started, but `next_fire_at` not yet moved on) returns
// the first execution instead of starting a second one.
//
// Overlap, when the previous fire's execution is still running: `skip` starts nothing,
// `allow` starts another, `cancel_old` cancels the old one and starts the new one.
// Missed fires (the server was down past `next_fire_at`): `skip` moves on to the next
// fire after now; `once` fires once at start for all of them, then moves on.
//
// Threading: every call on the loop's thread.
#pragma once

#include "server/triggers/cron.h"

#include <baton/clock.h>
#include <baton/store.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace baton::server {

// The parsed form of a record; INVALID_ARGUMENT naming the field when it is invalid.
struct ParsedSchedule {
  CronSchedule cron;
  std::shared_ptr<const TimeZone> zone;
};
Result<ParsedSchedule> ParseSchedule(const ScheduleRecord& record);

class Scheduler {
 public:
  // What the scheduler needs of the server.
  struct Hooks {
    // Starts an execution for `schedule` with `idempotency_key`; `done` gets its id.
    std::function<void(const ScheduleRecord& schedule, const std::string& idempotency_key,
                       std::function<void(Result<std::string>)> done)>
        start;
    // Whether the execution is unfinished (pending, running, paused).
    std::function<bool(const std::string& execution_id)> running;
    std::function<void(const std::string& execution_id, const std::string& reason)> cancel;
    // Several instances on one database: whether this one fires schedules now (one holds
    // the role; Load() again when it is taken). Unset: always.
    std::function<bool()> leading;
  };

  Scheduler(EventLoop* loop, Store* store, Hooks hooks)
      : loop_(loop), store_(store), hooks_(std::move(hooks)) {}
  ~Scheduler();

  // Loads every stored schedule, applies the missed-fire policy, arms the timers. Again
  // later: the store is the truth (schedules another instance added, changed or removed).
  Status Load();
  // A new or changed schedule (already validated); computes its next fire and stores it.
  Status Put(ScheduleRecord record);
  void Remove(const std::string& id);
  // The record as the scheduler holds it (next_fire_at kept current).
  std::optional<ScheduleRecord> Get(const std::string& id) const;

 private:
  struct Entry {
    ScheduleRecord record;
    ParsedSchedule parsed;
    TimerId timer = 0;
  };
  void Arm(Entry& e);
  void Fire(const std::string& id, TimeMs fire_time, bool advance);
  void Save(const ScheduleRecord& r);

  EventLoop* loop_;
  Store* store_;
  Hooks hooks_;
  std::map<std::string, Entry> entries_;
};

}  // namespace baton::server
