#include "server/triggers/scheduler.h"

#include <algorithm>
#include <cstdio>

namespace baton::server {

Result<ParsedSchedule> ParseSchedule(const ScheduleRecord& r) {
  ParsedSchedule p;
  auto cron = ParseCron(r.cron);
  if (!cron.ok()) return Status(errc::kInvalidArgument, "field 'cron': " + cron.status().message());
  p.cron = std::move(cron.value());
  auto zone = LoadTimeZone(r.timezone);
  if (!zone.ok()) {
    return Status(errc::kInvalidArgument, "field 'timezone': " + zone.status().message());
  }
  p.zone = std::move(zone.value());
  if (r.overlap != "skip" && r.overlap != "allow" && r.overlap != "cancel_old") {
    return Status(errc::kInvalidArgument,
                  "field 'overlap': must be skip, allow or cancel_old, got '" + r.overlap + "'");
  }
  if (r.catchup != "skip" && r.catchup != "once") {
    return Status(errc::kInvalidArgument,
                  "field 'catchup': must be skip or once, got '" + r.catchup + "'");
  }
  return p;
}

Scheduler::~Scheduler() {
  for (auto& [id, e] : entries_) {
    if (e.timer) loop_->CancelTimer(e.timer);
  }
}

Status Scheduler::Load() {
  auto all = store_->ListSchedules("");
  if (!all.ok()) return all.status();
  const TimeMs now = loop_->Now();
  const bool leading = !hooks_.leading || hooks_.leading();  // else another instance fires
  for (auto it = entries_.begin(); it != entries_.end();) {
    const bool stored = std::any_of(all->begin(), all->end(),
                                    [&](const ScheduleRecord& r) { return r.id == it->first; });
    if (stored) {
      ++it;
      continue;
    }
    if (it->second.timer) loop_->CancelTimer(it->second.timer);
    it = entries_.erase(it);
  }
  for (ScheduleRecord& r : *all) {
    auto parsed = ParseSchedule(r);
    if (!parsed.ok()) {  // stored by an older build that accepted it: keep it, idle
      std::fprintf(stderr, "baton: schedule %s: %s (not armed)\n", r.id.c_str(),
                   parsed.status().message().c_str());
      continue;
    }
    Entry& e = entries_[r.id];
    e.record = std::move(r);
    e.parsed = std::move(parsed.value());
    if (leading && e.record.next_fire_at != 0 && e.record.next_fire_at <= now) {
      if (e.record.catchup == "once") {
        // One run for everything missed, keyed by the first missed fire time.
        Fire(e.record.id, e.record.next_fire_at, /*advance=*/true);
        continue;
      }
      e.record.next_fire_at = NextFireTime(e.parsed.cron, *e.parsed.zone, now);
      Save(e.record);
    }
    Arm(e);
  }
  return Status::Ok();
}

Status Scheduler::Put(ScheduleRecord record) {
  auto parsed = ParseSchedule(record);
  if (!parsed.ok()) return parsed.status();
  Remove(record.id);
  record.next_fire_at = NextFireTime(parsed->cron, *parsed->zone, loop_->Now());
  WriteBatch b;
  b.schedules.push_back(record);
  if (Status s = store_->Commit(b); !s.ok()) return s;
  Entry& e = entries_[record.id];
  e.record = std::move(record);
  e.parsed = std::move(parsed.value());
  Arm(e);
  return Status::Ok();
}

void Scheduler::Remove(const std::string& id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  if (it->second.timer) loop_->CancelTimer(it->second.timer);
  entries_.erase(it);
}

std::optional<ScheduleRecord> Scheduler::Get(const std::string& id) const {
  auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  return it->second.record;
}

void Scheduler::Arm(Entry& e) {
  if (e.timer) loop_->CancelTimer(e.timer);
  e.timer = 0;
  if (e.record.next_fire_at == 0) return;  // never fires again (an impossible date)
  const std::string id = e.record.id;
  const TimeMs at = e.record.next_fire_at;
  // A schedule follows the wall clock, but loop timers wait on the monotonic one: wake
  // at least once a minute and fire only when the wall clock has reached the fire time.
  // A clock stepped forward fires the minute it jumped over once, at the next wake; a
  // clock stepped back does not fire early (issue 11, defect 6).
  constexpr TimeMs kRecheckMs = 60'000;
  const TimeMs wake = std::min(at, loop_->Now() + kRecheckMs);
  e.timer = loop_->ScheduleAt(wake, [this, id, at] {
    auto it = entries_.find(id);
    if (it == entries_.end()) return;
    it->second.timer = 0;
    if (loop_->Now() < at) return Arm(it->second);
    if (hooks_.leading && !hooks_.leading()) {
      // Another instance fires it. Look again later: this one reloads every schedule
      // when it takes the role.
      it->second.timer = loop_->ScheduleAt(loop_->Now() + kRecheckMs, [this, id] {
        if (auto again = entries_.find(id); again != entries_.end()) {
          again->second.timer = 0;
          Arm(again->second);
        }
      });
      return;
    }
    Fire(id, at, true);
  });
}

void Scheduler::Save(const ScheduleRecord& r) {
  WriteBatch b;
  b.schedules.push_back(r);
  if (Status s = store_->Commit(b); !s.ok()) {
    // The fire itself is idempotent, so a lost update only means a repeated fire time
    // after a restart, which starts nothing new.
    std::fprintf(stderr, "baton: schedule %s: %s\n", r.id.c_str(), s.message().c_str());
  }
}

void Scheduler::Fire(const std::string& id, TimeMs fire_time, bool advance) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  e.timer = 0;
  ScheduleRecord& r = e.record;
  bool start = true;
  if (!r.last_execution_id.empty() && hooks_.running(r.last_execution_id)) {
    if (r.overlap == "skip") {
      start = false;
    } else if (r.overlap == "cancel_old") {
      hooks_.cancel(r.last_execution_id, "replaced by the next run of schedule " + r.name);
    }
  }
  r.last_fire_at = fire_time;
  if (advance) r.next_fire_at = NextFireTime(e.parsed.cron, *e.parsed.zone, loop_->Now());
  if (!start) {
    Save(r);
    Arm(e);
    return;
  }
  const std::string key = "schedule/" + r.id + "/" + std::to_string(fire_time);
  hooks_.start(r, key, [this, id](Result<std::string> started) {
    auto found = entries_.find(id);
    if (found == entries_.end()) return;
    Entry& entry = found->second;
    if (started.ok()) {
      entry.record.last_execution_id = *started;
    } else {
      std::fprintf(stderr, "baton: schedule %s could not start %s: %s\n", id.c_str(),
                   entry.record.workflow.c_str(), started.status().message().c_str());
    }
    Save(entry.record);
  });
  Arm(e);
}

}  // namespace baton::server
