// Workflow source text to JSON, remembering where every node was written.
//
// Internal to the model module.
#pragma once

#include <baton/json.h>
#include <baton/workflow.h>

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace baton::model {

// JSON pointer (RFC 6901) helpers: "" is the root, "/steps/0/id" a member.
std::string PointerChild(std::string_view parent, std::string_view key);
std::string PointerIndex(std::string_view parent, size_t index);

// 1-based source lines keyed by JSON pointer. An object member maps to the line of its
// key, an array element to the line where it starts.
class LineMap {
 public:
  void Set(std::string pointer, int line) { lines_.emplace(std::move(pointer), line); }
  // The line of `pointer`, else of its nearest ancestor that has one; 0 when none does.
  int Find(std::string_view pointer) const;
  bool empty() const { return lines_.empty(); }
  size_t size() const { return lines_.size(); }

 private:
  std::unordered_map<std::string, int> lines_;
};

struct SourceDoc {
  Json value;
  LineMap lines;
  // Syntax errors (then `value` is unusable and `syntax_error` is set) and duplicate keys.
  std::vector<Diagnostic> diagnostics;
  bool syntax_error = false;
};

// Parses YAML, or JSON when the first non-space character is '{'. Never throws.
SourceDoc ParseSource(std::string_view text, const std::string& file);

// YAML 1.2 core schema resolution of a plain (unquoted) scalar: null, true/false,
// integers (decimal, 0o octal, 0x hex), floats; anything else (and .inf/.nan, which JSON
// cannot hold) is a string.
Json ResolvePlainScalar(const std::string& text);

// Offset of the first byte that is not valid UTF-8, or npos.
size_t FindInvalidUtf8(std::string_view text);

}  // namespace baton::model
