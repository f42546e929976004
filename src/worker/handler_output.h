// What a handler's output streams come to (docs/worker-protocol.md, "Handlers of baton
// worker"), without any I/O: StdoutParser turns stdout, fed in chunks as read, into
// progress reports and the command's output; TailBuffer keeps the end of stderr.
//
// stdout is read as lines ('\n'; a '\r' before it is dropped; the text after the last
// '\n' is a line too). After trimming white space, a line that is one JSON object is
//   - a progress line when it has a "progress" field: reported at once, in order, as
//     (progress, checkpoint, data), the fields absent meaning null. A numeric progress
//     is clamped to 0..100 and rounded down; a line whose progress is not a number is
//     dropped. Progress lines are not part of the output.
//   - else an output candidate: the last one is the output.
// Every other line (text, other JSON values, blank lines) is output text. With no
// candidate, the output is the text of those lines, trimmed, invalid UTF-8 replaced by
// U+FFFD, or null when that is empty.
//
// Bounds: at most max_output bytes of stdout that are not progress lines, and no line
// longer than max_output, are taken; past that Finish() fails (code OUTPUT_TOO_LARGE)
// instead of cutting the output short, and what follows is only scanned for progress
// lines. A JSON line nested deeper than protocol::kMaxJsonDepth also fails the output,
// since the server would refuse it. Memory stays under about 3 * max_output.
#pragma once

#include <baton/json.h>
#include <baton/status.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace baton::worker {

// The error code of a handler whose output cannot be carried.
inline constexpr const char* kOutputTooLarge = "OUTPUT_TOO_LARGE";

class StdoutParser {
 public:
  using ProgressFn = std::function<void(int progress, Json checkpoint, Json data)>;

  StdoutParser(size_t max_output, ProgressFn on_progress);

  void Feed(std::string_view chunk);
  // Ends the stream (taking a last line without '\n') and returns the output. Once.
  Result<Json> Finish();

 private:
  void TakeLine(std::string_view line);
  void Overflow(std::string message);

  const size_t max_output_;
  ProgressFn on_progress_;
  std::string partial_;         // the line being read
  bool skipping_line_ = false;  // the current line went over max_output: drop the rest
  uint64_t kept_ = 0;           // bytes of non-progress lines
  std::string text_;            // the text lines, while kept_ <= max_output
  std::optional<Json> last_object_;
  std::optional<std::string> error_;
};

// The last `limit` bytes of a stream.
class TailBuffer {
 public:
  explicit TailBuffer(size_t limit) : limit_(limit) {}
  void Append(std::string_view chunk);
  // The tail, starting at a UTF-8 character boundary when the stream was cut.
  std::string Text() const;
  uint64_t total() const { return total_; }

 private:
  const size_t limit_;
  std::string data_;  // holds up to 2 * limit_, trimmed to the tail on the way
  uint64_t total_ = 0;
};

// The end of `text` for a message: trimmed, at most `max_bytes`, starting at a line
// when the cut leaves more than one line, else at a character; "..." marks a cut.
// Invalid UTF-8 becomes U+FFFD.
std::string MessageTail(std::string_view text, size_t max_bytes);

}  // namespace baton::worker
