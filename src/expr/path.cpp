#include "expr/path.h"

namespace baton::expr {
namespace {

// Indexes beyond this cannot address a real array and would overflow `long` soon after.
constexpr size_t kMaxIndexDigits = 9;

}  // namespace

Result<Path> ParsePath(std::string_view text) {
  auto fail = [&](const std::string& why) -> Status {
    return Status(errc::kValidation, "invalid path '" + std::string(text) + "': " + why);
  };
  if (text.empty()) return fail("empty path");
  if (!IsNameStart(text[0])) return fail("must start with a letter or '_'");

  Path path;
  path.text = std::string(text);
  size_t i = 0;
  auto read_name = [&] {
    size_t start = i;
    while (i < text.size() && IsNameChar(text[i])) ++i;
    path.segments.push_back(PathSegment{std::string(text.substr(start, i - start)), -1});
  };
  read_name();
  while (i < text.size()) {
    char c = text[i];
    if (c == '.') {
      ++i;
      // Segments after the root may start with a digit: step ids are [A-Za-z0-9_-]+, so
      // `steps.1st.output` must be addressable.
      if (i >= text.size() || !IsNameChar(text[i])) {
        return fail("expected a name after '.' at column " + std::to_string(i + 1));
      }
      read_name();
    } else if (c == '[') {
      size_t start = ++i;
      while (i < text.size() && IsDigit(text[i])) ++i;
      if (i == start || i >= text.size() || text[i] != ']') {
        return fail("expected a non-negative integer index and ']' at column " +
                    std::to_string(start + 1));
      }
      if (i - start > kMaxIndexDigits) return fail("index too large");
      path.segments.push_back(
          PathSegment{"", std::stol(std::string(text.substr(start, i - start)))});
      ++i;  // ']'
    } else {
      return fail(std::string("unexpected '") + c + "' at column " + std::to_string(i + 1));
    }
  }
  return path;
}

const Json* Walk(const Json& node, const Path& path, size_t from) {
  const Json* cur = &node;
  for (size_t i = from; i < path.segments.size(); ++i) {
    const PathSegment& seg = path.segments[i];
    if (seg.key.empty()) {
      if (!cur->is_array() || seg.index < 0 || static_cast<size_t>(seg.index) >= cur->size()) {
        return nullptr;
      }
      cur = &(*cur)[static_cast<size_t>(seg.index)];
    } else {
      if (!cur->is_object()) return nullptr;
      auto it = cur->find(seg.key);
      if (it == cur->end()) return nullptr;
      cur = &*it;
    }
  }
  return cur;
}

}  // namespace baton::expr
