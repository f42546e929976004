// Workflow source text to JSON, remembering where every node was written.
//
// Internal to the model module.
#pragma once

#include <baton/json.h>
#include <baton/workflow.h>

#include <functional>
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
//
// A JSON source's map is filled only when a line other than a step's is first asked for
// (an error message): the happy path pays no string per node. Such a map refers to the
// source text, and must not be asked after the text is gone. Not thread-safe, Find()
// included.
class LineMap {
 public:
  void Set(std::string pointer, int line) { lines_.emplace(std::move(pointer), line); }
  // The line of `pointer`, else of its nearest ancestor that has one; 0 when none does.
  int Find(std::string_view pointer) const;
  // Lines of the elements of the top-level `steps` array, known without `fill`; `fill`
  // Set()s every line, and runs at most once, at the first Find() that needs it.
  void SetLazy(std::vector<int> step_lines, std::function<void(LineMap*)> fill);
  bool empty() const { return lines_.empty() && !fill_ && step_lines_.empty(); }
  size_t size() const { return lines_.size(); }  // the lines Set() so far

 private:
  mutable std::unordered_map<std::string, int> lines_;
  mutable std::function<void(LineMap*)> fill_;
  std::vector<int> step_lines_;
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

// The 1-based line where each element of the top-level object's "steps" array starts,
// in one pass over `text` that allocates nothing per node. `text` must be valid JSON
// (as nlohmann accepted it); empty when there is no such array.
std::vector<int> JsonStepLines(std::string_view text);

// The lines of a valid JSON document: `step_lines` (JsonStepLines) at once, every other
// line from a libyaml pass over `text` the first time one is asked for. `text` must
// outlive `lines`.
void SetJsonLines(std::string_view text, const std::string& file, std::vector<int> step_lines,
                  LineMap* lines);

// YAML 1.2 core schema resolution of a plain (unquoted) scalar: null, true/false,
// integers (decimal, 0o octal, 0x hex), floats; anything else (and .inf/.nan, which JSON
// cannot hold) is a string.
Json ResolvePlainScalar(const std::string& text);

// Offset of the first byte that is not valid UTF-8, or npos.
size_t FindInvalidUtf8(std::string_view text);
// Offset of the first byte neither YAML nor JSON (outside its strings' escapes) allows: a
// C0 control character other than tab, LF and CR, or DEL; npos when there is none.
size_t FindControlCharacter(std::string_view text);

}  // namespace baton::model
