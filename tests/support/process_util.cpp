#include "support/process_util.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace baton::testing {

std::string BatonBin() {
  // $BATON_TEST_BIN overrides the build's binary (bench/worker_bench.cpp --baton sets it).
  if (const char* bin = std::getenv("BATON_TEST_BIN"); bin != nullptr && *bin != '\0') return bin;
  return BATON_BIN_PATH;
}
std::string SourceDir() {
  return BATON_SOURCE_PATH;
}

namespace {

std::vector<char*> Argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const auto& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// This process's environment with `extra` (NAME=value) added; an extra variable
// replaces one of the same name (getenv would find the first of two).
std::vector<std::string> Env(const std::vector<std::string>& extra) {
  auto name_of = [](std::string_view kv) { return kv.substr(0, kv.find('=')); };
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    bool replaced = false;
    for (const auto& x : extra) replaced |= name_of(x) == name_of(*e);
    if (!replaced) env.emplace_back(*e);
  }
  for (const auto& x : extra) env.push_back(x);
  return env;
}

}  // namespace

int WaitProcess(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

pid_t StartProcess(const std::vector<std::string>& argv, const std::string& out_file,
                   const std::vector<std::string>& extra_env, const std::string& cwd) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  auto args = Argv(argv);
  auto env_strings = Env(extra_env);
  auto envp = Argv(env_strings);
  pid_t pid = -1;
  if (posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), envp.data()) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& cwd,
                         const std::vector<std::string>& extra_env) {
  std::string dir = MakeTempDir();
  std::string out = dir + "/out", err = dir + "/err";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  auto args = Argv(argv);
  auto env_strings = Env(extra_env);
  auto envp = Argv(env_strings);
  ProcessResult r;
  pid_t pid = -1;
  if (posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), envp.data()) == 0) {
    r.exit_code = WaitProcess(pid);
  }
  posix_spawn_file_actions_destroy(&fa);
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  std::system(("rm -rf '" + dir + "'").c_str());
  return r;
}

std::string MakeTempDir() {
  char tmpl[] = "/tmp/baton-test-XXXXXX";
  char* d = mkdtemp(tmpl);
  if (!d) throw std::runtime_error("mkdtemp failed");
  return d;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

}  // namespace baton::testing
