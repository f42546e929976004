#include "server/triggers/cron.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace baton::server {
namespace {

// ---------------------------------------------------------------------------------------
// Calendar arithmetic (H. Hinnant's algorithms, proleptic Gregorian).

int64_t FloorDiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = FloorDiv(y, 400);
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int* y, int* m, int* d) {
  z += 719468;
  const int64_t era = FloorDiv(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  *m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *y = static_cast<int>(yoe + era * 400 + (*m <= 2));
}

bool IsLeap(int y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int DaysInMonth(int y, int m) {
  static constexpr std::array<int, 13> kDays = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m];
}

// Seconds since 1970-01-01 00:00 on the wall clock.
int64_t LocalSeconds(const CivilTime& t) {
  return DaysFromCivil(t.year, t.month, t.day) * 86400 + t.hour * 3600 + t.minute * 60 + t.second;
}

CivilTime CivilFromSeconds(int64_t s) {
  CivilTime t;
  const int64_t days = FloorDiv(s, 86400);
  const int64_t rem = s - days * 86400;
  CivilFromDays(days, &t.year, &t.month, &t.day);
  t.hour = static_cast<int>(rem / 3600);
  t.minute = static_cast<int>(rem % 3600 / 60);
  t.second = static_cast<int>(rem % 60);
  return t;
}

int YearOf(int64_t seconds) {
  return CivilFromSeconds(seconds).year;
}

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

std::string Quote(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

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

// ---------------------------------------------------------------------------------------
// Time zone helpers.

constexpr int32_t kMaxOffset = 26 * 3600;

Status TzifError(const std::string& name, const std::string& what) {
  return Status(errc::kIo, "time zone " + Quote(name) + ": " + what);
}

class ByteReader {
 public:
  explicit ByteReader(std::string_view data) : data_(data) {}
  bool Has(uint64_t n) const { return n <= data_.size() - pos_; }
  size_t pos() const { return pos_; }
  void Skip(size_t n) { pos_ += n; }
  std::string_view Take(size_t n) {
    std::string_view s = data_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  uint8_t U8() { return static_cast<uint8_t>(data_[pos_++]); }
  uint32_t U32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | U8();
    return v;
  }
  int64_t I64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | U8();
    return static_cast<int64_t>(v);
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

struct TzifHeader {
  char version = 0;
  uint32_t isutcnt = 0, isstdcnt = 0, leapcnt = 0, timecnt = 0, typecnt = 0, charcnt = 0;

  uint64_t DataSize(int time_size) const {
    return uint64_t{timecnt} * time_size + timecnt + uint64_t{typecnt} * 6 + charcnt +
           uint64_t{leapcnt} * (time_size + 4) + isstdcnt + isutcnt;
  }
};

bool ReadHeader(ByteReader* r, TzifHeader* h) {
  if (!r->Has(44) || r->Take(4) != "TZif") return false;
  h->version = static_cast<char>(r->U8());
  r->Skip(15);
  h->isutcnt = r->U32();
  h->isstdcnt = r->U32();
  h->leapcnt = r->U32();
  h->timecnt = r->U32();
  h->typecnt = r->U32();
  h->charcnt = r->U32();
  return h->typecnt != 0 && (h->isutcnt == 0 || h->isutcnt == h->typecnt) &&
         (h->isstdcnt == 0 || h->isstdcnt == h->typecnt);
}

// Parses [+-]hh[:mm[:ss]] with hh <= max_hours, as seconds.
bool ParseHms(std::string_view s, size_t* pos, int max_hours, int32_t* out) {
  int sign = 1;
  if (*pos < s.size() && (s[*pos] == '+' || s[*pos] == '-')) {
    sign = s[*pos] == '-' ? -1 : 1;
    ++*pos;
  }
  int32_t parts[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (*pos >= s.size() || s[*pos] != ':') break;
      ++*pos;
    }
    const size_t start = *pos;
    while (*pos < s.size() && std::isdigit(static_cast<unsigned char>(s[*pos])) &&
           *pos - start < 3) {
      parts[i] = parts[i] * 10 + (s[*pos] - '0');
      ++*pos;
    }
    if (*pos == start) return false;
  }
  if (parts[0] > max_hours || parts[1] > 59 || parts[2] > 59) return false;
  *out = sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
  return true;
}

bool ParseInt(std::string_view s, size_t* pos, int lo, int hi, int* out) {
  const size_t start = *pos;
  int v = 0;
  while (*pos < s.size() && std::isdigit(static_cast<unsigned char>(s[*pos])) && *pos - start < 4) {
    v = v * 10 + (s[*pos] - '0');
    ++*pos;
  }
  if (*pos == start || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// A zone abbreviation: 3+ letters, or <...> of letters, digits, '+' and '-'.
bool ParseAbbrev(std::string_view s, size_t* pos) {
  const size_t start = *pos;
  if (*pos < s.size() && s[*pos] == '<') {
    ++*pos;
    while (*pos < s.size() && (std::isalnum(static_cast<unsigned char>(s[*pos])) ||
                               s[*pos] == '+' || s[*pos] == '-')) {
      ++*pos;
    }
    if (*pos >= s.size() || s[*pos] != '>' || *pos - start < 4) return false;
    ++*pos;
    return true;
  }
  while (*pos < s.size() && std::isalpha(static_cast<unsigned char>(s[*pos]))) ++*pos;
  return *pos - start >= 3;
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
// TimeZone

int32_t TimeZone::OffsetSeconds(TimeMs t) const {
  return OffsetAtSeconds(FloorDiv(t, 1000));
}

CivilTime TimeZone::ToLocal(TimeMs t) const {
  const int64_t s = FloorDiv(t, 1000);
  return CivilFromSeconds(s + OffsetAtSeconds(s));
}

int32_t TimeZone::OffsetAtSeconds(int64_t t) const {
  if (trans_at_.empty()) return rule_ ? RuleOffset(t) : initial_offset_;
  if (t < trans_at_.front()) return initial_offset_;
  if (t > trans_at_.back() && rule_) return RuleOffset(t);
  const auto it = std::upper_bound(trans_at_.begin(), trans_at_.end(), t);
  return trans_offset_[it - trans_at_.begin() - 1];
}

std::array<TimeZone::RuleTransition, 2> TimeZone::RuleTransitions(int year) const {
  const auto day_of = [year](const RuleDate& d) -> int64_t {
    const int64_t jan1 = DaysFromCivil(year, 1, 1);
    switch (d.kind) {
      case RuleDate::Kind::kJulian1:
        return jan1 + d.day - 1 + (IsLeap(year) && d.day >= 60 ? 1 : 0);
      case RuleDate::Kind::kJulian0:
        return jan1 + d.day;
      case RuleDate::Kind::kMonthWeekDay: {
        const int first_wd = DayOfWeek(year, d.month, 1);
        int day = 1 + (d.weekday - first_wd + 7) % 7 + (d.week - 1) * 7;
        while (day > DaysInMonth(year, d.month)) day -= 7;
        return DaysFromCivil(year, d.month, day);
      }
    }
    return jan1;
  };
  const PosixRule& r = *rule_;
  // Start is given in standard time, end in daylight time.
  return {RuleTransition{day_of(r.start) * 86400 + r.start.time - r.std_offset, true},
          RuleTransition{day_of(r.end) * 86400 + r.end.time - r.dst_offset, false}};
}

int32_t TimeZone::RuleOffset(int64_t t) const {
  const PosixRule& r = *rule_;
  if (!r.has_dst) return r.std_offset;
  std::array<RuleTransition, 6> trs;
  const int year = YearOf(t + r.std_offset);
  for (int i = 0; i < 3; ++i) {
    const std::array<RuleTransition, 2> two = RuleTransitions(year - 1 + i);
    trs[2 * i] = two[0];
    trs[2 * i + 1] = two[1];
  }
  // At equal instants the end of DST comes first, so that rules for permanent daylight
  // time ("EST5EDT,0/0,J365/25") stay in daylight time.
  std::sort(trs.begin(), trs.end(), [](const RuleTransition& a, const RuleTransition& b) {
    return a.at != b.at ? a.at < b.at : !a.dst_starts && b.dst_starts;
  });
  int32_t offset = r.std_offset;
  for (const RuleTransition& tr : trs) {
    if (tr.at > t) break;
    offset = tr.dst_starts ? r.dst_offset : r.std_offset;
  }
  return offset;
}

std::vector<TimeZone::Transition> TimeZone::TransitionsIn(int64_t from, int64_t to) const {
  std::vector<int64_t> ats;
  for (auto it = std::upper_bound(trans_at_.begin(), trans_at_.end(), from);
       it != trans_at_.end() && *it <= to; ++it) {
    ats.push_back(*it);
  }
  if (rule_ && rule_->has_dst && (trans_at_.empty() || to > trans_at_.back())) {
    const int64_t lo = trans_at_.empty() ? from : std::max(from, trans_at_.back());
    for (int y = YearOf(lo) - 1; y <= YearOf(to) + 1; ++y) {
      for (const RuleTransition& tr : RuleTransitions(y)) {
        if (tr.at > lo && tr.at <= to) ats.push_back(tr.at);
      }
    }
  }
  std::sort(ats.begin(), ats.end());
  ats.erase(std::unique(ats.begin(), ats.end()), ats.end());
  std::vector<Transition> out;
  for (int64_t at : ats) {
    const int32_t before = OffsetAtSeconds(at - 1), after = OffsetAtSeconds(at);
    if (before != after) out.push_back({at, before, after});
  }
  return out;
}

LocalResolution TimeZone::FromLocal(const CivilTime& local) const {
  const int64_t l = LocalSeconds(local);
  // Every instant whose wall time can read `l` lies within kMaxOffset of it.
  const int64_t from = l - kMaxOffset - 1, to = l + kMaxOffset + 1;
  const std::vector<Transition> trs = TransitionsIn(from, to);
  std::vector<int32_t> offsets = {OffsetAtSeconds(from)};
  for (const Transition& tr : trs) offsets.push_back(tr.after);
  std::vector<int64_t> instants;
  for (int32_t o : offsets) {
    if (OffsetAtSeconds(l - o) == o) instants.push_back(l - o);
  }
  std::sort(instants.begin(), instants.end());
  instants.erase(std::unique(instants.begin(), instants.end()), instants.end());
  LocalResolution r;
  if (!instants.empty()) {
    r.kind =
        instants.size() == 1 ? LocalResolution::Kind::kUnique : LocalResolution::Kind::kRepeated;
    r.first = instants.front() * 1000;
    r.second = instants.back() * 1000;
    return r;
  }
  r.kind = LocalResolution::Kind::kSkipped;
  r.first = r.second = (l - OffsetAtSeconds(l)) * 1000;  // not reached for valid zones
  for (const Transition& tr : trs) {
    if (tr.before < tr.after && tr.at + tr.before <= l && l < tr.at + tr.after) {
      r.first = r.second = tr.at * 1000;
      break;
    }
  }
  return r;
}

Result<TimeZone::PosixRule> TimeZone::ParseRule(std::string_view s) {
  const auto bad = [&s](const std::string& what) {
    return Status(errc::kInvalidArgument, "TZ rule " + Quote(s) + ": " + what);
  };
  PosixRule r;
  size_t pos = 0;
  int32_t off = 0;
  if (!ParseAbbrev(s, &pos)) return bad("bad standard time name");
  if (!ParseHms(s, &pos, 24, &off)) return bad("bad standard time offset");
  r.std_offset = -off;
  r.dst_offset = r.std_offset;
  if (pos == s.size()) return r;
  if (!ParseAbbrev(s, &pos)) return bad("bad daylight time name");
  r.has_dst = true;
  r.dst_offset = r.std_offset + 3600;
  if (pos < s.size() && s[pos] != ',') {
    if (!ParseHms(s, &pos, 24, &off)) return bad("bad daylight time offset");
    r.dst_offset = -off;
  }
  for (RuleDate* d : {&r.start, &r.end}) {
    if (pos >= s.size() || s[pos] != ',') return bad("expected ',' and a transition date");
    ++pos;
    if (pos < s.size() && s[pos] == 'M') {
      ++pos;
      d->kind = RuleDate::Kind::kMonthWeekDay;
      if (!ParseInt(s, &pos, 1, 12, &d->month) || pos >= s.size() || s[pos++] != '.' ||
          !ParseInt(s, &pos, 1, 5, &d->week) || pos >= s.size() || s[pos++] != '.' ||
          !ParseInt(s, &pos, 0, 6, &d->weekday)) {
        return bad("bad Mm.w.d date");
      }
    } else if (pos < s.size() && s[pos] == 'J') {
      ++pos;
      d->kind = RuleDate::Kind::kJulian1;
      if (!ParseInt(s, &pos, 1, 365, &d->day)) return bad("bad Jn date");
    } else {
      d->kind = RuleDate::Kind::kJulian0;
      if (!ParseInt(s, &pos, 0, 365, &d->day)) return bad("bad date");
    }
    if (pos < s.size() && s[pos] == '/') {
      ++pos;
      if (!ParseHms(s, &pos, 167, &d->time)) return bad("bad transition time");
    }
  }
  if (pos != s.size()) return bad("unexpected " + Quote(s.substr(pos)));
  return r;
}

std::shared_ptr<const TimeZone> UtcTimeZone() {
  static const std::shared_ptr<const TimeZone> kUtc = [] {
    std::shared_ptr<TimeZone> tz(new TimeZone());
    tz->name_ = "UTC";
    return tz;
  }();
  return kUtc;
}

Result<std::shared_ptr<const TimeZone>> ParsePosixTimeZone(std::string name,
                                                           std::string_view rule) {
  Result<TimeZone::PosixRule> r = TimeZone::ParseRule(rule);
  if (!r.ok()) return r.status();
  std::shared_ptr<TimeZone> tz(new TimeZone());
  tz->name_ = std::move(name);
  tz->rule_ = *r;
  tz->initial_offset_ = r->std_offset;
  return std::shared_ptr<const TimeZone>(std::move(tz));
}

Result<std::shared_ptr<const TimeZone>> ParseTzif(std::string name, std::string_view bytes) {
  ByteReader r(bytes);
  TzifHeader h;
  if (!ReadHeader(&r, &h)) return TzifError(name, "not a TZif file");
  int time_size = 4;
  if (h.version >= '2') {
    // Skip the 32-bit data; the 64-bit data follows with a header of its own.
    if (!r.Has(h.DataSize(4))) return TzifError(name, "truncated TZif file");
    r.Skip(h.DataSize(4));
    if (!ReadHeader(&r, &h)) return TzifError(name, "bad second TZif header");
    time_size = 8;
  }
  if (!r.Has(h.DataSize(time_size))) return TzifError(name, "truncated TZif file");

  std::shared_ptr<TimeZone> tz(new TimeZone());
  tz->name_ = std::move(name);
  std::vector<int64_t> at(h.timecnt);
  for (int64_t& t : at) t = time_size == 8 ? r.I64() : static_cast<int32_t>(r.U32());
  std::vector<uint8_t> idx(h.timecnt);
  for (uint8_t& i : idx) i = r.U8();
  std::vector<int32_t> type_offset(h.typecnt);
  for (int32_t& o : type_offset) {
    o = static_cast<int32_t>(r.U32());
    r.Skip(2);  // isdst, desigidx
    if (o < -kMaxOffset || o > kMaxOffset) {
      return TzifError(tz->name_, "UTC offset " + std::to_string(o) + " out of range");
    }
  }
  r.Skip(h.charcnt + uint64_t{h.leapcnt} * (time_size + 4) + h.isstdcnt + h.isutcnt);
  for (uint32_t i = 0; i < h.timecnt; ++i) {
    if (idx[i] >= h.typecnt) return TzifError(tz->name_, "bad local time type index");
    if (i > 0 && at[i] <= at[i - 1]) return TzifError(tz->name_, "transitions out of order");
    tz->trans_at_.push_back(at[i]);
    tz->trans_offset_.push_back(type_offset[idx[i]]);
  }
  tz->initial_offset_ = type_offset[0];
  if (time_size == 8 && r.Has(1) && r.U8() == '\n') {
    const std::string_view rest = bytes.substr(r.pos());
    const size_t end = rest.find('\n');
    if (end == std::string_view::npos) return TzifError(tz->name_, "unterminated footer");
    const std::string_view footer = rest.substr(0, end);
    if (!footer.empty()) {
      Result<TimeZone::PosixRule> rule = TimeZone::ParseRule(footer);
      if (!rule.ok()) return TzifError(tz->name_, rule.status().message());
      tz->rule_ = *rule;
    }
  }
  return std::shared_ptr<const TimeZone>(std::move(tz));
}

Result<std::shared_ptr<const TimeZone>> LoadTimeZone(std::string_view name) {
  return LoadTimeZone(name, "/usr/share/zoneinfo");
}

Result<std::shared_ptr<const TimeZone>> LoadTimeZone(std::string_view name,
                                                     const std::string& dir) {
  if (name.empty() || name == "UTC" || name == "Etc/UTC") return UtcTimeZone();
  const bool chars_ok = std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' ||
           c == '+' || c == '.';
  });
  if (name.front() == '/' || name.find("..") != std::string_view::npos || !chars_ok) {
    return Status(errc::kInvalidArgument, "bad time zone name " + Quote(name));
  }
  const std::filesystem::path path = std::filesystem::path(dir) / std::string(name);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status(errc::kNotFound, "time zone " + Quote(name) + " not found");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream data;
  data << in.rdbuf();
  if (!in) return Status(errc::kIo, "time zone " + Quote(name) + ": cannot read " + path.string());
  return ParseTzif(std::string(name), data.str());
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
