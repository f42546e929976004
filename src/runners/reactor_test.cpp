// The ProcessReactor's output sinks and job timeouts (the rest is exercised through the
// shell runner's tests).
#include "runners/reactor.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "support/process_group.h"

namespace baton::runners {
namespace {

using namespace std::chrono_literals;
constexpr auto kWait = 60s;

ProcessJob ShellJob(const std::string& script, const std::string& id = "j1") {
  ProcessJob job;
  job.id = id;
  job.spec.argv = {"/bin/sh", "-c", script};
  return job;
}

// Runs `job` to its outcome, collecting what the sinks saw and whether any of it came
// after on_done.
struct Collector {
  std::mutex mu;
  std::string out, err;
  int out_chunks = 0;
  bool sink_after_done = false;
  bool done = false;
  std::promise<ProcessOutcome> outcome;

  void Attach(ProcessJob& job) {
    job.on_stdout = [this](std::string_view chunk) {
      std::lock_guard lock(mu);
      out.append(chunk);
      ++out_chunks;
      sink_after_done |= done;
    };
    job.on_stderr = [this](std::string_view chunk) {
      std::lock_guard lock(mu);
      err.append(chunk);
      sink_after_done |= done;
    };
    job.on_done = [this](ProcessOutcome o) {
      {
        std::lock_guard lock(mu);
        done = true;
      }
      outcome.set_value(std::move(o));
    };
  }
  ProcessOutcome Wait() {
    auto f = outcome.get_future();
    EXPECT_EQ(f.wait_for(kWait), std::future_status::ready) << "no on_done";
    return f.get();
  }
};

TEST(ProcessReactor, SinksGetEveryByteInOrderAndNothingIsKept) {
  ProcessReactor reactor(5000ms);
  Collector run;
  // 3 MiB of numbered lines on stdout, more than max_output, and some stderr.
  ProcessJob job = ShellJob(
      "i=0; while [ $i -lt 3 ]; do echo err$i >&2; i=$((i+1)); done; "
      "seq 1 400000");
  job.max_output = 10;
  run.Attach(job);
  ASSERT_TRUE(reactor.Submit(std::move(job)));
  ProcessOutcome o = run.Wait();
  EXPECT_TRUE(o.reaped);
  EXPECT_TRUE(WIFEXITED(o.wait_status) && WEXITSTATUS(o.wait_status) == 0);
  EXPECT_EQ(o.stdout_data, "");
  EXPECT_EQ(o.stderr_data, "");
  std::string expected;
  for (int i = 1; i <= 400000; ++i) expected += std::to_string(i) + "\n";
  std::lock_guard lock(run.mu);
  EXPECT_EQ(run.out.size(), expected.size());
  EXPECT_TRUE(run.out == expected);
  EXPECT_GT(run.out_chunks, 1);
  EXPECT_EQ(o.stdout_total, expected.size());
  EXPECT_EQ(run.err, "err0\nerr1\nerr2\n");
  EXPECT_EQ(o.stderr_total, 15u);
  EXPECT_FALSE(run.sink_after_done);
}

TEST(ProcessReactor, ASinkForOneStreamLeavesTheOtherKept) {
  ProcessReactor reactor(5000ms);
  std::promise<ProcessOutcome> done;
  std::string err;
  ProcessJob job = ShellJob("echo out; echo err >&2");
  job.on_stderr = [&](std::string_view chunk) { err.append(chunk); };
  job.on_done = [&](ProcessOutcome o) { done.set_value(std::move(o)); };
  ASSERT_TRUE(reactor.Submit(std::move(job)));
  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(kWait), std::future_status::ready);
  ProcessOutcome o = f.get();
  EXPECT_EQ(o.stdout_data, "out\n");
  EXPECT_EQ(o.stderr_data, "");
  EXPECT_EQ(err, "err\n");  // written before on_done, read after it on this thread
}

// Starts `script`, which prints "PGID CHILD" once its background child runs, and
// returns the outcome after `act` (given the reactor) stopped it.
template <class Act>
ProcessOutcome StopGroup(const std::string& script, Duration timeout, Duration grace, Act act,
                         pid_t* pgid, pid_t* child) {
  testing::SubreaperScope subreaper;
  ProcessReactor reactor(grace);
  std::promise<void> pids_seen;
  std::string out;
  bool seen = false;
  ProcessJob job = ShellJob(script, "stop-me");
  job.timeout = timeout;
  Collector run;
  run.Attach(job);
  job.on_stdout = [&](std::string_view chunk) {
    out.append(chunk);
    if (!seen && out.find('\n') != std::string::npos) {
      seen = true;
      pids_seen.set_value();
    }
  };
  reactor.Submit(std::move(job));
  auto pids = pids_seen.get_future();
  EXPECT_EQ(pids.wait_for(kWait), std::future_status::ready) << "the script never started";
  act(reactor);
  ProcessOutcome o = run.Wait();
  *pgid = std::stoi(out);
  *child = std::stoi(out.substr(out.find(' ')));
  EXPECT_TRUE(testing::GroupGone(*pgid));
  EXPECT_TRUE(testing::ProcessGone(*child));
  return o;
}

TEST(ProcessReactor, TimeoutStopsTheWholeGroup) {
  pid_t pgid = 0, child = 0;
  ProcessOutcome o = StopGroup(
      "sleep 1000 & echo $$ $!; wait", 300ms, 5000ms, [](ProcessReactor&) {}, &pgid, &child);
  EXPECT_TRUE(o.timed_out);
  EXPECT_FALSE(o.cancelled);
  EXPECT_TRUE(o.reaped);
  EXPECT_TRUE(WIFSIGNALED(o.wait_status));
  EXPECT_EQ(WTERMSIG(o.wait_status), SIGTERM);
}

TEST(ProcessReactor, TimeoutEscalatesToSigkill) {
  pid_t pgid = 0, child = 0;
  ProcessOutcome o = StopGroup(
      "trap '' TERM; (trap '' TERM; sleep 1000) & echo $$ $!; wait", 300ms, 200ms,
      [](ProcessReactor&) {}, &pgid, &child);
  EXPECT_TRUE(o.timed_out);
  EXPECT_TRUE(WIFSIGNALED(o.wait_status));
  EXPECT_EQ(WTERMSIG(o.wait_status), SIGKILL);
}

TEST(ProcessReactor, CancelBeforeTheTimeoutIsACancel) {
  pid_t pgid = 0, child = 0;
  ProcessOutcome o = StopGroup(
      "sleep 1000 & echo $$ $!; wait", 3600s, 5000ms,
      [](ProcessReactor& r) { r.Cancel("stop-me"); }, &pgid, &child);
  EXPECT_TRUE(o.cancelled);
  EXPECT_FALSE(o.timed_out);
}

TEST(ProcessReactor, AJobThatEndsInTimeIsNotTimedOut) {
  ProcessReactor reactor(5000ms);
  Collector quick;
  ProcessJob job = ShellJob("echo quick");
  job.timeout = 100ms;
  quick.Attach(job);
  ASSERT_TRUE(reactor.Submit(std::move(job)));
  ProcessOutcome o = quick.Wait();
  EXPECT_FALSE(o.timed_out);
  EXPECT_FALSE(o.cancelled);
  EXPECT_TRUE(WIFEXITED(o.wait_status));
  // Its deadline went with it: nothing is left to fire for a finished job.
  EXPECT_EQ(reactor.ArmedTimeouts(), 0u);
}

TEST(ProcessReactor, HugeTimeoutsDoNotOverflow) {
  ProcessReactor reactor(5000ms);
  Collector run;
  ProcessJob job = ShellJob("echo fine");
  job.timeout = Duration::max();
  run.Attach(job);
  ASSERT_TRUE(reactor.Submit(std::move(job)));
  ProcessOutcome o = run.Wait();
  EXPECT_FALSE(o.timed_out);
  EXPECT_TRUE(WIFEXITED(o.wait_status) && WEXITSTATUS(o.wait_status) == 0);
}

// A long-lived process fed line by line: each Write() reaches it in order, the pipe stays
// open between writes (also past a pipe's capacity), and CloseStdin() ends its input.
TEST(ProcessReactor, AKeptStdinTakesWritesUntilClosed) {
  ProcessReactor reactor(5000ms);
  Collector run;
  ProcessJob job = ShellJob("while read -r line; do echo \"got $line\"; done; echo eof");
  job.keep_stdin_open = true;
  run.Attach(job);
  ASSERT_TRUE(reactor.Submit(std::move(job)));
  reactor.Write("j1", "one\n");
  reactor.Write("j1", "two\n");
  // More than a pipe holds (64 KiB) in one write: the rest waits for EPOLLOUT.
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "line" + std::to_string(i) + "\n";
  reactor.Write("j1", big);
  reactor.Write("j1", "last\n");
  reactor.CloseStdin("j1");
  ProcessOutcome o = run.Wait();
  EXPECT_TRUE(WIFEXITED(o.wait_status) && WEXITSTATUS(o.wait_status) == 0);
  std::lock_guard lock(run.mu);
  EXPECT_EQ(run.out.rfind("got one\ngot two\ngot line0\n", 0), 0u) << run.out.substr(0, 80);
  EXPECT_NE(run.out.find("got line19999\ngot last\neof\n"), std::string::npos);
  // A write for a job that has ended is dropped.
  reactor.Write("j1", "late\n");
}

TEST(ProcessReactor, PostedTasksRunAfterTheirDelayUnlessCancelled) {
  ProcessReactor reactor(5000ms);
  std::mutex mu;
  std::vector<std::string> ran;
  std::promise<void> last;
  auto record = [&](const std::string& what) {
    std::lock_guard lock(mu);
    ran.push_back(what);
  };
  const uint64_t cancelled = reactor.PostAfter(20ms, [&] { record("cancelled"); });
  ASSERT_NE(cancelled, 0u);
  reactor.CancelPosted(cancelled);
  ASSERT_NE(reactor.PostAfter(60ms,
                              [&] {
                                record("later");
                                last.set_value();
                              }),
            0u);
  ASSERT_NE(reactor.PostAfter(1ms, [&] { record("sooner"); }), 0u);
  ASSERT_EQ(last.get_future().wait_for(kWait), std::future_status::ready);
  std::lock_guard lock(mu);
  EXPECT_EQ(ran, (std::vector<std::string>{"sooner", "later"}));
}

TEST(ProcessReactor, PostedTasksStillWaitingAtShutdownAreDropped) {
  bool ran = false;
  {
    ProcessReactor reactor(5000ms);
    ASSERT_NE(reactor.PostAfter(std::chrono::hours(1), [&] { ran = true; }), 0u);
    reactor.Shutdown();
    EXPECT_EQ(reactor.PostAfter(1ms, [&] { ran = true; }), 0u);
  }
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace baton::runners
