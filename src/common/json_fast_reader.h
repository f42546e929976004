// A JSON reader for the common case: valid text, read in one pass with no per-character
// bookkeeping, feeding the same SAX handler nlohmann's parser would. nlohmann's lexer
// copies every character of a string and a number into a token buffer one push_back at a
// time; for a large workflow that was a quarter of `baton validate`.
//
// The reader accepts exactly RFC 8259 JSON (UTF-8 checked as nlohmann checks it). It does
// not explain errors: on any text it does not accept it returns kInvalid, and the caller
// parses the text again with nlohmann's parser, whose messages users see. A handler that
// refuses an event (too deep, a repeated key, a reader that stops) ends the read with
// kStopped, at the same event nlohmann's parser would have stopped at.
//
// Internal to baton_common (json_parse.cpp); not thread-safe (one reader per parse).
#pragma once

#include <baton/json.h>

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace baton::json_internal {

enum class FastReadOutcome { kOk, kStopped, kInvalid };

template <class Sax>
class FastJsonReader {
 public:
  FastJsonReader(std::string_view text, Sax* sax)
      : p_(text.data()), end_(text.data() + text.size()), sax_(sax) {}

  FastReadOutcome Run() {
    // A byte-order mark (and whatever is wrong with one) is left to nlohmann's reader.
    if (p_ != end_ && static_cast<unsigned char>(*p_) == 0xEF) return FastReadOutcome::kInvalid;
    std::vector<char> open;  // '{' or '[' per open container, innermost last
    for (;;) {
      // A value.
      SkipSpace();
      if (p_ == end_) return FastReadOutcome::kInvalid;
      const char c = *p_;
      if (c == '{' || c == '[') {
        ++p_;
        if (!(c == '{' ? sax_->start_object(kUnknownSize) : sax_->start_array(kUnknownSize))) {
          return FastReadOutcome::kStopped;
        }
        SkipSpace();
        if (p_ != end_ && *p_ == (c == '{' ? '}' : ']')) {  // empty
          ++p_;
          if (!(c == '{' ? sax_->end_object() : sax_->end_array())) {
            return FastReadOutcome::kStopped;
          }
        } else {
          open.push_back(c);
          if (c == '{') {
            if (FastReadOutcome k = Key(); k != FastReadOutcome::kOk) return k;
          }
          continue;  // its first value
        }
      } else if (FastReadOutcome k = Scalar(); k != FastReadOutcome::kOk) {
        return k;
      }
      // After a value: the end, a separator, or a container's close.
      for (;;) {
        SkipSpace();
        if (open.empty()) return p_ == end_ ? FastReadOutcome::kOk : FastReadOutcome::kInvalid;
        if (p_ == end_) return FastReadOutcome::kInvalid;
        const char next = *p_++;
        const bool object = open.back() == '{';
        if (next == ',') {
          if (object) {
            if (FastReadOutcome k = Key(); k != FastReadOutcome::kOk) return k;
          }
          break;  // the next value
        }
        if (next != (object ? '}' : ']')) return FastReadOutcome::kInvalid;
        open.pop_back();
        if (!(object ? sax_->end_object() : sax_->end_array())) return FastReadOutcome::kStopped;
      }
    }
  }

 private:
  static constexpr std::size_t kUnknownSize = static_cast<std::size_t>(-1);

  void SkipSpace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  // `"key"` then `:`.
  FastReadOutcome Key() {
    SkipSpace();
    if (p_ == end_ || *p_ != '"') return FastReadOutcome::kInvalid;
    ++p_;
    if (!String()) return FastReadOutcome::kInvalid;
    if (!sax_->key(buf_)) return FastReadOutcome::kStopped;
    SkipSpace();
    if (p_ == end_ || *p_ != ':') return FastReadOutcome::kInvalid;
    ++p_;
    return FastReadOutcome::kOk;
  }

  FastReadOutcome Scalar() {
    bool accepted = true;
    switch (*p_) {
      case '"':
        ++p_;
        if (!String()) return FastReadOutcome::kInvalid;
        accepted = sax_->string(buf_);
        break;
      case 't':
        if (!Literal("true")) return FastReadOutcome::kInvalid;
        accepted = sax_->boolean(true);
        break;
      case 'f':
        if (!Literal("false")) return FastReadOutcome::kInvalid;
        accepted = sax_->boolean(false);
        break;
      case 'n':
        if (!Literal("null")) return FastReadOutcome::kInvalid;
        accepted = sax_->null();
        break;
      default:
        return Number();
    }
    return accepted ? FastReadOutcome::kOk : FastReadOutcome::kStopped;
  }

  bool Literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) {
      return false;
    }
    p_ += word.size();
    return true;
  }

  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }

  // -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?, typed as nlohmann types it: an
  // integer that fits is signed when negative and unsigned otherwise; anything else a
  // double. A double out of range (nlohmann refuses overflow, accepts underflow) is left
  // to nlohmann's reader.
  FastReadOutcome Number() {
    const char* start = p_;
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_ || !IsDigit(*p_)) return FastReadOutcome::kInvalid;
    if (*p_ == '0') {
      ++p_;
    } else {
      while (p_ != end_ && IsDigit(*p_)) ++p_;
    }
    bool integer = true;
    if (p_ != end_ && *p_ == '.') {
      integer = false;
      ++p_;
      if (p_ == end_ || !IsDigit(*p_)) return FastReadOutcome::kInvalid;
      while (p_ != end_ && IsDigit(*p_)) ++p_;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      integer = false;
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !IsDigit(*p_)) return FastReadOutcome::kInvalid;
      while (p_ != end_ && IsDigit(*p_)) ++p_;
    }
    if (integer) {
      if (negative) {
        std::int64_t v = 0;
        auto [at, ec] = std::from_chars(start, p_, v);
        if (ec == std::errc() && at == p_) {
          return sax_->number_integer(v) ? FastReadOutcome::kOk : FastReadOutcome::kStopped;
        }
      } else {
        std::uint64_t v = 0;
        auto [at, ec] = std::from_chars(start, p_, v);
        if (ec == std::errc() && at == p_) {
          return sax_->number_unsigned(v) ? FastReadOutcome::kOk : FastReadOutcome::kStopped;
        }
      }
      // Too large for an integer: a double, as nlohmann reads it.
    }
    double v = 0;
    auto [at, ec] = std::from_chars(start, p_, v);
    if (ec != std::errc() || at != p_) return FastReadOutcome::kInvalid;
    return sax_->number_float(v, number_text_) ? FastReadOutcome::kOk : FastReadOutcome::kStopped;
  }

  // The rest of a string after its opening quote, into buf_. False for anything JSON
  // refuses: a control character, a bad escape, a lone surrogate, malformed UTF-8, no end.
  bool String() {
    buf_.clear();
    for (;;) {
      const char* run = p_;
      while (p_ != end_ && kPlain[static_cast<unsigned char>(*p_)]) ++p_;
      buf_.append(run, p_);
      if (p_ == end_) return false;
      const unsigned char c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c == '\\') {
        ++p_;
        if (!Escape()) return false;
      } else if (c >= 0x80) {
        if (!Utf8Sequence()) return false;
      } else {
        return false;  // a control character
      }
    }
  }

  bool Escape() {
    if (p_ == end_) return false;
    switch (*p_++) {
      case '"':
        buf_ += '"';
        return true;
      case '\\':
        buf_ += '\\';
        return true;
      case '/':
        buf_ += '/';
        return true;
      case 'b':
        buf_ += '\b';
        return true;
      case 'f':
        buf_ += '\f';
        return true;
      case 'n':
        buf_ += '\n';
        return true;
      case 'r':
        buf_ += '\r';
        return true;
      case 't':
        buf_ += '\t';
        return true;
      case 'u':
        break;
      default:
        return false;
    }
    std::uint32_t code = 0;
    if (!Hex4(&code)) return false;
    if (code >= 0xDC00 && code <= 0xDFFF) return false;  // a low surrogate first
    if (code >= 0xD800 && code <= 0xDBFF) {
      std::uint32_t low = 0;
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
      p_ += 2;
      if (!Hex4(&low) || low < 0xDC00 || low > 0xDFFF) return false;
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    AppendUtf8(code);
    return true;
  }

  bool Hex4(std::uint32_t* out) {
    if (end_ - p_ < 4) return false;
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = *p_++;
      v <<= 4;
      if (h >= '0' && h <= '9') {
        v |= static_cast<std::uint32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        v |= static_cast<std::uint32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        v |= static_cast<std::uint32_t>(h - 'A' + 10);
      } else {
        return false;
      }
    }
    *out = v;
    return true;
  }

  void AppendUtf8(std::uint32_t code) {
    if (code < 0x80) {
      buf_ += static_cast<char>(code);
    } else if (code < 0x800) {
      buf_ += static_cast<char>(0xC0 | (code >> 6));
      buf_ += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      buf_ += static_cast<char>(0xE0 | (code >> 12));
      buf_ += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      buf_ += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      buf_ += static_cast<char>(0xF0 | (code >> 18));
      buf_ += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      buf_ += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      buf_ += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  // One well-formed UTF-8 sequence of 2-4 bytes (Unicode's table 3-7: no overlong forms,
  // no surrogates, nothing past U+10FFFF), copied as it is.
  bool Utf8Sequence() {
    const unsigned char lead = static_cast<unsigned char>(*p_);
    int more = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) {
      more = 1;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      more = 2;
      if (lead == 0xE0) lo = 0xA0;
      if (lead == 0xED) hi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      more = 3;
      if (lead == 0xF0) lo = 0x90;
      if (lead == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (end_ - p_ <= more) return false;
    for (int i = 1; i <= more; ++i) {
      const unsigned char b = static_cast<unsigned char>(p_[i]);
      if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF)) return false;
    }
    buf_.append(p_, p_ + more + 1);
    p_ += more + 1;
    return true;
  }

  // Bytes a string copies as they are: printable ASCII but the quote and the backslash.
  static constexpr auto kPlain = [] {
    std::array<bool, 256> t{};
    for (int c = 0x20; c < 0x80; ++c) t[c] = c != '"' && c != '\\';
    return t;
  }();

  const char* p_;
  const char* const end_;
  Sax* sax_;
  std::string buf_;          // the string or key being read
  std::string number_text_;  // number_float's text argument: unused by our handler
};

}  // namespace baton::json_internal
