#include "runners/reactor.h"
#include "common/thread_name.h"

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
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

namespace baton::runners {
namespace {

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
void Invoke(const F& f, Args&&... args) {
  if (!f) return;
  try {
    f(std::forward<Args>(args)...);
  } catch (const std::exception& e) {
    fprintf(stderr, "baton: exception in a runner callback: %s\n", e.what());
  } catch (...) {
    fputs("baton: unknown exception in a runner callback\n", stderr);
  }
}

}  // namespace

struct ProcessReactor::Impl {
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

bool ProcessReactor::Impl::Watch(int fd, uint32_t events, uint64_t token) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = token;
  return epoll_ctl(epfd.get(), EPOLL_CTL_ADD, fd, &ev) == 0;
}

// Deregisters explicitly: a copy of the fd in a child being spawned elsewhere would keep
// the registration (and its level-triggered events) alive past close().
void ProcessReactor::Impl::Close(UniqueFd& fd) {
  if (!fd) return;
  epoll_ctl(epfd.get(), EPOLL_CTL_DEL, fd.get(), nullptr);
  fd.Reset();
}

void ProcessReactor::Impl::Run() {
  // A write to the stdin of a child that has exited must fail with EPIPE, not kill us.
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);

  epoll_event events[64];
  while (!(stopping && procs.empty())) {
    int n = epoll_wait(epfd.get(), events, 64, NextTimeoutMs());
    if (n < 0) {
      if (errno == EINTR) continue;
      fprintf(stderr, "baton: epoll_wait: %s\n", strerror(errno));
      std::abort();
    }
    for (int i = 0; i < n; ++i) OnEvent(events[i].data.u64);
    if (!kill_timers.empty() || !deadlines.empty() || !delayed.empty()) FireTimers();
  }
}

void ProcessReactor::Impl::DrainInbox() {
  uint64_t count;
  while (read(evfd.get(), &count, sizeof count) < 0 && errno == EINTR) {
  }
  wake_pending.store(false);
  std::vector<Command> batch;
  {
    std::lock_guard lock(mu);
    batch.swap(inbox);
  }
  for (Command& cmd : batch) {
    switch (cmd.type) {
      case Command::kStart:
        if (stopping) {
          ProcessOutcome outcome;
          outcome.cancelled = true;
          Invoke(cmd.job.on_done, std::move(outcome));
        } else {
          StartJob(std::move(cmd.job));
        }
        break;
      case Command::kCancel: {
        auto [begin, end] = by_id.equal_range(cmd.id);
        for (auto it = begin; it != end; ++it) CancelProc(*procs.at(it->second));
        break;
      }
      case Command::kTask:
        Invoke(cmd.task);
        break;
      case Command::kShutdown:
        stopping = true;
        delayed.clear();
        delayed_at.clear();
        for (auto& [seq, p] : procs) CancelProc(*p);
        break;
      case Command::kWrite: {
        auto [begin, end] = by_id.equal_range(cmd.id);
        for (auto it = begin; it != end; ++it) {
          Proc& p = *procs.at(it->second);
          if (!p.stdin_fd || !p.job.keep_stdin_open) continue;
          p.stdin_pending += cmd.data;
          WriteStdin(p);
        }
        break;
      }
      case Command::kCloseStdin: {
        auto [begin, end] = by_id.equal_range(cmd.id);
        for (auto it = begin; it != end; ++it) {
          Proc& p = *procs.at(it->second);
          p.job.keep_stdin_open = false;
          if (p.stdin_fd) WriteStdin(p);  // closes once nothing is pending
        }
        break;
      }
      case Command::kDelayed: {
        if (stopping) break;
        auto delay = std::min<std::chrono::milliseconds>(cmd.delay, kMaxTimeout);
        const SteadyTime at = std::chrono::steady_clock::now() + delay;
        delayed.emplace(std::make_pair(at, cmd.handle), std::move(cmd.task));
        delayed_at.emplace(cmd.handle, at);
        break;
      }
      case Command::kCancelDelayed:
        if (auto it = delayed_at.find(cmd.handle); it != delayed_at.end()) {
          delayed.erase(std::make_pair(it->second, cmd.handle));
          delayed_at.erase(it);
        }
        break;
    }
  }
}

void ProcessReactor::Impl::StartJob(ProcessJob job) {
  if (job.keep_stdin_open && !job.spec.stdin_data) job.spec.stdin_data = "";  // a pipe
  Result<SpawnedProcess> spawned = Spawn(job.spec);
  if (!spawned.ok()) {
    ProcessOutcome outcome;
    outcome.spawn_error = spawned.status();
    Invoke(job.on_done, std::move(outcome));
    return;
  }
  auto p = std::make_unique<Proc>();
  p->seq = next_seq++;
  p->pid = spawned->pid;
  p->pidfd = std::move(spawned->pidfd);
  p->stdin_fd = std::move(spawned->stdin_fd);
  if (job.spec.stdin_data) p->stdin_pending = std::move(*job.spec.stdin_data);
  p->out.fd = std::move(spawned->stdout_fd);
  p->err.fd = std::move(spawned->stderr_fd);
  p->job = std::move(job);
  if (p->job.on_stdout) p->out.sink = &p->job.on_stdout;
  if (p->job.on_stderr) p->err.sink = &p->job.on_stderr;
  const uint64_t base = p->seq << 2;
  bool watched = Watch(p->pidfd.get(), EPOLLIN, base | kPidfd) &&
                 Watch(p->out.fd.get(), EPOLLIN, base | kStdout) &&
                 Watch(p->err.fd.get(), EPOLLIN, base | kStderr);
  if (watched && p->stdin_fd) {
    WriteStdin(*p);
    watched = !p->stdin_fd || p->stdin_offset >= p->stdin_pending.size() || p->stdin_watched;
  }
  if (!watched) {  // out of memory for epoll: give up on this process
    int err = errno;
    kill(-p->pid, SIGKILL);
    waitpid(p->pid, nullptr, 0);
    Close(p->pidfd);
    Close(p->stdin_fd);
    Close(p->out.fd);
    Close(p->err.fd);
    ProcessOutcome outcome;
    outcome.spawn_error =
        Status(errc::kSpawn, std::string("cannot watch the process: ") + strerror(err));
    Invoke(p->job.on_done, std::move(outcome));
    return;
  }
  Proc& ref = *p;
  if (ref.job.timeout.count() > 0) {
    auto timeout = std::min<std::chrono::milliseconds>(ref.job.timeout, kMaxTimeout);
    ref.deadline = deadlines.emplace(std::chrono::steady_clock::now() + timeout, ref.seq);
  }
  by_id.emplace(ref.job.id, ref.seq);
  procs.emplace(ref.seq, std::move(p));
  Invoke(ref.job.on_started);
}

void ProcessReactor::Impl::CancelProc(Proc& p) {
  if (p.cancelled) return;
  p.cancelled = true;
  if (p.deadline) {
    deadlines.erase(*p.deadline);
    p.deadline.reset();
  }
  kill(-p.pid, SIGTERM);
  kill(-p.pid, SIGCONT);  // a stopped member could not act on the SIGTERM
  if (kill_grace.count() <= 0) {
    kill(-p.pid, SIGKILL);
    p.killed = true;
    return;
  }
  p.kill_timer = kill_timers.emplace(std::chrono::steady_clock::now() + kill_grace, p.seq);
}

void ProcessReactor::Impl::OnEvent(uint64_t token) {
  if (token == kWakeToken) {
    DrainInbox();
    return;
  }
  auto it = procs.find(token >> 2);
  if (it == procs.end()) return;
  Proc& p = *it->second;
  switch (static_cast<Kind>(token & 3)) {
    case kPidfd:
      OnExit(p);
      break;
    case kStdout:
    case kStderr: {
      Capture& c = (token & 3) == kStdout ? p.out : p.err;
      if (ReadSome(p, c) == ReadState::kClosed && p.leader_exited && !p.out.fd && !p.err.fd) {
        Finish(p);
      }
      break;
    }
    case kStdin:
      WriteStdin(p);
      break;
  }
}

void ProcessReactor::Impl::KillAllNow() {
  std::vector<uint64_t> seqs;
  for (const auto& [seq, p] : procs) seqs.push_back(seq);
  for (uint64_t seq : seqs) {
    auto it = procs.find(seq);
    if (it == procs.end()) continue;  // Finish() of an earlier one cannot erase others
    Proc& p = *it->second;
    CancelProc(p);
    if (p.killed) continue;
    if (p.kill_timer) {
      kill_timers.erase(*p.kill_timer);
      p.kill_timer.reset();
    }
    KillGroup(p);
  }
}

void ProcessReactor::Impl::KillGroup(Proc& p) {
  p.killed = true;
  if (p.leader_exited) {
    Finish(p);  // sends the SIGKILL
  } else {
    kill(-p.pid, SIGKILL);
  }
}

void ProcessReactor::Impl::OnExit(Proc& p) {
  if (!p.cancelled || p.killed || (!p.out.fd && !p.err.fd)) {
    Finish(p);
    return;
  }
  // Cancelled within the grace period: the rest of the group may still be cleaning up.
  // Wait for it to close its output or for the kill timer. The leader stays unreaped so
  // that its pid, the group id, cannot be reused before the final SIGKILL.
  Close(p.pidfd);
  p.leader_exited = true;
}

void ProcessReactor::Impl::FireTimers() {
  const SteadyTime now = std::chrono::steady_clock::now();
  while (!delayed.empty() && delayed.begin()->first.first <= now) {
    auto task = std::move(delayed.begin()->second);
    delayed_at.erase(delayed.begin()->first.second);
    delayed.erase(delayed.begin());
    Invoke(task);  // may post or cancel others: the loop looks at the map again
  }
  while (!deadlines.empty() && deadlines.begin()->first <= now) {
    Proc& p = *procs.at(deadlines.begin()->second);  // Finish() erases a process's deadline
    deadlines.erase(deadlines.begin());
    p.deadline.reset();
    p.timed_out = true;
    CancelProc(p);
  }
  while (!kill_timers.empty() && kill_timers.begin()->first <= now) {
    uint64_t seq = kill_timers.begin()->second;
    kill_timers.erase(kill_timers.begin());
    auto it = procs.find(seq);
    if (it == procs.end()) continue;
    Proc& p = *it->second;
    p.kill_timer.reset();
    KillGroup(p);
  }
}

int ProcessReactor::Impl::NextTimeoutMs() const {
  std::optional<SteadyTime> next;
  for (const Timers* timers : {&kill_timers, &deadlines}) {
    if (!timers->empty() && (!next || timers->begin()->first < *next)) {
      next = timers->begin()->first;
    }
  }
  if (!delayed.empty() && (!next || delayed.begin()->first.first < *next)) {
    next = delayed.begin()->first.first;
  }
  if (!next) return -1;
  auto wait = *next - std::chrono::steady_clock::now();
  if (wait <= wait.zero()) return 0;
  // Round up: waking early would only go round the loop again. A far deadline is
  // waited for in steps of an hour.
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(wait).count();
  return static_cast<int>(std::min<decltype(ms)>(ms, 3600 * 1000));
}

void ProcessReactor::Impl::WriteStdin(Proc& p) {
  const std::string& data = p.stdin_pending;
  while (p.stdin_offset < data.size()) {
    ssize_t n = write(p.stdin_fd.get(), data.data() + p.stdin_offset, data.size() - p.stdin_offset);
    if (n > 0) {
      p.stdin_offset += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {  // EPOLLOUT tells us when to go on
      if (!p.stdin_watched) {
        p.stdin_watched = Watch(p.stdin_fd.get(), EPOLLOUT, (p.seq << 2) | kStdin);
        if (!p.stdin_watched) break;  // out of memory for epoll: give up on stdin
      }
      return;
    }
    if (n < 0 && errno == EPIPE) {
      // The child stopped reading. Consume the (blocked) SIGPIPE this raised.
      sigset_t pipe_set;
      sigemptyset(&pipe_set);
      sigaddset(&pipe_set, SIGPIPE);
      timespec zero{};
      sigtimedwait(&pipe_set, nullptr, &zero);
    }
    break;
  }
  const bool all_written = p.stdin_offset >= data.size();
  p.stdin_pending.clear();
  p.stdin_offset = 0;
  if (all_written && p.job.keep_stdin_open) {
    // Kept open for more; EPOLLOUT is level-triggered, so it is watched only while
    // something is pending.
    if (p.stdin_watched) epoll_ctl(epfd.get(), EPOLL_CTL_DEL, p.stdin_fd.get(), nullptr);
    p.stdin_watched = false;
    return;
  }
  Close(p.stdin_fd);  // all written (or the child is gone): the child sees EOF
  p.stdin_watched = false;
}

ProcessReactor::Impl::ReadState ProcessReactor::Impl::ReadSome(Proc& p, Capture& c) {
  if (!c.fd) return ReadState::kClosed;
  ssize_t n = read(c.fd.get(), scratch.data(), scratch.size());
  if (n > 0) {
    c.total += static_cast<uint64_t>(n);
    if (c.sink) {
      Invoke(*c.sink, std::string_view(scratch.data(), static_cast<size_t>(n)));
      return ReadState::kData;
    }
    size_t room = p.job.max_output > c.data.size() ? p.job.max_output - c.data.size() : 0;
    c.data.append(scratch.data(), std::min(room, static_cast<size_t>(n)));
    return ReadState::kData;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return ReadState::kEmpty;
  Close(c.fd);  // EOF, or an error that would repeat
  return ReadState::kClosed;
}

void ProcessReactor::Impl::Finish(Proc& p) {
  // The leader is exited but unreaped, so the group id is still its own: no member of the
  // step's group outlives the step.
  kill(-p.pid, SIGKILL);
  int status = 0;
  pid_t r;
  while ((r = waitpid(p.pid, &status, 0)) < 0 && errno == EINTR) {
  }
  // What the group wrote before it died is in the pipes; take it without waiting for
  // writers outside the group. The bound stops a writer that never pauses.
  for (Capture* c : {&p.out, &p.err}) {
    for (int i = 0; i < 4096 && ReadSome(p, *c) == ReadState::kData; ++i) {
    }
    Close(c->fd);
  }
  Close(p.pidfd);
  Close(p.stdin_fd);
  if (p.kill_timer) kill_timers.erase(*p.kill_timer);
  if (p.deadline) deadlines.erase(*p.deadline);

  ProcessOutcome outcome;
  outcome.cancelled = p.cancelled && !p.timed_out;
  outcome.timed_out = p.timed_out;
  outcome.reaped = r == p.pid;
  outcome.wait_status = status;
  outcome.stdout_data = std::move(p.out.data);
  outcome.stderr_data = std::move(p.err.data);
  outcome.stdout_total = p.out.total;
  outcome.stderr_total = p.err.total;

  auto [begin, end] = by_id.equal_range(p.job.id);
  for (auto it = begin; it != end; ++it) {
    if (it->second == p.seq) {
      by_id.erase(it);
      break;
    }
  }
  std::unique_ptr<Proc> owned = std::move(procs.at(p.seq));
  procs.erase(owned->seq);
  Invoke(owned->job.on_done, std::move(outcome));
}

ProcessReactor::ProcessReactor(Duration kill_grace) : impl_(std::make_unique<Impl>(kill_grace)) {
  impl_->epfd.Reset(epoll_create1(EPOLL_CLOEXEC));
  impl_->evfd.Reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!impl_->epfd || !impl_->evfd || !impl_->Watch(impl_->evfd.get(), EPOLLIN, kWakeToken)) {
    fprintf(stderr, "baton: cannot set up the process reactor: %s\n", strerror(errno));
    std::abort();
  }
  impl_->thread = std::thread([impl = impl_.get()] {
    SetThreadName("baton-process");
    impl->Run();
  });
}

ProcessReactor::~ProcessReactor() {
  Shutdown();
}

bool ProcessReactor::Submit(ProcessJob job) {
  Command cmd(Command::kStart);
  cmd.job = std::move(job);
  return impl_->Push(std::move(cmd));
}

void ProcessReactor::Cancel(const std::string& id) {
  Command cmd(Command::kCancel);
  cmd.id = id;
  impl_->Push(std::move(cmd));
}

bool ProcessReactor::Post(std::function<void()> task) {
  Command cmd(Command::kTask);
  cmd.task = std::move(task);
  return impl_->Push(std::move(cmd));
}

uint64_t ProcessReactor::PostAfter(Duration delay, std::function<void()> task) {
  Command cmd(Command::kDelayed);
  cmd.task = std::move(task);
  cmd.delay = delay;
  cmd.handle = impl_->next_handle.fetch_add(1);
  const uint64_t handle = cmd.handle;
  return impl_->Push(std::move(cmd)) ? handle : 0;
}

void ProcessReactor::CancelPosted(uint64_t handle) {
  if (handle == 0) return;
  Command cmd(Command::kCancelDelayed);
  cmd.handle = handle;
  impl_->Push(std::move(cmd));
}

void ProcessReactor::Write(const std::string& id, std::string data) {
  Command cmd(Command::kWrite);
  cmd.id = id;
  cmd.data = std::move(data);
  impl_->Push(std::move(cmd));
}

void ProcessReactor::CloseStdin(const std::string& id) {
  Command cmd(Command::kCloseStdin);
  cmd.id = id;
  impl_->Push(std::move(cmd));
}

void ProcessReactor::KillAll() {
  Impl* impl = impl_.get();
  Post([impl] { impl->KillAllNow(); });
}

size_t ProcessReactor::ArmedTimeouts() {
  std::promise<size_t> count;
  std::future<size_t> answer = count.get_future();
  Impl* impl = impl_.get();
  if (!Post([impl, &count] { count.set_value(impl->deadlines.size()); })) return 0;
  return answer.get();
}

void ProcessReactor::Shutdown() {
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->accepting) {
      impl_->accepting = false;
      impl_->inbox.push_back(Command(Command::kShutdown));
    }
  }
  impl_->Wake();
  std::lock_guard lock(impl_->join_mu);
  if (impl_->thread.joinable() && impl_->thread.get_id() != std::this_thread::get_id()) {
    impl_->thread.join();
  }
}

}  // namespace baton::runners
