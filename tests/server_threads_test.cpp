// The server's threads as the kernel sees them: the engine and I/O threads ask for short
// time slices (--thread-slice-us, common/thread_slice.h); the others keep the default.
#include "common/thread_slice.h"
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace baton::testing {
namespace {

namespace fs = std::filesystem;

struct ThreadSlice {
  std::string name;
  long long slice_ns = -1;  // -1: not shown
};

// Each thread of `pid`: its name and "se.slice" from /proc/PID/task/TID/sched.
std::vector<ThreadSlice> SlicesOf(pid_t pid) {
  std::vector<ThreadSlice> out;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    ThreadSlice t;
    std::ifstream(task.path() / "comm") >> t.name;
    std::ifstream sched(task.path() / "sched");
    for (std::string line; std::getline(sched, line);) {
      if (line.rfind("se.slice", 0) != 0) continue;
      std::istringstream fields(line.substr(line.find(':') + 1));
      fields >> t.slice_ns;
    }
    out.push_back(t);
  }
  return out;
}

// Whether this kernel keeps a slice per thread (Linux 6.12 on) and shows it in /proc.
bool KernelKeepsSlices() {
  bool kept = false;
  std::thread([&] {
    kept = RequestShortSlices(std::chrono::microseconds(250));
    if (!kept) return;
    const auto mine = SlicesOf(getpid());
    kept = false;
    for (const auto& t : mine) kept = kept || t.slice_ns == 250'000;
  }).join();
  return kept;
}

TEST(ServerThreads, EngineAndIoThreadsAskForShortSlices) {
  if (!KernelKeepsSlices()) GTEST_SKIP() << "this kernel keeps no per-thread slice";
  ServerProcess server(MakeTempDir(), {"--thread-slice-us", "300"});
  ASSERT_TRUE(server.ok()) << server.log();
  // The server says it serves before its second I/O thread has started and named itself.
  std::map<std::string, std::vector<long long>> by_name;
  WaitUntil([&] {
    by_name.clear();
    for (const auto& t : SlicesOf(server.pid())) by_name[t.name].push_back(t.slice_ns);
    int short_main = 0;
    for (long long ns : by_name["baton"]) short_main += ns == 300'000;
    return by_name["baton-io"].size() == 1 && by_name["baton-io"][0] == 300'000 &&
           by_name["baton-engine"].size() == 1 && short_main == 1;
  });
  ASSERT_EQ(by_name["baton-engine"].size(), 1u);
  EXPECT_EQ(by_name["baton-engine"][0], 300'000);
  // The fixture's two I/O threads: the main thread (named baton) and one baton-io.
  ASSERT_EQ(by_name["baton-io"].size(), 1u);
  for (long long ns : by_name["baton-io"]) EXPECT_EQ(ns, 300'000);
  int main_thread_short = 0;
  for (long long ns : by_name["baton"]) main_thread_short += ns == 300'000;
  EXPECT_EQ(main_thread_short, 1);
  // The writer, the checkpointer and the process runner keep the kernel's default, and
  // so do threads started by a short-slice thread.
  for (const char* name : {"baton-commit", "baton-ckpt", "baton-process"}) {
    for (long long ns : by_name[name]) EXPECT_NE(ns, 300'000) << name;
  }
}

TEST(ServerThreads, ZeroKeepsTheKernelsDefault) {
  if (!KernelKeepsSlices()) GTEST_SKIP() << "this kernel keeps no per-thread slice";
  ServerProcess server(MakeTempDir(), {"--thread-slice-us", "0"});
  ASSERT_TRUE(server.ok()) << server.log();
  long long engine = -1, commit = -1;
  for (const auto& t : SlicesOf(server.pid())) {
    if (t.name == "baton-engine") engine = t.slice_ns;
    if (t.name == "baton-commit") commit = t.slice_ns;
  }
  EXPECT_GT(engine, 0);
  EXPECT_EQ(engine, commit);
}

TEST(ServerThreads, RefusesASliceOutOfRange) {
  ServerProcess server(MakeTempDir(), {"--thread-slice-us", "-5"});
  EXPECT_FALSE(server.ok());
  EXPECT_NE(server.log().find("--thread-slice-us: Value -5 not in range"), std::string::npos)
      << server.log();
}

}  // namespace
}  // namespace baton::testing
