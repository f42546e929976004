#include "runners/shell_result.h"

#include "common/json_parse.h"

#include <signal.h>
#include <sys/wait.h>

namespace baton::runners {
namespace {

constexpr size_t kMaxMessageLine = 300;

// Length of the valid UTF-8 sequence at the start of `s`, or 0 when it is invalid.
size_t Utf8SequenceLength(std::string_view s) {
  auto at = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char c = at(0);
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < len || at(1) < lo || at(1) > hi) return 0;
  for (size_t i = 2; i < len; ++i) {
    if (at(i) < 0x80 || at(i) > 0xBF) return 0;
  }
  return len;
}

// The last non-blank line of `text`, shortened to kMaxMessageLine bytes.
std::string LastLine(std::string_view text) {
  text = TrimSpace(text);
  size_t nl = text.find_last_of('\n');
  std::string_view line = TrimSpace(nl == std::string_view::npos ? text : text.substr(nl + 1));
  if (line.size() > kMaxMessageLine) {
    size_t cut = kMaxMessageLine;
    while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
    return std::string(line.substr(0, cut)) + "...";
  }
  return std::string(line);
}

}  // namespace

std::string_view TrimSpace(std::string_view s) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    size_t len = Utf8SequenceLength(text.substr(i));
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.data() + i, len);
      i += len;
    }
  }
  return out;
}

Json ParseStdout(std::string_view stdout_data) {
  std::string_view trimmed = TrimSpace(stdout_data);
  if (trimmed.empty()) return "";
  Json parsed;  // JSON too deep to walk safely stays text
  if (ParseJsonText(trimmed, &parsed, nullptr)) return parsed;
  return SanitizeUtf8(trimmed);
}

RunResult BuildShellResult(ProcessOutcome outcome, uint64_t cpu_seconds, size_t max_output) {
  RunResult result;
  if (!outcome.spawn_error.ok()) {
    result.status = std::move(outcome.spawn_error);
    return result;
  }
  result.stderr_text = SanitizeUtf8(outcome.stderr_data);
  const std::string last_line = LastLine(result.stderr_text);

  Json details = Json::object();
  Json truncated = Json::object();
  for (auto [name, total] : {std::pair<const char*, uint64_t>{"stdout", outcome.stdout_total},
                             std::pair<const char*, uint64_t>{"stderr", outcome.stderr_total}}) {
    if (total <= max_output) continue;
    truncated[name] = total;
    result.stderr_text += "\n[baton: " + std::string(name) + " truncated at " +
                          std::to_string(max_output) + " bytes]";
  }
  if (!truncated.empty()) {
    truncated["max_output"] = max_output;
    details["output_truncated"] = std::move(truncated);
  }

  const int ws = outcome.wait_status;
  if (outcome.reaped && WIFEXITED(ws)) {
    result.exit_code = WEXITSTATUS(ws);
  } else if (outcome.reaped && WIFSIGNALED(ws)) {
    result.exit_code = 128 + WTERMSIG(ws);
    details["signal"] = SignalName(WTERMSIG(ws));
  }

  if (outcome.cancelled) {
    result.status = Status(errc::kCancelled, "cancelled");
  } else if (!outcome.reaped) {
    result.status = Status(errc::kIo, "exit status unavailable: the process was reaped elsewhere");
  } else if (WIFSIGNALED(ws)) {
    const int sig = WTERMSIG(ws);
    std::string message = "killed by signal " + SignalName(sig);
    if (sig == SIGXCPU && cpu_seconds > 0) {
      message += " (cpu_time limit of " + std::to_string(cpu_seconds) + "s)";
    }
    result.status = Status(errc::kExitNonzero, std::move(message));
  } else if (result.exit_code != 0) {
    std::string message = "exited with code " + std::to_string(result.exit_code);
    if (!last_line.empty()) message += ": " + last_line;
    result.status = Status(errc::kExitNonzero, std::move(message));
  }
  if (!outcome.cancelled && outcome.reaped) result.output = ParseStdout(outcome.stdout_data);
  if (!details.empty()) result.error_details = std::move(details);
  return result;
}

}  // namespace baton::runners
