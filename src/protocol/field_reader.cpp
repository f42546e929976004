#include "protocol/field_reader.h"

#include "protocol/worker_protocol.h"

namespace baton::protocol {
namespace {

constexpr size_t kMaxDescribed = 60;

const char* Range(int64_t min, int64_t max, std::string& buf) {
  if (max == std::numeric_limits<int64_t>::max()) {
    buf = "an integer >= " + std::to_string(min);
  } else {
    buf = "an integer " + std::to_string(min) + ".." + std::to_string(max);
  }
  return buf.c_str();
}

}  // namespace

std::string Describe(const Json& value) {
  if (value.is_array()) return value.empty() ? "[]" : "an array";
  if (value.is_object()) return value.empty() ? "{}" : "an object";
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() <= kMaxDescribed) return text;
  size_t cut = kMaxDescribed;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}

FieldReader::FieldReader(const Json& object, std::string type, std::string prefix)
    : object_(object), type_(std::move(type)), prefix_(std::move(prefix)) {}

void FieldReader::Fail(std::string_view key, const std::string& what) {
  if (!status_->ok()) return;
  *status_ =
      Status(errc::kValidation, type_ + ": field '" + prefix_ + std::string(key) + "': " + what);
}

const Json* FieldReader::Find(const char* key, bool required) {
  if (!ok() || !object_.is_object()) return nullptr;
  auto it = object_.find(key);
  if (it == object_.end()) {
    if (required) Fail(key, "required");
    return nullptr;
  }
  if (it->is_null() && !required) return nullptr;
  return &*it;
}

FieldReader FieldReader::Object(const char* key, bool required) {
  static const Json kEmpty = Json::object();
  const Json* v = Find(key, required);
  const Json* target = &kEmpty;
  if (v && !v->is_object()) {
    Fail(key, "expected an object, got " + Describe(*v));
  } else if (v) {
    target = v;
  }
  FieldReader sub(*target, type_, prefix_ + key + ".");
  sub.status_ = status_;
  return sub;
}

std::string FieldReader::String(const char* key) {
  const Json* v = Find(key, true);
  if (!v) return "";
  if (!v->is_string()) {
    Fail(key, "expected a string, got " + Describe(*v));
    return "";
  }
  return v->get<std::string>();
}

std::string FieldReader::NonEmptyString(const char* key) {
  const Json* v = Find(key, true);
  if (!v) return "";
  if (!v->is_string() || v->get_ref<const std::string&>().empty()) {
    Fail(key, "expected a non-empty string, got " + Describe(*v));
    return "";
  }
  return v->get<std::string>();
}

std::string FieldReader::OptionalString(const char* key, std::string fallback) {
  const Json* v = Find(key, false);
  if (!v) return fallback;
  if (!v->is_string()) {
    Fail(key, "expected a string, got " + Describe(*v));
    return fallback;
  }
  return v->get<std::string>();
}

std::optional<std::string> FieldReader::OptionalNonEmptyString(const char* key) {
  const Json* v = Find(key, false);
  if (!v) return std::nullopt;
  if (!v->is_string() || v->get_ref<const std::string&>().empty()) {
    Fail(key, "expected a non-empty string, got " + Describe(*v));
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::string FieldReader::WorkerId(const char* key) {
  const Json* v = Find(key, true);
  if (!v) return "";
  if (!v->is_string() || !IsValidWorkerId(v->get_ref<const std::string&>())) {
    Fail(key, "expected 1 to " + std::to_string(kMaxWorkerIdLength) +
                  " characters of [A-Za-z0-9._-], got " + Describe(*v));
    return "";
  }
  return v->get<std::string>();
}

int64_t FieldReader::Integer(const char* key, int64_t min, int64_t max,
                             std::optional<int64_t> fallback) {
  const Json* v = Find(key, !fallback.has_value());
  if (!v) return fallback.value_or(min);
  bool in_range = false;
  int64_t value = 0;
  if (v->is_number_unsigned()) {
    // An unsigned value beyond int64 is out of every range we accept.
    uint64_t u = v->get<uint64_t>();
    in_range = u <= static_cast<uint64_t>(max);
    value = in_range ? static_cast<int64_t>(u) : 0;
  } else if (v->is_number_integer()) {
    value = v->get<int64_t>();
    in_range = true;
  }
  if (!in_range || value < min || value > max) {
    std::string buf;
    Fail(key, std::string("expected ") + Range(min, max, buf) + ", got " + Describe(*v));
    return fallback.value_or(min);
  }
  return value;
}

std::optional<int64_t> FieldReader::OptionalInteger(const char* key, int64_t min) {
  if (!Find(key, false)) return std::nullopt;
  int64_t value = Integer(key, min);
  if (!ok()) return std::nullopt;
  return value;
}

bool FieldReader::OptionalBool(const char* key, bool fallback) {
  const Json* v = Find(key, false);
  if (!v) return fallback;
  if (!v->is_boolean()) {
    Fail(key, "expected true or false, got " + Describe(*v));
    return fallback;
  }
  return v->get<bool>();
}

std::vector<std::string> FieldReader::StringList(const char* key, bool required) {
  std::vector<std::string> out;
  const Json* v = Find(key, required);
  if (!v) return out;
  if (!v->is_array() || (required && v->empty())) {
    Fail(key, std::string(required ? "expected a non-empty array" : "expected an array") +
                  " of strings, got " + Describe(*v));
    return out;
  }
  out.reserve(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    const Json& e = (*v)[i];
    if (!e.is_string() || e.get_ref<const std::string&>().empty()) {
      Fail(std::string(key) + "[" + std::to_string(i) + "]",
           "expected a non-empty string, got " + Describe(e));
      return {};
    }
    out.push_back(e.get<std::string>());
  }
  return out;
}

Json FieldReader::Any(const char* key) {
  const Json* v = Find(key, false);
  if (!v) return Json();
  if (NestedDeeperThan(*v, kMaxJsonDepth)) {
    Fail(key, "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    return Json();
  }
  return *v;
}

Json FieldReader::OptionalObject(const char* key, Json fallback) {
  const Json* v = Find(key, false);
  if (!v) return fallback;
  if (!v->is_object()) {
    Fail(key, "expected an object, got " + Describe(*v));
    return fallback;
  }
  return Any(key);
}

size_t FieldReader::Enum(const char* key, const std::vector<const char*>& names) {
  const Json* v = Find(key, true);
  if (!v) return 0;
  if (v->is_string()) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (v->get_ref<const std::string&>() == names[i]) return i;
    }
  }
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) {
    list += i == 0 ? "" : (i + 1 == names.size() ? " or " : ", ");
    list += std::string("\"") + names[i] + "\"";
  }
  Fail(key, "expected " + list + ", got " + Describe(*v));
  return 0;
}

}  // namespace baton::protocol
