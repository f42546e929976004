#include "model/payload_schema.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace baton::model {
namespace {

constexpr std::array<std::string_view, 7> kTypes = {"object",  "array",   "string", "number",
                                                    "integer", "boolean", "null"};
constexpr std::array<std::string_view, 15> kKeywords = {
    "type",        "properties", "required",  "additionalProperties",
    "items",       "enum",       "minLength", "maxLength",
    "minimum",     "maximum",    "minItems",  "maxItems",
    "description", "title",      "default"};

std::string Escape(const std::string& key) {  // RFC 6901
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string TypeOf(const Json& v) {
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  if (v.is_null()) return "null";
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  return "number";
}

bool IsType(const Json& v, std::string_view type) {
  if (type == "number") return v.is_number();
  if (type == "integer") {
    if (v.is_number_integer() || v.is_number_unsigned()) return true;
    if (!v.is_number_float()) return false;
    const double d = v.get<double>();
    return d == static_cast<double>(static_cast<int64_t>(d));
  }
  return TypeOf(v) == type;
}

bool IsCount(const Json& v) {
  return (v.is_number_integer() || v.is_number_unsigned()) && v.get<int64_t>() >= 0;
}

std::string Check(const Json& schema, const std::string& at) {
  if (!schema.is_object()) return (at.empty() ? "/" : at) + ": a schema is an object";
  for (const auto& [key, value] : schema.items()) {
    if (std::find(kKeywords.begin(), kKeywords.end(), key) == kKeywords.end()) {
      return at + "/" + Escape(key) +
             ": unknown schema keyword (supported: type, properties, "
             "required, additionalProperties, items, enum, minLength, maxLength, minimum, "
             "maximum, minItems, maxItems, description, title)";
    }
    const std::string here = at + "/" + key;
    if (key == "type") {
      const Json list = value.is_array() ? value : Json::array({value});
      if (list.empty()) return here + ": an empty list of types";
      for (const Json& t : list) {
        if (!t.is_string() ||
            std::find(kTypes.begin(), kTypes.end(), t.get<std::string>()) == kTypes.end()) {
          return here + ": unknown type " + t.dump() +
                 " (object, array, string, number, integer, boolean, null)";
        }
      }
    } else if (key == "properties") {
      if (!value.is_object()) return here + ": expected an object of schemas";
      for (const auto& [name, sub] : value.items()) {
        if (std::string e = Check(sub, here + "/" + Escape(name)); !e.empty()) return e;
      }
    } else if (key == "required") {
      if (!value.is_array()) return here + ": expected a list of property names";
      for (const Json& n : value) {
        if (!n.is_string()) return here + ": expected a list of property names";
      }
    } else if (key == "additionalProperties") {
      if (!value.is_boolean()) return here + ": expected true or false";
    } else if (key == "items") {
      if (std::string e = Check(value, here); !e.empty()) return e;
    } else if (key == "enum") {
      if (!value.is_array() || value.empty()) return here + ": expected a non-empty list";
    } else if (key == "minimum" || key == "maximum") {
      if (!value.is_number()) return here + ": expected a number";
    } else if (key == "description" || key == "title") {
      if (!value.is_string()) return here + ": expected a string";
    } else if (key != "default" && !IsCount(value)) {
      return here + ": expected a non-negative integer";
    }
  }
  return "";
}

std::string Match(const Json& schema, const Json& v, const std::string& at) {
  const std::string where = at.empty() ? "payload" : at;
  if (auto t = schema.find("type"); t != schema.end()) {
    const Json list = t->is_array() ? *t : Json::array({*t});
    bool any = false;
    for (const Json& type : list) any = any || IsType(v, type.get_ref<const std::string&>());
    if (!any) {
      return where + ": expected " + (list.size() == 1 ? list[0].get<std::string>() : list.dump()) +
             ", got " + TypeOf(v);
    }
  }
  if (auto e = schema.find("enum"); e != schema.end()) {
    if (std::find(e->begin(), e->end(), v) == e->end()) {
      return where + ": " + v.dump() + " is not one of " + e->dump();
    }
  }
  if (v.is_string()) {
    const size_t n = v.get_ref<const std::string&>().size();
    if (auto m = schema.find("minLength"); m != schema.end() && n < m->get<uint64_t>())
      return where + ": shorter than " + m->dump() + " bytes";
    if (auto m = schema.find("maxLength"); m != schema.end() && n > m->get<uint64_t>())
      return where + ": longer than " + m->dump() + " bytes";
  }
  if (v.is_number()) {
    const double d = v.get<double>();
    if (auto m = schema.find("minimum"); m != schema.end() && d < m->get<double>())
      return where + ": below the minimum " + m->dump();
    if (auto m = schema.find("maximum"); m != schema.end() && d > m->get<double>())
      return where + ": above the maximum " + m->dump();
  }
  if (v.is_array()) {
    if (auto m = schema.find("minItems"); m != schema.end() && v.size() < m->get<uint64_t>())
      return where + ": fewer than " + m->dump() + " items";
    if (auto m = schema.find("maxItems"); m != schema.end() && v.size() > m->get<uint64_t>())
      return where + ": more than " + m->dump() + " items";
    if (auto items = schema.find("items"); items != schema.end()) {
      for (size_t i = 0; i < v.size(); ++i) {
        if (std::string e = Match(*items, v[i], at + "/" + std::to_string(i)); !e.empty()) return e;
      }
    }
  }
  if (v.is_object()) {
    const auto props = schema.find("properties");
    if (auto req = schema.find("required"); req != schema.end()) {
      for (const Json& name : *req) {
        if (!v.contains(name.get_ref<const std::string&>()))
          return where + ": missing required property '" + name.get<std::string>() + "'";
      }
    }
    for (const auto& [key, value] : v.items()) {
      const std::string here = at + "/" + Escape(key);
      if (props != schema.end()) {
        if (auto sub = props->find(key); sub != props->end()) {
          if (std::string e = Match(*sub, value, here); !e.empty()) return e;
          continue;
        }
      }
      if (auto extra = schema.find("additionalProperties");
          extra != schema.end() && !extra->get<bool>()) {
        return here + ": unexpected property (additionalProperties is false)";
      }
    }
  }
  return "";
}

}  // namespace

std::string CheckPayloadSchema(const Json& schema) {
  return Check(schema, "");
}

std::string MatchPayloadSchema(const Json& schema, const Json& payload) {
  return Match(schema, payload, "");
}

}  // namespace baton::model
