// Durations ("1h30m") and byte sizes ("512KiB") as written in workflow files.
#include <baton/workflow.h>

#include <charconv>
#include <cmath>
#include <limits>

namespace baton {
namespace {

constexpr const char* kDurationHint = "(expected e.g. 250ms, 30s, 5m, 1h30m or seconds)";
constexpr const char* kSizeHint = "(expected bytes or e.g. 512KiB, 1MiB, 2GB)";
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

std::string Shown(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// Reads the leading digits of `s` into `out`; false on overflow or no digits.
bool TakeNumber(std::string_view* s, int64_t* out) {
  size_t n = 0;
  while (n < s->size() && IsDigit((*s)[n])) ++n;
  if (n == 0) return false;
  auto [ptr, ec] = std::from_chars(s->data(), s->data() + n, *out);
  if (ec != std::errc() || ptr != s->data() + n) return false;
  s->remove_prefix(n);
  return true;
}

bool MulAdd(int64_t* total, int64_t value, int64_t scale) {
  if (value > (kMax - *total) / scale) return false;
  *total += value * scale;
  return true;
}

// A JSON number holding a non-negative integer, as int64.
std::optional<int64_t> NonNegativeInteger(const Json& value) {
  if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(kMax)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (value.is_number_integer()) {
    int64_t i = value.get<int64_t>();
    if (i < 0) return std::nullopt;
    return i;
  }
  return std::nullopt;
}

}  // namespace

Result<Duration> ParseDuration(const Json& value) {
  Status bad(errc::kValidation, "bad duration '" + Shown(value) + "' " + kDurationHint);
  if (value.is_number()) {
    std::optional<int64_t> secs = NonNegativeInteger(value);
    int64_t ms = 0;
    if (!secs || !MulAdd(&ms, *secs, 1000)) return bad;
    return Duration{ms};
  }
  if (!value.is_string()) return bad;
  std::string_view s = Trim(value.get_ref<const std::string&>());
  if (s.empty()) return bad;
  int64_t ms = 0;
  if (AllDigits(s)) {
    int64_t secs = 0;
    if (!TakeNumber(&s, &secs) || !MulAdd(&ms, secs, 1000)) return bad;
    return Duration{ms};
  }
  while (!s.empty()) {
    int64_t n = 0;
    if (!TakeNumber(&s, &n)) return bad;
    int64_t scale = 0;
    if (s.starts_with("ms")) {
      scale = 1;
      s.remove_prefix(2);
    } else if (s.starts_with("h")) {
      scale = 3'600'000;
      s.remove_prefix(1);
    } else if (s.starts_with("m")) {
      scale = 60'000;
      s.remove_prefix(1);
    } else if (s.starts_with("s")) {
      scale = 1000;
      s.remove_prefix(1);
    } else {
      return bad;
    }
    if (!MulAdd(&ms, n, scale)) return bad;
  }
  return Duration{ms};
}

std::string FormatDuration(Duration d) {
  int64_t ms = d.count();
  if (ms == 0) return "0s";
  std::string out;
  if (ms < 0) {
    out = "-";
    // -(min) overflows; durations that large are not meaningful anyway.
    ms = ms == std::numeric_limits<int64_t>::min() ? kMax : -ms;
  }
  int64_t h = ms / 3'600'000;
  int64_t m = ms / 60'000 % 60;
  int64_t s = ms / 1000 % 60;
  int64_t rest = ms % 1000;
  if (h) out += std::to_string(h) + "h";
  if (m) out += std::to_string(m) + "m";
  if (s) out += std::to_string(s) + "s";
  if (rest) out += std::to_string(rest) + "ms";
  return out;
}

Result<int64_t> ParseByteSize(const Json& value) {
  Status bad(errc::kValidation, "bad size '" + Shown(value) + "' " + kSizeHint);
  if (value.is_number()) {
    std::optional<int64_t> n = NonNegativeInteger(value);
    if (!n) return bad;
    return *n;
  }
  if (!value.is_string()) return bad;
  std::string_view s = Trim(value.get_ref<const std::string&>());
  int64_t n = 0;
  if (!TakeNumber(&s, &n)) return bad;
  s = Trim(s);
  struct Unit {
    std::string_view name;
    int64_t scale;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},
      {"B", 1},
      {"KB", 1000},
      {"MB", 1000 * 1000},
      {"GB", 1000LL * 1000 * 1000},
      {"TB", 1000LL * 1000 * 1000 * 1000},
      {"KiB", 1LL << 10},
      {"MiB", 1LL << 20},
      {"GiB", 1LL << 30},
      {"TiB", 1LL << 40},
  };
  for (const Unit& u : kUnits) {
    if (s == u.name) {
      int64_t total = 0;
      if (!MulAdd(&total, n, u.scale)) return bad;
      return total;
    }
  }
  return bad;
}

}  // namespace baton
