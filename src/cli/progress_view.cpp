#include "cli/progress_view.h"

#include <charconv>
#include <cstdio>
#include <ctime>
#include <string_view>
#include <utility>

namespace baton::cli {
namespace {

// Appends "HH:MM:SS.mmm" (local time). The "HH:MM:SS." of the last second is kept: a
// busy run prints thousands of lines a second, and localtime_r is the costly part.
void AppendClock(TimeMs t, std::string* out) {
  thread_local TimeMs cached_second = -1;
  thread_local char prefix[16];
  const TimeMs second = t / 1000;
  if (second != cached_second) {
    std::time_t s = static_cast<std::time_t>(second);
    std::tm tm{};
    localtime_r(&s, &tm);
    std::snprintf(prefix, sizeof prefix, "%02d:%02d:%02d.", tm.tm_hour % 100, tm.tm_min % 100,
                  tm.tm_sec % 100);
    cached_second = second;
  }
  const int ms = static_cast<int>(t % 1000);
  const char digits[3] = {static_cast<char>('0' + ms / 100), static_cast<char>('0' + ms / 10 % 10),
                          static_cast<char>('0' + ms % 10)};
  out->append(prefix);
  out->append(digits, 3);
}

std::string Elapsed(TimeMs ms) {
  char buf[64];
  if (ms >= 0 && ms < 60'000) {
    // Tenths of a second, rounded half up, without printf (a line per completed step).
    const long long tenths = (ms + 50) / 100;
    char* end = std::to_chars(buf, buf + 32, tenths / 10).ptr;
    *end++ = '.';
    *end++ = static_cast<char>('0' + tenths % 10);
    *end++ = 's';
    return std::string(buf, end);
  } else if (ms < 60'000) {
    std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms) / 1000.0);
  } else {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(ms / 60'000),
                  static_cast<long long>((ms / 1000) % 60));
  }
  return buf;
}

std::string Bar(int percent, int width) {
  int filled = percent * width / 100;
  std::string s;
  for (int i = 0; i < width; ++i) s += i < filled ? "\u2588" : "\u2591";
  return s;
}

// The event types the view tells apart, classified once per event: comparing the type
// with each literal in turn (strlen and memcmp every time) was a tenth of a 100,000-step
// `baton run --ephemeral`.
}  // namespace

enum class EventKind {
  kOther,
  kExecutionStarted,
  kExecutionRecovered,
  kExecutionEnd,  // completed, failed, timed out or cancelled
  kStepDispatched,
  kStepStarted,
  kStepProgress,
  kStepCompleted,
  kStepFailed,  // failed or timed out
  kStepRetrying,
  kStepCancelled,
  kStepSkipped,
};

namespace {

EventKind KindOf(std::string_view type) {
  using namespace std::string_view_literals;
  static constexpr std::pair<std::string_view, EventKind> kKinds[] = {
      {"step.ready"sv, EventKind::kOther},
      {"step.dispatched"sv, EventKind::kStepDispatched},
      {"step.completed"sv, EventKind::kStepCompleted},
      {"step.started"sv, EventKind::kStepStarted},
      {"step.progress"sv, EventKind::kStepProgress},
      {"step.failed"sv, EventKind::kStepFailed},
      {"step.timed_out"sv, EventKind::kStepFailed},
      {"step.retrying"sv, EventKind::kStepRetrying},
      {"step.cancelled"sv, EventKind::kStepCancelled},
      {"step.skipped"sv, EventKind::kStepSkipped},
      {"execution.started"sv, EventKind::kExecutionStarted},
      {"execution.recovered"sv, EventKind::kExecutionRecovered},
      {"execution.completed"sv, EventKind::kExecutionEnd},
      {"execution.failed"sv, EventKind::kExecutionEnd},
      {"execution.timed_out"sv, EventKind::kExecutionEnd},
      {"execution.cancelled"sv, EventKind::kExecutionEnd},
  };
  for (const auto& [name, kind] : kKinds) {
    if (type == name) return kind;
  }
  return EventKind::kOther;
}

bool EndsAttempt(EventKind k) {
  return k == EventKind::kStepCompleted || k == EventKind::kStepFailed ||
         k == EventKind::kStepRetrying || k == EventKind::kStepCancelled ||
         k == EventKind::kStepSkipped;
}

std::string ErrorText(const Json& data) {
  auto it = data.find("error");
  if (it == data.end() || !it->is_object()) return "";
  return it->value("code", "") + ": " + it->value("message", "");
}

}  // namespace

void ProgressView::OnEvent(const EventRecord& e, const ExecutionProgress& p) {
  const EventKind kind = KindOf(e.type);
  if (live_) last_ = p;  // only the live view draws it
  if (kind == EventKind::kExecutionStarted || kind == EventKind::kExecutionRecovered) {
    exec_started_ = e.time;
    if (e.data.contains("workflow")) workflow_[e.execution_id] = e.data["workflow"];
  }
  if (kind == EventKind::kStepDispatched) {
    // Handed to a runner or a worker, not started yet: to a person, queued.
    running_[e.step_id] = {"queued", e.time, 0, std::max(e.attempt, 1)};
  } else if (kind == EventKind::kStepStarted) {
    running_[e.step_id].status = "running";
  } else if (kind == EventKind::kStepProgress) {
    running_[e.step_id].progress = e.data.value("progress", 0);
  } else if (EndsAttempt(kind)) {
    auto it = running_.find(e.step_id);
    last_duration_ = it == running_.end() ? 0 : e.time - it->second.started;
    if (it != running_.end()) running_.erase(it);
  }
  if (!quiet_) {
    if (live_) {
      Erase();
      PrintLine(e, kind);
      Redraw(e.time);
    } else {
      PrintLine(e, kind);
    }
  }
  if (kind == EventKind::kExecutionEnd) {
    FlushLines();  // before whatever the caller prints next
    if (on_finished) {
      on_finished(e.execution_id, ParseExecutionStatus(e.data.value("status", "failed"))
                                      .value_or(ExecutionStatus::kFailed));
    }
  }
}

void ProgressView::OnStoreError(const Status& status) {
  FlushLines();
  Erase();
  std::fprintf(out_, "baton: the store refused a write, stopping: %s\n", status.ToString().c_str());
  std::fflush(out_);
}

void ProgressView::PrintLine(const EventRecord& e, EventKind kind) {
  if (live_) {
    // The live view prints only what a person wants to keep: step outcomes.
    const char* mark = nullptr;
    std::string detail;
    switch (kind) {
      case EventKind::kStepCompleted:
        mark = "\x1b[32m\u2714\x1b[0m";
        detail = Elapsed(last_duration_);
        break;
      case EventKind::kStepFailed:
        mark = "\x1b[31m\u2718\x1b[0m";
        detail = ErrorText(e.data);
        break;
      case EventKind::kStepRetrying:
        mark = "\x1b[33m\u21bb\x1b[0m";
        detail = "retry in " + Elapsed(e.data.value("delay_ms", 0)) + " after " + ErrorText(e.data);
        break;
      case EventKind::kStepSkipped:
        mark = "\x1b[90m\u21b7\x1b[0m";
        detail = e.data.value("reason", "");
        break;
      case EventKind::kStepCancelled:
        mark = "\x1b[90m\u25a0\x1b[0m";
        detail = "cancelled";
        break;
      case EventKind::kExecutionStarted:
      case EventKind::kExecutionRecovered:
        std::fprintf(out_, "\x1b[1m%s\x1b[0m %s %s\n", workflow_[e.execution_id].c_str(),
                     e.execution_id.c_str(),
                     kind == EventKind::kExecutionRecovered ? "(recovered)" : "");
        return;
      default:
        return;  // an execution's end: the final summary says it
    }
    std::fprintf(out_, "  %s %-24s %s%s\n", mark, e.step_id.c_str(), detail.c_str(),
                 NameOf(e.step_id).c_str());
    return;
  }
  // Built straight into the held lines: no string per line.
  std::string& line = held_;
  AppendClock(e.time, &line);
  line += ' ';
  line += e.execution_id;
  line += ' ';
  line += e.type;
  if (!e.step_id.empty()) {
    line += ' ';
    line += e.step_id;
  }
  if (e.attempt > 0) {
    line += " attempt=";
    line += std::to_string(e.attempt);
  }
  if (kind == EventKind::kStepCompleted) {
    line += " (";
    line += Elapsed(last_duration_);
    line += ')';
  } else if (kind == EventKind::kStepProgress) {
    line += " " + std::to_string(e.data.value("progress", 0)) + "%";
  } else if (kind == EventKind::kStepRetrying) {
    line += " delay=" + Elapsed(e.data.value("delay_ms", 0));
  }
  if (e.data.is_object()) {  // most events carry no data
    std::string err = ErrorText(e.data);
    if (!err.empty()) line += " " + err;
    if (e.data.contains("reason")) line += " (" + e.data.value("reason", "") + ")";
  }
  line += '\n';
  // One write per turn, not per line: a 100,000-step run spent a quarter of its time in
  // write(2). The flush is queued behind the turn's events, so no line waits longer than
  // the turn that produced it.
  if (loop_ == nullptr || held_.size() >= (64 << 10)) {
    FlushLines();
  } else if (!flush_posted_) {
    flush_posted_ = true;
    loop_->Post([this] { FlushLines(); });
  }
}

void ProgressView::FlushLines() {
  flush_posted_ = false;
  if (held_.empty()) return;
  std::fwrite(held_.data(), 1, held_.size(), out_);
  std::fflush(out_);
  held_.clear();
}

// "  <name>" dimmed, or nothing for a step without one.
std::string ProgressView::NameOf(const std::string& step_id) const {
  auto it = names_.find(step_id);
  return it == names_.end() ? "" : "  \x1b[90m" + it->second + "\x1b[0m";
}

void ProgressView::Erase() {
  if (drawn_lines_ > 0) std::fprintf(out_, "\x1b[%dA\x1b[J", drawn_lines_);
  drawn_lines_ = 0;
}

void ProgressView::Redraw(TimeMs now) {
  last_draw_ = now;
  int lines = 0;
  std::fprintf(out_, "  %s %3d%%  layer %d/%d  %d/%d steps  %s\n", Bar(last_.percent, 30).c_str(),
               last_.percent, last_.layer, last_.layers, last_.steps_done, last_.steps_total,
               Elapsed(now - exec_started_).c_str());
  ++lines;
  int shown = 0;
  for (const auto& [id, r] : running_) {
    if (++shown > 12) {
      std::fprintf(out_, "    ... and %zu more\n", running_.size() - 12);
      ++lines;
      break;
    }
    std::string extra = r.progress > 0 ? std::to_string(r.progress) + "%" : "";
    if (r.attempt > 1)
      extra += (extra.empty() ? "" : " ") + std::string("attempt ") + std::to_string(r.attempt);
    std::fprintf(out_, "    \x1b[36m\u25b6\x1b[0m %-22s %-10s %8s  %s%s\n", id.c_str(),
                 r.status.c_str(), Elapsed(now - r.started).c_str(), extra.c_str(),
                 NameOf(id).c_str());
    ++lines;
  }
  drawn_lines_ = lines;
  std::fflush(out_);
}

void ProgressView::Tick(TimeMs now) {
  if (quiet_ || !live_ || exec_started_ == 0) return;
  Erase();
  Redraw(now);
}

void ProgressView::Finish() {
  FlushLines();
  if (live_ && !quiet_) Erase();
  std::fflush(out_);
}

void PrintOutcome(FILE* out, const std::string& id, ExecutionStatus status, const Json& error,
                  const Json& output, bool color, bool with_output, const std::string& where) {
  const char* start = !color ? "" : status == ExecutionStatus::kCompleted ? "\x1b[32m" : "\x1b[31m";
  std::fprintf(out, "%s%s %s%s %s%s\n", start, id.c_str(), ToString(status), color ? "\x1b[0m" : "",
               error.is_object()
                   ? (error.value("code", "") + ": " + error.value("message", "")).c_str()
                   : "",
               where.c_str());
  if (with_output && status == ExecutionStatus::kCompleted && !output.is_null()) {
    std::fprintf(out, "output: %s\n", output.dump().c_str());
  }
}

}  // namespace baton::cli
