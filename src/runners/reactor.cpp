// ProcessReactor: its loop (epoll, the inbox of commands from other threads, timers and
// delayed tasks) and the public facade. The processes themselves: reactor_process.cpp.
#include "runners/reactor_impl.h"

#include "common/thread_name.h"

#include <future>

namespace baton::runners {

using namespace reactor_detail;  // this class's own helpers (reactor_impl.h)

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
