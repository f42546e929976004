// YAML/JSON text to baton::Json with a line for every node.
#include "model/source.h"

#include "common/json_parse.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace baton::model {
namespace {

// Aliases share nodes in yaml-cpp, so a short document can stand for billions of nodes
// ("billion laughs") or a cycle. The conversion may visit at most this many nodes plus
// one per byte of text: every node written out costs at least a byte, so only
// expansion can go past it, and it is refused after milliseconds, not gigabytes.
constexpr size_t kNodeAllowance = 10'000;

int LineAt(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + offset, '\n'));
}

std::string DottedChild(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

class YamlConverter {
 public:
  YamlConverter(const std::string& file, SourceDoc* doc, size_t max_nodes, size_t max_depth)
      : file_(file), doc_(doc), max_nodes_(max_nodes), max_depth_(max_depth) {}

  // False when the document is too big or too deep (one diagnostic added).
  bool Convert(const YAML::Node& node, const std::string& pointer, const std::string& dotted,
               int line, int depth, Json* out) {
    if (static_cast<size_t>(depth) > max_depth_) {
      Fail(line,
           "nesting deeper than " + std::to_string(max_depth_) + " levels (a recursive alias?)");
      return false;
    }
    if (++nodes_ > max_nodes_) {
      Fail(line, "aliases expand to more than " + std::to_string(max_nodes_) +
                     " nodes (a \"billion laughs\" document?)");
      return false;
    }
    switch (node.Type()) {
      case YAML::NodeType::Scalar:
        *out = Scalar(node);
        return true;
      case YAML::NodeType::Sequence: {
        *out = Json::array();
        size_t i = 0;
        for (auto it = node.begin(); it != node.end(); ++it) {
          const YAML::Node item = *it;
          std::string child = PointerIndex(pointer, i);
          int item_line = LineOf(item, line);
          doc_->lines.Set(child, item_line);
          Json value;
          if (!Convert(item, child, dotted + "[" + std::to_string(i) + "]", item_line, depth + 1,
                       &value)) {
            return false;
          }
          out->push_back(std::move(value));
          ++i;
        }
        return true;
      }
      case YAML::NodeType::Map: {
        *out = Json::object();
        for (auto it = node.begin(); it != node.end(); ++it) {
          // Copies: yaml-cpp's operator-> returns a proxy that dies with the statement.
          const YAML::Node key_node = it->first;
          const YAML::Node value_node = it->second;
          int key_line = LineOf(key_node, line);
          if (!key_node.IsScalar() && !key_node.IsNull()) {
            Add(key_line, dotted, "mapping keys must be strings");
            continue;
          }
          std::string key = key_node.IsScalar() ? key_node.Scalar() : "null";
          std::string child = PointerChild(pointer, key);
          std::string child_dotted = DottedChild(dotted, key);
          if (out->contains(key)) {
            Add(key_line, child_dotted,
                "duplicate key '" + key + "' (first defined at line " +
                    std::to_string(doc_->lines.Find(child)) + ")");
            continue;
          }
          doc_->lines.Set(child, key_line);
          Json value;
          if (!Convert(value_node, child, child_dotted, key_line, depth + 1, &value)) {
            return false;
          }
          (*out)[key] = std::move(value);
        }
        return true;
      }
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        *out = nullptr;
        return true;
    }
    *out = nullptr;
    return true;
  }

  void Fail(int line, std::string message) {
    Add(line, "", std::move(message));
    doc_->syntax_error = true;
  }

 private:
  static int LineOf(const YAML::Node& node, int fallback) {
    YAML::Mark mark = node.Mark();
    return mark.is_null() || mark.line < 0 ? fallback : mark.line + 1;
  }

  static Json Scalar(const YAML::Node& node) {
    const std::string& tag = node.Tag();
    const std::string& text = node.Scalar();
    // "!" is a quoted or block scalar: always a string, as is an explicit !!str.
    if (tag == "!" || tag == "tag:yaml.org,2002:str") return text;
    return ResolvePlainScalar(text);
  }

  void Add(int line, std::string field, std::string message) {
    doc_->diagnostics.push_back(Diagnostic{file_, line, "", std::move(field), std::move(message)});
  }

  const std::string& file_;
  SourceDoc* doc_;
  size_t max_nodes_;
  size_t max_depth_;
  size_t nodes_ = 0;
};

void ParseYaml(std::string_view text, const std::string& file, SourceDoc* doc) {
  // yaml-cpp parses by recursive descent: refuse deep nesting before it sees the text.
  const size_t max_depth = DefaultMaxJsonDepth();
  bool unclosed = false;
  if (size_t depth = ScanYamlNestingDepth(text, &unclosed); depth > max_depth) {
    doc->diagnostics.push_back(Diagnostic{
        file, 0, "", "", "nesting deeper than " + std::to_string(max_depth) + " levels"});
    doc->syntax_error = true;
    return;
  }
  if (unclosed) {
    doc->diagnostics.push_back(Diagnostic{
        file, LineAt(text, text.size()), "", "",
        "invalid YAML: a flow collection ('[' or '{') is not closed by the end of the file"});
    doc->syntax_error = true;
    return;
  }
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::ParserException& e) {
    int line = e.mark.is_null() ? 0 : e.mark.line + 1;
    doc->diagnostics.push_back(Diagnostic{file, line, "", "", "invalid YAML: " + e.msg});
    doc->syntax_error = true;
    return;
  } catch (const std::exception& e) {
    doc->diagnostics.push_back(
        Diagnostic{file, 0, "", "", std::string("invalid YAML: ") + e.what()});
    doc->syntax_error = true;
    return;
  }
  if (docs.size() > 1) {
    int line = docs[1].Mark().is_null() ? 0 : docs[1].Mark().line + 1;
    doc->diagnostics.push_back(Diagnostic{
        file, line, "", "", "expected one YAML document, found " + std::to_string(docs.size())});
    doc->syntax_error = true;
    return;
  }
  if (docs.empty()) {
    doc->value = nullptr;
    return;
  }
  YamlConverter converter(file, doc, kNodeAllowance + text.size(), max_depth);
  int root_line = docs[0].Mark().is_null() ? 1 : docs[0].Mark().line + 1;
  doc->lines.Set("", root_line);
  try {
    Json value;
    if (converter.Convert(docs[0], "", "", root_line, 0, &value)) doc->value = std::move(value);
  } catch (const std::exception& e) {
    converter.Fail(root_line, std::string("invalid YAML: ") + e.what());
  }
}

void ParseJson(std::string_view text, const std::string& file, SourceDoc* doc) {
  // nlohmann is the judge of valid JSON and its messages; yaml-cpp (which reads JSON as
  // YAML flow style) supplies lines and duplicate keys when it agrees on the value.
  Json strict;
  JsonParseError error;
  if (!ParseJsonText(text, &strict, &error)) {
    doc->diagnostics.push_back(Diagnostic{file, LineAt(text, error.byte == 0 ? 0 : error.byte - 1),
                                          "", error.field, "invalid JSON: " + error.message});
    doc->syntax_error = true;
    return;
  }
  SourceDoc via_yaml;
  ParseYaml(text, file, &via_yaml);
  bool has_duplicates = !via_yaml.diagnostics.empty();
  if (!via_yaml.syntax_error && (has_duplicates || via_yaml.value == strict)) {
    *doc = std::move(via_yaml);
    return;
  }
  doc->value = std::move(strict);
}

bool IsDigits(std::string_view s, int base) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = base == 16 ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                         : (c >= '0' && c < static_cast<char>('0' + base));
    if (!ok) return false;
  }
  return true;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsCoreFloat(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

}  // namespace

std::string PointerChild(std::string_view parent, std::string_view key) {
  std::string out(parent);
  out += '/';
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

std::string PointerIndex(std::string_view parent, size_t index) {
  return std::string(parent) + "/" + std::to_string(index);
}

int LineMap::Find(std::string_view pointer) const {
  std::string key(pointer);
  while (true) {
    auto it = lines_.find(key);
    if (it != lines_.end()) return it->second;
    if (key.empty()) return 0;
    key.resize(key.rfind('/'));
  }
}

Json ResolvePlainScalar(const std::string& text) {
  const std::string& s = text;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  std::string_view v = s;
  bool negative = false;
  std::string_view digits = v;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  int base = 0;
  if (IsDigits(digits, 10)) {
    base = 10;
  } else if (v.starts_with("0o") && IsDigits(v.substr(2), 8)) {
    base = 8;
    digits = v.substr(2);
  } else if (v.starts_with("0x") && IsDigits(v.substr(2), 16)) {
    base = 16;
    digits = v.substr(2);
  }
  if (base != 0) {
    uint64_t u = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), u, base);
    if (ec == std::errc() && ptr == digits.data() + digits.size()) {
      if (!negative) {
        if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          return static_cast<int64_t>(u);
        }
        return u;
      }
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) {
        return static_cast<int64_t>(0 - u);
      }
    }
    // Out of range: fall through and keep it as a float.
  }
  if (base == 10 || IsCoreFloat(s)) {
    double d = std::strtod(s.c_str(), nullptr);
    if (std::isfinite(d)) return d;
  }
  return text;
}

size_t FindInvalidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > text.size()) return i;
    for (size_t k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3F);
    }
    bool overlong =
        (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

SourceDoc ParseSource(std::string_view text, const std::string& file) {
  SourceDoc doc;
  size_t bad = FindInvalidUtf8(text);
  if (bad != std::string_view::npos) {
    doc.diagnostics.push_back(
        Diagnostic{file, LineAt(text, bad), "", "", "invalid UTF-8 in the file"});
    doc.syntax_error = true;
    return doc;
  }
  // YAML (and JSON outside its strings' escapes) allows no C0 control character but tab,
  // LF and CR, and no DEL. yaml-cpp loops, allocating without end, on some of them (a NUL
  // found by fuzz_workflow), so they are refused before it sees the text.
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      doc.diagnostics.push_back(Diagnostic{
          file, LineAt(text, i), "", "",
          std::string("control character ") + hex + " in the file (not allowed in YAML or JSON)"});
      doc.syntax_error = true;
      return doc;
    }
  }
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') {
    ParseJson(text, file, &doc);
  } else {
    ParseYaml(text, file, &doc);
  }
  return doc;
}

}  // namespace baton::model
