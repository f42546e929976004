// The real binary under libfaketime: the wall clock is stepped while a step runs
// (issue 11, defect 6). Timeouts wait on the monotonic clock, so a +3 h step fires none.
#include "support/process_util.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

namespace baton::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFaketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

TEST(ClockJumpOutside, AWallClockStepFiresNoTimeout) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "libfaketime and ThreadSanitizer both interpose the clock functions";
#endif
  ASSERT_TRUE(fs::exists(kFaketime)) << "scripts/setup.sh installs Debian's faketime";
  std::string dir = MakeTempDir();
  WriteFile(dir + "/wf.yaml", R"(
name: jump
timeout: 2m
steps:
  - {id: a, type: shell, cwd: ")" +
                                  dir +
                                  R"(", run: 'touch started; sleep 3; echo done', timeout: 60s}
)");
  WriteFile(dir + "/offset", "+0\n");
  // Through env(1): it replaces variables the test runner set (ASAN_OPTIONS), where
  // an appended duplicate would not win.
  pid_t pid = StartProcess(
      {"env", std::string("LD_PRELOAD=") + kFaketime, "FAKETIME_TIMESTAMP_FILE=" + dir + "/offset",
       "FAKETIME_NO_CACHE=1", "FAKETIME_DONT_FAKE_MONOTONIC=1",
       // The ASan runtime must come first unless told otherwise.
       "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0", BatonBin(), "run", dir + "/wf.yaml",
       "--db", dir + "/s.db", "--json"},
      dir + "/out.log");
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 800 && !fs::exists(dir + "/started"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_TRUE(fs::exists(dir + "/started")) << ReadFile(dir + "/out.log");
  WriteFile(dir + "/offset", "+3h\n");
  const int code = WaitProcess(pid);
  const std::string out = ReadFile(dir + "/out.log");
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("\"status\": \"completed\""), std::string::npos) << out;
  EXPECT_EQ(out.find("TIMEOUT"), std::string::npos) << out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace baton::testing
