// A persistent handler of `baton worker --persistent`: one long-lived process per
// handler takes every command for it, so a Python or Node handler pays its start-up once
// instead of once per command (docs/worker-protocol.md, "Persistent handlers").
//
// The line protocol, one JSON object per line:
//   to the handler (stdin)   the `command` message as a handler gets it otherwise; and
//                            {"cancel": ASSIGNMENT_ID, "reason": "cancelled"|"timeout"}
//                            when the command is cancelled or its timeoutSeconds pass
//                            (the command has then already ended; answer nothing).
//   from it (stdout)         {"assignment_id": ID, "progress": 0..100, "checkpoint"?,
//                            "data"?}; {"assignment_id": ID, "output": ANY} (success);
//                            {"assignment_id": ID, "error": {"code", "message",
//                            "retryable"?, "details"?}, "output"?} (failure). Other
//                            lines, and lines for an id that is not running, are ignored.
// The process runs many commands at once (as many as the worker's capacity). Its
// environment is the worker's plus BATON_HANDLER (the command name) and
// BATON_PERSISTENT=1. stderr is kept (its tail) for messages only.
//
// When the process exits (or cannot start), every command it held fails, retryable:
// HANDLER_EXITED with the exit status and the end of its stderr (SPAWN_ERROR when it
// never started); the next command starts a new process. A stdout line longer than
// max_line is a broken handler: the process is stopped, with the same effect.
//
// Threading: every member runs on the reactor's I/O thread (HandlerRunner posts there);
// the callbacks are called there too.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/worker_protocol.h"
#include "runners/reactor.h"
#include "worker/handler_output.h"
#include "worker/handler_runner.h"

namespace baton::worker {

class PersistentHandler : public std::enable_shared_from_this<PersistentHandler> {
 public:
  // `stopped` is the runner's: once set, commands ended by the process's exit are
  // CANCELLED (the runner is shutting down) rather than HANDLER_EXITED.
  PersistentHandler(std::string name, std::vector<std::string> argv,
                    runners::ProcessReactor* reactor, size_t max_line, size_t max_stderr,
                    const std::atomic<bool>* stopped);

  void Start(const protocol::Command& command, HandlerCallbacks callbacks);
  // Ends the command as CANCELLED and tells the process; false when it does not hold it.
  bool Cancel(const std::string& assignment_id);

 private:
  struct Running {
    std::function<void(protocol::CommandResult)> done;
    std::function<void(protocol::CommandProgress)> progress;
    Duration timeout{0};
    uint64_t timer = 0;  // the reactor's PostAfter handle, 0 for none
  };

  bool Spawn(Status* error);
  void OnStdout(uint64_t generation, std::string_view chunk);
  void OnLine(std::string_view line);
  void OnTimeout(const std::string& assignment_id);
  void OnExit(uint64_t generation, const runners::ProcessOutcome& outcome);
  void Tell(const std::string& assignment_id, const char* reason);
  void Finish(const std::string& assignment_id, protocol::CommandResult result);

  const std::string name_;
  const std::vector<std::string> argv_;
  runners::ProcessReactor* const reactor_;
  const size_t max_line_;
  const size_t max_stderr_;
  const std::atomic<bool>* const stopped_;

  bool running_ = false;     // a process is started (or starting)
  uint64_t generation_ = 0;  // of the current process; older ones' output is ignored
  std::string job_id_;
  std::string line_;  // stdout after the last newline
  std::unique_ptr<TailBuffer> stderr_;
  std::map<std::string, Running> commands_;  // by assignment id
};

}  // namespace baton::worker
