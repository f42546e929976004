// Diagnostics plumbing and typed accessors shared by the parsers.
#include "model/builder.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace baton::model {

// Each part is built in one allocation (or none, when short): a Where is made for every
// field read, on the happy path too.
Where Where::Key(std::string_view key) const {
  std::string f;
  f.reserve(field.size() + 1 + key.size());
  f.append(field);
  if (!field.empty()) f += '.';
  f.append(key);
  return Where{PointerChild(pointer, key), step, std::move(f)};
}

Where At::Build() const {
  if (where_) return *where_;
  if (parent_where_) return by_index_ ? parent_where_->Index(index_) : parent_where_->Key(key_);
  Where parent = parent_->Build();
  return by_index_ ? parent.Index(index_) : parent.Key(key_);
}

Where Where::Index(size_t index) const {
  std::string p = PointerIndex(pointer, index);
  // The index as written in the pointer's last segment.
  const std::string_view digits = std::string_view(p).substr(p.rfind('/') + 1);
  std::string f;
  f.reserve(field.size() + 2 + digits.size());
  f.append(field);
  f += '[';
  f.append(digits);
  f += ']';
  return Where{std::move(p), step, std::move(f)};
}

void Diags::Add(const Where& where, std::string message) {
  out_.push_back(
      Diagnostic{file_, LineOf(where.pointer), where.step, where.field, std::move(message)});
}

void Diags::Append(std::vector<Diagnostic> more) {
  for (Diagnostic& d : more) out_.push_back(std::move(d));
}

std::vector<Diagnostic> Diags::Take() {
  std::stable_sort(out_.begin(), out_.end(),
                   [](const Diagnostic& a, const Diagnostic& b) { return a.line < b.line; });
  return std::move(out_);
}

const char* TypeName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::string:
      return "string";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "value";
  }
}

std::string Shown(const Json& value) {
  std::string text = value.is_string() ? value.get<std::string>()
                                       : value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

std::string Abbreviated(std::string_view s) {
  if (s.size() <= 48) return std::string(s);
  return std::string(s.substr(0, 40)) + "... (" + std::to_string(s.size()) + " bytes)";
}

bool HasTemplate(const Json& value) {
  if (value.is_string()) return value.get_ref<const std::string&>().find("{{") != std::string::npos;
  if (value.is_array() || value.is_object()) {
    for (const Json& v : value) {
      if (HasTemplate(v)) return true;
    }
  }
  return false;
}

namespace {
void WrongType(const char* expected, const Json& v, Diags& d, const At& where) {
  d.Add(where, std::string("expected ") + expected + ", got " + TypeName(v));
}
}  // namespace

std::optional<std::string> GetString(const Json& v, Diags& d, const At& where) {
  if (v.is_string()) return v.get<std::string>();
  WrongType("string", v, d, where);
  return std::nullopt;
}

std::optional<int64_t> GetInt(const Json& v, Diags& d, const At& where) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return static_cast<int64_t>(v.get<uint64_t>());
    }
    d.Add(where, "integer out of range");
    return std::nullopt;
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  WrongType("integer", v, d, where);
  return std::nullopt;
}

std::optional<double> GetNumber(const Json& v, Diags& d, const At& where) {
  if (v.is_number()) return v.get<double>();
  WrongType("number", v, d, where);
  return std::nullopt;
}

std::optional<bool> GetBool(const Json& v, Diags& d, const At& where) {
  if (v.is_boolean()) return v.get<bool>();
  WrongType("boolean", v, d, where);
  return std::nullopt;
}

bool ExpectObject(const Json& v, Diags& d, const At& where) {
  if (v.is_object()) return true;
  WrongType("object", v, d, where);
  return false;
}

bool ExpectArray(const Json& v, Diags& d, const At& where) {
  if (v.is_array()) return true;
  WrongType("array", v, d, where);
  return false;
}

std::optional<Duration> GetDuration(const Json& v, Diags& d, const At& where) {
  Result<Duration> r = ParseDuration(v);
  if (r.ok()) return *r;
  d.Add(where, r.status().message());
  return std::nullopt;
}

std::optional<Duration> GetTimeout(const Json& v, Diags& d, const At& where) {
  std::optional<Duration> r = GetDuration(v, d, where);
  if (r && r->count() <= 0) {
    d.Add(where, "must be greater than 0");
    return std::nullopt;
  }
  return r;
}

std::optional<Priority> GetPriority(const Json& v, Diags& d, const At& where) {
  std::optional<std::string> s = GetString(v, d, where);
  if (!s) return std::nullopt;
  std::optional<Priority> p = ParsePriority(*s);
  if (!p) d.Add(where, "unknown priority '" + *s + "' (valid: low, normal, high, critical)");
  return p;
}

std::optional<TriggerRule> GetTriggerRule(const Json& v, Diags& d, const At& where) {
  std::optional<std::string> s = GetString(v, d, where);
  if (!s) return std::nullopt;
  std::optional<TriggerRule> r = ParseTriggerRule(*s);
  if (!r) {
    d.Add(where, "unknown trigger rule '" + *s +
                     "' (valid: all_success, all_done, all_failed, one_success, one_failed, "
                     "none_failed, none_skipped, always)");
  }
  return r;
}

void CheckFields(const Json& object, const std::vector<std::string>& valid, Diags& d,
                 const Where& where, std::string_view what) {
  if (!object.is_object() || FieldsKnown(object, {&valid})) return;
  std::vector<std::string> sorted = valid;
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [key, value] : object.items()) {
    if (std::find(valid.begin(), valid.end(), key) != valid.end()) continue;
    std::string msg = "unknown field '" + key + "'";
    if (!what.empty()) msg += " " + std::string(what);
    msg += " (valid: " + JoinNames(sorted) + ")";
    d.Add(where.Key(key), std::move(msg));
  }
}

bool FieldsKnown(const Json& object, std::initializer_list<const std::vector<std::string>*> lists) {
  if (!object.is_object()) return true;
  for (const auto& [key, value] : object.get_ref<const Json::object_t&>()) {
    bool known = false;
    for (const std::vector<std::string>* list : lists) {
      if (std::find(list->begin(), list->end(), key) != list->end()) {
        known = true;
        break;
      }
    }
    if (!known) return false;
  }
  return true;
}

void MissingField(std::string_view name, Diags& d, const Where& where) {
  d.Add(where.Key(name), "missing required field '" + std::string(name) + "'");
}

void ApplyCircuitBreaker(const Json& value, CircuitBreakerSpec* spec, Diags& d,
                         const Where& where) {
  if (!ExpectObject(value, d, where)) return;
  CheckFields(value, {"key", "failure_threshold", "recovery_timeout", "success_threshold"}, d,
              where);
  if (value.contains("key")) {
    Where w = where.Key("key");
    if (auto key = GetString(value["key"], d, w)) {
      if (key->empty() || key->size() > kMaxNameBytes) {
        d.Add(w, "expected 1 to " + std::to_string(kMaxNameBytes) + " bytes, got " +
                     std::to_string(key->size()));
      } else {
        spec->key = *key;
      }
    }
  }
  auto count = [&](const char* field, int64_t max, int* out) {
    if (!value.contains(field)) return;
    Where w = where.Key(field);
    std::optional<int64_t> n = GetInt(value[field], d, w);
    if (n && (*n < 1 || *n > max)) {
      d.Add(w, "must be between 1 and " + std::to_string(max) + ", got " + std::to_string(*n));
    } else if (n) {
      *out = static_cast<int>(*n);
    }
  };
  count("failure_threshold", 1'000'000, &spec->failure_threshold);
  count("success_threshold", 1'000, &spec->success_threshold);
  if (value.contains("recovery_timeout")) {
    if (auto t = GetTimeout(value["recovery_timeout"], d, where.Key("recovery_timeout"))) {
      spec->recovery_timeout = *t;
    }
  }
}

void ApplyRetry(const Json& value, RetryPolicy* policy, Diags& d, const Where& where) {
  if (value.is_number_integer()) {
    std::optional<int64_t> n = GetInt(value, d, where);
    if (n && *n < 1) {
      d.Add(where, "max_attempts must be at least 1");
    } else if (n) {
      policy->max_attempts = static_cast<int>(std::min<int64_t>(*n, 1'000'000));
    }
    return;
  }
  if (!value.is_object()) {
    d.Add(where, std::string("expected object or integer, got ") + TypeName(value));
    return;
  }
  CheckFields(value,
              {"max_attempts", "initial_delay", "max_delay", "multiplier", "jitter", "retry_on"}, d,
              where);
  if (value.contains("max_attempts")) {
    Where w = where.Key("max_attempts");
    std::optional<int64_t> n = GetInt(value["max_attempts"], d, w);
    if (n && *n < 1) {
      d.Add(w, "must be at least 1");
    } else if (n) {
      policy->max_attempts = static_cast<int>(std::min<int64_t>(*n, 1'000'000));
    }
  }
  if (value.contains("initial_delay")) {
    if (auto v = GetDuration(value["initial_delay"], d, where.Key("initial_delay"))) {
      policy->initial_delay = *v;
    }
  }
  if (value.contains("max_delay")) {
    if (auto v = GetDuration(value["max_delay"], d, where.Key("max_delay"))) {
      policy->max_delay = *v;
    }
  }
  if (value.contains("multiplier")) {
    Where w = where.Key("multiplier");
    std::optional<double> m = GetNumber(value["multiplier"], d, w);
    if (m && !(*m >= 1.0 && std::isfinite(*m))) {
      d.Add(w, "must be at least 1");
    } else if (m) {
      policy->multiplier = *m;
    }
  }
  if (value.contains("jitter")) {
    if (auto b = GetBool(value["jitter"], d, where.Key("jitter"))) policy->jitter = *b;
  }
  if (value.contains("retry_on")) {
    Where w = where.Key("retry_on");
    const Json& list = value["retry_on"];
    if (ExpectArray(list, d, w)) {
      std::vector<std::string> codes;
      bool ok = true;
      for (size_t i = 0; i < list.size(); ++i) {
        std::optional<std::string> code = GetString(list[i], d, w.Index(i));
        if (!code) {
          ok = false;
        } else if (code->empty()) {
          d.Add(w.Index(i), "empty error code");
          ok = false;
        } else {
          codes.push_back(*code);
        }
      }
      if (ok) policy->retry_on = std::move(codes);
    }
  }
}

}  // namespace baton::model
