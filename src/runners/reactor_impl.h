// ProcessReactor's insides, shared by reactor.cpp (the loop, its inbox, timers and the
// public facade) and reactor_process.cpp (starting processes, their pipes, exits and the
// results). Internal to the runners module.
#pragma once

#include "runners/reactor.h"

#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace baton::runners::reactor_detail {

using SteadyTime = std::chrono::steady_clock::time_point;

// epoll_data: (process sequence number << 2) | kind. Sequence numbers start at 1, so the
// wake eventfd (0) never collides; stale events for a finished process find no entry.
enum Kind : uint64_t { kPidfd = 0, kStdout = 1, kStderr = 2, kStdin = 3 };
constexpr uint64_t kWakeToken = 0;

struct Capture {
  UniqueFd fd;
  std::string data;
  uint64_t total = 0;
  const std::function<void(std::string_view)>* sink = nullptr;  // the job's, when set
};

using Timers = std::multimap<SteadyTime, uint64_t>;  // when -> process sequence number

// Longer timeouts count as this long, so that deadlines cannot overflow.
constexpr std::chrono::hours kMaxTimeout{24 * 365 * 10};

struct Proc {
  uint64_t seq = 0;
  ProcessJob job;
  pid_t pid = -1;
  UniqueFd pidfd;
  UniqueFd stdin_fd;
  std::string stdin_pending;  // not yet written, from stdin_offset
  size_t stdin_offset = 0;
  bool stdin_watched = false;  // EPOLLOUT registered (only while something is pending)
  Capture out, err;
  bool cancelled = false;
  bool timed_out = false;      // cancelled by its timeout
  bool killed = false;         // SIGKILL sent to the group
  bool leader_exited = false;  // cancelled, leader gone, waiting for the group's output
  std::optional<Timers::iterator> kill_timer;
  std::optional<Timers::iterator> deadline;  // the job's timeout
};

struct Command {
  enum Type { kStart, kCancel, kTask, kShutdown, kWrite, kCloseStdin, kDelayed, kCancelDelayed };
  explicit Command(Type t) : type(t) {}
  Type type;
  ProcessJob job;              // kStart
  std::string id;              // kCancel, kWrite, kCloseStdin
  std::function<void()> task;  // kTask, kDelayed
  std::string data;            // kWrite
  Duration delay{0};           // kDelayed
  uint64_t handle = 0;         // kDelayed, kCancelDelayed
};

template <class F, class... Args>
inline void Invoke(const F& f, Args&&... args) {
  if (!f) return;
  try {
    f(std::forward<Args>(args)...);
  } catch (const std::exception& e) {
    fprintf(stderr, "baton: exception in a runner callback: %s\n", e.what());
  } catch (...) {
    fputs("baton: unknown exception in a runner callback\n", stderr);
  }
}

}  // namespace baton::runners::reactor_detail

namespace baton::runners {

struct ProcessReactor::Impl {
  using Capture = reactor_detail::Capture;
  using Command = reactor_detail::Command;
  using Proc = reactor_detail::Proc;
  using SteadyTime = reactor_detail::SteadyTime;
  using Timers = reactor_detail::Timers;

  explicit Impl(Duration grace) : kill_grace(grace) {}

  // Shared with other threads.
  std::mutex mu;
  std::vector<Command> inbox;
  bool accepting = true;
  std::atomic<bool> wake_pending{false};
  std::mutex join_mu;
  UniqueFd epfd, evfd;
  std::thread thread;
  const Duration kill_grace;

  // I/O thread only.
  std::unordered_map<uint64_t, std::unique_ptr<Proc>> procs;
  std::unordered_multimap<std::string, uint64_t> by_id;
  Timers kill_timers;
  Timers deadlines;
  // PostAfter tasks by (when, handle); `delayed_at` finds one to cancel.
  std::map<std::pair<SteadyTime, uint64_t>, std::function<void()>> delayed;
  std::unordered_map<uint64_t, SteadyTime> delayed_at;
  std::atomic<uint64_t> next_handle{1};  // any thread
  uint64_t next_seq = 1;
  bool stopping = false;
  std::vector<char> scratch = std::vector<char>(64 * 1024);

  bool Push(Command cmd) {
    {
      std::lock_guard lock(mu);
      if (!accepting) return false;
      inbox.push_back(std::move(cmd));
    }
    Wake();
    return true;
  }
  void Wake() {
    if (wake_pending.exchange(true)) return;
    uint64_t one = 1;
    while (write(evfd.get(), &one, sizeof one) < 0 && errno == EINTR) {
    }
  }

  void Run();
  void DrainInbox();
  void KillAllNow();
  // SIGKILL to the group now (or, when its leader has exited, the final Finish).
  void KillGroup(Proc& p);
  void StartJob(ProcessJob job);
  void CancelProc(Proc& p);
  void OnEvent(uint64_t token);
  void OnExit(Proc& p);
  void FireTimers();
  int NextTimeoutMs() const;
  void WriteStdin(Proc& p);
  enum class ReadState { kData, kEmpty, kClosed };
  ReadState ReadSome(Proc& p, Capture& c);
  void Close(UniqueFd& fd);
  void Finish(Proc& p);
  bool Watch(int fd, uint32_t events, uint64_t token);
};

}  // namespace baton::runners
