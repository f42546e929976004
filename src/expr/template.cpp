#include "expr/template.h"

namespace baton::expr {
namespace {

// One piece of a parsed string: literal text or a reference.
struct Piece {
  bool is_ref = false;
  std::string text;  // literal text (is_ref == false)
  Path path;         // is_ref == true
};

struct ParsedString {
  std::vector<Piece> pieces;
  // Exactly one template with only whitespace around it: the value keeps its JSON type.
  bool whole = false;
};

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Splits `s` into pieces. Errors carry code VALIDATION; Render re-labels them
// TEMPLATE_ERROR. Parsing happens once on the original text, which is what guarantees
// substituted values are never parsed again.
Result<ParsedString> Parse(std::string_view s) {
  ParsedString out;
  size_t i = 0;
  while (true) {
    size_t open = s.find("{{", i);
    if (open == std::string_view::npos) {
      if (i < s.size()) out.pieces.push_back(Piece{false, std::string(s.substr(i)), {}});
      break;
    }
    if (open > i) out.pieces.push_back(Piece{false, std::string(s.substr(i, open - i)), {}});
    size_t close = s.find("}}", open + 2);
    if (close == std::string_view::npos) {
      return Status(errc::kValidation,
                    "unclosed '{{' in template '" + std::string(s.substr(open)) + "'");
    }
    std::string_view raw = s.substr(open, close + 2 - open);
    std::string_view inner = Trim(s.substr(open + 2, close - open - 2));
    if (inner.empty()) {
      return Status(errc::kValidation, "empty template '" + std::string(raw) + "'");
    }
    Result<Path> path = ParsePath(inner);
    if (!path.ok()) {
      return Status(errc::kValidation,
                    "malformed template '" + std::string(raw) + "': " + path.status().message());
    }
    out.pieces.push_back(Piece{true, {}, std::move(path).value()});
    i = close + 2;
  }
  int refs = 0;
  bool only_space = true;
  for (const Piece& p : out.pieces) {
    if (p.is_ref) {
      ++refs;
    } else if (!Trim(p.text).empty()) {
      only_space = false;
    }
  }
  out.whole = refs == 1 && only_space;
  return out;
}

// Text form of a value embedded in a longer string.
void AppendText(const Json& value, std::string* out) {
  if (value.is_string()) {
    *out += value.get_ref<const std::string&>();
  } else {
    // `replace` so that invalid UTF-8 in an output cannot throw.
    *out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

Result<Json> RenderString(const std::string& s, const Scope& scope) {
  if (s.find("{{") == std::string::npos) return Json(s);
  Result<ParsedString> parsed = Parse(s);
  if (!parsed.ok()) return Status(errc::kTemplateError, parsed.status().message());
  auto lookup = [&](const Path& path) -> Result<const Json*> {
    const Json* v = scope.Find(path);
    if (v == nullptr) {
      return Status(errc::kTemplateError, "unresolved reference '" + path.text + "'");
    }
    return v;
  };
  if (parsed->whole) {
    for (const Piece& p : parsed->pieces) {
      if (!p.is_ref) continue;
      Result<const Json*> v = lookup(p.path);
      if (!v.ok()) return v.status();
      return **v;
    }
  }
  std::string text;
  for (const Piece& p : parsed->pieces) {
    if (!p.is_ref) {
      text += p.text;
      continue;
    }
    Result<const Json*> v = lookup(p.path);
    if (!v.ok()) return v.status();
    AppendText(**v, &text);
  }
  return Json(std::move(text));
}

Status Collect(const Json& value, std::vector<Path>* out) {
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (s.find("{{") == std::string::npos) return Status::Ok();
    Result<ParsedString> parsed = Parse(s);
    if (!parsed.ok()) return parsed.status();
    for (Piece& p : parsed->pieces) {
      if (p.is_ref) out->push_back(std::move(p.path));
    }
  } else if (value.is_array() || value.is_object()) {
    for (const Json& item : value) {
      Status st = Collect(item, out);
      if (!st.ok()) return st;
    }
  }
  return Status::Ok();
}

}  // namespace

bool HasTemplates(const Json& value) {
  if (value.is_string()) {
    return value.get_ref<const std::string&>().find("{{") != std::string::npos;
  }
  if (value.is_array() || value.is_object()) {
    for (const Json& item : value) {
      if (HasTemplates(item)) return true;
    }
  }
  return false;
}

Result<Json> Render(const Json& value, const Scope& scope) {
  if (value.is_string()) return RenderString(value.get_ref<const std::string&>(), scope);
  if (value.is_array()) {
    Json out = Json::array();
    for (const Json& item : value) {
      Result<Json> r = Render(item, scope);
      if (!r.ok()) return r.status();
      out.push_back(std::move(r).value());
    }
    return out;
  }
  if (value.is_object()) {
    Json out = Json::object();
    for (auto it = value.begin(); it != value.end(); ++it) {
      Result<Json> r = Render(it.value(), scope);
      if (!r.ok()) return r.status();
      out[it.key()] = std::move(r).value();
    }
    return out;
  }
  return value;
}

Status CollectReferences(const Json& value, std::vector<Path>* out) {
  std::vector<Path> scratch;
  return Collect(value, out != nullptr ? out : &scratch);
}

}  // namespace baton::expr
