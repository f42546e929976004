// Time zones for cron schedules: TZif files (RFC 8536) from the system's zoneinfo, with
// the POSIX rule of their footer for times past the last transition.
#include "server/triggers/cron.h"

#include "server/triggers/civil_time.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace baton::server {
namespace {

using namespace civil;  // civil_time.h

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

}  // namespace baton::server
