// PostgreSQL array literals ('{"a","b",NULL}'), built one element at a time: how a commit
// sends many rows of one table in one statement, a column per array parameter
// (INSERT ... SELECT * FROM unnest($1::text[], $2::bigint[], ...)).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace baton::pg {

class ArrayLiteral {
 public:
  void Clear() {
    text_.assign("{");
    empty_ = true;
  }
  void AddNull() { Separate().append("NULL"); }
  void AddInt(int64_t v) { Separate().append(std::to_string(v)); }
  // `s` must be storable text (pg_text.h): quoted, with '"' and '\' escaped.
  void AddText(std::string_view s);
  // The literal; Add* must not be called after it until Clear().
  const std::string& Finish() {
    text_.push_back('}');
    return text_;
  }

 private:
  std::string& Separate() {
    if (!empty_) text_.push_back(',');
    empty_ = false;
    return text_;
  }
  std::string text_ = "{";
  bool empty_ = true;
};

// Whole literals of names (ids are validated names: storable text) and of numbers.
std::string TextArray(const std::vector<std::string>& values);
std::string IntArray(const std::vector<int64_t>& values);

}  // namespace baton::pg
