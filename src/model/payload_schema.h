// A small subset of JSON Schema for the payloads a workflow receives from outside (a
// signal's payload, `type: wait` with `signal` and `schema`). Supported keywords:
//   type        "object" | "array" | "string" | "number" | "integer" | "boolean" | "null",
//               or a list of them
//   properties  {name: schema}     required  [name, ...]
//   additionalProperties  false    (other names are then refused)
//   items       schema             enum      [value, ...]
//   minLength / maxLength, minimum / maximum, minItems / maxItems
//   description, title             (ignored)
// Any other keyword is an error in the definition, not silently ignored.
#pragma once

#include <baton/json.h>

#include <string>

namespace baton::model {

// Empty when `schema` is a valid definition; otherwise what is wrong and where, as a
// JSON pointer relative to the schema ("/properties/approver/type: unknown type 'text'").
std::string CheckPayloadSchema(const Json& schema);

// Empty when `payload` matches `schema` (already checked by CheckPayloadSchema); otherwise
// the first mismatch, naming its place in the payload ("/approver: expected string, got
// number").
std::string MatchPayloadSchema(const Json& schema, const Json& payload);

}  // namespace baton::model
