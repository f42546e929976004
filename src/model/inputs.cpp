// Execution inputs: declared defaults, provided JSON, then `key=value` pairs.
#include "model/builder.h"

#include "common/json_parse.h"

#include <charconv>

namespace baton {
namespace model {

bool IsInputType(std::string_view type) {
  return type == "string" || type == "integer" || type == "number" || type == "boolean" ||
         type == "object" || type == "array";
}

bool MatchesInputType(const Json& value, std::string_view type) {
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  return false;
}

const char* InputTypeList() {
  return "string, integer, number, boolean, object, array";
}

namespace {

const InputDecl* FindDecl(const WorkflowDef& wf, const std::string& name) {
  for (const InputDecl& in : wf.inputs) {
    if (in.name == name) return &in;
  }
  return nullptr;
}

// `text` converted to `type`, or nullopt when it is not a value of that type.
std::optional<Json> Convert(const std::string& text, const std::string& type) {
  if (type == "string") return Json(text);
  if (type == "integer") {
    int64_t v = 0;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    if (begin != end && *begin == '+') ++begin;
    auto [ptr, ec] = std::from_chars(begin, end, v);
    if (ec != std::errc() || ptr != end || begin == end) return std::nullopt;
    return Json(v);
  }
  if (type == "number") {
    // JSON number syntax: "3", "-2.5", "1e3" (not hex, inf or nan).
    Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() || !parsed.is_number()) return std::nullopt;
    return parsed;
  }
  if (type == "boolean") {
    if (text == "true") return Json(true);
    if (text == "false") return Json(false);
    return std::nullopt;
  }
  Json parsed;
  if (!ParseJsonText(text, &parsed, nullptr) || !MatchesInputType(parsed, type)) {
    return std::nullopt;
  }
  return parsed;
}

}  // namespace
}  // namespace model

Result<Json> ResolveInputs(const WorkflowDef& wf, const Json& provided,
                           const std::vector<std::pair<std::string, std::string>>& pairs) {
  using model::FindDecl;
  using model::MatchesInputType;
  using model::TypeName;
  std::vector<std::string> errors;
  Json out = Json::object();
  for (const InputDecl& in : wf.inputs) {
    if (in.default_value) out[in.name] = *in.default_value;
  }
  if (!provided.is_null() && !provided.is_object()) {
    return Status(errc::kValidation,
                  std::string("inputs must be a JSON object, got ") + TypeName(provided));
  }
  // A workflow that declares its inputs takes only those (a misspelt name would otherwise
  // be dropped silently while its default runs); one that declares none takes any.
  std::string declared;
  for (const InputDecl& in : wf.inputs) declared += (declared.empty() ? "" : ", ") + in.name;
  auto undeclared = [&](const std::string& name) {
    errors.push_back("input '" + name + "' is not declared by workflow '" + wf.name +
                     "' (it declares: " + declared + ")");
  };
  if (provided.is_object()) {
    for (const auto& [name, value] : provided.items()) {
      const InputDecl* decl = FindDecl(wf, name);
      if (!decl && !wf.inputs.empty()) {
        undeclared(name);
        continue;
      }
      if (decl && !MatchesInputType(value, decl->type)) {
        errors.push_back("input '" + name + "' must be " + decl->type + ", got " + TypeName(value));
        continue;
      }
      out[name] = value;
    }
  }
  for (const auto& [name, text] : pairs) {
    if (name.empty()) {
      errors.push_back("input '=" + text + "' has no name (expected key=value)");
      continue;
    }
    const InputDecl* decl = FindDecl(wf, name);
    if (!decl && !wf.inputs.empty()) {
      undeclared(name);
      continue;
    }
    if (!decl) {
      // No inputs declared: JSON when it parses, else the text itself.
      Json parsed;
      out[name] = ParseJsonText(text, &parsed, nullptr) ? std::move(parsed) : Json(text);
      continue;
    }
    std::optional<Json> value = model::Convert(text, decl->type);
    if (!value) {
      errors.push_back("input '" + name + "' must be " + decl->type + ", got '" + text + "'");
      continue;
    }
    out[name] = std::move(*value);
  }
  for (const InputDecl& in : wf.inputs) {
    if (in.required && !out.contains(in.name)) {
      errors.push_back("missing required input '" + in.name + "' (" + in.type + ")");
    }
  }
  if (!errors.empty()) {
    std::string msg;
    for (const std::string& e : errors) {
      if (!msg.empty()) msg += "; ";
      msg += e;
    }
    return Status(errc::kValidation, msg);
  }
  return out;
}

}  // namespace baton
