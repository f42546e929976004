// Running the real `baton` binary from tests.
#pragma once

#include <sys/types.h>
#include <string>
#include <vector>

namespace baton::testing {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
};

std::string BatonBin();  // $BATON_TEST_BIN, else the one built alongside
std::string SourceDir();
// Runs argv (argv[0] resolved via PATH) to completion, capturing stdout and stderr.
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& cwd = "",
                         const std::vector<std::string>& extra_env = {});
// Starts argv in the background with stdout/stderr to files; returns the pid.
pid_t StartProcess(const std::vector<std::string>& argv, const std::string& out_file,
                   const std::vector<std::string>& extra_env = {}, const std::string& cwd = "");
// Waits for pid; returns its exit code (128 + signal when killed).
int WaitProcess(pid_t pid);
// A fresh directory under /tmp, removed by the caller.
std::string MakeTempDir();
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& text);

}  // namespace baton::testing
