#include "model/http_status.h"

#include <cctype>
#include <string>
#include <string_view>

namespace baton::model {
namespace {

Status Bad(const Json& entry) {
  std::string shown = entry.is_string() ? entry.get<std::string>() : entry.dump();
  return Status(
      errc::kValidation,
      "expected a status (404), a class (\"4xx\") or a range (\"400-499\"), got '" + shown + "'");
}

Status OutOfRange() {
  return Status(errc::kValidation, "HTTP status must be between 100 and 599");
}

// Exactly three digits.
bool TakeStatus(std::string_view s, int* out) {
  if (s.size() != 3) return false;
  int n = 0;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    n = n * 10 + (c - '0');
  }
  *out = n;
  return true;
}

}  // namespace

Result<std::pair<int, int>> ParseStatusRange(const Json& entry) {
  if (entry.is_number_integer()) {
    int64_t n = entry.get<int64_t>();
    if (n < 100 || n > 599) return OutOfRange();
    return std::pair<int, int>(static_cast<int>(n), static_cast<int>(n));
  }
  if (!entry.is_string()) return Bad(entry);
  std::string_view s = entry.get_ref<const std::string&>();
  int lo = 0, hi = 0;
  if (s.size() == 3 && std::isdigit(static_cast<unsigned char>(s[0])) &&
      (s[1] == 'x' || s[1] == 'X') && (s[2] == 'x' || s[2] == 'X')) {
    lo = (s[0] - '0') * 100;
    hi = lo + 99;
  } else if (size_t dash = s.find('-'); dash != std::string_view::npos) {
    if (!TakeStatus(s.substr(0, dash), &lo) || !TakeStatus(s.substr(dash + 1), &hi)) {
      return Bad(entry);
    }
    if (lo > hi) {
      return Status(errc::kValidation, "empty status range '" + std::string(s) + "'");
    }
  } else if (TakeStatus(s, &lo)) {
    hi = lo;
  } else {
    return Bad(entry);
  }
  if (lo < 100 || hi > 599) return OutOfRange();
  return std::pair<int, int>(lo, hi);
}

}  // namespace baton::model
