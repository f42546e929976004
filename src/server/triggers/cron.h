// Cron schedules and time zones: when does a cron trigger fire next.
//
// A CronSchedule is a parsed standard 5-field cron expression. A TimeZone maps UTC
// instants to local wall time and back, from the system's TZif files. NextFireTime
// combines them: the next instant whose local wall time matches the schedule.
//
// Expected failures (a bad expression, an unknown zone) are Status values.
//
// Threading: every type here is immutable once built and safe to share between threads.
#pragma once

#include <baton/clock.h>
#include <baton/status.h>

#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton::server {

// A wall-clock reading, proleptic Gregorian. month 1-12, day 1-31, hour 0-23, minute
// and second 0-59.
struct CivilTime {
  int year = 1970;
  int month = 1;
  int day = 1;
  int hour = 0;
  int minute = 0;
  int second = 0;
  bool operator==(const CivilTime&) const = default;
};

// 0 = Sunday ... 6 = Saturday.
int DayOfWeek(int year, int month, int day);

// ---------------------------------------------------------------------------------------
// Cron expressions.
//
//   minute hour day-of-month month day-of-week
//
// Fields are separated by spaces or tabs. Each field is `*` or a comma-separated list
// of elements; an element is a value `N`, a range `N-M` (inclusive, N <= M), either of
// those or `*` followed by a step `/S` (every S-th value of the range; `N/S` means
// N through the field's maximum). Ranges:
//   minute 0-59, hour 0-23, day-of-month 1-31, month 1-12 or JAN-DEC,
//   day-of-week 0-7 or SUN-SAT (0 and 7 are both Sunday).
// Names are three letters, case-insensitive, and only valid in their own field.
// Macros (case-insensitive), which stand alone:
//   @yearly, @annually = "0 0 1 1 *"     @monthly = "0 0 1 * *"
//   @weekly = "0 0 * * 0"                @daily, @midnight = "0 0 * * *"
//   @hourly = "0 * * * *"
// @reboot is not supported.
//
// Day-of-month and day-of-week follow Vixie cron: if either field starts with `*`
// (so `*/2` counts as `*` here, as in Vixie cron and cronie), a day must match both;
// if neither does, a day matches when EITHER matches ("0 0 13 * FRI" fires on every
// 13th and on every Friday).
struct CronSchedule {
  std::string text;                // the expression exactly as given, for display
  std::bitset<60> minutes;         // bit m: minute m
  std::bitset<24> hours;           // bit h: hour h
  std::bitset<32> days_of_month;   // bits 1-31 (bit 0 unused)
  std::bitset<13> months;          // bits 1-12 (bit 0 unused)
  std::bitset<7> days_of_week;     // bit 0 = Sunday ... bit 6 = Saturday
  bool day_of_month_star = false;  // the day-of-month field starts with '*'
  bool day_of_week_star = false;   // the day-of-week field starts with '*'

  // Whether the date matches (months, days of month and week, the Vixie rule above).
  // The date must be valid.
  bool MatchesDay(int year, int month, int day) const;
  // Whether the wall time matches, at minute resolution: `t.second` is ignored. The
  // fields must be in range.
  bool Matches(const CivilTime& t) const;
};

// Parses `expr`. Errors are INVALID_ARGUMENT and name the field and the bad token:
//   "cron: expected 5 fields, got 4"
//   "cron: unknown macro \"@reboot\" (expected @yearly, @annually, @monthly, @weekly,
//    @daily, @midnight or @hourly)"
//   "cron: unexpected text after @daily: \"*\""
//   "cron field 2 (hour): 25 is out of range 0-23"
//   "cron field 1 (minute): \"x\" is not a number"
//   "cron field 4 (month): \"FOO\" is not a number or month name (JAN-DEC)"
//   "cron field 5 (day-of-week): \"FUN\" is not a number or weekday name (SUN-SAT)"
//   "cron field 1 (minute): empty list element in \"1,,2\""
//   "cron field 1 (minute): missing value in \"1-\""
//   "cron field 1 (minute): range 5-1 runs backwards"
//   "cron field 1 (minute): missing step in \"*/\""
//   "cron field 1 (minute): step \"x\" is not a number"
//   "cron field 1 (minute): step 0 is out of range 1-60"
Result<CronSchedule> ParseCron(std::string_view expr);

// ---------------------------------------------------------------------------------------
// Time zones.

// How a local wall time maps to UTC.
struct LocalResolution {
  enum class Kind {
    kUnique,    // it happens once: first == second
    kSkipped,   // it never happens (a spring-forward gap): first == second == the
                // instant of the transition that jumps over it
    kRepeated,  // it happens twice (a fall-back overlap): first < second
  };
  Kind kind = Kind::kUnique;
  TimeMs first = 0;
  TimeMs second = 0;
};

class TimeZone {
 public:
  // The zone's name as loaded ("UTC" for the built-in zone).
  const std::string& name() const { return name_; }

  // The offset from UTC, in seconds east (New York in winter: -18000), in force at `t`.
  int32_t OffsetSeconds(TimeMs t) const;
  // The local wall time at `t` (milliseconds dropped).
  CivilTime ToLocal(TimeMs t) const;
  // The UTC instant(s) at which the wall clock reads `local`. Fields must be in range.
  LocalResolution FromLocal(const CivilTime& local) const;

 private:
  friend std::shared_ptr<const TimeZone> UtcTimeZone();
  friend Result<std::shared_ptr<const TimeZone>> ParseTzif(std::string name,
                                                           std::string_view bytes);
  friend Result<std::shared_ptr<const TimeZone>> ParsePosixTimeZone(std::string name,
                                                                    std::string_view rule);

  // A day in a POSIX TZ rule: Jn, n or Mm.w.d, at `time` seconds past local midnight.
  struct RuleDate {
    enum class Kind { kJulian1, kJulian0, kMonthWeekDay };
    Kind kind = Kind::kMonthWeekDay;
    int day = 0;  // kJulian1: 1-365 (no Feb 29); kJulian0: 0-365
    int month = 0, week = 0, weekday = 0;
    int32_t time = 7200;
  };
  // A POSIX TZ rule ("EST5EDT,M3.2.0,M11.1.0"), offsets in seconds east.
  struct PosixRule {
    int32_t std_offset = 0;
    bool has_dst = false;
    int32_t dst_offset = 0;
    RuleDate start, end;
  };
  struct RuleTransition {
    int64_t at = 0;  // UTC seconds
    bool dst_starts = false;
  };
  struct Transition {
    int64_t at;  // UTC seconds
    int32_t before, after;
  };

  TimeZone() = default;

  int32_t OffsetAtSeconds(int64_t t) const;
  int32_t RuleOffset(int64_t t) const;
  std::array<RuleTransition, 2> RuleTransitions(int year) const;  // start, end
  std::vector<Transition> TransitionsIn(int64_t from, int64_t to) const;
  static Result<PosixRule> ParseRule(std::string_view rule);

  std::string name_;
  int32_t initial_offset_ = 0;         // before the first transition
  std::vector<int64_t> trans_at_;      // UTC seconds, ascending
  std::vector<int32_t> trans_offset_;  // in force from trans_at_[i]
  std::optional<PosixRule> rule_;      // after the last transition (or always, if none)
};

// The built-in UTC zone.
std::shared_ptr<const TimeZone> UtcTimeZone();

// Loads a zone by IANA name: "UTC", "Etc/UTC" and "" are built in; anything else is
// read from /usr/share/zoneinfo/<name> (package tzdata). Errors: INVALID_ARGUMENT for a
// name that contains "..", starts with '/' or has characters other than letters,
// digits and "/_-+."; NOT_FOUND ("time zone \"Mars/Base\" not found") when there is no
// such file; IO_ERROR when it cannot be read or is not a valid TZif file.
Result<std::shared_ptr<const TimeZone>> LoadTimeZone(std::string_view name);
// The same, from the zoneinfo directory `dir` (tests).
Result<std::shared_ptr<const TimeZone>> LoadTimeZone(std::string_view name, const std::string& dir);

// Builds a zone from the contents of a TZif file (RFC 8536). Reads the 64-bit data of
// version 2+ files, the 32-bit data of version 1 files, and the footer's POSIX TZ rule,
// which governs instants after the last transition. Leap-second records are ignored.
// Errors are IO_ERROR naming the zone.
Result<std::shared_ptr<const TimeZone>> ParseTzif(std::string name, std::string_view bytes);

// Builds a zone from a POSIX TZ rule: "STD offset [DST [offset] ,start[/time],end[/time]]"
// with names alphabetic or <quoted>, offsets [+-]hh[:mm[:ss]] (west positive, as in
// POSIX), dates Jn, n or Mm.w.d, and times [+-]hh[:mm[:ss]] up to 167 hours (RFC 8536).
// Errors are INVALID_ARGUMENT.
Result<std::shared_ptr<const TimeZone>> ParsePosixTimeZone(std::string name, std::string_view rule);

// ---------------------------------------------------------------------------------------
// Next fire time.

// How many years ahead NextFireTime looks before it concludes "never". Eight years
// cover every Feb 29 (2096 to 2104 is the longest gap between leap years).
inline constexpr int kCronSearchYears = 8;

// The first instant strictly after `after` whose local wall time in `tz` matches
// `schedule` (seconds and milliseconds 0 on the wall clock). Returns 0 when none comes
// within the local calendar years up to kCronSearchYears after that of `after` (an
// impossible schedule such as "0 0 30 2 *"), or when `after` is outside years 1-9999.
//
// Daylight saving time:
//  - a local time that does not exist (skipped by a spring-forward gap) does not fire
//    that day: "30 2 * * *" in New York skips the day clocks go from 02:00 to 03:00;
//  - a local time that happens twice (a fall-back overlap) fires once, at its first
//    occurrence: "30 1 * * *" fires at 01:30 daylight time, not again at 01:30
//    standard time. So "*/15 * * * *" pauses for the repeated hour.
// Cost: proportional to the number of months, matching days and matching hours
// passed over, not to the minutes (at most ~1,500 steps for an impossible schedule).
TimeMs NextFireTime(const CronSchedule& schedule, const TimeZone& tz, TimeMs after);

}  // namespace baton::server
