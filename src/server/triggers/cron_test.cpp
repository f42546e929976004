#include "server/triggers/cron.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

namespace baton::server {
namespace {

// UTC civil time -> TimeMs, through std::chrono (independent of the code under test).
TimeMs Utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  using namespace std::chrono;
  const sys_days day = year{y} / mo / d;
  return duration_cast<milliseconds>(day.time_since_epoch()).count() +
         ((h * 60 + mi) * 60 + s) * 1000LL;
}

CronSchedule Cron(std::string_view expr) {
  Result<CronSchedule> r = ParseCron(expr);
  EXPECT_TRUE(r.ok()) << expr << ": " << r.status().ToString();
  return r.ok() ? *r : CronSchedule{};
}

std::string CronError(std::string_view expr) {
  Result<CronSchedule> r = ParseCron(expr);
  EXPECT_FALSE(r.ok()) << expr;
  EXPECT_EQ(r.status().code(), errc::kInvalidArgument) << expr;
  return r.status().message();
}

std::shared_ptr<const TimeZone> Zone(std::string_view name) {
  Result<std::shared_ptr<const TimeZone>> r = LoadTimeZone(name);
  EXPECT_TRUE(r.ok()) << name << ": " << r.status().ToString();
  return r.ok() ? *r : UtcTimeZone();
}

std::shared_ptr<const TimeZone> Posix(std::string_view rule) {
  Result<std::shared_ptr<const TimeZone>> r = ParsePosixTimeZone("test", rule);
  EXPECT_TRUE(r.ok()) << rule << ": " << r.status().ToString();
  return r.ok() ? *r : UtcTimeZone();
}

TimeMs Next(std::string_view expr, TimeMs after, std::string_view zone = "UTC") {
  return NextFireTime(Cron(expr), *Zone(zone), after);
}

std::string Bits(const auto& bits) {
  std::string out;
  for (size_t i = 0; i < bits.size(); ++i) {
    if (bits[i]) out += (out.empty() ? "" : ",") + std::to_string(i);
  }
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---------------------------------------------------------------------------------------
// Parsing

TEST(CronParse, Star) {
  CronSchedule c = Cron("* * * * *");
  EXPECT_TRUE(c.minutes.all());
  EXPECT_TRUE(c.hours.all());
  EXPECT_EQ(c.days_of_month.count(), 31u);
  EXPECT_FALSE(c.days_of_month[0]);
  EXPECT_EQ(c.months.count(), 12u);
  EXPECT_FALSE(c.months[0]);
  EXPECT_TRUE(c.days_of_week.all());
  EXPECT_TRUE(c.day_of_month_star);
  EXPECT_TRUE(c.day_of_week_star);
}

TEST(CronParse, ValuesListsAndRanges) {
  CronSchedule c = Cron("5 0,12,23 1-3,15,31 2 1-5");
  EXPECT_EQ(Bits(c.minutes), "5");
  EXPECT_EQ(Bits(c.hours), "0,12,23");
  EXPECT_EQ(Bits(c.days_of_month), "1,2,3,15,31");
  EXPECT_EQ(Bits(c.months), "2");
  EXPECT_EQ(Bits(c.days_of_week), "1,2,3,4,5");
  EXPECT_FALSE(c.day_of_month_star);
  EXPECT_FALSE(c.day_of_week_star);
  EXPECT_EQ(Bits(Cron("0-59 0-23 1-31 1-12 0-6").minutes), Bits(Cron("* * * * *").minutes));
  EXPECT_EQ(Bits(Cron("07 * * * *").minutes), "7");  // leading zero
  EXPECT_EQ(Bits(Cron("59,0,30,0 * * * *").minutes), "0,30,59");
}

TEST(CronParse, Steps) {
  EXPECT_EQ(Bits(Cron("*/15 * * * *").minutes), "0,15,30,45");
  EXPECT_EQ(Bits(Cron("10-50/10 * * * *").minutes), "10,20,30,40,50");
  EXPECT_EQ(Bits(Cron("10-45/10 * * * *").minutes), "10,20,30,40");
  EXPECT_EQ(Bits(Cron("5/20 * * * *").minutes), "5,25,45");  // N/S: N to the maximum
  EXPECT_EQ(Bits(Cron("* */6 * * *").hours), "0,6,12,18");
  EXPECT_EQ(Bits(Cron("* * */10 * *").days_of_month), "1,11,21,31");
  EXPECT_EQ(Bits(Cron("* * * */3 *").months), "1,4,7,10");
  EXPECT_EQ(Bits(Cron("* * * * */2").days_of_week), "0,2,4,6");
  EXPECT_EQ(Bits(Cron("*/60 * * * *").minutes), "0");
  EXPECT_EQ(Bits(Cron("0-10/5,*/20 * * * *").minutes), "0,5,10,20,40");
  EXPECT_EQ(Bits(Cron("* * * JAN-DEC/4 *").months), "1,5,9");
}

TEST(CronParse, Names) {
  EXPECT_EQ(Bits(Cron("* * * JAN,feb,Mar,aPr * ").months), "1,2,3,4");
  EXPECT_EQ(Bits(Cron("* * * may-AUG *").months), "5,6,7,8");
  EXPECT_EQ(Bits(Cron("* * * sep,oct,nov,dec *").months), "9,10,11,12");
  EXPECT_EQ(Bits(Cron("* * * * MON-FRI").days_of_week), "1,2,3,4,5");
  EXPECT_EQ(Bits(Cron("* * * * sun,sat").days_of_week), "0,6");
  EXPECT_EQ(Bits(Cron("* * * * Tue,wed,THU").days_of_week), "2,3,4");
  EXPECT_EQ(Bits(Cron("* * * 1-MAR *").months), "1,2,3");  // numbers and names mix
}

TEST(CronParse, SundayIsZeroAndSeven) {
  EXPECT_EQ(Bits(Cron("* * * * 0").days_of_week), "0");
  EXPECT_EQ(Bits(Cron("* * * * 7").days_of_week), "0");
  EXPECT_EQ(Bits(Cron("* * * * 5-7").days_of_week), "0,5,6");
  EXPECT_EQ(Bits(Cron("* * * * 0-7").days_of_week), "0,1,2,3,4,5,6");
  EXPECT_EQ(Bits(Cron("* * * * FRI-7").days_of_week), "0,5,6");
}

TEST(CronParse, Macros) {
  const auto same = [](std::string_view macro, std::string_view expr) {
    CronSchedule a = Cron(macro), b = Cron(expr);
    EXPECT_EQ(a.minutes, b.minutes) << macro;
    EXPECT_EQ(a.hours, b.hours) << macro;
    EXPECT_EQ(a.days_of_month, b.days_of_month) << macro;
    EXPECT_EQ(a.months, b.months) << macro;
    EXPECT_EQ(a.days_of_week, b.days_of_week) << macro;
    EXPECT_EQ(a.day_of_month_star, b.day_of_month_star) << macro;
    EXPECT_EQ(a.day_of_week_star, b.day_of_week_star) << macro;
    EXPECT_EQ(a.text, macro);
  };
  same("@yearly", "0 0 1 1 *");
  same("@annually", "0 0 1 1 *");
  same("@monthly", "0 0 1 * *");
  same("@weekly", "0 0 * * 0");
  same("@daily", "0 0 * * *");
  same("@midnight", "0 0 * * *");
  same("@hourly", "0 * * * *");
  same("@DAILY", "0 0 * * *");
  same("  @hourly\t", "0 * * * *");
  EXPECT_EQ(Bits(Cron("@weekly").days_of_week), "0");
  EXPECT_TRUE(Cron("@hourly").hours.all());
}

TEST(CronParse, WhitespaceAndText) {
  CronSchedule c = Cron("  1\t2   3 4  5 ");
  EXPECT_EQ(c.text, "  1\t2   3 4  5 ");
  EXPECT_EQ(Bits(c.minutes), "1");
  EXPECT_EQ(Bits(c.hours), "2");
  EXPECT_EQ(Bits(c.days_of_month), "3");
  EXPECT_EQ(Bits(c.months), "4");
  EXPECT_EQ(Bits(c.days_of_week), "5");
}

TEST(CronParse, StarFlagsFollowVixie) {
  EXPECT_TRUE(Cron("0 0 */2 * 1").day_of_month_star);  // a field starting with '*'
  EXPECT_FALSE(Cron("0 0 */2 * 1").day_of_week_star);
  EXPECT_FALSE(Cron("0 0 1-31 * 1").day_of_month_star);
  EXPECT_TRUE(Cron("0 0 1 * */1").day_of_week_star);
}

TEST(CronParse, Errors) {
  EXPECT_EQ(CronError(""), "cron: expected 5 fields, got 0");
  EXPECT_EQ(CronError("   "), "cron: expected 5 fields, got 0");
  EXPECT_EQ(CronError("* * * *"), "cron: expected 5 fields, got 4");
  EXPECT_EQ(CronError("* * * * * *"), "cron: expected 5 fields, got 6");
  EXPECT_EQ(CronError("@reboot"),
            "cron: unknown macro \"@reboot\" (expected @yearly, @annually, @monthly, @weekly, "
            "@daily, @midnight or @hourly)");
  EXPECT_EQ(CronError("@daily *"), "cron: unexpected text after @daily: \"*\"");
  // Ranges of each field.
  EXPECT_EQ(CronError("60 * * * *"), "cron field 1 (minute): 60 is out of range 0-59");
  EXPECT_EQ(CronError("* 25 * * *"), "cron field 2 (hour): 25 is out of range 0-23");
  EXPECT_EQ(CronError("* 24 * * *"), "cron field 2 (hour): 24 is out of range 0-23");
  EXPECT_EQ(CronError("* * 0 * *"), "cron field 3 (day-of-month): 0 is out of range 1-31");
  EXPECT_EQ(CronError("* * 32 * *"), "cron field 3 (day-of-month): 32 is out of range 1-31");
  EXPECT_EQ(CronError("* * * 0 *"), "cron field 4 (month): 0 is out of range 1-12");
  EXPECT_EQ(CronError("* * * 13 *"), "cron field 4 (month): 13 is out of range 1-12");
  EXPECT_EQ(CronError("* * * * 8"), "cron field 5 (day-of-week): 8 is out of range 0-7");
  EXPECT_EQ(CronError("99999999999999999999 * * * *"),
            "cron field 1 (minute): 99999999999999999999 is out of range 0-59");
  EXPECT_EQ(CronError("1,2,70 * * * *"), "cron field 1 (minute): 70 is out of range 0-59");
  EXPECT_EQ(CronError("0-60 * * * *"), "cron field 1 (minute): 60 is out of range 0-59");
  // Not numbers, names in the wrong field.
  EXPECT_EQ(CronError("x * * * *"), "cron field 1 (minute): \"x\" is not a number");
  EXPECT_EQ(CronError("-1 * * * *"), "cron field 1 (minute): missing value in \"-1\"");
  EXPECT_EQ(CronError("+1 * * * *"), "cron field 1 (minute): \"+1\" is not a number");
  EXPECT_EQ(CronError("MON * * * *"), "cron field 1 (minute): \"MON\" is not a number");
  EXPECT_EQ(CronError("* * L * *"), "cron field 3 (day-of-month): \"L\" is not a number");
  EXPECT_EQ(CronError("* * ? * *"), "cron field 3 (day-of-month): \"?\" is not a number");
  EXPECT_EQ(CronError("* * * FOO *"),
            "cron field 4 (month): \"FOO\" is not a number or month name (JAN-DEC)");
  EXPECT_EQ(CronError("* * * January *"),
            "cron field 4 (month): \"January\" is not a number or month name (JAN-DEC)");
  EXPECT_EQ(CronError("* * * MON *"),
            "cron field 4 (month): \"MON\" is not a number or month name (JAN-DEC)");
  EXPECT_EQ(CronError("* * * * FUN"),
            "cron field 5 (day-of-week): \"FUN\" is not a number or weekday name (SUN-SAT)");
  EXPECT_EQ(CronError("* * * * 1#2"),
            "cron field 5 (day-of-week): \"1#2\" is not a number or weekday name (SUN-SAT)");
  // Lists.
  EXPECT_EQ(CronError("1,,2 * * * *"), "cron field 1 (minute): empty list element in \"1,,2\"");
  EXPECT_EQ(CronError("1, * * * *"), "cron field 1 (minute): empty list element in \"1,\"");
  EXPECT_EQ(CronError("* ,1 * * *"), "cron field 2 (hour): empty list element in \",1\"");
  // Ranges.
  EXPECT_EQ(CronError("1- * * * *"), "cron field 1 (minute): missing value in \"1-\"");
  EXPECT_EQ(CronError("5-1 * * * *"), "cron field 1 (minute): range 5-1 runs backwards");
  EXPECT_EQ(CronError("* * * * FRI-MON"),
            "cron field 5 (day-of-week): range FRI-MON runs backwards");
  EXPECT_EQ(CronError("1-2-3 * * * *"), "cron field 1 (minute): \"2-3\" is not a number");
  EXPECT_EQ(CronError("*-5 * * * *"), "cron field 1 (minute): \"*\" is not a number");
  // Steps.
  EXPECT_EQ(CronError("*/ * * * *"), "cron field 1 (minute): missing step in \"*/\"");
  EXPECT_EQ(CronError("*/x * * * *"), "cron field 1 (minute): step \"x\" is not a number");
  EXPECT_EQ(CronError("*/5/2 * * * *"), "cron field 1 (minute): step \"5/2\" is not a number");
  EXPECT_EQ(CronError("*/0 * * * *"), "cron field 1 (minute): step 0 is out of range 1-60");
  EXPECT_EQ(CronError("*/61 * * * *"), "cron field 1 (minute): step 61 is out of range 1-60");
  EXPECT_EQ(CronError("* */25 * * *"), "cron field 2 (hour): step 25 is out of range 1-24");
  EXPECT_EQ(CronError("/5 * * * *"), "cron field 1 (minute): missing value in \"/5\"");
  // The first bad field is reported.
  EXPECT_EQ(CronError("* 99 * 99 *"), "cron field 2 (hour): 99 is out of range 0-23");
}

// ---------------------------------------------------------------------------------------
// Next fire time, UTC

TEST(CronNextUtc, EveryMinuteIsStrictlyAfter) {
  const TimeMs noon = Utc(2024, 1, 15, 12, 0);
  EXPECT_EQ(Next("* * * * *", noon), Utc(2024, 1, 15, 12, 1));
  EXPECT_EQ(Next("* * * * *", noon - 1), noon);
  EXPECT_EQ(Next("* * * * *", noon + 1), Utc(2024, 1, 15, 12, 1));
  EXPECT_EQ(Next("* * * * *", Utc(2024, 1, 15, 12, 0, 59) + 999), Utc(2024, 1, 15, 12, 1));
  EXPECT_EQ(Next("* * * * *", Utc(2024, 1, 15, 23, 59, 30)), Utc(2024, 1, 16));
  EXPECT_EQ(Next("* * * * *", Utc(2024, 12, 31, 23, 59)), Utc(2025, 1, 1));
  // Before 1970 too.
  EXPECT_EQ(Next("* * * * *", Utc(1969, 12, 31, 23, 59, 1)), Utc(1970, 1, 1));
  EXPECT_EQ(Next("0 0 * * *", Utc(1960, 6, 15, 13, 0)), Utc(1960, 6, 16));
}

TEST(CronNextUtc, HourAndDayRollover) {
  EXPECT_EQ(Next("0 * * * *", Utc(2024, 1, 15, 12, 0)), Utc(2024, 1, 15, 13, 0));
  EXPECT_EQ(Next("0 * * * *", Utc(2024, 1, 15, 23, 0)), Utc(2024, 1, 16, 0, 0));
  EXPECT_EQ(Next("30 9 * * *", Utc(2024, 1, 15, 9, 30)), Utc(2024, 1, 16, 9, 30));
  EXPECT_EQ(Next("30 9 * * *", Utc(2024, 1, 15, 9, 29)), Utc(2024, 1, 15, 9, 30));
  EXPECT_EQ(Next("30 9 * * *", Utc(2024, 1, 15, 8, 45)), Utc(2024, 1, 15, 9, 30));
  EXPECT_EQ(Next("15,45 */8 * * *", Utc(2024, 1, 15, 8, 50)), Utc(2024, 1, 15, 16, 15));
  EXPECT_EQ(Next("59 23 31 12 *", Utc(2024, 6, 1)), Utc(2024, 12, 31, 23, 59));
  EXPECT_EQ(Next("59 23 31 12 *", Utc(2024, 12, 31, 23, 59)), Utc(2025, 12, 31, 23, 59));
  EXPECT_EQ(Next("0 0 1 1 *", Utc(2024, 12, 31, 23, 59, 59)), Utc(2025, 1, 1));
}

TEST(CronNextUtc, MonthEnds) {
  EXPECT_EQ(Next("0 0 1 * *", Utc(2024, 1, 31, 12)), Utc(2024, 2, 1));
  // The 31st: February, April, June, September and November are skipped.
  EXPECT_EQ(Next("0 0 31 * *", Utc(2024, 1, 31)), Utc(2024, 3, 31));
  EXPECT_EQ(Next("0 0 31 * *", Utc(2024, 3, 31)), Utc(2024, 5, 31));
  EXPECT_EQ(Next("0 0 31 * *", Utc(2024, 7, 31)), Utc(2024, 8, 31));
  EXPECT_EQ(Next("0 0 31 * *", Utc(2024, 8, 31)), Utc(2024, 10, 31));
  EXPECT_EQ(Next("0 0 31 * *", Utc(2024, 12, 31)), Utc(2025, 1, 31));
  EXPECT_EQ(Next("0 0 30 * *", Utc(2024, 1, 30)), Utc(2024, 3, 30));
  EXPECT_EQ(Next("0 12 28-31 * *", Utc(2023, 2, 28, 12)), Utc(2023, 3, 28, 12));
  EXPECT_EQ(Next("0 12 28-31 * *", Utc(2024, 2, 28, 12)), Utc(2024, 2, 29, 12));
}

TEST(CronNextUtc, LeapDay) {
  EXPECT_EQ(Next("0 0 29 2 *", Utc(2023, 3, 1)), Utc(2024, 2, 29));
  EXPECT_EQ(Next("0 0 29 2 *", Utc(2024, 2, 29)), Utc(2028, 2, 29));
  EXPECT_EQ(Next("0 0 29 2 *", Utc(2099, 1, 1)), Utc(2104, 2, 29));  // 2100 is no leap year
  // The longest gap, 2096 to 2104, is within the search horizon.
  EXPECT_EQ(Next("0 0 29 2 *", Utc(2096, 3, 1)), Utc(2104, 2, 29));
  EXPECT_EQ(Next("0 0 29 2 *", Utc(1999, 3, 1)), Utc(2000, 2, 29));  // 2000 is one
  EXPECT_EQ(Next("0 0 * 2 *", Utc(2024, 2, 28, 1)), Utc(2024, 2, 29));
  EXPECT_EQ(Next("0 0 * 2 *", Utc(2023, 2, 28, 1)), Utc(2024, 2, 1));
}

TEST(CronNextUtc, DayOfMonthOrDayOfWeek) {
  // The 13th or any Friday. 2024-01-13 is a Saturday; 2024-09-13 and 2024-12-13 Fridays.
  EXPECT_EQ(Next("0 0 13 * 5", Utc(2024, 1, 1)), Utc(2024, 1, 5));
  EXPECT_EQ(Next("0 0 13 * 5", Utc(2024, 1, 12)), Utc(2024, 1, 13));
  EXPECT_EQ(Next("0 0 13 * 5", Utc(2024, 1, 13)), Utc(2024, 1, 19));
  EXPECT_EQ(Next("0 0 13 * FRI", Utc(2024, 9, 12)), Utc(2024, 9, 13));
  EXPECT_EQ(Next("0 0 13 * FRI", Utc(2024, 9, 13)), Utc(2024, 9, 20));
  // The 1st or Monday, in February only. 2024-02-01 is a Thursday.
  EXPECT_EQ(Next("0 0 1 2 MON", Utc(2024, 1, 1)), Utc(2024, 2, 1));
  EXPECT_EQ(Next("0 0 1 2 MON", Utc(2024, 2, 1)), Utc(2024, 2, 5));
  EXPECT_EQ(Next("0 0 1 2 MON", Utc(2024, 2, 26)), Utc(2025, 2, 1));
  // With the OR rule, "0 0 30 2 1" is possible: Mondays in February.
  EXPECT_EQ(Next("0 0 30 2 1", Utc(2024, 3, 1)), Utc(2025, 2, 3));
  // A day-of-month list with 1-31 is not '*', so Sundays do not restrict it.
  EXPECT_EQ(Next("0 0 1-31 * 0", Utc(2024, 1, 1)), Utc(2024, 1, 2));
}

TEST(CronNextUtc, StarDayFieldMeansAnd) {
  // Day-of-week '*': only the 13th.
  EXPECT_EQ(Next("0 0 13 * *", Utc(2024, 1, 1)), Utc(2024, 1, 13));
  // Day-of-month '*': only Fridays.
  EXPECT_EQ(Next("0 0 * * 5", Utc(2024, 1, 1)), Utc(2024, 1, 5));
  // "*/2" counts as '*' (Vixie): odd days that are also Mondays. 2024-01-01 is a Monday,
  // then 2024-01-15 and 2024-01-29.
  EXPECT_EQ(Next("0 0 */2 * 1", Utc(2024, 1, 1)), Utc(2024, 1, 15));
  EXPECT_EQ(Next("0 0 */2 * 1", Utc(2024, 1, 15)), Utc(2024, 1, 29));
  // Friday the 13th would need AND, which cron cannot say: "13 * 5" is OR.
  EXPECT_EQ(Next("0 0 * * 1-5", Utc(2024, 6, 1)), Utc(2024, 6, 3));  // Sat -> Mon
}

TEST(CronNextUtc, Weekdays) {
  // 2024-06-01 is a Saturday.
  EXPECT_EQ(Next("0 9 * * MON-FRI", Utc(2024, 5, 31, 9)), Utc(2024, 6, 3, 9));
  EXPECT_EQ(Next("0 9 * * SAT,SUN", Utc(2024, 5, 31, 9)), Utc(2024, 6, 1, 9));
  EXPECT_EQ(Next("0 9 * * 7", Utc(2024, 6, 1, 9)), Utc(2024, 6, 2, 9));
  EXPECT_EQ(Next("0 9 * * 0", Utc(2024, 6, 2, 9)), Utc(2024, 6, 9, 9));
}

TEST(CronNextUtc, Macros) {
  const TimeMs t = Utc(2024, 6, 5, 10, 20, 30);  // a Wednesday
  EXPECT_EQ(Next("@hourly", t), Utc(2024, 6, 5, 11));
  EXPECT_EQ(Next("@daily", t), Utc(2024, 6, 6));
  EXPECT_EQ(Next("@midnight", t), Utc(2024, 6, 6));
  EXPECT_EQ(Next("@weekly", t), Utc(2024, 6, 9));
  EXPECT_EQ(Next("@monthly", t), Utc(2024, 7, 1));
  EXPECT_EQ(Next("@yearly", t), Utc(2025, 1, 1));
  EXPECT_EQ(Next("@annually", t), Utc(2025, 1, 1));
}

TEST(CronNextUtc, Steps) {
  EXPECT_EQ(Next("*/15 * * * *", Utc(2024, 1, 1, 10, 0)), Utc(2024, 1, 1, 10, 15));
  EXPECT_EQ(Next("*/15 * * * *", Utc(2024, 1, 1, 10, 46)), Utc(2024, 1, 1, 11, 0));
  EXPECT_EQ(Next("10-50/10 * * * *", Utc(2024, 1, 1, 10, 50)), Utc(2024, 1, 1, 11, 10));
  EXPECT_EQ(Next("10-50/10 * * * *", Utc(2024, 1, 1, 10, 10)), Utc(2024, 1, 1, 10, 20));
  EXPECT_EQ(Next("0 */5 * * *", Utc(2024, 1, 1, 20, 1)), Utc(2024, 1, 2, 0, 0));
  EXPECT_EQ(Next("0 0 */10 * *", Utc(2024, 1, 31)), Utc(2024, 2, 1));
  EXPECT_EQ(Next("0 0 1 */5 *", Utc(2024, 6, 1)), Utc(2024, 11, 1));
}

TEST(CronNextUtc, ImpossibleSchedulesReturnZero) {
  EXPECT_EQ(Next("0 0 30 2 *", Utc(2024, 1, 1)), 0);
  EXPECT_EQ(Next("0 0 31 2 *", Utc(2024, 1, 1)), 0);
  EXPECT_EQ(Next("0 0 31 4,6,9,11 *", Utc(2024, 1, 1)), 0);
  EXPECT_EQ(Next("* * 31 APR *", Utc(2024, 1, 1), "America/New_York"), 0);
}

TEST(CronNextUtc, OutOfRangeAfter) {
  EXPECT_EQ(Next("* * * * *", std::numeric_limits<TimeMs>::max()), 0);
  EXPECT_EQ(Next("* * * * *", std::numeric_limits<TimeMs>::min()), 0);
  EXPECT_EQ(Next("0 0 1 1 *", Utc(9980, 1, 1)), Utc(9981, 1, 1));
}

// Walks minute by minute and checks that chaining NextFireTime finds exactly the matching
// local minutes, each once (the first occurrence), for a year.
void CheckAgainstBruteForce(std::string_view expr, std::string_view zone, TimeMs from, TimeMs to) {
  const CronSchedule c = Cron(expr);
  const std::shared_ptr<const TimeZone> tz = Zone(zone);
  std::vector<TimeMs> want;
  std::set<int64_t> fired_local;  // local minutes already fired
  for (TimeMs t = from + 60'000; t <= to; t += 60'000) {
    const CivilTime l = tz->ToLocal(t);
    if (l.second != 0 || !c.Matches(l)) continue;
    const int64_t key =
        ((((int64_t{l.year} * 13 + l.month) * 32 + l.day) * 24 + l.hour) * 60) + l.minute;
    if (fired_local.insert(key).second) want.push_back(t);
  }
  std::vector<TimeMs> got;
  for (TimeMs t = NextFireTime(c, *tz, from); t != 0 && t <= to; t = NextFireTime(c, *tz, t)) {
    got.push_back(t);
  }
  EXPECT_EQ(got, want) << expr << " in " << zone;
  EXPECT_FALSE(want.empty());
}

TEST(CronNextUtc, MatchesBruteForce) {
  CheckAgainstBruteForce("*/7 3-5 15 * MON", "UTC", Utc(2024, 1, 1), Utc(2024, 4, 1));
  CheckAgainstBruteForce("0 0 29 * SUN", "UTC", Utc(2023, 1, 1), Utc(2024, 12, 31));
}

// ---------------------------------------------------------------------------------------
// Next fire time in named zones

TEST(CronNextZone, NewYorkSpringForwardSkipsTheGap) {
  // 2024-03-10: 02:00 EST (07:00Z) jumps to 03:00 EDT; 02:xx does not exist that day.
  const char* ny = "America/New_York";
  EXPECT_EQ(Next("30 2 * * *", Utc(2024, 3, 9), ny), Utc(2024, 3, 9, 7, 30));          // EST
  EXPECT_EQ(Next("30 2 * * *", Utc(2024, 3, 9, 7, 30), ny), Utc(2024, 3, 11, 6, 30));  // EDT
  EXPECT_EQ(Next("*/30 * * * *", Utc(2024, 3, 10, 6, 30), ny), Utc(2024, 3, 10, 7, 0));
  EXPECT_EQ(Next("59 1 * * *", Utc(2024, 3, 10), ny), Utc(2024, 3, 10, 6, 59));
  EXPECT_EQ(Next("0 3 * * *", Utc(2024, 3, 10), ny), Utc(2024, 3, 10, 7, 0));
  EXPECT_EQ(Next("0 2 10 3 *", Utc(2024, 1, 1), ny), Utc(2025, 3, 10, 6, 0));  // Monday then
  EXPECT_EQ(Next("0 9 * * *", Utc(2024, 3, 9, 14), ny), Utc(2024, 3, 10, 13, 0));
}

TEST(CronNextZone, NewYorkFallBackFiresOnce) {
  // 2024-11-03: 02:00 EDT (06:00Z) falls back to 01:00 EST; 01:xx happens twice.
  const char* ny = "America/New_York";
  EXPECT_EQ(Next("30 1 * * *", Utc(2024, 11, 2, 12), ny), Utc(2024, 11, 3, 5, 30));  // EDT
  EXPECT_EQ(Next("30 1 * * *", Utc(2024, 11, 3, 5, 30), ny), Utc(2024, 11, 4, 6, 30));
  // From inside the repeated hour (01:10 EST): 01:30 already fired, at 01:30 EDT.
  EXPECT_EQ(Next("30 1 * * *", Utc(2024, 11, 3, 6, 10), ny), Utc(2024, 11, 4, 6, 30));
  EXPECT_EQ(Next("0 * * * *", Utc(2024, 11, 3, 5, 0), ny), Utc(2024, 11, 3, 7, 0));
  EXPECT_EQ(Next("*/20 * * * *", Utc(2024, 11, 3, 5, 40), ny), Utc(2024, 11, 3, 7, 0));
  EXPECT_EQ(Next("0 2 * * *", Utc(2024, 11, 3, 5, 0), ny), Utc(2024, 11, 3, 7, 0));
  EXPECT_EQ(Next("0 9 * * *", Utc(2024, 11, 2, 14), ny), Utc(2024, 11, 3, 14, 0));
  CheckAgainstBruteForce("*/30 * * * *", ny, Utc(2024, 1, 1), Utc(2025, 1, 1));
  CheckAgainstBruteForce("30 1,2 * * *", ny, Utc(2024, 1, 1), Utc(2025, 1, 1));
}

TEST(CronNextZone, BerlinBothTransitions) {
  // 2024-03-31: 02:00 CET (01:00Z) jumps to 03:00 CEST.
  const char* berlin = "Europe/Berlin";
  EXPECT_EQ(Next("30 2 * * *", Utc(2024, 3, 30, 1, 30), berlin), Utc(2024, 4, 1, 0, 30));
  EXPECT_EQ(Next("30 2 * * *", Utc(2024, 3, 30), berlin), Utc(2024, 3, 30, 1, 30));
  EXPECT_EQ(Next("0 3 * * *", Utc(2024, 3, 30, 12), berlin), Utc(2024, 3, 31, 1, 0));
  // 2024-10-27: 03:00 CEST (01:00Z) falls back to 02:00 CET; 02:xx happens twice.
  EXPECT_EQ(Next("30 2 * * *", Utc(2024, 10, 26, 12), berlin), Utc(2024, 10, 27, 0, 30));
  EXPECT_EQ(Next("30 2 * * *", Utc(2024, 10, 27, 0, 30), berlin), Utc(2024, 10, 28, 1, 30));
  EXPECT_EQ(Next("30 2 * * *", Utc(2024, 10, 27, 1, 10), berlin), Utc(2024, 10, 28, 1, 30));
  CheckAgainstBruteForce("15 * * * *", berlin, Utc(2024, 1, 1), Utc(2025, 1, 1));
}

TEST(CronNextZone, KolkataHalfHourOffset) {
  const char* kolkata = "Asia/Kolkata";
  EXPECT_EQ(Next("0 9 * * *", Utc(2024, 6, 1), kolkata), Utc(2024, 6, 1, 3, 30));
  EXPECT_EQ(Next("0 9 * * *", Utc(2024, 6, 1, 3, 30), kolkata), Utc(2024, 6, 2, 3, 30));
  EXPECT_EQ(Next("30 * * * *", Utc(2024, 6, 1, 0, 1), kolkata), Utc(2024, 6, 1, 1, 0));
  EXPECT_EQ(Next("0 0 1 * *", Utc(2024, 6, 1), kolkata), Utc(2024, 6, 30, 18, 30));
}

TEST(CronNextZone, LordHoweHalfHourDst) {
  // +10:30 standard, +11 daylight. 2024-10-06 02:00 jumps to 02:30 (15:30Z on the 5th);
  // 2024-04-07 02:00 falls back to 01:30 (15:00Z on the 6th).
  const char* lh = "Australia/Lord_Howe";
  EXPECT_EQ(Next("15 2 * * *", Utc(2024, 10, 4, 16), lh), Utc(2024, 10, 6, 15, 15));
  EXPECT_EQ(Next("15 2 * * *", Utc(2024, 10, 4), lh), Utc(2024, 10, 4, 15, 45));
  EXPECT_EQ(Next("30 2 * * *", Utc(2024, 10, 5), lh), Utc(2024, 10, 5, 15, 30));
  EXPECT_EQ(Next("45 1 * * *", Utc(2024, 4, 6), lh), Utc(2024, 4, 6, 14, 45));
  EXPECT_EQ(Next("45 1 * * *", Utc(2024, 4, 6, 14, 45), lh), Utc(2024, 4, 7, 15, 15));
  CheckAgainstBruteForce("*/15 1,2 * * *", lh, Utc(2024, 1, 1), Utc(2025, 1, 1));
}

TEST(CronNextZone, NewYorkBeyondTheTableUsesTheFooterRule) {
  // 2040 lies past the file's transitions; the POSIX footer rule decides.
  const char* ny = "America/New_York";
  EXPECT_EQ(Next("30 2 * * *", Utc(2040, 3, 10, 7, 30), ny), Utc(2040, 3, 12, 6, 30));
  EXPECT_EQ(Next("30 1 * * *", Utc(2040, 11, 3, 12), ny), Utc(2040, 11, 4, 5, 30));
  EXPECT_EQ(Next("30 1 * * *", Utc(2040, 11, 4, 5, 30), ny), Utc(2040, 11, 5, 6, 30));
  CheckAgainstBruteForce("0 */2 * * *", ny, Utc(2040, 1, 1), Utc(2041, 1, 1));
}

// ---------------------------------------------------------------------------------------
// Time zones

TEST(TimeZone, BuiltInUtc) {
  for (const char* name : {"UTC", "Etc/UTC", ""}) {
    std::shared_ptr<const TimeZone> tz = Zone(name);
    EXPECT_EQ(tz->name(), "UTC");
    EXPECT_EQ(tz->OffsetSeconds(Utc(2024, 7, 1)), 0);
    EXPECT_EQ(tz->ToLocal(Utc(2024, 7, 1, 13, 14, 15) + 999), (CivilTime{2024, 7, 1, 13, 14, 15}));
    LocalResolution r = tz->FromLocal({2024, 7, 1, 13, 14, 15});
    EXPECT_EQ(r.kind, LocalResolution::Kind::kUnique);
    EXPECT_EQ(r.first, Utc(2024, 7, 1, 13, 14, 15));
  }
  EXPECT_EQ(UtcTimeZone()->ToLocal(-1), (CivilTime{1969, 12, 31, 23, 59, 59}));
}

TEST(TimeZone, RejectsBadNames) {
  for (const char* name : {"../etc/passwd", "/etc/localtime", "America/../../etc/passwd", "..",
                           "America/New York", "America\\New_York", "Europe/Berlin\n"}) {
    Result<std::shared_ptr<const TimeZone>> r = LoadTimeZone(name);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), errc::kInvalidArgument) << name;
    EXPECT_NE(r.status().message().find("bad time zone name"), std::string::npos);
  }
}

TEST(TimeZone, NotFound) {
  Result<std::shared_ptr<const TimeZone>> r = LoadTimeZone("Mars/Olympus_Mons");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), errc::kNotFound);
  EXPECT_EQ(r.status().message(), "time zone \"Mars/Olympus_Mons\" not found");
  r = LoadTimeZone("America");  // a directory
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), errc::kNotFound);
}

TEST(TimeZone, NewYorkOffsets) {
  std::shared_ptr<const TimeZone> tz = Zone("America/New_York");
  EXPECT_EQ(tz->name(), "America/New_York");
  EXPECT_EQ(tz->OffsetSeconds(Utc(2024, 1, 15)), -5 * 3600);
  EXPECT_EQ(tz->OffsetSeconds(Utc(2024, 7, 15)), -4 * 3600);
  // Exactly at the transitions (07:00Z in March, 06:00Z in November).
  EXPECT_EQ(tz->OffsetSeconds(Utc(2024, 3, 10, 7) - 1), -5 * 3600);
  EXPECT_EQ(tz->OffsetSeconds(Utc(2024, 3, 10, 7)), -4 * 3600);
  EXPECT_EQ(tz->OffsetSeconds(Utc(2024, 11, 3, 6) - 1), -4 * 3600);
  EXPECT_EQ(tz->OffsetSeconds(Utc(2024, 11, 3, 6)), -5 * 3600);
  // Older rules: 2006 began DST on the first Sunday in April (April 2, 07:00Z).
  EXPECT_EQ(tz->OffsetSeconds(Utc(2006, 3, 20)), -5 * 3600);
  EXPECT_EQ(tz->OffsetSeconds(Utc(2006, 4, 2, 7)), -4 * 3600);
  // Local mean time before 1883-11-18 17:00Z: -4:56:02.
  EXPECT_EQ(tz->OffsetSeconds(Utc(1850, 1, 1)), -(4 * 3600 + 56 * 60 + 2));
  // Past the table (2037): the footer rule.
  EXPECT_EQ(tz->OffsetSeconds(Utc(2050, 1, 1)), -5 * 3600);
  EXPECT_EQ(tz->OffsetSeconds(Utc(2050, 7, 1)), -4 * 3600);
  EXPECT_EQ(tz->OffsetSeconds(Utc(2100, 3, 14, 7) - 1), -5 * 3600);  // 2nd Sunday of March
  EXPECT_EQ(tz->OffsetSeconds(Utc(2100, 3, 14, 7)), -4 * 3600);
}

TEST(TimeZone, ToLocalAndFromLocal) {
  std::shared_ptr<const TimeZone> tz = Zone("America/New_York");
  EXPECT_EQ(tz->ToLocal(Utc(2024, 3, 10, 6, 59, 59)), (CivilTime{2024, 3, 10, 1, 59, 59}));
  EXPECT_EQ(tz->ToLocal(Utc(2024, 3, 10, 7)), (CivilTime{2024, 3, 10, 3, 0, 0}));
  EXPECT_EQ(tz->ToLocal(Utc(2024, 11, 3, 5, 30)), (CivilTime{2024, 11, 3, 1, 30, 0}));
  EXPECT_EQ(tz->ToLocal(Utc(2024, 11, 3, 6, 30)), (CivilTime{2024, 11, 3, 1, 30, 0}));

  LocalResolution r = tz->FromLocal({2024, 7, 4, 12, 0, 0});
  EXPECT_EQ(r.kind, LocalResolution::Kind::kUnique);
  EXPECT_EQ(r.first, Utc(2024, 7, 4, 16));
  EXPECT_EQ(r.second, r.first);

  r = tz->FromLocal({2024, 3, 10, 2, 30, 0});
  EXPECT_EQ(r.kind, LocalResolution::Kind::kSkipped);
  EXPECT_EQ(r.first, Utc(2024, 3, 10, 7));  // the transition
  r = tz->FromLocal({2024, 3, 10, 2, 0, 0});
  EXPECT_EQ(r.kind, LocalResolution::Kind::kSkipped);
  r = tz->FromLocal({2024, 3, 10, 3, 0, 0});
  EXPECT_EQ(r.kind, LocalResolution::Kind::kUnique);
  EXPECT_EQ(r.first, Utc(2024, 3, 10, 7));
  r = tz->FromLocal({2024, 3, 10, 1, 59, 59});
  EXPECT_EQ(r.kind, LocalResolution::Kind::kUnique);
  EXPECT_EQ(r.first, Utc(2024, 3, 10, 6, 59, 59));

  r = tz->FromLocal({2024, 11, 3, 1, 30, 0});
  EXPECT_EQ(r.kind, LocalResolution::Kind::kRepeated);
  EXPECT_EQ(r.first, Utc(2024, 11, 3, 5, 30));
  EXPECT_EQ(r.second, Utc(2024, 11, 3, 6, 30));
  r = tz->FromLocal({2024, 11, 3, 1, 0, 0});
  EXPECT_EQ(r.kind, LocalResolution::Kind::kRepeated);
  EXPECT_EQ(r.first, Utc(2024, 11, 3, 5));
  EXPECT_EQ(r.second, Utc(2024, 11, 3, 6));
  r = tz->FromLocal({2024, 11, 3, 2, 0, 0});
  EXPECT_EQ(r.kind, LocalResolution::Kind::kUnique);
  EXPECT_EQ(r.first, Utc(2024, 11, 3, 7));
  r = tz->FromLocal({2024, 11, 3, 0, 59, 59});
  EXPECT_EQ(r.kind, LocalResolution::Kind::kUnique);

  // Past the table, from the footer rule.
  r = tz->FromLocal({2040, 3, 11, 2, 30, 0});
  EXPECT_EQ(r.kind, LocalResolution::Kind::kSkipped);
  EXPECT_EQ(r.first, Utc(2040, 3, 11, 7));
  r = tz->FromLocal({2040, 11, 4, 1, 30, 0});
  EXPECT_EQ(r.kind, LocalResolution::Kind::kRepeated);
  EXPECT_EQ(r.first, Utc(2040, 11, 4, 5, 30));
  EXPECT_EQ(r.second, Utc(2040, 11, 4, 6, 30));
}

TEST(TimeZone, HalfHourZones) {
  std::shared_ptr<const TimeZone> kolkata = Zone("Asia/Kolkata");
  EXPECT_EQ(kolkata->OffsetSeconds(Utc(2024, 1, 1)), 5 * 3600 + 1800);
  EXPECT_EQ(kolkata->OffsetSeconds(Utc(2060, 7, 1)), 5 * 3600 + 1800);
  EXPECT_EQ(kolkata->ToLocal(Utc(2024, 6, 1, 3, 30)), (CivilTime{2024, 6, 1, 9, 0, 0}));

  std::shared_ptr<const TimeZone> lh = Zone("Australia/Lord_Howe");
  EXPECT_EQ(lh->OffsetSeconds(Utc(2024, 7, 1)), 10 * 3600 + 1800);
  EXPECT_EQ(lh->OffsetSeconds(Utc(2024, 1, 1)), 11 * 3600);
  EXPECT_EQ(lh->OffsetSeconds(Utc(2024, 10, 5, 15, 30) - 1), 10 * 3600 + 1800);
  EXPECT_EQ(lh->OffsetSeconds(Utc(2024, 10, 5, 15, 30)), 11 * 3600);
  LocalResolution r = lh->FromLocal({2024, 10, 6, 2, 15, 0});
  EXPECT_EQ(r.kind, LocalResolution::Kind::kSkipped);
  EXPECT_EQ(r.first, Utc(2024, 10, 5, 15, 30));
  r = lh->FromLocal({2024, 4, 7, 1, 45, 0});
  EXPECT_EQ(r.kind, LocalResolution::Kind::kRepeated);
  EXPECT_EQ(r.first, Utc(2024, 4, 6, 14, 45));
  EXPECT_EQ(r.second, Utc(2024, 4, 6, 15, 15));
}

// The POSIX rule alone agrees with the zone's full table, hour by hour.
void CheckRuleMatchesZone(std::string_view rule, std::string_view zone, int from_year,
                          int to_year) {
  std::shared_ptr<const TimeZone> posix = Posix(rule), file = Zone(zone);
  int mismatches = 0;
  for (TimeMs t = Utc(from_year, 1, 1); t < Utc(to_year + 1, 1, 1); t += 3'600'000) {
    if (posix->OffsetSeconds(t) != file->OffsetSeconds(t) && ++mismatches < 5) {
      ADD_FAILURE() << rule << " vs " << zone << " at " << t << ": " << posix->OffsetSeconds(t)
                    << " != " << file->OffsetSeconds(t);
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(TimeZone, PosixRulesMatchTzdata) {
  CheckRuleMatchesZone("EST5EDT,M3.2.0,M11.1.0", "America/New_York", 2007, 2037);
  CheckRuleMatchesZone("CET-1CEST,M3.5.0,M10.5.0/3", "Europe/Berlin", 1996, 2037);
  CheckRuleMatchesZone("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", "Australia/Lord_Howe", 2009, 2037);
  CheckRuleMatchesZone("<-02>2<-01>,M3.5.0/-1,M10.5.0/0", "America/Nuuk", 2024, 2037);
  CheckRuleMatchesZone("IST-5:30", "Asia/Kolkata", 1946, 2037);
}

TEST(TimeZone, PosixRuleForms) {
  // Jn counts 1-365 and never Feb 29: J60 is March 1 in every year. n counts from 0 and
  // includes Feb 29: 59 is Feb 29 in a leap year, March 1 otherwise. 02:00 local, -3.
  std::shared_ptr<const TimeZone> j = Posix("XST3XDT,J60,J300");
  EXPECT_EQ(j->OffsetSeconds(Utc(2024, 3, 1, 5) - 1), -3 * 3600);
  EXPECT_EQ(j->OffsetSeconds(Utc(2024, 3, 1, 5)), -2 * 3600);
  EXPECT_EQ(j->OffsetSeconds(Utc(2023, 3, 1, 5)), -2 * 3600);
  // J300 is October 27; the end is at 02:00 daylight time (04:00Z).
  EXPECT_EQ(j->OffsetSeconds(Utc(2024, 10, 27, 4) - 1), -2 * 3600);
  EXPECT_EQ(j->OffsetSeconds(Utc(2024, 10, 27, 4)), -3 * 3600);
  std::shared_ptr<const TimeZone> n = Posix("XST3XDT,59/0:30:15,300");
  EXPECT_EQ(n->OffsetSeconds(Utc(2024, 2, 29, 3, 30, 15) - 1), -3 * 3600);
  EXPECT_EQ(n->OffsetSeconds(Utc(2024, 2, 29, 3, 30, 15)), -2 * 3600);
  EXPECT_EQ(n->OffsetSeconds(Utc(2023, 3, 1, 3, 30, 15) - 1), -3 * 3600);
  EXPECT_EQ(n->OffsetSeconds(Utc(2023, 3, 1, 3, 30, 15)), -2 * 3600);
  // Permanent daylight time (RFC 8536 example).
  std::shared_ptr<const TimeZone> dst = Posix("EST5EDT,0/0,J365/25");
  for (int y : {2030, 2031, 2032}) {
    EXPECT_EQ(dst->OffsetSeconds(Utc(y, 1, 1)), -4 * 3600) << y;
    EXPECT_EQ(dst->OffsetSeconds(Utc(y, 1, 1, 5)), -4 * 3600) << y;
    EXPECT_EQ(dst->OffsetSeconds(Utc(y, 7, 1)), -4 * 3600) << y;
    EXPECT_EQ(dst->OffsetSeconds(Utc(y, 12, 31, 23)), -4 * 3600) << y;
  }
  // No daylight time; the daylight offset defaults to one hour ahead of standard.
  EXPECT_EQ(Posix("<-03>3")->OffsetSeconds(Utc(2030, 1, 1)), -3 * 3600);
  EXPECT_EQ(Posix("AAA-1BBB,M3.5.0,M10.5.0")->OffsetSeconds(Utc(2030, 7, 1)), 2 * 3600);
  // Errors.
  for (const char* bad :
       {"", "E5", "EST", "EST5EDT", "EST5EDT,M3.2.0", "EST5EDT,M13.2.0,M11.1.0",
        "EST5EDT,M3.6.0,M11.1.0", "EST5EDT,M3.2.7,M11.1.0", "EST5EDT,J0,J300", "EST5EDT,J60,366",
        "EST25", "<+05", "EST5x", "EST5EDT,M3.2.0,M11.1.0/168", "EST5EDT,M3.2.0,M11.1.0,"}) {
    Result<std::shared_ptr<const TimeZone>> r = ParsePosixTimeZone("bad", bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), errc::kInvalidArgument) << bad;
  }
}

// A TZif v2 file with no transitions: everything comes from the footer (a "slim" file).
std::string SlimTzif(std::string_view footer) {
  std::string block;  // one local time type (-5h, std, "EST") and its designation
  block += std::string("\xff\xff\xb9\xb0", 4);
  block += std::string("\0\0", 2);
  block += std::string("EST\0", 4);
  std::string header = "TZif2" + std::string(15, '\0');
  const uint32_t counts[6] = {0, 0, 0, 0, 1, 4};  // isut, isstd, leap, time, type, char
  for (uint32_t c : counts) {
    for (int shift = 24; shift >= 0; shift -= 8) header += static_cast<char>(c >> shift & 0xff);
  }
  return header + block + header + block + "\n" + std::string(footer) + "\n";
}

TEST(TimeZone, SlimFileUsesTheFooter) {
  Result<std::shared_ptr<const TimeZone>> slim =
      ParseTzif("Slim/New_York", SlimTzif("EST5EDT,M3.2.0,M11.1.0"));
  ASSERT_TRUE(slim.ok()) << slim.status().ToString();
  EXPECT_EQ((*slim)->name(), "Slim/New_York");
  std::shared_ptr<const TimeZone> ny = Zone("America/New_York");
  for (TimeMs t = Utc(2010, 1, 1); t < Utc(2030, 1, 1); t += 3'600'000) {
    ASSERT_EQ((*slim)->OffsetSeconds(t), ny->OffsetSeconds(t)) << t;
  }
  // Without a footer rule, type 0 holds for all time.
  Result<std::shared_ptr<const TimeZone>> fixed = ParseTzif("Fixed", SlimTzif(""));
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  EXPECT_EQ((*fixed)->OffsetSeconds(Utc(2024, 7, 1)), -5 * 3600);
  // A footer that is not a rule.
  Result<std::shared_ptr<const TimeZone>> bad = ParseTzif("Bad", SlimTzif("EST5EDT,nonsense"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), errc::kIo);
  EXPECT_NE(bad.status().message().find("\"Bad\""), std::string::npos);
}

TEST(TimeZone, Version1Fallback) {
  // Keep only the header and the 32-bit data of the real file, marked version 1.
  std::string data = ReadFile("/usr/share/zoneinfo/America/New_York");
  ASSERT_GT(data.size(), 44u);
  const auto count = [&data](int i) {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v = v << 8 | static_cast<uint8_t>(data[20 + 4 * i + k]);
    return uint64_t{v};
  };
  const uint64_t v1_size =
      count(3) * 5 + count(4) * 6 + count(5) + count(2) * 8 + count(1) + count(0);
  std::string v1 = data.substr(0, 44 + v1_size);
  v1[4] = '\0';
  Result<std::shared_ptr<const TimeZone>> old = ParseTzif("v1", v1);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  std::shared_ptr<const TimeZone> ny = Zone("America/New_York");
  int checked = 0;
  for (TimeMs t = Utc(1902, 1, 1); t < Utc(2037, 1, 1); t += 6 * 3'600'000) {
    ASSERT_EQ((*old)->OffsetSeconds(t), ny->OffsetSeconds(t)) << t;
    ++checked;
  }
  EXPECT_GT(checked, 100'000);
}

TEST(TimeZone, CorruptFiles) {
  const std::string good = SlimTzif("EST5EDT,M3.2.0,M11.1.0");
  for (const std::string& bad :
       {std::string(), std::string("TZif"), std::string("NotTZif") + std::string(60, '\0'),
        good.substr(0, 50), good.substr(0, good.size() / 2 + 10)}) {
    Result<std::shared_ptr<const TimeZone>> r = ParseTzif("Corrupt", bad);
    ASSERT_FALSE(r.ok()) << bad.size();
    EXPECT_EQ(r.status().code(), errc::kIo);
  }
  std::string no_types = good;
  no_types[20 + 4 * 4 + 3] = 0;  // typecnt 0
  EXPECT_FALSE(ParseTzif("Corrupt", no_types).ok());
}

TEST(TimeZone, LoadsFromADirectory) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("baton_cron_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "Test");
  {
    std::ofstream out(dir / "Test" / "Slim", std::ios::binary);
    out << SlimTzif("CET-1CEST,M3.5.0,M10.5.0/3");
    std::ofstream junk(dir / "Test" / "Junk", std::ios::binary);
    junk << "not a zone";
  }
  Result<std::shared_ptr<const TimeZone>> tz = LoadTimeZone("Test/Slim", dir.string());
  ASSERT_TRUE(tz.ok()) << tz.status().ToString();
  EXPECT_EQ((*tz)->OffsetSeconds(Utc(2024, 7, 1)), 2 * 3600);
  EXPECT_EQ(NextFireTime(Cron("30 2 * * *"), **tz, Utc(2024, 3, 30, 1, 30)),
            Utc(2024, 4, 1, 0, 30));
  Result<std::shared_ptr<const TimeZone>> junk = LoadTimeZone("Test/Junk", dir.string());
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.status().code(), errc::kIo);
  EXPECT_EQ(junk.status().message(), "time zone \"Test/Junk\": not a TZif file");
  EXPECT_EQ(LoadTimeZone("Test/None", dir.string()).status().code(), errc::kNotFound);
  std::filesystem::remove_all(dir);
}

TEST(TimeZone, DayOfWeek) {
  EXPECT_EQ(DayOfWeek(1970, 1, 1), 4);
  EXPECT_EQ(DayOfWeek(2024, 2, 29), 4);
  EXPECT_EQ(DayOfWeek(2024, 6, 1), 6);
  EXPECT_EQ(DayOfWeek(2024, 6, 2), 0);
  EXPECT_EQ(DayOfWeek(2104, 2, 29), 5);
  EXPECT_EQ(DayOfWeek(1969, 12, 31), 3);
  EXPECT_EQ(DayOfWeek(1600, 1, 1), 6);
}

}  // namespace
}  // namespace baton::server
