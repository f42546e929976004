#include <baton/runner.h>
#include <fcntl.h>
#include <gtest/gtest.h>

#include <thread>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "support/call_record.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
constexpr auto kTimeout = 60s;

using Call = testing::CallRecord;

RunRequest Request(Json spec, std::string id = "a1") {
  return testing::StepRequest(StepType::kShell, std::move(spec), std::move(id));
}

RunResult RunSpec(Json spec, const ShellRunnerOptions& options = {}) {
  auto runner = NewShellRunner(options);
  Call call;
  runner->Start(Request(std::move(spec)), call.Callbacks());
  RunResult r = call.Wait();
  EXPECT_TRUE(call.started() || r.status.code() == errc::kSpawn ||
              r.status.code() == errc::kValidation);
  runner->Shutdown();
  EXPECT_EQ(call.done_count(), 1);
  return r;
}

std::string TempDirPath() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "baton-shell-XXXXXX").string();
  return mkdtemp(tmpl.data());
}

TEST(ShellRunner, ArgvElementsArriveUnchanged) {
  Json argv = {"printf", "%s\\n", "a b", "it's \"quoted\"", "$(rm -rf /)", "`id`; ls *", "",
               42,       2.5,     true};
  RunResult r = RunSpec({{"run", argv}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output, "a b\nit's \"quoted\"\n$(rm -rf /)\n`id`; ls *\n\n42\n2.5\ntrue");
  EXPECT_EQ(r.exit_code, 0);
}

TEST(ShellRunner, StringRunsThroughTheShell) {
  RunResult r = RunSpec({{"run", "echo hello | tr a-z A-Z; echo $((6 * 7)) >&2"}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output, "HELLO");
  EXPECT_EQ(r.stderr_text, "42\n");
}

TEST(ShellRunner, EnvAddsOverridesAndRemovesVariables) {
  setenv("BATON_TEST_INHERITED", "inherited", 1);
  setenv("BATON_TEST_REMOVED", "still here", 1);
  RunResult r = RunSpec({{"run",
                          "echo \"$BATON_TEST_NEW,$BATON_TEST_NUM,$BATON_TEST_INHERITED,"
                          "${BATON_TEST_REMOVED-unset}\""},
                         {"env",
                          {{"BATON_TEST_NEW", "new value"},
                           {"BATON_TEST_NUM", 5},
                           {"BATON_TEST_REMOVED", nullptr}}}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output, "new value,5,inherited,unset");
}

TEST(ShellRunner, CwdSetsTheWorkingDirectory) {
  std::string dir = TempDirPath();
  RunResult r = RunSpec({{"run", {"pwd"}}, {"cwd", dir}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output, std::filesystem::canonical(dir).string());
  std::filesystem::remove_all(dir);
}

TEST(ShellRunner, StdinIsWrittenThenClosed) {
  RunResult r = RunSpec({{"run", {"wc", "-l"}}, {"stdin", "one\ntwo\nthree\n"}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output, 3);

  std::string big(3 << 20, 'x');  // more than a pipe holds: written as the child reads
  r = RunSpec({{"run", {"wc", "-c"}}, {"stdin", big}});
  EXPECT_EQ(r.output, 3 << 20);

  r = RunSpec({{"run", {"cat"}}});  // no stdin: /dev/null, so cat ends at once
  EXPECT_EQ(r.output, "");
}

TEST(ShellRunner, StdinThatIsNotReadDoesNotHurt) {
  RunResult r = RunSpec({{"run", "exit 0"}, {"stdin", std::string(1 << 20, 'y')}});
  EXPECT_TRUE(r.status.ok()) << r.status.ToString();
}

TEST(ShellRunner, JsonStdoutIsParsed) {
  RunResult r = RunSpec({{"run", "printf '  {\"a\": [1, 2], \"b\": \"x\"}\\n\\n'"}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output, (Json{{"a", {1, 2}}, {"b", "x"}}));
  EXPECT_EQ(RunSpec({{"run", "echo 42"}}).output, 42);
  EXPECT_EQ(RunSpec({{"run", "echo '\"quoted\"'"}}).output, "quoted");
  EXPECT_EQ(RunSpec({{"run", "echo true"}}).output, true);
}

TEST(ShellRunner, OtherStdoutIsTrimmedTextAndEmptyIsEmptyString) {
  EXPECT_EQ(RunSpec({{"run", "printf '  hello world \\n\\n'"}}).output, "hello world");
  EXPECT_EQ(RunSpec({{"run", "echo '{not json'"}}).output, "{not json");
  RunResult r = RunSpec({{"run", {"true"}}});
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.output, "");
  EXPECT_TRUE(r.error_details.is_null());
}

TEST(ShellRunner, NonZeroExitIsAnErrorWithTheLastStderrLine) {
  RunResult r = RunSpec({{"run", "echo partial; echo first >&2; echo 'it broke' >&2; exit 3"}});
  EXPECT_EQ(r.status.code(), errc::kExitNonzero);
  EXPECT_EQ(r.status.message(), "exited with code 3: it broke");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.output, "partial");
  EXPECT_EQ(r.stderr_text, "first\nit broke\n");

  r = RunSpec({{"run", {"false"}}});
  EXPECT_EQ(r.status.message(), "exited with code 1");
}

TEST(ShellRunner, DeathBySignal) {
  RunResult r = RunSpec({{"run", "kill -KILL $$"}});
  EXPECT_EQ(r.status.code(), errc::kExitNonzero);
  EXPECT_EQ(r.status.message(), "killed by signal SIGKILL");
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
  EXPECT_EQ(r.error_details["signal"], "SIGKILL");
}

TEST(ShellRunner, BigOutputIsTruncatedAndDrained) {
  RunResult r = RunSpec({{"run", "head -c 5000000 /dev/zero; echo done >&2"}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_TRUE(r.output.is_string());
  EXPECT_EQ(r.output.get<std::string>().size(), 1u << 20);
  EXPECT_EQ(r.stderr_text, "done\n\n[baton: stdout truncated at 1048576 bytes]");
  EXPECT_EQ(r.error_details["output_truncated"],
            (Json{{"stdout", 5000000}, {"max_output", 1 << 20}}));

  r = RunSpec({{"run", "head -c 100000 /dev/zero | tr '\\0' e >&2; exit 1"}, {"max_output", 10}});
  EXPECT_EQ(r.status.message(), "exited with code 1: eeeeeeeeee");
  EXPECT_EQ(r.stderr_text, "eeeeeeeeee\n[baton: stderr truncated at 10 bytes]");
  EXPECT_EQ(r.error_details["output_truncated"]["stderr"], 100000);
}

TEST(ShellRunner, MemoryLimit) {
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "no python3";
  Json alloc = {"/usr/bin/python3", "-c", "x = bytearray(500 * 1024 * 1024); print('ok')"};
  RunResult r = RunSpec({{"run", alloc}, {"memory", "100MB"}});
  EXPECT_EQ(r.status.code(), errc::kExitNonzero);
  EXPECT_NE(r.stderr_text.find("MemoryError"), std::string::npos) << r.stderr_text;

  Json small = {"/usr/bin/python3", "-c", "x = bytearray(10 * 1024 * 1024); print('ok')"};
  r = RunSpec({{"run", small}, {"memory", "1GiB"}});
  EXPECT_TRUE(r.status.ok()) << r.status.ToString() << r.stderr_text;
  EXPECT_EQ(r.output, "ok");
}

TEST(ShellRunner, CpuTimeLimitKillsABusyLoop) {
  RunResult r = RunSpec({{"run", "while :; do :; done"}, {"cpu_time", 1}});
  EXPECT_EQ(r.status.code(), errc::kExitNonzero);
  EXPECT_EQ(r.status.message(), "killed by signal SIGXCPU (cpu_time limit of 1s)");
  EXPECT_EQ(r.exit_code, 128 + SIGXCPU);
}

TEST(ShellRunner, MissingExecutableIsASpawnError) {
  RunResult r = RunSpec({{"run", {"baton-no-such-program-xyz"}}});
  EXPECT_EQ(r.status.code(), errc::kSpawn);
  EXPECT_EQ(r.status.message(),
            "cannot start `baton-no-such-program-xyz`: No such file or directory");
  EXPECT_EQ(r.exit_code, -1);

  r = RunSpec({{"run", {"ls"}}, {"cwd", "/nonexistent/baton"}});
  EXPECT_EQ(r.status.code(), errc::kSpawn);
  EXPECT_NE(r.status.message().find("cwd `/nonexistent/baton`"), std::string::npos);
}

TEST(ShellRunner, BadSpecIsAValidationError) {
  EXPECT_EQ(RunSpec({{"cwd", "/"}}).status.code(), errc::kValidation);
  EXPECT_EQ(RunSpec({{"run", Json::array()}}).status.code(), errc::kValidation);
  EXPECT_EQ(RunSpec({{"run", "true"}, {"memory", "lots"}}).status.code(), errc::kValidation);
}

// Starts `script` (which writes its pid, the group id, to $FIFO once its background
// children run), cancels it, and checks that nothing of its group is left.
void ExpectCancelKillsGroup(const std::string& script, Duration grace) {
  std::string dir = TempDirPath();
  std::string fifo = dir + "/pid";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Orphans of the cancelled shell become our children, so we can reap their zombies and
  // see the group vanish however this container's init behaves.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);

  ShellRunnerOptions options;
  options.kill_grace = grace;
  auto runner = NewShellRunner(options);
  Call call;
  runner->Start(Request({{"run", script}, {"env", {{"FIFO", fifo}}}}, "cancel-me"),
                call.Callbacks());
  pid_t pgid = 0;
  {
    std::ifstream in(fifo);  // blocks until the script writes
    in >> pgid;
  }
  ASSERT_GT(pgid, 0);
  EXPECT_EQ(kill(-pgid, 0), 0);
  // The script runs before the I/O thread reports the start: wait for it (bounded).
  for (int i = 0; i < 500 && !call.started(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(call.started());
  runner->Cancel("cancel-me");
  RunResult r = call.Wait();
  EXPECT_EQ(r.status.code(), errc::kCancelled);
  EXPECT_EQ(r.status.message(), "cancelled");
  // Every member got SIGKILL before on_done: reap them; then the group is gone.
  while (waitpid(-pgid, nullptr, 0) > 0) {
  }
  EXPECT_EQ(kill(-pgid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  runner->Shutdown();
  EXPECT_EQ(call.done_count(), 1);
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  std::filesystem::remove_all(dir);
}

TEST(ShellRunner, CancelKillsTheWholeGroup) {
  ExpectCancelKillsGroup("sleep 100 & sleep 100 & echo $$ > \"$FIFO\"; wait", 5000ms);
}

TEST(ShellRunner, CancelEscalatesToSigkill) {
  ExpectCancelKillsGroup("trap '' TERM; sleep 100 & sleep 100 & echo $$ > \"$FIFO\"; wait", 200ms);
}

TEST(ShellRunner, CancelKillsChildrenThatOutliveTheLeader) {
  ExpectCancelKillsGroup("(trap '' TERM; sleep 100) & echo $$ > \"$FIFO\"; wait", 200ms);
}

TEST(ShellRunner, BackgroundChildrenDoNotOutliveANormalExit) {
  std::string dir = TempDirPath();
  std::string fifo = dir + "/pid";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  auto runner = NewShellRunner();
  Call call;
  runner->Start(Request({{"run", "sleep 100 & echo $$ > \"$FIFO\"; echo finished"},
                         {"env", {{"FIFO", fifo}}}}),
                call.Callbacks());
  pid_t pgid = 0;
  {
    std::ifstream in(fifo);
    in >> pgid;
  }
  RunResult r = call.Wait();  // does not wait for the sleep, which holds stdout
  EXPECT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output, "finished");
  while (waitpid(-pgid, nullptr, 0) > 0) {
  }
  EXPECT_EQ(kill(-pgid, 0), -1);
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  std::filesystem::remove_all(dir);
}

TEST(ShellRunner, CancelOfUnknownOrFinishedWorkIsANoop) {
  auto runner = NewShellRunner();
  runner->Cancel("nobody");
  Call call;
  runner->Start(Request({{"run", {"true"}}}, "done-already"), call.Callbacks());
  EXPECT_TRUE(call.Wait().status.ok());
  runner->Cancel("done-already");
  runner->Shutdown();
  EXPECT_EQ(call.done_count(), 1);
}

TEST(ShellRunner, ShutdownCancelsRunningWorkAndRefusesNewWork) {
  auto runner = NewShellRunner();
  Call call;
  runner->Start(Request({{"run", {"sleep", "100"}}}), call.Callbacks());
  ASSERT_TRUE(call.WaitStarted());
  runner->Shutdown();
  EXPECT_EQ(call.done_count(), 1);  // before Shutdown returned
  EXPECT_EQ(call.Wait().status.code(), errc::kCancelled);

  Call late;
  runner->Start(Request({{"run", {"true"}}}), late.Callbacks());
  EXPECT_EQ(late.done_count(), 1);
  EXPECT_EQ(late.Wait().status.code(), errc::kCancelled);
}

TEST(ShellRunner, ManyConcurrentProcessesAllComplete) {
  constexpr int kCount = 200;
  auto runner = NewShellRunner();
  std::mutex mu;
  std::condition_variable cv;
  int done = 0, ok = 0;
  std::atomic<int> started{0};
  for (int i = 0; i < kCount; ++i) {
    RunFunctions cb;
    cb.on_started = [&] { ++started; };
    cb.on_done = [&](RunResult r) {
      std::lock_guard lock(mu);
      ++done;
      ok += r.status.ok() ? 1 : 0;
      cv.notify_all();
    };
    runner->Start(Request({{"run", {"true"}}}, "t" + std::to_string(i)), std::move(cb));
  }
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, kTimeout, [&] { return done == kCount; }));
  EXPECT_EQ(ok, kCount);
  EXPECT_EQ(started.load(), kCount);
}

// Sequential short processes with two in flight, as the shell benchmark runs them.
// BATON_SHELL_RUNS sets the count; the wall time is printed.
TEST(ShellRunner, SequentialShortProcessesTwoInFlight) {
  const char* env = std::getenv("BATON_SHELL_RUNS");
  const int total = env ? std::atoi(env) : 300;
  auto runner = NewShellRunner();
  std::mutex mu;
  std::condition_variable cv;
  int next = 0, done = 0, failed = 0;
  std::function<void()> start_one;
  start_one = [&] {
    int i = next++;
    RunFunctions cb;
    cb.on_done = [&](RunResult r) {
      std::lock_guard lock(mu);
      ++done;
      failed += r.status.ok() ? 0 : 1;
      if (next < total) start_one();  // from the I/O thread, as an engine might
      cv.notify_all();
    };
    runner->Start(Request({{"run", {"true"}}}, "q" + std::to_string(i)), std::move(cb));
  };
  auto begin = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu);
    start_one();
    start_one();
  }
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, 10 * kTimeout, [&] { return done == total; }));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  begin);
  EXPECT_EQ(failed, 0);
  printf("[ runs     ] %d `true` runs, 2 in flight: %lld ms\n", total,
         static_cast<long long>(ms.count()));
}

}  // namespace
}  // namespace baton
