#include "common/json_parse.h"

#include <atomic>
#include <vector>

namespace baton {
namespace {

std::atomic<size_t> g_default_max_depth{128};

// Builds the DOM with nlohmann's own SAX builder while keeping the path to the current
// value (for messages) and refusing nesting past the limit as soon as it opens.
class BoundedSax {
 public:
  using Dom = nlohmann::detail::json_sax_dom_parser<Json>;

  BoundedSax(Json* out, size_t max_depth)
      : dom_(*out, /*allow_exceptions=*/false), max_depth_(max_depth) {}

  bool null() { return Value(dom_.null()); }
  bool boolean(bool v) { return Value(dom_.boolean(v)); }
  bool number_integer(Json::number_integer_t v) { return Value(dom_.number_integer(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return Value(dom_.number_unsigned(v)); }
  bool number_float(Json::number_float_t v, const std::string& s) {
    return Value(dom_.number_float(v, s));
  }
  bool string(std::string& v) { return Value(dom_.string(v)); }
  bool binary(Json::binary_t& v) { return Value(dom_.binary(v)); }

  bool start_object(std::size_t n) { return Open(false) && dom_.start_object(n); }
  bool start_array(std::size_t n) { return Open(true) && dom_.start_array(n); }
  bool key(std::string& k) {
    frames_.back().key = k;
    return dom_.key(k);
  }
  bool end_object() { return Close(dom_.end_object()); }
  bool end_array() { return Close(dom_.end_array()); }

  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& ex) {
    error_.byte = position;
    error_.field = Path();
    if (ex.id == 406) {  // out_of_range: number overflow
      error_.message = "number " + Shorten(token) + " is out of range";
    } else {
      error_.message = Tail(ex.what());
    }
    return false;
  }

  const JsonParseError& error() const { return error_; }

 private:
  struct Frame {
    bool array = false;
    size_t index = 0;
    std::string key;
  };

  bool Value(bool ok) {
    Advance();
    return ok;
  }
  bool Open(bool array) {
    if (frames_.size() >= max_depth_) {
      error_.field = Path();
      error_.message = "nesting deeper than " + std::to_string(max_depth_) + " levels";
      limit_hit_ = true;
      return false;
    }
    frames_.push_back(Frame{array, 0, {}});
    return true;
  }
  bool Close(bool ok) {
    frames_.pop_back();
    Advance();
    return ok;
  }
  void Advance() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
  }
  std::string Path() const {
    std::string out = FullPath();
    if (out.size() > 160) out = out.substr(0, 100) + "..." + out.substr(out.size() - 40);
    return out;
  }
  std::string FullPath() const {
    std::string out;
    for (const Frame& f : frames_) {
      if (f.array) {
        out += "[" + std::to_string(f.index) + "]";
      } else if (!f.key.empty() || &f != &frames_.back()) {
        if (!out.empty()) out += '.';
        out += Shorten(f.key);
      }
    }
    return out;
  }
  static std::string Shorten(const std::string& s) {
    return s.size() <= 40 ? s : s.substr(0, 20) + "..." + s.substr(s.size() - 10);
  }
  // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..."
  static std::string Tail(const std::string& what) {
    std::string_view s = what;
    if (size_t tag = s.find("] "); s.starts_with("[json.exception.") && tag != s.npos) {
      s.remove_prefix(tag + 2);
    }
    if (size_t colon = s.find(": "); s.starts_with("parse error") && colon != s.npos) {
      s.remove_prefix(colon + 2);
    }
    return std::string(s);
  }

  Dom dom_;
  size_t max_depth_;
  std::vector<Frame> frames_;
  JsonParseError error_;
  bool limit_hit_ = false;

 public:
  bool limit_hit() const { return limit_hit_; }
};

}  // namespace

std::string JsonParseError::Describe() const {
  std::string out;
  if (!field.empty()) out = "field '" + field + "': ";
  out += message;
  if (byte > 0) out += " (at byte " + std::to_string(byte) + ")";
  return out;
}

size_t DefaultMaxJsonDepth() {
  return g_default_max_depth.load(std::memory_order_relaxed);
}
void SetDefaultMaxJsonDepth(size_t depth) {
  g_default_max_depth.store(depth == 0 ? 128 : depth, std::memory_order_relaxed);
}

bool ParseJsonText(std::string_view text, Json* out, JsonParseError* error,
                   JsonParseLimits limits) {
  size_t depth = limits.max_depth != 0 ? limits.max_depth : DefaultMaxJsonDepth();
  Json result;
  bool ok = false;
  {
    BoundedSax sax(&result, depth);
    try {
      ok = Json::sax_parse(text.begin(), text.end(), &sax);
    } catch (const std::exception& e) {  // defensive: the SAX API reports, not throws
      ok = false;
      if (error) *error = JsonParseError{"", 0, e.what()};
      return false;
    }
    if (!ok && error) {
      *error = sax.error();
      if (error->message.empty()) error->message = "invalid JSON";
    }
  }
  if (ok) *out = std::move(result);
  return ok;
}

Result<Json> ParseJsonText(std::string_view text, const std::string& what, JsonParseLimits limits) {
  Json out;
  JsonParseError error;
  if (!ParseJsonText(text, &out, &error, limits)) {
    return Status(errc::kInvalidArgument, what + " is not valid JSON: " + error.Describe());
  }
  return out;
}

}  // namespace baton
