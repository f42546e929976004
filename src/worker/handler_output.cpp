#include "worker/handler_output.h"

#include <cmath>
#include <utility>

#include "protocol/worker_protocol.h"
#include "runners/shell_result.h"

namespace baton::worker {
namespace {

bool IsContinuationByte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// A numeric progress as an integer 0..100.
int ClampProgress(const Json& value) {
  double p = value.get<double>();
  if (!(p > 0)) return 0;  // also NaN
  if (p >= 100) return 100;
  return static_cast<int>(std::floor(p));
}

}  // namespace

StdoutParser::StdoutParser(size_t max_output, ProgressFn on_progress)
    : max_output_(max_output), on_progress_(std::move(on_progress)) {}

void StdoutParser::Feed(std::string_view chunk) {
  while (!chunk.empty()) {
    size_t nl = chunk.find('\n');
    std::string_view piece = chunk.substr(0, nl);
    if (!skipping_line_) {
      if (partial_.size() + piece.size() > max_output_) {
        Overflow("a stdout line is longer than max_output (" + std::to_string(max_output_) +
                 " bytes)");
        partial_.clear();
        partial_.shrink_to_fit();
        skipping_line_ = true;
      } else {
        partial_.append(piece);
      }
    }
    if (nl == std::string_view::npos) return;
    if (!skipping_line_) TakeLine(partial_);
    partial_.clear();
    skipping_line_ = false;
    chunk.remove_prefix(nl + 1);
  }
}

void StdoutParser::TakeLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string_view trimmed = runners::TrimSpace(line);
  if (!trimmed.empty() && trimmed.front() == '{') {
    Json j = Json::parse(trimmed.begin(), trimmed.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) {
      if (protocol::NestedDeeperThan(j, protocol::kMaxJsonDepth)) {
        Overflow("a stdout line is nested deeper than " + std::to_string(protocol::kMaxJsonDepth) +
                 " levels");
        return;
      }
      if (auto p = j.find("progress"); p != j.end()) {
        if (!p->is_number() || !on_progress_) return;
        auto field = [&](const char* key) {
          auto it = j.find(key);
          return it == j.end() ? Json() : std::move(*it);
        };
        int progress = ClampProgress(*p);
        on_progress_(progress, field("checkpoint"), field("data"));
        return;
      }
      kept_ += line.size() + 1;
      if (kept_ > max_output_) return Overflow("");
      last_object_ = std::move(j);
      return;
    }
  }
  kept_ += line.size() + 1;
  if (kept_ > max_output_) return Overflow("");
  text_.append(line);
  text_ += '\n';
}

void StdoutParser::Overflow(std::string message) {
  if (message.empty()) {
    message = "stdout is over max_output (" + std::to_string(max_output_) +
              " bytes, progress lines aside)";
  }
  if (!error_) error_ = std::move(message);
  text_.clear();
  text_.shrink_to_fit();
  last_object_.reset();
}

Result<Json> StdoutParser::Finish() {
  if (!partial_.empty() && !skipping_line_) TakeLine(partial_);
  partial_.clear();
  if (error_) return Status(kOutputTooLarge, *error_);
  if (last_object_) return std::move(*last_object_);
  std::string_view text = runners::TrimSpace(text_);
  if (text.empty()) return Json();
  return Json(runners::SanitizeUtf8(text));
}

void TailBuffer::Append(std::string_view chunk) {
  total_ += chunk.size();
  if (chunk.size() >= limit_) {
    data_.assign(chunk.substr(chunk.size() - limit_));
    return;
  }
  data_.append(chunk);
  if (data_.size() > 2 * limit_) data_.erase(0, data_.size() - limit_);
}

std::string TailBuffer::Text() const {
  std::string_view tail = data_;
  if (tail.size() > limit_) tail.remove_prefix(tail.size() - limit_);
  if (total_ > tail.size()) {
    while (!tail.empty() && IsContinuationByte(tail.front())) tail.remove_prefix(1);
  }
  return std::string(tail);
}

std::string MessageTail(std::string_view text, size_t max_bytes) {
  text = runners::TrimSpace(text);
  if (text.size() <= max_bytes) return runners::SanitizeUtf8(text);
  std::string_view tail = text.substr(text.size() - max_bytes);
  const bool at_line_start = text[text.size() - max_bytes - 1] == '\n';
  if (!at_line_start) {
    size_t nl = tail.find('\n');
    if (nl != std::string_view::npos && nl + 1 < tail.size()) {
      tail.remove_prefix(nl + 1);
    } else {
      while (!tail.empty() && IsContinuationByte(tail.front())) tail.remove_prefix(1);
    }
  }
  return "..." + runners::SanitizeUtf8(tail);
}

}  // namespace baton::worker
