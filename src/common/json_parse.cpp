#include "common/json_parse.h"

#include "common/json_fast_reader.h"

#include <algorithm>
#include <atomic>
#include <vector>

namespace baton {
namespace {

std::atomic<size_t> g_default_max_depth{128};

// Builds the DOM while keeping the path to the current value (for messages), refusing
// nesting past the limit as soon as it opens and, when asked, a key repeated within an
// object (nlohmann's own builder keeps the last silently).
class BoundedSax {
 public:
  // The first `already_handed` elements of a streamed array are dropped, not handed
  // over: a reader that saw them once (an earlier pass over the same text) does not see
  // them again.
  BoundedSax(Json* out, const JsonParseLimits& limits, size_t max_depth,
             const JsonArrayStream* stream = nullptr, size_t already_handed = 0)
      : root_(*out),
        max_depth_(max_depth),
        refuse_duplicates_(limits.refuse_duplicate_keys),
        stream_(stream),
        already_handed_(already_handed) {}

  bool null() { return Value(Json(nullptr)); }
  bool boolean(bool v) { return Value(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return Value(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return Value(Json(v)); }
  bool number_float(Json::number_float_t v, const std::string&) { return Value(Json(v)); }
  bool string(std::string& v) { return Value(Json(std::move(v))); }
  bool binary(Json::binary_t& v) { return Value(Json::binary(std::move(v))); }

  bool start_object(std::size_t) { return Open(false, Json::object()); }
  bool start_array(std::size_t) { return Open(true, Json::array()); }
  bool key(std::string& k) {
    auto& object = containers_.back()->get_ref<Json::object_t&>();
    auto [it, inserted] = object.emplace(std::move(k), nullptr);
    frames_.back().key = &it->first;  // a map's keys do not move
    if (!inserted && refuse_duplicates_) {
      error_.field = Path();
      error_.message = "duplicate key '" + Shorten(it->first) + "'";
      error_.duplicate_key = true;
      return false;
    }
    member_ = &it->second;
    return true;
  }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }

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
    const std::string* key = nullptr;  // the member being read, in the DOM; null before the first
  };

  // Where a value read now goes: the root, the end of the open array, or the member
  // whose key was just read. Pointers into open containers stay valid: a container is
  // only appended to while none of its children is open.
  Json* Place(Json&& v) {
    if (containers_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& top = *containers_.back();
    if (top.is_array()) {
      auto& array = top.get_ref<Json::array_t&>();
      array.push_back(std::move(v));
      return &array.back();
    }
    *member_ = std::move(v);
    return member_;
  }
  bool Value(Json&& v) {
    Place(std::move(v));
    if (streamed_ != nullptr && containers_.back() == streamed_ && !HandOver()) return false;
    Advance();
    return true;
  }
  bool Open(bool array, Json&& empty) {
    if (frames_.size() >= max_depth_) {
      error_.field = Path();
      error_.message = "nesting deeper than " + std::to_string(max_depth_) + " levels";
      limit_hit_ = true;
      return false;
    }
    containers_.push_back(Place(std::move(empty)));
    frames_.push_back(Frame{array, 0, nullptr});
    if (array && stream_ != nullptr && frames_.size() == 2 && !frames_[0].array &&
        frames_[0].key != nullptr && *frames_[0].key == stream_->member) {
      streamed_ = containers_.back();
    }
    return true;
  }
  bool Close() {
    frames_.pop_back();
    if (containers_.back() == streamed_) streamed_ = nullptr;
    containers_.pop_back();
    if (streamed_ != nullptr && containers_.back() == streamed_ && !HandOver()) return false;
    Advance();
    return true;
  }
  // The streamed array's last element is complete: hand it to the reader and drop it.
  bool HandOver() {
    auto& array = streamed_->get_ref<Json::array_t&>();
    const size_t index = frames_.back().index;
    const bool go_on = index < already_handed_ || stream_->on_element(root_, index, array.back());
    handed_ = std::max(handed_, index + 1);
    array.pop_back();
    if (!go_on) {
      error_.field = Path();
      error_.message = "stopped by the reader";
      error_.stopped = true;
    }
    return go_on;
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
      } else if (f.key != nullptr && (!f.key->empty() || &f != &frames_.back())) {
        if (!out.empty()) out += '.';
        out += Shorten(*f.key);
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

  Json& root_;
  std::vector<Json*> containers_;  // the open arrays and objects, innermost last
  Json* member_ = nullptr;         // the member of the innermost object being read
  size_t max_depth_;
  bool refuse_duplicates_;
  const JsonArrayStream* stream_;
  Json* streamed_ = nullptr;  // the array being streamed, while it is open
  size_t already_handed_ = 0;
  size_t handed_ = 0;  // elements of the streamed array seen so far
  std::vector<Frame> frames_;
  JsonParseError error_;
  bool limit_hit_ = false;

 public:
  bool limit_hit() const { return limit_hit_; }
  size_t handed() const { return handed_; }
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

namespace {

bool ReferenceParse(std::string_view text, Json* out, JsonParseError* error,
                    const JsonParseLimits& limits, size_t depth, const JsonArrayStream* stream,
                    size_t already_handed);

bool Parse(std::string_view text, Json* out, JsonParseError* error, JsonParseLimits limits,
           const JsonArrayStream* stream) {
  size_t depth = limits.max_depth != 0 ? limits.max_depth : DefaultMaxJsonDepth();
  Json result;
  size_t handed = 0;
  {
    // Valid text is read once, by the fast reader. A refusal by the handler is final;
    // text the fast reader does not accept is read again by nlohmann's parser, which
    // says what is wrong with it (or, should the two ever disagree, accepts it).
    BoundedSax sax(&result, limits, depth, stream);
    json_internal::FastJsonReader<BoundedSax> fast(text, &sax);
    switch (fast.Run()) {
      case json_internal::FastReadOutcome::kOk:
        *out = std::move(result);
        return true;
      case json_internal::FastReadOutcome::kStopped:
        if (error) {
          *error = sax.error();
          if (error->message.empty()) error->message = "invalid JSON";
        }
        return false;
      case json_internal::FastReadOutcome::kInvalid:
        handed = sax.handed();
        break;
    }
  }
  result = Json();
  if (!ReferenceParse(text, &result, error, limits, depth, stream, handed)) return false;
  *out = std::move(result);
  return true;
}

}  // namespace

namespace json_internal {

bool ParseWithNlohmann(std::string_view text, Json* out, JsonParseError* error,
                       JsonParseLimits limits) {
  size_t depth = limits.max_depth != 0 ? limits.max_depth : DefaultMaxJsonDepth();
  return ReferenceParse(text, out, error, limits, depth, nullptr, 0);
}

}  // namespace json_internal

namespace {

bool ReferenceParse(std::string_view text, Json* out, JsonParseError* error,
                    const JsonParseLimits& limits, size_t depth, const JsonArrayStream* stream,
                    size_t already_handed) {
  Json result;
  bool ok = false;
  {
    BoundedSax sax(&result, limits, depth, stream, already_handed);
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

}  // namespace

bool ParseJsonText(std::string_view text, Json* out, JsonParseError* error,
                   JsonParseLimits limits) {
  return Parse(text, out, error, limits, nullptr);
}

bool ParseJsonText(std::string_view text, Json* out, JsonParseError* error, JsonParseLimits limits,
                   const JsonArrayStream& stream) {
  return Parse(text, out, error, limits, &stream);
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
