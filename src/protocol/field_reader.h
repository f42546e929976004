// FieldReader: typed access to the fields of one JSON object of a protocol message,
// keeping the first problem as a VALIDATION status that names the message type and the
// field ("command: field 'execution.attempt': expected an integer >= 1, got 0").
//
// After the first problem every accessor returns its default and records nothing more,
// so a parser reads all fields and checks status() once. Internal to the protocol module.
#pragma once

#include <baton/json.h>
#include <baton/status.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace baton::protocol {

// A short description of a value for messages: scalars as JSON (strings cut after 60
// bytes), "[]", "{}", "an array", "an object".
std::string Describe(const Json& value);

class FieldReader {
 public:
  // `object` must outlive the reader. `type` names the message in errors.
  FieldReader(const Json& object, std::string type) : FieldReader(object, std::move(type), "") {}

  // The nested object at `key` (an error when it is not an object; an empty object when
  // it is absent and not required). Shares the error of this reader.
  FieldReader Object(const char* key, bool required);

  std::string String(const char* key);          // required, may be empty
  std::string NonEmptyString(const char* key);  // required
  std::string OptionalString(const char* key, std::string fallback);
  std::optional<std::string> OptionalNonEmptyString(const char* key);
  std::string WorkerId(const char* key);  // required
  // Required when `fallback` is nullopt; min <= value <= max.
  int64_t Integer(const char* key, int64_t min, int64_t max = std::numeric_limits<int64_t>::max(),
                  std::optional<int64_t> fallback = std::nullopt);
  std::optional<int64_t> OptionalInteger(const char* key, int64_t min);
  bool OptionalBool(const char* key, bool fallback);
  // An array of non-empty strings; `required` also means non-empty.
  std::vector<std::string> StringList(const char* key, bool required);
  Json Any(const char* key);  // optional; null when absent
  Json OptionalObject(const char* key, Json fallback);
  // One of `names` (required); returns its index.
  size_t Enum(const char* key, const std::vector<const char*>& names);

  bool ok() const { return status_->ok(); }
  const Status& status() const { return *status_; }
  // Records an error on `key` unless one is recorded already.
  void Fail(std::string_view key, const std::string& what);

 private:
  FieldReader(const Json& object, std::string type, std::string prefix);
  // The value at `key`; nullptr when absent (or null, for optional fields), also after
  // an earlier error. A required field that is absent is an error.
  const Json* Find(const char* key, bool required);

  const Json& object_;
  std::string type_;
  std::string prefix_;  // "execution." for nested objects
  std::shared_ptr<Status> status_ = std::make_shared<Status>();
};

}  // namespace baton::protocol
