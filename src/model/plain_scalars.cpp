// YAML 1.2 core-schema resolution of plain (unquoted) scalars: null, booleans, integers
// in base 10, 8 (0o) and 16 (0x), and floats; anything else stays a string.
#include "model/source.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace baton::model {
namespace {

bool IsDigits(std::string_view s, int base) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = base == 16 ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                         : (c >= '0' && c < static_cast<char>('0' + base));
    if (!ok) return false;
  }
  return true;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsCoreFloat(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

}  // namespace

Json ResolvePlainScalar(const std::string& text) {
  const std::string& s = text;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  std::string_view v = s;
  bool negative = false;
  std::string_view digits = v;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  int base = 0;
  if (IsDigits(digits, 10)) {
    base = 10;
  } else if (v.starts_with("0o") && IsDigits(v.substr(2), 8)) {
    base = 8;
    digits = v.substr(2);
  } else if (v.starts_with("0x") && IsDigits(v.substr(2), 16)) {
    base = 16;
    digits = v.substr(2);
  }
  if (base != 0) {
    uint64_t u = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), u, base);
    if (ec == std::errc() && ptr == digits.data() + digits.size()) {
      if (!negative) {
        if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          return static_cast<int64_t>(u);
        }
        return u;
      }
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) {
        return static_cast<int64_t>(0 - u);
      }
    }
    // Out of range: fall through and keep it as a float.
  }
  if (base == 10 || IsCoreFloat(s)) {
    double d = std::strtod(s.c_str(), nullptr);
    if (std::isfinite(d)) return d;
  }
  return text;
}

}  // namespace baton::model
