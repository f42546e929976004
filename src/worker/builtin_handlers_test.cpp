// The built-in `shell` and `http` handlers of HandlerRunner.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <future>
#include <string>

#include "support/http_test_server.h"
#include "support/process_group.h"
#include "worker/handler_runner.h"
#include "worker/worker_test_util.h"

namespace baton::worker {
namespace {

using protocol::CommandResult;
using protocol::ResultStatus;
using testing::MakeCommand;
using testing::Recorder;
using testing::RunCommand;
namespace support = baton::testing;  // the http test server, process groups

CommandResult RunShell(Json data, HandlerRunnerOptions options = {}) {
  HandlerRunner runner(std::move(options));
  return RunCommand(runner, MakeCommand("shell", std::move(data)));
}

TEST(ShellBuiltin, RunsAShellStepSpec) {
  CommandResult r = RunShell({{"run", "echo '{\"a\": [1, 2]}'"}});
  EXPECT_EQ(r.status, ResultStatus::kSuccess) << r.error.message;
  EXPECT_EQ(r.output, Json::parse(R"({"a": [1, 2]})"));
  // A shell step's output rules: JSON when stdout is JSON, else the trimmed text.
  EXPECT_EQ(RunShell({{"run", {"printf", "%s\\n", "hello world"}}}).output, "hello world");
  EXPECT_EQ(RunShell({{"run", "echo 42"}}).output, 42);
  EXPECT_EQ(RunShell({{"run", {"cat"}}, {"stdin", "from stdin"}}).output, "from stdin");
}

TEST(ShellBuiltin, GetsTheBatonVariablesUnlessItsEnvSetsThem) {
  CommandResult r =
      RunShell({{"run",
                 "echo \"$BATON_EXECUTION_ID $BATON_STEP_ID $BATON_ATTEMPT $BATON_ASSIGNMENT_ID "
                 "$BATON_COMMAND $MINE\""},
                {"env", {{"MINE", "x"}, {"BATON_STEP_ID", "override"}}}});
  EXPECT_EQ(r.output, "exec-1 override 3 asg-1 shell x");
}

TEST(ShellBuiltin, FailureCarriesExitCodeAndStderr) {
  CommandResult r = RunShell({{"run", "echo out; echo 'went wrong' >&2; exit 4"}});
  EXPECT_EQ(r.status, ResultStatus::kFailure);
  EXPECT_EQ(r.error.code, errc::kExitNonzero);
  EXPECT_EQ(r.error.message, "exited with code 4: went wrong");
  EXPECT_EQ(r.error.details, (Json{{"exitCode", 4}, {"stderr", "went wrong\n"}}));
  EXPECT_TRUE(r.error.retryable);
  EXPECT_EQ(r.output, "out");
}

TEST(ShellBuiltin, ABadSpecIsAValidationErrorNotRetried) {
  for (Json data : {Json(), Json("echo hi"), Json{{"cwd", "/"}}, Json{{"run", Json::array()}}}) {
    CommandResult r = RunShell(data);
    EXPECT_EQ(r.status, ResultStatus::kFailure) << data.dump();
    EXPECT_EQ(r.error.code, errc::kValidation) << data.dump();
    EXPECT_FALSE(r.error.retryable);
  }
}

// Runs a shell command that writes "PGID CHILD" to a FIFO once its background child runs,
// calls `stop`, and checks that nothing of its group is left.
CommandResult StopShell(HandlerRunner& runner, int timeout_seconds,
                        const std::function<void()>& stop) {
  support::SubreaperScope subreaper;
  testing::TempDir dir;
  std::string fifo = dir.path() + "/pids";
  EXPECT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  protocol::Command c = MakeCommand(
      "shell", {{"run", "sleep 1000 & echo $$ $! > \"$FIFO\"; wait"}, {"env", {{"FIFO", fifo}}}});
  c.timeout_seconds = timeout_seconds;
  Recorder rec;
  runner.Start(c, rec.Callbacks());
  pid_t pgid = 0, child = 0;
  {
    std::ifstream in(fifo);  // blocks until the command writes
    in >> pgid >> child;
  }
  stop();
  CommandResult r = rec.Wait();
  EXPECT_GT(pgid, 0);
  EXPECT_TRUE(support::GroupGone(pgid));
  EXPECT_TRUE(support::ProcessGone(child));
  return r;
}

TEST(ShellBuiltin, TimeoutStopsTheWholeGroup) {
  HandlerRunner runner;
  CommandResult r = StopShell(runner, 1, [] {});
  EXPECT_EQ(r.error.code, errc::kTimeout);
  EXPECT_EQ(r.error.message, "timed out after 1s");
  EXPECT_TRUE(r.output.is_null());
}

TEST(ShellBuiltin, CancelStopsTheWholeGroup) {
  HandlerRunner runner;
  CommandResult r = StopShell(runner, 0, [&] { runner.Cancel("asg-1"); });
  EXPECT_EQ(r.error.code, errc::kCancelled);
}

HandlerRunnerOptions LoopbackAllowed() {
  HandlerRunnerOptions options;
  options.http = support::LoopbackAllowed();
  return options;
}

TEST(HttpBuiltin, RunsAnHttpStepSpec) {
  support::TestServer server([](const support::Received& req) {
    return support::Response(200, R"({"echo": ")" + req.body + R"("})",
                             {{"Content-Type", "application/json"}});
  });
  HandlerRunner runner(LoopbackAllowed());
  CommandResult r = RunCommand(
      runner,
      MakeCommand("http",
                  {{"request", {{"method", "POST"}, {"url", server.Url("/x")}, {"body", "hi"}}}}));
  EXPECT_EQ(r.status, ResultStatus::kSuccess) << r.error.message;
  EXPECT_EQ(r.output["status"], 200);
  EXPECT_EQ(r.output["body"], (Json{{"echo", "hi"}}));
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].method, "POST");
}

TEST(HttpBuiltin, AnErrorStatusIsARetryableFailure) {
  support::TestServer server(
      [](const support::Received&) { return support::Response(503, "busy"); });
  HandlerRunner runner(LoopbackAllowed());
  CommandResult r =
      RunCommand(runner, MakeCommand("http", {{"request", {{"url", server.Url("/x")}}}}));
  EXPECT_EQ(r.status, ResultStatus::kFailure);
  EXPECT_EQ(r.error.code, errc::kHttpStatus);
  EXPECT_EQ(r.error.message, "GET " + server.Url("/x") + " returned 503");
  EXPECT_EQ(r.error.details, (Json{{"status", 503}}));
  EXPECT_TRUE(r.error.retryable);
  EXPECT_EQ(r.output["body"], "busy");
}

TEST(HttpBuiltin, TheEgressGuardStillApplies) {
  support::TestServer server(
      [](const support::Received&) { return support::Response(200, "secret"); });
  HandlerRunner runner;  // no allow-list: loopback is refused
  CommandResult r =
      RunCommand(runner, MakeCommand("http", {{"request", {{"url", server.Url("/x")}}}}));
  EXPECT_EQ(r.error.code, errc::kNetwork);
  EXPECT_TRUE(server.requests().empty());
}

TEST(HttpBuiltin, ABadSpecIsAValidationErrorNotRetried) {
  HandlerRunner runner(LoopbackAllowed());
  CommandResult r = RunCommand(runner, MakeCommand("http", {{"request", {{"url", "ftp://x"}}}}));
  EXPECT_EQ(r.error.code, errc::kValidation);
  EXPECT_FALSE(r.error.retryable);
}

// A server that never answers, and a promise kept when a request has arrived.
class HangingServer {
 public:
  HangingServer()
      : server_([this](const support::Received&) {
          arrived_.set_value();
          server_.Hang();
          return std::string();
        }) {}
  std::string Url() const { return server_.Url("/slow"); }
  bool WaitArrived() {
    return arrived_future_.wait_for(testing::kWait) == std::future_status::ready;
  }

 private:
  std::promise<void> arrived_;
  std::future<void> arrived_future_ = arrived_.get_future();
  support::TestServer server_;
};

TEST(HttpBuiltin, TheCommandTimeoutCapsTheRequest) {
  HangingServer server;
  HandlerRunner runner(LoopbackAllowed());
  protocol::Command c =
      MakeCommand("http", {{"request", {{"url", server.Url()}, {"timeout", "1h"}}}});
  c.timeout_seconds = 1;
  CommandResult r = RunCommand(runner, c);
  EXPECT_EQ(r.error.code, errc::kTimeout);
  EXPECT_EQ(r.error.message, "GET " + server.Url() + ": no response within 1s");
  runner.Shutdown();  // before the server stops hanging
}

TEST(HttpBuiltin, CancelAbortsTheRequest) {
  HangingServer server;
  HandlerRunner runner(LoopbackAllowed());
  Recorder rec;
  runner.Start(MakeCommand("http", {{"request", {{"url", server.Url()}}}}), rec.Callbacks());
  ASSERT_TRUE(server.WaitArrived());
  runner.Cancel("asg-1");
  EXPECT_EQ(rec.Wait().error.code, errc::kCancelled);
  runner.Shutdown();
  EXPECT_EQ(rec.done_count(), 1);
}

TEST(HttpBuiltin, ShutdownEndsRunningRequests) {
  HangingServer server;
  HandlerRunner runner(LoopbackAllowed());
  Recorder rec;
  runner.Start(MakeCommand("http", {{"request", {{"url", server.Url()}}}}), rec.Callbacks());
  ASSERT_TRUE(server.WaitArrived());
  runner.Shutdown();
  EXPECT_EQ(rec.done_count(), 1);  // before Shutdown returned
  EXPECT_EQ(rec.Wait().error.code, errc::kCancelled);
}

TEST(Builtins, CallbacksRunOnTheRunnersIoThread) {
  support::TestServer server([](const support::Received&) { return support::Response(200, "ok"); });
  HandlerRunner runner(LoopbackAllowed());
  Recorder shell, http;
  runner.Start(MakeCommand("shell", {{"run", "true"}}, "a-shell"), shell.Callbacks());
  shell.Wait();
  runner.Start(MakeCommand("http", {{"request", {{"url", server.Url("/")}}}}, "a-http"),
               http.Callbacks());
  EXPECT_EQ(http.Wait().status, ResultStatus::kSuccess);
  ASSERT_EQ(shell.threads().size(), 1u);
  ASSERT_EQ(http.threads().size(), 1u);
  EXPECT_EQ(shell.threads()[0], http.threads()[0]);
  EXPECT_NE(http.threads()[0], std::this_thread::get_id());
}

}  // namespace
}  // namespace baton::worker
