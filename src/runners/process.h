// Process launch: posix_spawn (never fork) of a child that leads a new process group,
// with its stdio on pipes and a pidfd to learn of its exit.
//
// Threading: Spawn() may be called from any thread; it only touches the fds it creates,
// all of which are close-on-exec, so concurrent spawns never leak each other's pipes.
#pragma once

#include <baton/status.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace baton::runners {

// An owned file descriptor, closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) Reset(std::exchange(o.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }
  void Reset(int fd = -1);
  int Release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

// What to run. All strings are passed to the child verbatim: no shell, no splitting.
struct ProcessSpec {
  // argv[0] is the program: a path when it contains '/', else searched in PATH (the
  // PATH of `env` when given, else this process's PATH).
  std::vector<std::string> argv;
  // The complete environment ("KEY=VALUE"); nullopt inherits this process's environ.
  std::optional<std::vector<std::string>> env;
  std::string cwd;                        // empty: this process's cwd
  std::optional<std::string> stdin_data;  // nullopt: stdin is /dev/null
  uint64_t memory_limit = 0;              // bytes of address space (RLIMIT_AS); 0 = none
  uint64_t cpu_seconds = 0;               // RLIMIT_CPU; 0 = none
};

// The launcher of a limited process (util-linux prlimit): limits are applied without
// forking this (multi-threaded) process, by spawning `prlimit --as=N --cpu=N -- argv`.
inline constexpr const char* kPrlimitPath = "/usr/bin/prlimit";

// A started child. The child is the leader of process group `pid`. The parent-side pipe
// ends are non-blocking and close-on-exec; stdin_fd is invalid when stdin is /dev/null.
struct SpawnedProcess {
  pid_t pid = -1;
  UniqueFd pidfd;      // readable once the child has exited (it stays unreaped)
  UniqueFd stdin_fd;   // write end of the child's stdin
  UniqueFd stdout_fd;  // read end of the child's stdout
  UniqueFd stderr_fd;  // read end of the child's stderr
};

// Starts `spec`. Errors (code SPAWN_ERROR) name the program and the cause: program not
// found, not executable, bad cwd, prlimit missing, out of fds/processes. The caller must
// reap the child (waitpid) once the pidfd is readable.
Result<SpawnedProcess> Spawn(const ProcessSpec& spec);

// Resolves a program name like execvp does (first executable regular file in `path`,
// relative entries taken from `cwd`). Returns the path, or an errno (ENOENT, EACCES).
// A name containing '/' is checked (relative to `cwd`) and returned unchanged.
struct Resolved {
  std::string path;
  int error = 0;
};
Resolved ResolveProgram(const std::string& name, const std::string& path_var,
                        const std::string& cwd);

// "SIGKILL", or "signal 77" for a number without a name.
std::string SignalName(int sig);

}  // namespace baton::runners
