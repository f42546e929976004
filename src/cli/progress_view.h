// What `baton run` shows while an execution runs. On a terminal: a live view (a
// progress bar, the layer, one line per running step with elapsed time and progress;
// finished steps scroll above it). Elsewhere: one line per event on stderr, the lines of
// one engine turn written together at the end of the turn.
#pragma once

#include <baton/engine.h>
#include <baton/event_loop.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <string>

namespace baton::cli {

enum class EventKind;  // an event's type as the view tells them apart (progress_view.cpp)

class ProgressView final : public ExecutionObserver {
 public:
  // `live`: draw the terminal view (else event lines). `quiet`: print nothing. `loop`
  // (optional; must outlive the view's last event) is the engine's: event lines are held
  // until the turn that emitted them ends, then written at once. Without it, each line is
  // written as it comes.
  ProgressView(FILE* out, bool live, bool quiet, EventLoop* loop = nullptr)
      : out_(out), live_(live), quiet_(quiet), loop_(loop) {}
  ~ProgressView() override { FlushLines(); }
  ProgressView(const ProgressView&) = delete;
  ProgressView& operator=(const ProgressView&) = delete;
  void OnEvent(const EventRecord& event, const ExecutionProgress& progress) override;
  void OnStoreError(const Status& status) override;
  // Redraws the live view (elapsed times move even without events).
  void Tick(TimeMs now);
  // Erases the live area for good (before the final summary).
  void Finish();
  // Steps' `name`s by id (those that have one): the live view shows each after its id.
  void SetStepNames(std::map<std::string, std::string> names) { names_ = std::move(names); }
  // Called when an execution reaches a terminal state.
  std::function<void(const std::string& execution_id, ExecutionStatus status)> on_finished;

 private:
  struct Running {
    std::string status;
    TimeMs started = 0;
    int progress = 0;
    int attempt = 1;
  };
  void PrintLine(const EventRecord& e, EventKind kind);
  void FlushLines();
  void Redraw(TimeMs now);
  void Erase();

  FILE* out_;
  bool live_;
  bool quiet_;
  std::map<std::string, Running> running_;       // by step id, in id order
  std::map<std::string, std::string> workflow_;  // execution id -> workflow name
  std::map<std::string, std::string> names_;     // step id -> its `name`
  std::string NameOf(const std::string& step_id) const;
  ExecutionProgress last_;
  TimeMs exec_started_ = 0;
  int drawn_lines_ = 0;
  TimeMs last_duration_ = 0;  // of the step whose attempt just ended
  TimeMs last_draw_ = 0;
  EventLoop* loop_;
  std::string held_;           // event lines not written yet
  bool flush_posted_ = false;  // a FlushLines task is queued on loop_
};

// The lines `baton run` and `baton status --watch` end with: "ID STATUS [CODE: message]
// [where]" (green or red when `color`), then "output: JSON" for a completed execution
// with an output when `with_output`.
void PrintOutcome(FILE* out, const std::string& id, ExecutionStatus status, const Json& error,
                  const Json& output, bool color, bool with_output, const std::string& where = "");

}  // namespace baton::cli
