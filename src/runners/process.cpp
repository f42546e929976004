#include "runners/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

extern char** environ;

namespace baton::runners {
namespace {

// glibc's execvp default when PATH is unset.
constexpr const char* kDefaultPath = "/bin:/usr/bin";

// pipe2 with both ends close-on-exec and, should this process have closed one of its
// standard fds, never numbered 0..2 (dup2 onto itself would not clear close-on-exec).
int MakePipe(UniqueFd& read_end, UniqueFd& write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return errno;
  for (int& fd : fds) {
    if (fd < 3) {
      int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
      int err = errno;
      close(fd);
      if (moved < 0) {
        close(fds[0] == fd ? fds[1] : fds[0]);
        return err;
      }
      fd = moved;
    }
  }
  read_end.Reset(fds[0]);
  write_end.Reset(fds[1]);
  return 0;
}

bool IsRelative(std::string_view p) {
  return p.empty() || p[0] != '/';
}

std::string InCwd(const std::string& p, const std::string& cwd) {
  return IsRelative(p) && !cwd.empty() ? cwd + "/" + p : p;
}

// errno of chdir-ing into `cwd` (0 when fine or not set).
int CwdError(const std::string& cwd) {
  if (cwd.empty()) return 0;
  struct stat st;
  if (stat(cwd.c_str(), &st) != 0) return errno;
  if (!S_ISDIR(st.st_mode)) return ENOTDIR;
  if (access(cwd.c_str(), X_OK) != 0) return errno;
  return 0;
}

std::string PathVar(const ProcessSpec& spec) {
  if (spec.env) {
    for (const std::string& kv : *spec.env) {
      if (kv.starts_with("PATH=")) return kv.substr(5);
    }
    return kDefaultPath;
  }
  const char* p = getenv("PATH");
  return p ? p : kDefaultPath;
}

// Linux refuses (E2BIG) any one argument or environment string longer than this
// (MAX_ARG_STRLEN, 32 pages), whatever the total.
constexpr size_t kMaxArgumentBytes = 32 * 4096;

// What E2BIG was about: the first argument or variable past the kernel's limit, else the
// total.
std::string TooBigReason(const ProcessSpec& spec) {
  for (size_t i = 0; i < spec.argv.size(); ++i) {
    if (spec.argv[i].size() >= kMaxArgumentBytes) {
      return "argument " + std::to_string(i) + " is " + std::to_string(spec.argv[i].size()) +
             " bytes; Linux passes at most " + std::to_string(kMaxArgumentBytes - 1) +
             " in one argument: give large data through the step's `stdin` or a file";
    }
  }
  if (spec.env) {
    for (const std::string& kv : *spec.env) {
      if (kv.size() >= kMaxArgumentBytes) {
        return "environment variable " + kv.substr(0, std::min<size_t>(kv.find('='), 64)) + " is " +
               std::to_string(kv.size()) + " bytes; Linux passes at most " +
               std::to_string(kMaxArgumentBytes - 1) +
               " in one variable: give large data through the step's `stdin` or a file";
      }
    }
  }
  return "the arguments and environment together are larger than Linux passes to a program "
         "(ARG_MAX): give large data through the step's `stdin` or a file";
}

Status SpawnError(const ProcessSpec& spec, int err) {
  const std::string& name = spec.argv[0];
  if (int cwd_err = CwdError(spec.cwd)) {
    return Status(errc::kSpawn,
                  "cannot start `" + name + "`: cwd `" + spec.cwd + "`: " + strerror(cwd_err));
  }
  if (err == E2BIG)
    return Status(errc::kSpawn, "cannot start `" + name + "`: " + TooBigReason(spec));
  return Status(errc::kSpawn, "cannot start `" + name + "`: " + strerror(err));
}

// posix_spawn's file actions and attributes, destroyed on scope exit.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

void UniqueFd::Reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

Resolved ResolveProgram(const std::string& name, const std::string& path_var,
                        const std::string& cwd) {
  if (name.empty()) return {"", ENOENT};
  if (name.find('/') != std::string::npos) {
    if (access(InCwd(name, cwd).c_str(), X_OK) != 0) return {"", errno};
    return {name, 0};
  }
  int error = ENOENT;
  std::string_view rest = path_var;
  while (true) {
    size_t colon = rest.find(':');
    std::string_view dir = rest.substr(0, colon);
    // An empty entry is the current directory; "./" keeps the result a path.
    std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + name;
    std::string checked = InCwd(candidate, cwd);
    struct stat st;
    if (stat(checked.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (access(checked.c_str(), X_OK) == 0) return {candidate, 0};
      error = EACCES;
    }
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return {"", error};
}

std::string SignalName(int sig) {
  if (const char* abbrev = sigabbrev_np(sig)) return std::string("SIG") + abbrev;
  return "signal " + std::to_string(sig);
}

Result<SpawnedProcess> Spawn(const ProcessSpec& spec) {
  if (spec.argv.empty()) return Status(errc::kSpawn, "nothing to run: empty argv");
  Resolved program = ResolveProgram(spec.argv[0], PathVar(spec), spec.cwd);
  if (program.error != 0) return SpawnError(spec, program.error);

  const bool limited = spec.memory_limit > 0 || spec.cpu_seconds > 0;
  std::vector<std::string> prefix;
  if (limited) {
    prefix.emplace_back(kPrlimitPath);
    if (spec.memory_limit > 0) prefix.push_back("--as=" + std::to_string(spec.memory_limit));
    // soft:hard. At the soft limit the kernel sends SIGXCPU, which says why; equal
    // limits would make it SIGKILL. The hard limit, a second later, stops a process that
    // ignores SIGXCPU.
    if (spec.cpu_seconds > 0) {
      prefix.push_back("--cpu=" + std::to_string(spec.cpu_seconds) + ":" +
                       std::to_string(spec.cpu_seconds + 1));
    }
    prefix.emplace_back("--");
    prefix.push_back(program.path);
  }
  std::vector<char*> argv;
  argv.reserve(prefix.size() + spec.argv.size() + 1);
  for (std::string& s : prefix) argv.push_back(s.data());
  for (size_t i = limited ? 1 : 0; i < spec.argv.size(); ++i) {
    argv.push_back(const_cast<char*>(spec.argv[i].c_str()));
  }
  argv.push_back(nullptr);

  std::vector<char*> envp;
  if (spec.env) {
    envp.reserve(spec.env->size() + 1);
    for (const std::string& kv : *spec.env) envp.push_back(const_cast<char*>(kv.c_str()));
    envp.push_back(nullptr);
  }

  SpawnedProcess proc;
  UniqueFd child_stdin, child_stdout, child_stderr;
  int err = MakePipe(proc.stdout_fd, child_stdout);
  if (err == 0) err = MakePipe(proc.stderr_fd, child_stderr);
  if (err == 0 && spec.stdin_data) err = MakePipe(child_stdin, proc.stdin_fd);
  if (err != 0) {
    return Status(errc::kSpawn, "cannot start `" + spec.argv[0] + "`: pipe: " + strerror(err));
  }

  SpawnSetup setup;
  if (spec.stdin_data) {
    posix_spawn_file_actions_adddup2(&setup.actions, child_stdin.get(), 0);
  } else {
    posix_spawn_file_actions_addopen(&setup.actions, 0, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&setup.actions, child_stdout.get(), 1);
  posix_spawn_file_actions_adddup2(&setup.actions, child_stderr.get(), 2);
  // Nothing else of ours: sockets opened without O_CLOEXEC (Asio's listener and
  // connections) would otherwise live on in a step's processes, holding the server's
  // port after it exits.
  posix_spawn_file_actions_addclosefrom_np(&setup.actions, 3);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&setup.actions, spec.cwd.c_str());

  // The child leads a new process group (so a cancel reaches all it starts) and starts
  // with no blocked signals and default dispositions, whatever this process has set up.
  posix_spawnattr_setflags(&setup.attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&setup.attr, 0);
  sigset_t mask;
  sigemptyset(&mask);
  posix_spawnattr_setsigmask(&setup.attr, &mask);
  sigset_t defaults;
  sigfillset(&defaults);
  sigdelset(&defaults, SIGKILL);
  sigdelset(&defaults, SIGSTOP);
#if defined(__GLIBC__) && defined(__linux__)
  // sigfillset leaves out glibc's internal signals (32, 33), and glibc's posix_spawn
  // then leaves them ignored in the child, an ignore that survives exec. Asking for
  // their default (sigaddset refuses them) gives the child a clean slate.
  for (int sig : {32, 33}) {
    constexpr int kBits = 8 * sizeof(defaults.__val[0]);
    defaults.__val[(sig - 1) / kBits] |= 1UL << ((sig - 1) % kBits);
  }
#endif
  posix_spawnattr_setsigdefault(&setup.attr, &defaults);

  const char* exec_path = limited ? kPrlimitPath : program.path.c_str();
  pid_t pid = -1;
  err = posix_spawn(&pid, exec_path, &setup.actions, &setup.attr, argv.data(),
                    spec.env ? envp.data() : environ);
  if (err != 0) {
    if (limited && err == ENOENT && access(kPrlimitPath, X_OK) != 0) {
      return Status(errc::kSpawn, std::string("memory/cpu_time limits need ") + kPrlimitPath +
                                      " (util-linux): " + strerror(err));
    }
    return SpawnError(spec, err);
  }

  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    err = errno;
    kill(-pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return Status(errc::kSpawn,
                  "cannot start `" + spec.argv[0] + "`: pidfd_open: " + strerror(err));
  }
  proc.pid = pid;
  proc.pidfd.Reset(pidfd);
  for (UniqueFd* fd : {&proc.stdin_fd, &proc.stdout_fd, &proc.stderr_fd}) {
    if (fd->valid()) fcntl(fd->get(), F_SETFL, O_NONBLOCK);
  }
  return proc;
}

}  // namespace baton::runners
