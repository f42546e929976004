// Dotted paths into JSON values: `steps.download.output.files[0].name`.
#pragma once

#include <baton/json.h>
#include <baton/status.h>

#include <string>
#include <string_view>
#include <vector>

namespace baton::expr {

// The characters of path names, shared with the condition parser's tokenizer.
inline bool IsNameStart(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
inline bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
inline bool IsNameChar(char c) {
  return IsNameStart(c) || IsDigit(c) || c == '-';
}

struct PathSegment {
  std::string key;  // object key; empty when this is an index
  long index = -1;  // array index (>= 0) when key is empty
};

struct Path {
  std::vector<PathSegment> segments;  // at least one; segments[0] is the root name
  std::string text;                   // as written, for messages
  const std::string& root() const { return segments.front().key; }
};

// Parses `a.b[0].c` (root: [A-Za-z_][A-Za-z0-9_-]*; later names: [A-Za-z0-9_-]+, since
// step ids may start with a digit; indexes: non-negative integers). Error code
// VALIDATION with the offending text.
Result<Path> ParsePath(std::string_view text);

// Follows segments [from, end) starting at `node`; nullptr when any is missing.
const Json* Walk(const Json& node, const Path& path, size_t from = 0);

// Where templates and conditions look values up. The engine implements it over an
// execution's state; JsonScope serves tests and simple uses.
class Scope {
 public:
  virtual ~Scope() = default;
  // The value at `path`, or nullptr when it does not exist. The pointer stays valid
  // until the scope changes.
  virtual const Json* Find(const Path& path) const = 0;
};

// Roots are the keys of one JSON object: {"inputs": {...}, "steps": {...}, ...}.
class JsonScope final : public Scope {
 public:
  explicit JsonScope(const Json& root) : root_(root) {}
  const Json* Find(const Path& path) const override { return Walk(root_, path); }

 private:
  const Json& root_;
};

}  // namespace baton::expr
