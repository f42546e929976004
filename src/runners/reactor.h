// ProcessReactor: one I/O thread that runs child processes for a runner.
//
// The thread spawns each submitted process (runners/process.h), writes its stdin, reads
// its stdout and stderr (keeping at most max_output bytes of each, draining the rest),
// learns of its exit through its pidfd, reaps it and reports a ProcessOutcome. It sleeps
// in epoll_wait with no timeout unless a kill deadline or a job timeout is pending; an eventfd
// wakes it for new work. There is no thread per process.
//
// Process lifetime: a process's group dies with it. Once the leader has exited, the rest
// of its group gets SIGKILL before the outcome is reported, and output still held open
// by processes outside the group is not waited for. (A step that must leave a daemon
// behind starts it in a session of its own, e.g. with setsid.)
//
// Cancel: SIGTERM (and SIGCONT) to the group; SIGKILL to the group after kill_grace if
// the leader is still alive. A leader that exits within the grace period gives the rest
// of its group the remainder of that period to close its output before the SIGKILL.
// A job's timeout, when set, cancels it the same way once it has run that long.
//
// Output: each stream's first max_output bytes are kept for the outcome, the rest read
// and dropped; or, with an on_stdout / on_stderr sink, every byte goes to the sink as
// it is read (nothing is kept and max_output does not apply to that stream).
//
// The reactor reaps its children itself and relies on the unreaped leader to keep the
// group id from being reused, so nothing else in the process may reap them: no
// waitpid(-1, ...) elsewhere, and SIGCHLD must not be set to SIG_IGN.
//
// Threading: Submit, Cancel and Post are thread-safe and may be called from the
// callbacks. Callbacks run on the I/O thread, one at a time; they must not block for
// long and must not call Shutdown() or destroy the reactor.
#pragma once

#include <baton/clock.h>
#include <baton/status.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "runners/process.h"

namespace baton::runners {

struct ProcessOutcome {
  Status spawn_error;       // not ok: the process never started (nothing else is set)
  bool cancelled = false;   // Cancel() reached it before it exited on its own
  bool timed_out = false;   // the job's timeout passed first (then cancelled is false)
  bool reaped = false;      // wait_status is known
  int wait_status = 0;      // as from waitpid
  std::string stdout_data;  // the first max_output bytes (empty with an on_stdout sink)
  std::string stderr_data;
  uint64_t stdout_total = 0;  // bytes the process wrote, kept or not
  uint64_t stderr_total = 0;
};

struct ProcessJob {
  std::string id;  // for Cancel; need not be unique (Cancel reaches every match)
  ProcessSpec spec;
  size_t max_output = 1 << 20;                  // bytes kept per stream
  std::function<void()> on_started;             // optional
  std::function<void(ProcessOutcome)> on_done;  // exactly once per accepted job
  // Optional sinks: the stream's bytes in order, in chunks as read (not split at lines),
  // on the I/O thread, all before on_done.
  std::function<void(std::string_view)> on_stdout;
  std::function<void(std::string_view)> on_stderr;
  // Optional: past this much time after the spawn, the job is stopped as by Cancel()
  // and its outcome says timed_out. 0 = none.
  Duration timeout{0};
  // stdin is a pipe that stays open once stdin_data (may be empty) is written: Write()
  // adds to it, CloseStdin() ends it (the child then reads EOF). For long-lived
  // processes that take work line by line.
  bool keep_stdin_open = false;
};

class ProcessReactor {
 public:
  explicit ProcessReactor(Duration kill_grace);
  ~ProcessReactor();  // Shutdown()
  ProcessReactor(const ProcessReactor&) = delete;
  ProcessReactor& operator=(const ProcessReactor&) = delete;

  // Queues `job`. Returns false (and drops it, calling nothing) after Shutdown().
  bool Submit(ProcessJob job);
  // Cancels the running or queued jobs with this id; a no-op for unknown ids.
  void Cancel(const std::string& id);
  // Runs `task` on the I/O thread, in order with the other requests. False after
  // Shutdown() (the task is dropped).
  bool Post(std::function<void()> task);
  // Runs `task` on the I/O thread once `delay` has passed, unless CancelPosted() comes
  // first. Returns a handle for CancelPosted (0 after Shutdown(): the task is dropped).
  // Tasks still waiting at Shutdown() are dropped, not run.
  uint64_t PostAfter(Duration delay, std::function<void()> task);
  void CancelPosted(uint64_t handle);
  // Appends `data` to the stdin of the running jobs with this id that keep it open
  // (keep_stdin_open); dropped for a job that has ended or closed its stdin. Written in
  // order, as the child reads.
  void Write(const std::string& id, std::string data);
  // Closes their stdin once what was written has been taken.
  void CloseStdin(const std::string& id);
  // How many job timeouts are armed, read on the I/O thread (a finished job leaves none
  // behind). 0 after Shutdown().
  size_t ArmedTimeouts();
  // Cancels every job and sends its process group SIGKILL now instead of after the
  // grace period. Returns at once; each job's on_done follows as for a cancel.
  void KillAll();
  // Refuses new work, cancels all jobs, waits until every on_done has returned and
  // joins the thread. Idempotent; thread-safe; not from a callback.
  void Shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton::runners
