// HandlerRunner with executable handlers: small /bin/sh scripts in a temporary directory.
#include "worker/handler_runner.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "support/process_group.h"
#include "worker/worker_test_util.h"

namespace baton::worker {
namespace {

using namespace std::chrono_literals;
using protocol::CommandResult;
using protocol::ResultStatus;
using testing::MakeCommand;
using testing::Recorder;
using testing::RunCommand;
namespace support = baton::testing;  // process groups

class HandlerRunnerTest : public ::testing::Test {
 protected:
  // A runner with handler `command` running a script with `body`.
  std::unique_ptr<HandlerRunner> Runner(const std::string& command, const std::string& body,
                                        HandlerRunnerOptions options = {}) {
    options.handlers[command] = {dir_.Script(command, body)};
    return std::make_unique<HandlerRunner>(std::move(options));
  }
  CommandResult Run(const std::string& body, const protocol::Command& c = MakeCommand("job"),
                    HandlerRunnerOptions options = {}) {
    auto runner = Runner(c.command, body, std::move(options));
    return RunCommand(*runner, c);
  }

  testing::TempDir dir_;
};

void ExpectSuccess(const CommandResult& r, const Json& output) {
  EXPECT_EQ(r.status, ResultStatus::kSuccess) << r.error.code << ": " << r.error.message;
  EXPECT_EQ(r.output, output);
  EXPECT_EQ(r.assignment_id, "asg-1");
}

void ExpectFailure(const CommandResult& r, const std::string& code, const std::string& message) {
  EXPECT_EQ(r.status, ResultStatus::kFailure);
  EXPECT_EQ(r.error.code, code);
  EXPECT_EQ(r.error.message, message);
  EXPECT_EQ(r.assignment_id, "asg-1");
}

TEST_F(HandlerRunnerTest, StdinIsTheCommandMessageThenEof) {
  protocol::Command c = MakeCommand("model.download", {{"url", "http://hub/x"}});
  c.resource = "llama-3-8b";
  c.checkpoint = {{"bytes", 10}};
  c.timeout_seconds = 600;
  // $(cat) returns only at EOF.
  CommandResult r = Run("input=$(cat); printf '{\"got\": %s}\\n' \"$input\"", c);
  ExpectSuccess(r, {{"got", ToJson(c)}});
}

TEST_F(HandlerRunnerTest, EnvironmentNamesTheCommand) {
  setenv("BATON_TEST_WORKER_INHERITED", "inherited", 1);
  protocol::Command c = MakeCommand("model.deploy");
  c.resource = "llama-3-8b";
  c.checkpoint = {{"bytes", 10}};
  const char* body =
      "echo \"$BATON_EXECUTION_ID|$BATON_STEP_ID|$BATON_ATTEMPT|$BATON_ASSIGNMENT_ID\"\n"
      "echo \"$BATON_COMMAND|$BATON_RESOURCE|$BATON_CHECKPOINT|$BATON_TEST_WORKER_INHERITED\"";
  ExpectSuccess(Run(body, c),
                "exec-1|step-1|3|asg-1\nmodel.deploy|llama-3-8b|{\"bytes\":10}|inherited");

  // A resource that is not a string is its JSON text; null ones are empty.
  c.resource = {{"id", "m1"}, {"type", "model"}};
  c.checkpoint = nullptr;
  ExpectSuccess(Run("echo \"$BATON_RESOURCE|${BATON_CHECKPOINT-unset}|\"", c),
                "{\"id\":\"m1\",\"type\":\"model\"}||");
  c.resource = nullptr;
  ExpectSuccess(Run("echo \"[$BATON_RESOURCE]\"", c), "[]");
}

TEST_F(HandlerRunnerTest, ProgressLinesAreForwardedInOrderWhileTheHandlerRuns) {
  std::string fifo = dir_.path() + "/go";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // The handler reports progress, then waits until the test has seen it.
  std::string body =
      "echo '{\"progress\": 10}'\n"
      "echo 'a log line'\n"
      "echo '{\"progress\": 45, \"checkpoint\": {\"bytes\": 1048576}, \"data\": {\"phase\": "
      "\"download\"}}'\n"
      "read go < " +
      fifo +
      "\n"
      "echo '{\"progress\": 100}'\n"
      "echo '{\"path\": \"/models/x\"}'";
  auto runner = Runner("job", body);
  Recorder rec;
  runner->Start(MakeCommand("job"), rec.Callbacks());
  std::vector<protocol::CommandProgress> seen = rec.WaitProgress(2);
  EXPECT_EQ(rec.done_count(), 0);  // still running: the progress came as it was written
  std::ofstream(fifo) << "go\n";
  CommandResult r = rec.Wait();
  ExpectSuccess(r, {{"path", "/models/x"}});
  std::vector<protocol::CommandProgress> all = rec.progress();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], (protocol::CommandProgress{"asg-1", 10, nullptr, nullptr}));
  EXPECT_EQ(all[1], (protocol::CommandProgress{
                        "asg-1", 45, {{"bytes", 1048576}}, {{"phase", "download"}}}));
  EXPECT_EQ(all[2].progress, 100);
  EXPECT_FALSE(rec.progress_after_done());
}

TEST_F(HandlerRunnerTest, OutputSelection) {
  ExpectSuccess(Run("echo '{\"a\": 1}'; echo log; echo '{\"b\": 2}'; echo more text"), {{"b", 2}});
  ExpectSuccess(Run("echo '  hello'; echo '{\"progress\": 5}'; echo 'world  '"), "hello\nworld");
  ExpectSuccess(Run("echo 42"), "42");
  ExpectSuccess(Run("printf '{\"last\": true}'"), {{"last", true}});
  ExpectSuccess(Run("true"), nullptr);
  ExpectSuccess(Run("echo '{\"progress\": 100}'"), nullptr);
}

TEST_F(HandlerRunnerTest, NonZeroExitFailsWithTheEndOfStderr) {
  CommandResult r = Run("echo partial; echo first >&2; echo 'it broke' >&2; exit 3");
  ExpectFailure(r, errc::kExitNonzero, "exited with code 3: first\nit broke");
  EXPECT_TRUE(r.error.retryable);
  EXPECT_EQ(r.error.details, (Json{{"exitCode", 3}, {"stderr", "first\nit broke\n"}}));
  EXPECT_EQ(r.output, "partial");

  ExpectFailure(Run("exit 1"), errc::kExitNonzero, "exited with code 1");

  // A long stderr: the message keeps its end, from a line start.
  r = Run("i=0; while [ $i -lt 2000 ]; do echo \"error line $i\" >&2; i=$((i+1)); done; exit 2");
  EXPECT_EQ(r.error.code, errc::kExitNonzero);
  EXPECT_EQ(r.error.message.rfind("exited with code 2: ...error line ", 0), 0u) << r.error.message;
  EXPECT_LE(r.error.message.size(), 2100u);
  EXPECT_EQ(r.error.message.substr(r.error.message.size() - 15), "error line 1999");
}

TEST_F(HandlerRunnerTest, DeathBySignalIsAFailure) {
  CommandResult r = Run("echo dying >&2; kill -KILL $$");
  ExpectFailure(r, errc::kExitNonzero, "killed by signal SIGKILL: dying");
  EXPECT_EQ(r.error.details["signal"], "SIGKILL");
}

TEST_F(HandlerRunnerTest, StdoutOverTheLimitFails) {
  HandlerRunnerOptions options;
  options.max_stdout = 1000;
  CommandResult r =
      Run("head -c 5000 /dev/zero | tr '\\0' x | fold -w 100", MakeCommand("job"), options);
  ExpectFailure(r, "OUTPUT_TOO_LARGE",
                "stdout is over max_output (1000 bytes, progress lines aside)");
  // Progress lines do not count.
  r =
      Run("i=0; while [ $i -lt 200 ]; do echo '{\"progress\": 50}'; i=$((i+1)); done; "
          "echo '{\"ok\": true}'",
          MakeCommand("job"), options);
  ExpectSuccess(r, {{"ok", true}});
  // A JSON output is never cut short.
  r = Run("printf '{\"blob\": \"'; head -c 3000 /dev/zero | tr '\\0' b; echo '\"}'",
          MakeCommand("job"), options);
  ExpectFailure(r, "OUTPUT_TOO_LARGE", "a stdout line is longer than max_output (1000 bytes)");
}

TEST_F(HandlerRunnerTest, StderrKeepsItsEnd) {
  HandlerRunnerOptions options;
  options.max_stderr = 100;
  CommandResult r = Run("head -c 100000 /dev/zero | tr '\\0' e >&2; echo ' the end' >&2; exit 1",
                        MakeCommand("job"), options);
  EXPECT_EQ(r.error.code, errc::kExitNonzero);
  std::string kept = r.error.details["stderr"];
  EXPECT_EQ(kept.size(), 100u);
  EXPECT_EQ(kept.substr(kept.size() - 9), " the end\n");
}

// Starts a handler that reports "pid" and "child" (a background process of its group,
// which in kTermIgnoringSleeper ignores SIGTERM) in a progress line, calls `stop` once that
// came, and checks that nothing of the group is left after the result.
CommandResult StopHandler(HandlerRunner& runner, const protocol::Command& c,
                          const std::function<void()>& stop) {
  support::SubreaperScope subreaper;
  Recorder rec;
  runner.Start(c, rec.Callbacks());
  std::vector<protocol::CommandProgress> p = rec.WaitProgress(1);
  if (p.empty()) return {};
  stop();
  CommandResult r = rec.Wait();
  pid_t pgid = p[0].data["pid"];
  pid_t child = p[0].data["child"];
  EXPECT_TRUE(support::GroupGone(pgid));
  EXPECT_TRUE(support::ProcessGone(child));
  return r;
}

constexpr const char* kSleeper =
    "sleep 1000 &\n"
    "echo \"{\\\"progress\\\": 1, \\\"data\\\": {\\\"pid\\\": $$, \\\"child\\\": $!}}\"\n"
    "wait";
constexpr const char* kTermIgnoringSleeper =
    "trap '' TERM\n"
    "(trap '' TERM; sleep 1000) &\n"
    "echo \"{\\\"progress\\\": 1, \\\"data\\\": {\\\"pid\\\": $$, \\\"child\\\": $!}}\"\n"
    "wait";

TEST_F(HandlerRunnerTest, TimeoutStopsTheWholeGroup) {
  auto runner = Runner("job", kSleeper);
  protocol::Command c = MakeCommand("job");
  c.timeout_seconds = 1;
  CommandResult r = StopHandler(*runner, c, [] {});
  ExpectFailure(r, errc::kTimeout, "timed out after 1s");
  EXPECT_TRUE(r.output.is_null());
}

TEST_F(HandlerRunnerTest, TimeoutEscalatesToSigkill) {
  HandlerRunnerOptions options;
  options.kill_grace = 200ms;
  auto runner = Runner("job", kTermIgnoringSleeper, options);
  protocol::Command c = MakeCommand("job");
  c.timeout_seconds = 1;
  ExpectFailure(StopHandler(*runner, c, [] {}), errc::kTimeout, "timed out after 1s");
}

TEST_F(HandlerRunnerTest, CancelStopsTheWholeGroup) {
  auto runner = Runner("job", kSleeper);
  CommandResult r = StopHandler(*runner, MakeCommand("job"), [&] { runner->Cancel("asg-1"); });
  ExpectFailure(r, errc::kCancelled, "cancelled");
}

TEST_F(HandlerRunnerTest, CancelEscalatesToSigkill) {
  HandlerRunnerOptions options;
  options.kill_grace = 200ms;
  auto runner = Runner("job", kTermIgnoringSleeper, options);
  CommandResult r = StopHandler(*runner, MakeCommand("job"), [&] { runner->Cancel("asg-1"); });
  ExpectFailure(r, errc::kCancelled, "cancelled");
}

TEST_F(HandlerRunnerTest, CancelOfUnknownOrFinishedCommandsIsANoop) {
  auto runner = Runner("job", "echo done");
  runner->Cancel("nobody");
  Recorder rec;
  ExpectSuccess(RunCommand(*runner, MakeCommand("job"), &rec), "done");
  runner->Cancel("asg-1");
  runner->Shutdown();
  EXPECT_EQ(rec.done_count(), 1);
}

TEST_F(HandlerRunnerTest, MissingExecutableIsASpawnError) {
  HandlerRunnerOptions options;
  options.handlers["job"] = {dir_.path() + "/no-such-handler"};
  HandlerRunner runner(options);
  CommandResult r = RunCommand(runner, MakeCommand("job"));
  EXPECT_EQ(r.error.code, errc::kSpawn);
  EXPECT_NE(r.error.message.find("no-such-handler"), std::string::npos) << r.error.message;
  EXPECT_TRUE(r.error.retryable);
}

TEST_F(HandlerRunnerTest, HandlerArgvIsUsedAsGiven) {
  HandlerRunnerOptions options;
  options.handlers["job"] = {"/bin/sh", "-c", "echo \"$0 $1\"", "zero", "one two"};
  HandlerRunner runner(options);
  ExpectSuccess(RunCommand(runner, MakeCommand("job")), "zero one two");
}

TEST_F(HandlerRunnerTest, CommandsWithoutAHandlerFail) {
  HandlerRunnerOptions options;
  options.handlers["model.download"] = {"/bin/true"};
  options.builtin_http = false;
  HandlerRunner runner(options);
  EXPECT_EQ(runner.Commands(), (std::vector<std::string>{"model.download", "shell"}));
  EXPECT_TRUE(runner.Handles("model.download"));
  EXPECT_TRUE(runner.Handles("shell"));
  EXPECT_FALSE(runner.Handles("http"));
  CommandResult r = RunCommand(runner, MakeCommand("http"));
  ExpectFailure(r, "NO_HANDLER", "no handler for command 'http' on this worker");
  EXPECT_TRUE(r.error.retryable);
  ExpectFailure(RunCommand(runner, MakeCommand("other")), "NO_HANDLER",
                "no handler for command 'other' on this worker");
  // A registered handler wins over a built-in of the same name.
  options.handlers["shell"] = {"/bin/echo", "mine"};
  HandlerRunner custom(options);
  ExpectSuccess(RunCommand(custom, MakeCommand("shell", {{"run", "echo builtin"}})), "mine");
}

TEST_F(HandlerRunnerTest, ShutdownCancelsRunningCommandsAndRefusesNewOnes) {
  auto runner = Runner("job", kSleeper);
  Recorder rec;
  runner->Start(MakeCommand("job"), rec.Callbacks());
  ASSERT_EQ(rec.WaitProgress(1).size(), 1u);
  runner->Shutdown();
  EXPECT_EQ(rec.done_count(), 1);  // before Shutdown returned
  ExpectFailure(rec.Wait(), errc::kCancelled, "cancelled");

  Recorder late;
  runner->Start(MakeCommand("job", nullptr, "asg-1"), late.Callbacks());
  EXPECT_EQ(late.done_count(), 1);  // at once, on this thread
  ExpectFailure(late.Wait(), errc::kCancelled, "the handler runner is shut down");
}

TEST_F(HandlerRunnerTest, ManyCommandsAtOnceAllCompleteOnOneThread) {
  auto runner = Runner("job", "echo \"{\\\"progress\\\": 50}\"; echo \"$BATON_ASSIGNMENT_ID\"");
  constexpr int kCount = 50;
  std::vector<Recorder> recs(kCount);
  for (int i = 0; i < kCount; ++i) {
    runner->Start(MakeCommand("job", nullptr, "asg-" + std::to_string(i)), recs[i].Callbacks());
  }
  std::thread::id io_thread;
  for (int i = 0; i < kCount; ++i) {
    CommandResult r = recs[i].Wait();
    EXPECT_EQ(r.status, ResultStatus::kSuccess);
    EXPECT_EQ(r.output, "asg-" + std::to_string(i));
    ASSERT_EQ(recs[i].progress().size(), 1u);
    EXPECT_EQ(recs[i].progress()[0].assignment_id, "asg-" + std::to_string(i));
    for (std::thread::id t : recs[i].threads()) {
      if (io_thread == std::thread::id()) io_thread = t;
      EXPECT_EQ(t, io_thread);
    }
  }
  EXPECT_NE(io_thread, std::this_thread::get_id());
}

}  // namespace
}  // namespace baton::worker
