// `baton worker --persistent`: one long-lived handler process per command name, fed
// commands as JSON lines (worker/persistent_handler.h).
#include "worker/persistent_handler.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "worker/worker_test_util.h"

namespace baton::worker {
namespace {

using protocol::CommandResult;
using protocol::ResultStatus;
using testing::MakeCommand;
using testing::Recorder;
using testing::RunCommand;

// A Python handler: `data.act` says what to do with each command.
constexpr const char* kHandler = R"(#!/usr/bin/env python3
import json, os, sys
cancels = []
for line in sys.stdin:
    m = json.loads(line)
    if "cancel" in m:
        cancels.append([m["cancel"], m["reason"]])
        continue
    a = m["assignmentId"]
    act = (m.get("data") or {}).get("act", "ok")
    if act == "ok":
        print(json.dumps({"assignment_id": a, "progress": 50, "checkpoint": {"half": True}}))
        print("not json, ignored")
        print(json.dumps({"assignment_id": "nobody", "output": 1}))
        print(json.dumps({"assignment_id": a, "output": {
            "pid": os.getpid(), "handler": os.environ.get("BATON_HANDLER"),
            "step": m["execution"]["stepId"], "cancels": cancels}}))
    elif act == "fail":
        print(json.dumps({"assignment_id": a, "error": {
            "code": "BAD_INPUT", "message": "no such model", "retryable": False}}))
    elif act == "weird-error":
        print(json.dumps({"assignment_id": a, "error": {"code": 5, "retryable": "no"}}))
    elif act == "die":
        sys.stderr.write("out of memory\n")
        sys.stderr.flush()
        os._exit(3)
    sys.stdout.flush()
)";

class PersistentHandlerTest : public ::testing::Test {
 protected:
  std::unique_ptr<HandlerRunner> Runner() {
    const std::string file = dir_.path() + "/handler.py";
    std::ofstream(file) << kHandler;
    chmod(file.c_str(), 0755);
    HandlerRunnerOptions options;
    options.persistent = true;
    options.handlers["model.run"] = {file};
    return std::make_unique<HandlerRunner>(std::move(options));
  }
  static protocol::Command Command(const std::string& act, const std::string& id) {
    return MakeCommand("model.run", {{"act", act}}, id);
  }

  testing::TempDir dir_;
};

TEST_F(PersistentHandlerTest, OneProcessRunsEveryCommandAndReportsProgressAndOutput) {
  auto runner = Runner();
  Recorder first;
  CommandResult a = RunCommand(*runner, Command("ok", "asg-a"), &first);
  ASSERT_EQ(a.status, ResultStatus::kSuccess) << a.error.code << ": " << a.error.message;
  EXPECT_EQ(a.assignment_id, "asg-a");
  EXPECT_EQ(a.output["handler"], "model.run");
  EXPECT_EQ(a.output["step"], "step-1");
  auto progress = first.progress();
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_EQ(progress[0].progress, 50);
  EXPECT_EQ(progress[0].checkpoint, (Json{{"half", true}}));
  CommandResult b = RunCommand(*runner, Command("ok", "asg-b"));
  ASSERT_EQ(b.status, ResultStatus::kSuccess);
  EXPECT_EQ(b.output["pid"], a.output["pid"]);  // the same process: no start per command

  CommandResult failed = RunCommand(*runner, Command("fail", "asg-c"));
  EXPECT_EQ(failed.status, ResultStatus::kFailure);
  EXPECT_EQ(failed.error.code, "BAD_INPUT");
  EXPECT_EQ(failed.error.message, "no such model");
  EXPECT_FALSE(failed.error.retryable);
  // Fields of the wrong type are taken as text, never thrown on.
  CommandResult weird = RunCommand(*runner, Command("weird-error", "asg-d"));
  EXPECT_EQ(weird.status, ResultStatus::kFailure);
  EXPECT_EQ(weird.error.code, "5");
  EXPECT_TRUE(weird.error.retryable);
}

TEST_F(PersistentHandlerTest, AnExitFailsWhatItHeldAndTheNextCommandStartsAgain) {
  auto runner = Runner();
  CommandResult before = RunCommand(*runner, Command("ok", "asg-a"));
  ASSERT_EQ(before.status, ResultStatus::kSuccess);
  CommandResult died = RunCommand(*runner, Command("die", "asg-b"));
  EXPECT_EQ(died.status, ResultStatus::kFailure);
  EXPECT_EQ(died.error.code, "HANDLER_EXITED");
  EXPECT_EQ(died.error.message, "persistent handler 'model.run' exited with code 3: out of memory");
  EXPECT_TRUE(died.error.retryable);
  CommandResult after = RunCommand(*runner, Command("ok", "asg-c"));
  ASSERT_EQ(after.status, ResultStatus::kSuccess) << after.error.message;
  EXPECT_NE(after.output["pid"], before.output["pid"]);
}

TEST_F(PersistentHandlerTest, TimeoutAndCancelEndTheCommandAndTellTheHandler) {
  auto runner = Runner();
  protocol::Command slow = Command("hang", "asg-slow");
  slow.timeout_seconds = 1;
  CommandResult timed_out = RunCommand(*runner, slow);
  EXPECT_EQ(timed_out.status, ResultStatus::kFailure);
  EXPECT_EQ(timed_out.error.code, errc::kTimeout);
  EXPECT_EQ(timed_out.error.message, "timed out after 1s");

  Recorder hung;
  runner->Start(Command("hang", "asg-hung"), hung.Callbacks());
  runner->Cancel("asg-hung");
  CommandResult cancelled = hung.Wait();
  EXPECT_EQ(cancelled.error.code, errc::kCancelled);
  // The handler heard of both, in order, and still runs.
  CommandResult next = RunCommand(*runner, Command("ok", "asg-next"));
  ASSERT_EQ(next.status, ResultStatus::kSuccess);
  EXPECT_EQ(next.output["cancels"], Json::array({Json::array({"asg-slow", "timeout"}),
                                                 Json::array({"asg-hung", "cancelled"})}));
}

TEST_F(PersistentHandlerTest, ShutdownEndsWhatIsRunningAsCancelled) {
  auto runner = Runner();
  Recorder hung;
  runner->Start(Command("hang", "asg-hung"), hung.Callbacks());
  ASSERT_EQ(RunCommand(*runner, Command("ok", "asg-ok")).status, ResultStatus::kSuccess);
  runner->Shutdown();
  CommandResult r = hung.Wait();
  EXPECT_EQ(r.error.code, errc::kCancelled);
  EXPECT_EQ(hung.done_count(), 1);
}

}  // namespace
}  // namespace baton::worker
