// Cron expressions: parsing, matching and the next fire time in a time zone. Time
// zones themselves (TZif files, POSIX rules): time_zone.cpp.
#include "server/triggers/cron.h"

#include "server/triggers/civil_time.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <sstream>

namespace baton::server {
namespace {

using namespace civil;  // civil_time.h

// ---------------------------------------------------------------------------------------
// Cron parsing.

struct Field {
  const char* name;
  int min, max;
  const char* const* names;  // 3-letter names for values names_base, names_base+1, ...
  int names_base;
  const char* names_hint;
};

constexpr const char* kMonthNames[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",  "JUL",
                                       "AUG", "SEP", "OCT", "NOV", "DEC", nullptr};
constexpr const char* kDayNames[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", nullptr};

constexpr Field kFields[5] = {
    {"minute", 0, 59, nullptr, 0, nullptr},
    {"hour", 0, 23, nullptr, 0, nullptr},
    {"day-of-month", 1, 31, nullptr, 0, nullptr},
    {"month", 1, 12, kMonthNames, 1, " or month name (JAN-DEC)"},
    {"day-of-week", 0, 7, kDayNames, 0, " or weekday name (SUN-SAT)"},
};

class FieldParser {
 public:
  FieldParser(int index, const Field& field) : index_(index), field_(field) {}

  // Sets the values of `text` in `bits` (bit v for value v).
  Status Parse(std::string_view text, std::vector<bool>* bits) const {
    size_t pos = 0;
    while (true) {
      const size_t comma = text.find(',', pos);
      const std::string_view item =
          text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
      if (item.empty()) return Error("empty list element in " + Quote(text));
      if (Status s = ParseItem(item, bits); !s.ok()) return s;
      if (comma == std::string_view::npos) return Status::Ok();
      pos = comma + 1;
    }
  }

 private:
  Status Error(const std::string& what) const {
    return Status(errc::kInvalidArgument,
                  "cron field " + std::to_string(index_ + 1) + " (" + field_.name + "): " + what);
  }

  std::string RangeText() const {
    return std::to_string(field_.min) + "-" + std::to_string(field_.max);
  }

  // A number or (where the field has them) a name, within the field's range.
  Status ParseValue(std::string_view token, std::string_view item, int* out) const {
    if (token.empty()) return Error("missing value in " + Quote(item));
    if (std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      int64_t v = 0;
      for (char c : token) v = std::min<int64_t>(v * 10 + (c - '0'), 1'000'000'000);
      if (v < field_.min || v > field_.max) {
        return Error(std::string(token) + " is out of range " + RangeText());
      }
      *out = static_cast<int>(v);
      return Status::Ok();
    }
    if (field_.names != nullptr && token.size() == 3) {
      for (int i = 0; field_.names[i] != nullptr; ++i) {
        const char* name = field_.names[i];
        bool same = true;
        for (int k = 0; k < 3; ++k) {
          same = same && std::toupper(static_cast<unsigned char>(token[k])) == name[k];
        }
        if (same) {
          *out = field_.names_base + i;
          return Status::Ok();
        }
      }
    }
    return Error(Quote(token) + " is not a number" + (field_.names_hint ? field_.names_hint : ""));
  }

  Status ParseItem(std::string_view item, std::vector<bool>* bits) const {
    std::string_view base = item;
    int step = 1;
    bool stepped = false;
    if (const size_t slash = item.find('/'); slash != std::string_view::npos) {
      base = item.substr(0, slash);
      const std::string_view st = item.substr(slash + 1);
      if (st.empty()) return Error("missing step in " + Quote(item));
      if (!std::all_of(st.begin(), st.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return Error("step " + Quote(st) + " is not a number");
      }
      int64_t v = 0;
      for (char c : st) v = std::min<int64_t>(v * 10 + (c - '0'), 1'000'000'000);
      const int width = field_.max - field_.min + 1;
      if (v < 1 || v > width) {
        return Error("step " + std::string(st) + " is out of range 1-" + std::to_string(width));
      }
      step = static_cast<int>(v);
      stepped = true;
    }
    int lo = 0, hi = 0;
    if (base == "*") {
      lo = field_.min;
      // Day-of-week `*` is 0-6: 7 would only repeat Sunday.
      hi = field_.max == 7 ? 6 : field_.max;
    } else if (const size_t dash = base.find('-'); dash != std::string_view::npos) {
      if (Status s = ParseValue(base.substr(0, dash), item, &lo); !s.ok()) return s;
      if (Status s = ParseValue(base.substr(dash + 1), item, &hi); !s.ok()) return s;
      if (lo > hi) return Error("range " + std::string(base) + " runs backwards");
    } else {
      if (Status s = ParseValue(base, item, &lo); !s.ok()) return s;
      hi = stepped ? field_.max : lo;  // "N/S": N through the maximum
    }
    for (int v = lo; v <= hi; v += step) (*bits)[v] = true;
    return Status::Ok();
  }

  int index_;
  const Field& field_;
};

template <size_t N>
std::bitset<N> ToBits(const std::vector<bool>& v) {
  std::bitset<N> b;
  for (size_t i = 0; i < N && i < v.size(); ++i) b[i] = v[i];
  return b;
}

bool IsBlank(char c) {
  return c == ' ' || c == '\t';
}

std::vector<std::string_view> SplitFields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsBlank(s[i])) ++i;
    if (i == s.size()) break;
    const size_t start = i;
    while (i < s.size() && !IsBlank(s[i])) ++i;
    out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// CronSchedule

int DayOfWeek(int year, int month, int day) {
  const int64_t days = DaysFromCivil(year, month, day);  // 1970-01-01 was a Thursday
  return static_cast<int>(FloorDiv(days + 4, 7) * -7 + days + 4);
}

bool CronSchedule::MatchesDay(int year, int month, int day) const {
  if (!months[month]) return false;
  const bool dom = days_of_month[day];
  const bool dow = days_of_week[DayOfWeek(year, month, day)];
  return day_of_month_star || day_of_week_star ? dom && dow : dom || dow;
}

bool CronSchedule::Matches(const CivilTime& t) const {
  return minutes[t.minute] && hours[t.hour] && MatchesDay(t.year, t.month, t.day);
}

Result<CronSchedule> ParseCron(std::string_view expr) {
  std::vector<std::string_view> fields = SplitFields(expr);
  if (!fields.empty() && fields[0].front() == '@') {
    static constexpr std::pair<const char*, const char*> kMacros[] = {
        {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
        {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
        {"@hourly", "0 * * * *"},
    };
    const std::string macro = Lower(fields[0]);
    const char* body = nullptr;
    for (const auto& [name, text] : kMacros) {
      if (macro == name) body = text;
    }
    if (body == nullptr) {
      return Status(errc::kInvalidArgument,
                    "cron: unknown macro " + Quote(fields[0]) +
                        " (expected @yearly, @annually, @monthly, @weekly, @daily, @midnight "
                        "or @hourly)");
    }
    if (fields.size() > 1) {
      return Status(errc::kInvalidArgument,
                    "cron: unexpected text after " + macro + ": " + Quote(fields[1]));
    }
    fields = SplitFields(body);
  }
  if (fields.size() != 5) {
    return Status(errc::kInvalidArgument,
                  "cron: expected 5 fields, got " + std::to_string(fields.size()));
  }
  std::vector<bool> bits[5];
  for (int i = 0; i < 5; ++i) {
    bits[i].assign(kFields[i].max + 1, false);
    if (Status s = FieldParser(i, kFields[i]).Parse(fields[i], &bits[i]); !s.ok()) return s;
  }
  CronSchedule c;
  c.text = std::string(expr);
  c.minutes = ToBits<60>(bits[0]);
  c.hours = ToBits<24>(bits[1]);
  c.days_of_month = ToBits<32>(bits[2]);
  c.months = ToBits<13>(bits[3]);
  c.days_of_week = ToBits<7>(bits[4]);
  if (bits[4][7]) c.days_of_week[0] = true;  // 7 is Sunday too
  c.day_of_month_star = fields[2].front() == '*';
  c.day_of_week_star = fields[4].front() == '*';
  return c;
}

// ---------------------------------------------------------------------------------------
// NextFireTime

TimeMs NextFireTime(const CronSchedule& s, const TimeZone& tz, TimeMs after) {
  // Years 1-9999, with room for offsets and the search horizon.
  constexpr int64_t kMinSeconds = -62'135'596'800 + 2 * 86400;
  constexpr int64_t kMaxSeconds = 253'402'300'799 - (kCronSearchYears + 2) * 366LL * 86400;
  const int64_t after_s = FloorDiv(after, 1000);
  if (after_s < kMinSeconds || after_s > kMaxSeconds) return 0;
  if (s.minutes.none() || s.hours.none()) return 0;

  // Every local minute up to and including the one `after` falls in first occurs at or
  // before `after` (first occurrences grow with local time), so start one minute later.
  const int64_t local = after_s + tz.OffsetSeconds(after);
  CivilTime t = CivilFromSeconds(FloorDiv(local, 60) * 60 + 60);
  const int last_year = t.year + kCronSearchYears;

  const auto next_month = [&t] {
    if (++t.month == 13) {
      t.month = 1;
      ++t.year;
    }
    t.day = 1;
    t.hour = t.minute = 0;
  };
  const auto next_day = [&t] {
    ++t.day;  // may pass the month's end; the loop notices
    t.hour = t.minute = 0;
  };
  const auto next_hour = [&] {
    t.minute = 0;
    if (++t.hour == 24) next_day();
  };

  while (t.year <= last_year) {
    if (!s.months[t.month] || t.day > DaysInMonth(t.year, t.month)) {
      next_month();
      continue;
    }
    if (!s.MatchesDay(t.year, t.month, t.day)) {
      next_day();
      continue;
    }
    if (!s.hours[t.hour]) {
      next_hour();
      continue;
    }
    while (t.minute < 60 && !s.minutes[t.minute]) ++t.minute;
    if (t.minute == 60) {
      next_hour();
      continue;
    }
    const LocalResolution r = tz.FromLocal(t);
    if (r.kind != LocalResolution::Kind::kSkipped && r.first > after) return r.first;
    if (++t.minute == 60) next_hour();
  }
  return 0;
}

}  // namespace baton::server
