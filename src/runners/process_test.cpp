#include "runners/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace baton::runners {
namespace {

// Reads a non-blocking fd to EOF (generous deadline per chunk).
std::string ReadAll(const UniqueFd& fd) {
  std::string out;
  char buf[4096];
  while (true) {
    pollfd p{fd.get(), POLLIN, 0};
    if (poll(&p, 1, 30'000) <= 0) {
      ADD_FAILURE() << "timed out reading child output";
      return out;
    }
    ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EAGAIN) {
      return out;
    }
  }
}

struct Finished {
  std::string out, err;
  int status = -1;
};

Finished RunToEnd(SpawnedProcess& p) {
  Finished f;
  f.out = ReadAll(p.stdout_fd);
  f.err = ReadAll(p.stderr_fd);
  pollfd pfd{p.pidfd.get(), POLLIN, 0};
  EXPECT_EQ(poll(&pfd, 1, 30'000), 1) << "pidfd never became readable";
  EXPECT_EQ(waitpid(p.pid, &f.status, 0), p.pid);
  return f;
}

Finished RunChild(const ProcessSpec& spec) {
  Result<SpawnedProcess> p = Spawn(spec);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return {};
  return RunToEnd(*p);
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "baton-proc-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string WriteScript(const std::string& name, const std::string& body, int mode) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file) << body;
    chmod(file.c_str(), mode);
    return file;
  }

 private:
  std::string path_;
};

TEST(Spawn, PassesArgvLiterally) {
  ProcessSpec spec;
  spec.argv = {"printf", "%s\\n", "a b", "it's \"q\"", "$(rm -rf /)", "*", ""};
  Finished f = RunChild(spec);
  EXPECT_EQ(f.out, "a b\nit's \"q\"\n$(rm -rf /)\n*\n\n");
  EXPECT_TRUE(WIFEXITED(f.status) && WEXITSTATUS(f.status) == 0);
}

TEST(Spawn, ChildLeadsItsOwnProcessGroup) {
  ProcessSpec spec;
  spec.argv = {"sleep", "0.1"};
  Result<SpawnedProcess> p = Spawn(spec);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(getpgid(p->pid), p->pid);
  EXPECT_NE(getpgid(p->pid), getpgrp());
  RunToEnd(*p);
}

TEST(Spawn, StdinIsDevNullByDefaultAndAPipeWhenGiven) {
  ProcessSpec spec;
  spec.argv = {"cat"};
  EXPECT_EQ(RunChild(spec).out, "");

  spec.stdin_data = "through the pipe";
  Result<SpawnedProcess> p = Spawn(spec);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->stdin_fd.valid());
  ASSERT_EQ(write(p->stdin_fd.get(), spec.stdin_data->data(), spec.stdin_data->size()),
            static_cast<ssize_t>(spec.stdin_data->size()));
  p->stdin_fd.Reset();
  EXPECT_EQ(RunToEnd(*p).out, "through the pipe");
}

TEST(Spawn, LeaksNoDescriptorsIntoTheChild) {
  ProcessSpec holder;
  holder.argv = {"sleep", "0.2"};
  holder.stdin_data = "";
  Result<SpawnedProcess> other = Spawn(holder);  // its pipes must not reach the next child
  ASSERT_TRUE(other.ok());
  ProcessSpec spec;
  // The shell's own table, listed by a separate ls: ls's directory fd is not in it, so
  // descriptors inherited from the test runner cannot be mistaken for ours.
  spec.argv = {"sh", "-c", "ls /proc/$$/fd"};
  Result<SpawnedProcess> p = Spawn(spec);
  ASSERT_TRUE(p.ok());
  std::set<int> ours;
  for (const SpawnedProcess* sp : {&*other, &*p}) {
    for (const UniqueFd* fd : {&sp->pidfd, &sp->stdin_fd, &sp->stdout_fd, &sp->stderr_fd}) {
      if (fd->valid()) ours.insert(fd->get());
    }
  }
  std::istringstream listed(RunToEnd(*p).out);
  int fd;
  while (listed >> fd) EXPECT_FALSE(ours.count(fd)) << "fd " << fd << " leaked into the child";
  RunToEnd(*other);
}

TEST(Spawn, ClosesEvenDescriptorsOpenedWithoutCloseOnExec) {
  // Like a socket of Asio's: no O_CLOEXEC. A step's process must not keep it open (a
  // server's listening port would outlive the server).
  UniqueFd inheritable(::open("/dev/null", O_RDONLY));
  ASSERT_TRUE(inheritable.valid());
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "ls /proc/$$/fd"};
  Result<SpawnedProcess> p = Spawn(spec);
  ASSERT_TRUE(p.ok());
  std::istringstream listed(RunToEnd(*p).out);
  int fd;
  while (listed >> fd) EXPECT_NE(fd, inheritable.get()) << "an inheritable fd reached the child";
}

TEST(Spawn, ResetsSignalMaskAndDispositions) {
  struct sigaction ignore {
  }, old_int{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &block, &old_mask);

  ProcessSpec spec;
  spec.argv = {"grep", "-E", "^Sig(Blk|Ign)", "/proc/self/status"};
  Finished f = RunChild(spec);

  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  sigaction(SIGINT, &old_int, nullptr);
  EXPECT_EQ(f.out, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

TEST(Spawn, EnvReplacesTheEnvironmentAndItsPathFindsPrograms) {
  TempDir dir;
  dir.WriteScript("baton-tool", "#!/bin/sh\necho \"tool:$GREETING\"\n", 0755);
  ProcessSpec spec;
  spec.argv = {"baton-tool"};
  spec.env = std::vector<std::string>{"PATH=" + dir.path() + ":/usr/bin:/bin", "GREETING=hi"};
  EXPECT_EQ(RunChild(spec).out, "tool:hi\n");
}

TEST(Spawn, CwdAppliesToTheChildAndToRelativePaths) {
  TempDir dir;
  dir.WriteScript("here.sh", "#!/bin/sh\npwd\n", 0755);
  ProcessSpec spec;
  spec.argv = {"./here.sh"};
  spec.cwd = dir.path();
  EXPECT_EQ(RunChild(spec).out, std::filesystem::canonical(dir.path()).string() + "\n");
}

TEST(Spawn, MissingProgramIsASpawnError) {
  ProcessSpec spec;
  spec.argv = {"baton-no-such-program-xyz", "arg"};
  Result<SpawnedProcess> p = Spawn(spec);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), errc::kSpawn);
  EXPECT_EQ(p.status().message(),
            "cannot start `baton-no-such-program-xyz`: No such file or directory");

  spec.memory_limit = 1 << 30;  // also when started through prlimit
  p = Spawn(spec);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), errc::kSpawn);

  spec.argv = {"/nonexistent/prog"};
  p = Spawn(spec);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "cannot start `/nonexistent/prog`: No such file or directory");
}

TEST(Spawn, NonExecutableFileIsASpawnError) {
  TempDir dir;
  std::string file = dir.WriteScript("plain.txt", "data", 0644);
  ProcessSpec spec;
  spec.argv = {file};
  Result<SpawnedProcess> p = Spawn(spec);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), errc::kSpawn);
  EXPECT_NE(p.status().message().find("Permission denied"), std::string::npos);
}

// Issue 16: a 200 KB argument failed with a bare "Argument list too long".
TEST(Spawn, AnArgumentPastTheKernelsLimitIsNamedWithItsSize) {
  ProcessSpec spec;
  spec.argv = {"printf", "%s", std::string(200 * 1024, 'a')};
  Result<SpawnedProcess> p = Spawn(spec);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), errc::kSpawn);
  EXPECT_EQ(p.status().message(),
            "cannot start `printf`: argument 2 is 204800 bytes; Linux passes at most 131071 in "
            "one argument: give large data through the step's `stdin` or a file");
  spec.argv = {"true"};
  spec.env = std::vector<std::string>{"BIG=" + std::string(200 * 1024, 'b')};
  p = Spawn(spec);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("environment variable BIG is 204804 bytes"),
            std::string::npos)
      << p.status().message();
}

TEST(Spawn, BadCwdIsASpawnErrorNamingTheDirectory) {
  ProcessSpec spec;
  spec.argv = {"true"};
  spec.cwd = "/nonexistent/baton-dir";
  Result<SpawnedProcess> p = Spawn(spec);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), errc::kSpawn);
  EXPECT_EQ(p.status().message(),
            "cannot start `true`: cwd `/nonexistent/baton-dir`: No such file or directory");
}

TEST(Spawn, LimitsGoThroughPrlimitWithArgvIntact) {
  if (access(kPrlimitPath, X_OK) != 0) GTEST_SKIP() << "no " << kPrlimitPath;
  ProcessSpec spec;
  spec.argv = {"sh", "-c",      "ulimit -v; ulimit -t; ulimit -H -t; printf '%s\\n' \"$@\"",
               "sh", "--cpu=1", "-c"};
  spec.memory_limit = 100 << 20;
  spec.cpu_seconds = 7;
  Finished f = RunChild(spec);
  EXPECT_EQ(f.out, "102400\n7\n8\n--cpu=1\n-c\n") << f.err;
  EXPECT_TRUE(WIFEXITED(f.status) && WEXITSTATUS(f.status) == 0);
}

TEST(ResolveProgram, SearchesPathLikeExecvp) {
  TempDir dir;
  dir.WriteScript("not-exec", "x", 0644);
  dir.WriteScript("tool", "#!/bin/sh\n", 0755);
  std::filesystem::create_directory(dir.path() + "/adir");
  EXPECT_EQ(ResolveProgram("tool", "/nonexistent:" + dir.path(), "").path, dir.path() + "/tool");
  EXPECT_EQ(ResolveProgram("adir", dir.path(), "").error, ENOENT);
  EXPECT_EQ(ResolveProgram("not-exec", dir.path(), "").error, EACCES);
  EXPECT_EQ(ResolveProgram("tool", ":/nonexistent", dir.path()).path, "./tool");
  EXPECT_EQ(ResolveProgram("tool", "bin", "").error, ENOENT);
  EXPECT_EQ(ResolveProgram("./tool", "", dir.path()).path, "./tool");
  EXPECT_EQ(ResolveProgram("", "/bin", "").error, ENOENT);
}

TEST(SignalName, NamesSignals) {
  EXPECT_EQ(SignalName(SIGKILL), "SIGKILL");
  EXPECT_EQ(SignalName(SIGXCPU), "SIGXCPU");
}

}  // namespace
}  // namespace baton::runners
