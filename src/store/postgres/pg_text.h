// What PostgreSQL's text type accepts: UTF-8 without NUL bytes. The store's records may
// hold other bytes (a command's stderr); those are replaced before they are bound.
#pragma once

#include <string>
#include <string_view>

namespace baton::pg {

// True when `s` is valid UTF-8 (no overlong forms, no surrogates) without a NUL byte.
bool IsStorableText(std::string_view s);
// `s` with every NUL byte and every byte of an invalid UTF-8 sequence replaced by U+FFFD.
std::string StorableText(std::string_view s);

}  // namespace baton::pg
