// Parsing untrusted JSON text: bounded nesting, never an exception, errors that name
// the field.
//
// nlohmann's own parse() throws on numbers out of a double's range (out_of_range.406,
// not a parse_error) and accepts any nesting depth; the recursive walks that follow
// (templates, validation, dump) would then overflow the stack. Every parse of text that
// comes from outside the process goes through ParseJsonText instead.
#pragma once

#include <baton/json.h>
#include <baton/status.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace baton {

// Where a JSON text was refused.
struct JsonParseError {
  std::string field;    // "input.a[3].b" ("" at the top level or before the first value)
  size_t byte = 0;      // 1-based offset where the parser stopped
  std::string message;  // "number 1e400 is out of range", "nesting deeper than 128 levels"
  // "field 'input.a': number 1e400 is out of range (at byte 12)"
  std::string Describe() const;
};

struct JsonParseLimits {
  // Containers nested deeper than this are refused while parsing, before any recursive
  // walk sees them. 0 takes the process default (DefaultMaxJsonDepth()).
  size_t max_depth = 0;
};

// The process-wide default nesting limit: 128 unless changed (server --max-json-depth).
size_t DefaultMaxJsonDepth();
void SetDefaultMaxJsonDepth(size_t depth);

// Parses one JSON text. On failure returns false and fills *error; never throws.
bool ParseJsonText(std::string_view text, Json* out, JsonParseError* error,
                   JsonParseLimits limits = {});

// The same as a Result: INVALID_ARGUMENT "<what> is not valid JSON: <Describe()>".
Result<Json> ParseJsonText(std::string_view text, const std::string& what,
                           JsonParseLimits limits = {});

// The deepest container nesting in a YAML (or JSON) text, found by a linear scan that
// does not recurse: flow brackets outside quotes and comments, plus block indentation
// levels. An upper bound good enough to refuse a document before a recursive parser
// (yaml-cpp) sees it. `[` and `{` open a flow collection only where YAML reads them as
// indicators (at the start of a token), not inside a plain scalar (`a[1]`). With
// `unclosed`, it says whether a flow collection is still open at the end: yaml-cpp 0.7
// loops without end on some of those (found by fuzz_workflow).
size_t ScanYamlNestingDepth(std::string_view text, bool* unclosed = nullptr);

}  // namespace baton
