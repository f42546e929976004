// Writing JSON text directly, for the few hot messages whose DOM (a map node per member)
// cost more than the text itself: the live feed's events and the commands sent to
// workers. Everything else builds a Json and dumps it.
#pragma once

#include <baton/json.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace baton {

// A JSON string literal of `s`. Invalid UTF-8 is replaced (U+FFFD) through nlohmann, as
// every other body is; the common case, plain printable ASCII, is copied as it is.
inline void AppendJsonString(std::string& out, std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') {
      out += Json(std::string(s)).dump(-1, ' ', false, Json::error_handler_t::replace);
      return;
    }
  }
  out += '"';
  out += s;
  out += '"';
}

// `,"key":value` (the key is a literal of plain ASCII).
inline void AppendJsonMember(std::string& out, std::string_view key, int64_t value) {
  out += ",\"";
  out += key;
  out += "\":";
  out += std::to_string(value);
}

// A value's compact text, invalid UTF-8 replaced.
inline void AppendJsonValue(std::string& out, const Json& value) {
  out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace baton
