// YAML/JSON text to baton::Json with a line for every node.
#include "model/source.h"

#include "common/json_parse.h"

#include <yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

namespace baton::model {
namespace {

// An alias stands for a copy of its anchor's node, so a short document can stand for
// billions of nodes ("billion laughs"). The conversion may produce at most this many
// nodes plus one per byte of text: every node written out costs at least a byte, so only
// expansion can go past it, and it is refused after milliseconds, not gigabytes.
constexpr size_t kNodeAllowance = 10'000;

int LineAt(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + offset, '\n'));
}

std::string DottedChild(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

// Owns a libyaml parser and its current event; both are C structs with free functions.
class EventReader {
 public:
  explicit EventReader(std::string_view text) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                 text.size());
  }
  ~EventReader() {
    if (has_event_) yaml_event_delete(&event_);
    yaml_parser_delete(&parser_);
  }
  EventReader(const EventReader&) = delete;
  EventReader& operator=(const EventReader&) = delete;

  // The next event, or nullptr on a syntax error (then Problem() and ProblemLine() say).
  const yaml_event_t* Next() {
    if (has_event_) yaml_event_delete(&event_);
    has_event_ = yaml_parser_parse(&parser_, &event_) != 0;
    return has_event_ ? &event_ : nullptr;
  }

  std::string Problem() const {
    std::string out = parser_.problem != nullptr ? parser_.problem : "out of memory";
    if (parser_.context != nullptr) out += std::string(" (") + parser_.context + ")";
    return out;
  }
  int ProblemLine() const { return static_cast<int>(parser_.problem_mark.line) + 1; }

 private:
  yaml_parser_t parser_{};
  yaml_event_t event_{};
  bool has_event_ = false;
};

std::string AsString(const yaml_char_t* s) {
  return s == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(s));
}

int LineOf(const yaml_event_t& event) {
  return static_cast<int>(event.start_mark.line) + 1;
}

// Builds a Json value and its line map from libyaml's event stream. libyaml parses with
// explicit stacks, not recursion, and the stack of open collections here is checked on
// every push, so no input reaches a recursive walk deeper than the nesting limit.
class YamlBuilder {
 public:
  YamlBuilder(const std::string& file, SourceDoc* doc, size_t max_nodes, size_t max_depth)
      : file_(file), doc_(doc), max_nodes_(max_nodes), max_depth_(max_depth) {}

  // Reads the whole stream. On an error, one diagnostic is added and syntax_error is set.
  void Run(std::string_view text) {
    EventReader reader(text);
    int documents = 0;
    while (true) {
      const yaml_event_t* event = reader.Next();
      if (event == nullptr) {
        Fail(reader.ProblemLine(), "invalid YAML: " + reader.Problem());
        return;
      }
      switch (event->type) {
        case YAML_STREAM_END_EVENT:
          if (documents == 0) doc_->value = nullptr;
          return;
        case YAML_DOCUMENT_START_EVENT:
          if (++documents > 1) {
            Fail(LineOf(*event), "expected one YAML document, found a second one here");
            return;
          }
          break;
        case YAML_SCALAR_EVENT:
          if (!OnScalar(*event)) return;
          break;
        case YAML_ALIAS_EVENT:
          if (!OnAlias(*event)) return;
          break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
          if (!OnCollectionStart(*event)) return;
          break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
          if (!OnCollectionEnd()) return;
          break;
        default:
          break;
      }
    }
  }

 private:
  // A node's place: the pointer and dotted name it gets, and the line it is listed under.
  struct Place {
    std::string pointer;
    std::string dotted;
  };

  // A sequence or mapping still open.
  struct Open {
    Json value;
    Place place;
    std::string anchor;
    size_t nodes_before = 0;  // nodes_ when it opened, to size its anchor
    size_t height = 0;        // deepest child's height + 1, for aliases of it
    bool is_key = false;      // a collection used as a mapping key: checked, then dropped
    // Mapping state.
    bool expecting_key = true;
    bool skip_value = false;  // the key was refused; its value is parsed and dropped
    std::string key;
  };

  struct Anchor {
    Json value;
    size_t nodes = 0;
    size_t height = 0;
  };

  bool Count(size_t nodes, int line) {
    nodes_ += nodes;
    if (nodes_ > max_nodes_) {
      Fail(line, "aliases expand to more than " + std::to_string(max_nodes_) +
                     " nodes (a \"billion laughs\" document?)");
      return false;
    }
    return true;
  }

  bool CheckDepth(size_t depth, int line) {
    if (depth > max_depth_) {
      Fail(line, "nesting deeper than " + std::to_string(max_depth_) + " levels");
      return false;
    }
    return true;
  }

  bool AtKey() const {
    return !open_.empty() && open_.back().value.is_object() && open_.back().expecting_key;
  }

  // Where the next node goes; records its line unless it is a key or a dropped value.
  Place PlaceNext(int line) {
    if (open_.empty()) {
      doc_->lines.Set("", line);
      return {};
    }
    Open& parent = open_.back();
    if (parent.value.is_array()) {
      Place place{PointerIndex(parent.place.pointer, parent.value.size()),
                  parent.place.dotted + "[" + std::to_string(parent.value.size()) + "]"};
      if (!parent.is_key) doc_->lines.Set(place.pointer, line);
      return place;
    }
    if (parent.expecting_key) return parent.place;
    return {PointerChild(parent.place.pointer, parent.key),
            DottedChild(parent.place.dotted, parent.key)};
  }

  // A key has been read: check it and remember it until its value arrives.
  void TakeKey(Open& map, std::optional<std::string> key, int line) {
    map.expecting_key = false;
    map.skip_value = false;
    if (!key) {
      Add(line, map.place.dotted, "mapping keys must be strings");
      map.skip_value = true;
      return;
    }
    std::string pointer = PointerChild(map.place.pointer, *key);
    if (map.value.contains(*key)) {
      Add(line, DottedChild(map.place.dotted, *key),
          "duplicate key '" + *key + "' (first defined at line " +
              std::to_string(doc_->lines.Find(pointer)) + ")");
      map.skip_value = true;
      return;
    }
    if (!map.is_key) doc_->lines.Set(pointer, line);
    map.key = std::move(*key);
  }

  // A complete node (scalar, alias or closed collection) goes into its parent.
  void Deliver(Json value, size_t height, std::optional<std::string> as_key, int line) {
    if (open_.empty()) {
      doc_->value = std::move(value);
      return;
    }
    Open& parent = open_.back();
    parent.height = std::max(parent.height, height + 1);
    if (parent.value.is_array()) {
      parent.value.push_back(std::move(value));
      return;
    }
    if (parent.expecting_key) {
      TakeKey(parent, std::move(as_key), line);
      return;
    }
    if (!parent.skip_value) parent.value[parent.key] = std::move(value);
    parent.expecting_key = true;
  }

  bool OnScalar(const yaml_event_t& event) {
    const int line = LineOf(event);
    if (!Count(1, line)) return false;
    PlaceNext(line);
    const auto& scalar = event.data.scalar;
    std::string text(reinterpret_cast<const char*>(scalar.value), scalar.length);
    const std::string tag = AsString(scalar.tag);
    // Quoted and block scalars are strings, as is anything tagged !!str or "!".
    const bool is_string =
        scalar.style != YAML_PLAIN_SCALAR_STYLE || tag == "tag:yaml.org,2002:str" || tag == "!";
    Json value = is_string ? Json(text) : ResolvePlainScalar(text);
    std::optional<std::string> as_key = value.is_null() ? std::string("null") : text;
    if (!RememberAnchor(AsString(scalar.anchor), value, 1, 0)) return false;
    Deliver(std::move(value), 0, std::move(as_key), line);
    return true;
  }

  bool OnAlias(const yaml_event_t& event) {
    const int line = LineOf(event);
    const std::string name = AsString(event.data.alias.anchor);
    auto it = anchors_.find(name);
    if (it == anchors_.end()) {
      Fail(line, "invalid YAML: alias '*" + name + "' refers to no anchor defined before it");
      return false;
    }
    if (!Count(it->second.nodes, line)) return false;
    if (!CheckDepth(open_.size() + it->second.height, line)) return false;
    PlaceNext(line);
    std::optional<std::string> as_key;
    if (it->second.value.is_string()) as_key = it->second.value.get<std::string>();
    Deliver(it->second.value, it->second.height, std::move(as_key), line);
    return true;
  }

  bool OnCollectionStart(const yaml_event_t& event) {
    const int line = LineOf(event);
    if (!Count(1, line)) return false;
    if (!CheckDepth(open_.size() + 1, line)) return false;
    const bool is_key = AtKey() || (!open_.empty() && open_.back().is_key);
    Open open;
    open.place = PlaceNext(line);
    open.is_key = is_key;
    open.nodes_before = nodes_ - 1;
    if (event.type == YAML_SEQUENCE_START_EVENT) {
      open.value = Json::array();
      open.anchor = AsString(event.data.sequence_start.anchor);
    } else {
      open.value = Json::object();
      open.anchor = AsString(event.data.mapping_start.anchor);
    }
    open_.push_back(std::move(open));
    open_lines_.push_back(line);
    return true;
  }

  bool OnCollectionEnd() {
    if (open_.empty()) return true;  // libyaml pairs them; nothing to close otherwise
    Open closed = std::move(open_.back());
    const int line = open_lines_.back();
    open_.pop_back();
    open_lines_.pop_back();
    if (!RememberAnchor(closed.anchor, closed.value, nodes_ - closed.nodes_before, closed.height)) {
      return false;
    }
    Deliver(std::move(closed.value), closed.height, std::nullopt, line);
    return true;
  }

  bool RememberAnchor(const std::string& name, const Json& value, size_t nodes, size_t height) {
    if (name.empty()) return true;
    anchors_[name] = Anchor{value, nodes, height};
    return true;
  }

  void Fail(int line, std::string message) {
    Add(line, "", std::move(message));
    doc_->syntax_error = true;
  }

  void Add(int line, std::string field, std::string message) {
    doc_->diagnostics.push_back(Diagnostic{file_, line, "", std::move(field), std::move(message)});
  }

  const std::string& file_;
  SourceDoc* doc_;
  size_t max_nodes_;
  size_t max_depth_;
  size_t nodes_ = 0;
  std::vector<Open> open_;
  std::vector<int> open_lines_;
  std::map<std::string, Anchor> anchors_;
};

void ParseYaml(std::string_view text, const std::string& file, SourceDoc* doc) {
  YamlBuilder builder(file, doc, kNodeAllowance + text.size(), DefaultMaxJsonDepth());
  builder.Run(text);
  if (doc->syntax_error) doc->value = nullptr;
}

void ParseJson(std::string_view text, const std::string& file, SourceDoc* doc) {
  // nlohmann is the judge of valid JSON and its messages. Lines cost a libyaml pass
  // (which reads JSON as YAML flow style) and a string per node, so that pass runs only
  // when a message needs a line, or at once for a repeated key, which it reports with
  // both lines.
  Json strict;
  JsonParseError error;
  JsonParseLimits limits;
  limits.refuse_duplicate_keys = true;
  if (!ParseJsonText(text, &strict, &error, limits)) {
    if (error.duplicate_key) {
      SourceDoc via_yaml;
      ParseYaml(text, file, &via_yaml);
      if (!via_yaml.syntax_error && !via_yaml.diagnostics.empty()) {
        *doc = std::move(via_yaml);
        return;
      }
    }
    doc->diagnostics.push_back(Diagnostic{file, LineAt(text, error.byte == 0 ? 0 : error.byte - 1),
                                          "", error.field, "invalid JSON: " + error.message});
    doc->syntax_error = true;
    return;
  }
  doc->value = std::move(strict);
  SetJsonLines(text, file, JsonStepLines(text), &doc->lines);
}

}  // namespace

std::string PointerChild(std::string_view parent, std::string_view key) {
  std::string out;
  out.reserve(parent.size() + 1 + key.size());
  out.append(parent);
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
  // Built in one allocation: every step of a large workflow gets one.
  char digits[24];
  char* end = std::to_chars(digits, digits + sizeof digits, index).ptr;
  std::string out;
  out.reserve(parent.size() + 1 + static_cast<size_t>(end - digits));
  out.append(parent);
  out += '/';
  out.append(digits, end);
  return out;
}

void LineMap::SetLazy(std::vector<int> step_lines, std::function<void(LineMap*)> fill) {
  step_lines_ = std::move(step_lines);
  fill_ = std::move(fill);
}

int LineMap::Find(std::string_view pointer) const {
  if (!step_lines_.empty() && pointer.starts_with("/steps/")) {
    std::string_view index = pointer.substr(7);
    size_t i = 0;
    auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), i);
    if (ec == std::errc() && end == index.data() + index.size() && i < step_lines_.size()) {
      return step_lines_[i];
    }
  }
  if (fill_) {
    auto fill = std::move(fill_);
    fill_ = nullptr;
    LineMap filled;
    fill(&filled);
    lines_ = std::move(filled.lines_);
  }
  std::string key(pointer);
  while (true) {
    auto it = lines_.find(key);
    if (it != lines_.end()) return it->second;
    if (key.empty()) return 0;
    key.resize(key.rfind('/'));
  }
}

size_t FindInvalidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    // Workflow files are mostly ASCII: step over eight such bytes at a time.
    uint64_t word = 0;
    if (i + sizeof word <= text.size()) {
      std::memcpy(&word, text.data() + i, sizeof word);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += sizeof word;
        continue;
      }
    }
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

void SetJsonLines(std::string_view text, const std::string& file, std::vector<int> step_lines,
                  LineMap* lines) {
  lines->SetLazy(std::move(step_lines), [text, file](LineMap* all) {
    // Keys are quoted in JSON, so libyaml sees the same structure even where it would
    // resolve a scalar differently: its lines are right for every pointer.
    SourceDoc via_yaml;
    ParseYaml(text, file, &via_yaml);
    if (!via_yaml.syntax_error) *all = std::move(via_yaml.lines);
  });
}

size_t FindControlCharacter(std::string_view text) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  // Some byte of `x` is below n (n <= 128); exact for the word as a whole.
  auto has_less = [](uint64_t x, uint64_t n) { return ((x - kOnes * n) & ~x & kHighs) != 0; };
  size_t i = 0;
  while (i < text.size()) {
    // Eight bytes at a time while none is below 0x20 or DEL (a word holding a tab or a
    // line break is looked at byte by byte).
    uint64_t word = 0;
    if (i + sizeof word <= text.size()) {
      std::memcpy(&word, text.data() + i, sizeof word);
      if (!has_less(word, 0x20) && !has_less(word ^ (kOnes * 0x7f), 1)) {
        i += sizeof word;
        continue;
      }
    }
    const size_t end = std::min(text.size(), i + sizeof word);
    for (; i < end; ++i) {
      const unsigned char c = static_cast<unsigned char>(text[i]);
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return i;
    }
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
  // LF and CR, and no DEL. Refused here, with the byte named, before any parser sees it.
  if (const size_t i = FindControlCharacter(text); i != std::string_view::npos) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(text[i]));
    doc.diagnostics.push_back(Diagnostic{
        file, LineAt(text, i), "", "",
        std::string("control character ") + hex + " in the file (not allowed in YAML or JSON)"});
    doc.syntax_error = true;
    return doc;
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
