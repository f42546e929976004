// The child processes of a ProcessReactor: starting them, their pipes (stdin written,
// stdout and stderr captured), cancellation, their exit and the result.
#include "runners/reactor_impl.h"

namespace baton::runners {

using namespace reactor_detail;  // this class's own helpers (reactor_impl.h)

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

}  // namespace baton::runners
