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
#include <functional>
#include <string>
#include <string_view>

namespace baton {

// Where a JSON text was refused.
struct JsonParseError {
  std::string field;           // "input.a[3].b" ("" at the top level or before the first value)
  size_t byte = 0;             // 1-based offset where the parser stopped
  std::string message;         // "number 1e400 is out of range", "nesting deeper than 128 levels"
  bool duplicate_key = false;  // refused for a repeated key (refuse_duplicate_keys)
  bool stopped = false;        // a JsonArrayStream's reader asked to stop
  // "field 'input.a': number 1e400 is out of range (at byte 12)"
  std::string Describe() const;
};

struct JsonParseLimits {
  // Containers nested deeper than this are refused while parsing, before any recursive
  // walk sees them. 0 takes the process default (DefaultMaxJsonDepth()).
  size_t max_depth = 0;
  // A key repeated within one object is an error ("duplicate key 'x'") instead of the
  // last one winning.
  bool refuse_duplicate_keys = false;
};

// The process-wide default nesting limit: 128 unless changed (server --max-json-depth).
size_t DefaultMaxJsonDepth();
void SetDefaultMaxJsonDepth(size_t depth);

// Parses one JSON text. On failure returns false and fills *error; never throws.
bool ParseJsonText(std::string_view text, Json* out, JsonParseError* error,
                   JsonParseLimits limits = {});

// Streams the elements of one member of the top-level object. When that member's value
// is an array, each element is handed to `on_element` as soon as it is complete and then
// dropped, so a document with a huge list never holds the whole list; the member is left
// as an empty array in the result. `root` is the top-level object as read so far (the
// members before this one). Returning false stops the parse: ParseJsonText then returns
// false with error->stopped set.
struct JsonArrayStream {
  std::string_view member;
  std::function<bool(const Json& root, size_t index, Json& element)> on_element;
};

// ParseJsonText, streaming `stream.member` (see JsonArrayStream).
bool ParseJsonText(std::string_view text, Json* out, JsonParseError* error, JsonParseLimits limits,
                   const JsonArrayStream& stream);

// The same as a Result: INVALID_ARGUMENT "<what> is not valid JSON: <Describe()>".
Result<Json> ParseJsonText(std::string_view text, const std::string& what,
                           JsonParseLimits limits = {});

namespace json_internal {
// nlohmann's parser alone, with the same limits and errors: the reference the fast reader
// is compared with (tests, fuzz_json).
bool ParseWithNlohmann(std::string_view text, Json* out, JsonParseError* error,
                       JsonParseLimits limits = {});
}  // namespace json_internal

}  // namespace baton
