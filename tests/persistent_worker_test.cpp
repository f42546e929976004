// `baton worker --persistent` against the real server: one handler process takes every
// command, answering over its stdin/stdout line protocol.
#include "support/process_util.h"
#include "support/server_process.h"
#include "support/server_test.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>

#include <set>
#include <string>
#include <vector>

namespace baton {
namespace {

using testing::StartProcess;
using testing::WaitProcess;
using testing::WaitUntil;
using testing::WriteFile;

constexpr const char* kHandler = R"(#!/usr/bin/env python3
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if "cancel" in m:
        continue
    a = m["assignmentId"]
    print(json.dumps({"assignment_id": a, "progress": 50}), flush=True)
    n = (m.get("data") or {}).get("n", 0)
    print(json.dumps({"assignment_id": a, "output": {"pid": os.getpid(), "twice": 2 * n}}),
          flush=True)
)";

// Answers at once, with no progress: a command's messages are its ack and its result.
constexpr const char* kQuietHandler = R"(#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "cancel" not in m:
        print(json.dumps({"assignment_id": m["assignmentId"], "output": {"ok": True}}), flush=True)
)";

class PersistentWorker : public testing::ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    WriteFile(dir_ + "/handler.py", kHandler);
    ::chmod((dir_ + "/handler.py").c_str(), 0755);
    CreateWorkflow(
        "name: double\n"
        "inputs: {n: {type: integer}}\n"
        "steps:\n"
        "  - {id: calc, type: command, command: calc, data: {n: '{{ inputs.n }}'}}\n"
        "output: {twice: '{{ steps.calc.output.twice }}', pid: '{{ steps.calc.output.pid }}'}\n");
  }
  void TearDown() override {
    if (worker_ > 0) {
      kill(worker_, SIGKILL);
      WaitProcess(worker_);
    }
    ServerTest::TearDown();
  }
  // Starts `baton worker --persistent` as `id` with `args` after its own, and waits until
  // the server has it ONLINE.
  void StartWorker(const std::string& id, std::vector<std::string> args) {
    auto token = server_->Admin().Call("POST", "/api/v1/tokens",
                                       {{"name", "workers-" + id}, {"scopes", {"worker"}}});
    ASSERT_TRUE(token.ok()) << token.status().ToString();
    std::vector<std::string> argv = {
        testing::BatonBin(), "worker", "--server", server_->url(), "--token",
        (*token)["token"],   "--id",   id,         "--persistent", "--quiet"};
    argv.insert(argv.end(), args.begin(), args.end());
    log_ = dir_ + "/worker-" + id + ".log";
    worker_ = StartProcess(argv, log_);
    ASSERT_GT(worker_, 0);
    ASSERT_TRUE(WaitUntil([&] {
      auto w = server_->Admin().Call("GET", "/api/v1/workers/" + id);
      return w.ok() && (*w).value("status", "") == "ONLINE";
    })) << testing::ReadFile(log_);
  }
  // The value of counter `name` (with its labels) in the server's /metrics.
  double Counter(const std::string& name) {
    auto metrics = server_->Admin().Send("GET", "/metrics");
    EXPECT_TRUE(metrics.ok());
    if (!metrics.ok()) return 0;
    const std::string& text = metrics->body;
    size_t at = text.find("\n" + name + " ");
    EXPECT_NE(at, std::string::npos) << name << " not in /metrics";
    return at == std::string::npos ? 0.0 : std::stod(text.substr(at + name.size() + 2));
  }
  // Submits `n` executions of `workflow` (input n = 0..n-1) in one batch; waits for them
  // all to complete, and checks the output `twice` where there is one.
  void RunAll(const std::string& workflow, int n) {
    Json items = Json::array();
    for (int i = 0; i < n; ++i) items.push_back({{"workflow", workflow}, {"input", {{"n", i}}}});
    auto submitted =
        server_->Admin().Call("POST", "/api/v1/executions/batch", {{"executions", items}});
    ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
    for (int i = 0; i < n; ++i) {
      Json e = testing::WaitForExecutionStatus(server_->Admin(),
                                               (*submitted)["executions"][i]["id"], "completed");
      ASSERT_EQ(e.value("status", ""), "completed") << e.dump() << testing::ReadFile(log_);
      if (e["output"].contains("twice")) {
        EXPECT_EQ(e["output"]["twice"], 2 * i);
      }
    }
  }

  pid_t worker_ = -1;
  std::string log_;
};

TEST_F(PersistentWorker, OneHandlerProcessRunsEveryCommand) {
  auto token = server_->Admin().Call("POST", "/api/v1/tokens",
                                     {{"name", "workers"}, {"scopes", {"worker"}}});
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  const std::string log = dir_ + "/worker.log";
  worker_ = StartProcess({testing::BatonBin(), "worker", "--server", server_->url(), "--token",
                          (*token)["token"], "--id", "py", "--persistent", "--quiet", "--capacity",
                          "4", "--handler", "calc=" + dir_ + "/handler.py"},
                         log);
  ASSERT_GT(worker_, 0);
  Json items = Json::array();
  for (int i = 0; i < 20; ++i) items.push_back({{"workflow", "double"}, {"input", {{"n", i}}}});
  auto submitted =
      server_->Admin().Call("POST", "/api/v1/executions/batch", {{"executions", items}});
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  std::set<std::string> pids;
  for (int i = 0; i < 20; ++i) {
    Json e = testing::WaitForExecutionStatus(server_->Admin(), (*submitted)["executions"][i]["id"],
                                             "completed");
    ASSERT_EQ(e.value("status", ""), "completed") << e.dump() << testing::ReadFile(log);
    EXPECT_EQ(e["output"]["twice"], 2 * i);
    pids.insert(e["output"]["pid"].dump());
  }
  EXPECT_EQ(pids.size(), 1u) << "one handler process for every command";
  kill(worker_, SIGTERM);  // drains and exits 0, stopping its handler process
  EXPECT_EQ(WaitProcess(worker_), 0) << testing::ReadFile(log);
  worker_ = -1;
  // --quiet: no line per command, the connection's lines still there.
  const std::string text = testing::ReadFile(log);
  EXPECT_EQ(text.find("started "), std::string::npos) << text;
  EXPECT_EQ(text.find("finished "), std::string::npos) << text;
  EXPECT_NE(text.find("registered as py"), std::string::npos) << text;
  EXPECT_NE(text.find("drain finished"), std::string::npos) << text;
}

// A busy worker and the server exchange batch frames (docs/worker-protocol.md): what is
// ready together travels together, and every command still runs once.
TEST_F(PersistentWorker, ABusyWorkerAndTheServerExchangeBatchFrames) {
  StartWorker("busy", {"--capacity", "50", "--handler", "calc=" + dir_ + "/handler.py"});
  constexpr int kN = 300;
  RunAll("double", kN);
  const double frames_in = Counter(R"(baton_worker_frames_total{direction="received"})");
  const double messages_in = Counter(R"(baton_worker_messages_total{direction="received"})");
  const double frames_out = Counter(R"(baton_worker_frames_total{direction="sent"})");
  const double messages_out = Counter(R"(baton_worker_messages_total{direction="sent"})");
  // Each command is answered with its progress and its result (and its ack, unless the
  // result came while the ack waited for a batch).
  EXPECT_GE(messages_in, 2.0 * kN);
  EXPECT_GE(messages_out, kN);
  EXPECT_LT(frames_in, messages_in) << "the worker sent no batch frame";
  EXPECT_LT(frames_out, messages_out) << "the server sent no batch frame";
  RecordProperty("frames_received", std::to_string(frames_in));
  RecordProperty("messages_received", std::to_string(messages_in));
  RecordProperty("frames_sent", std::to_string(frames_out));
  RecordProperty("messages_sent", std::to_string(messages_out));
}

// A busy worker holds what it sends for up to --batch-window: a command answered
// meanwhile is reported by its result alone (docs/worker-protocol.md: a result stands
// for its ack), and each execution still completes once, with its output.
TEST_F(PersistentWorker, ABusyWorkersResultsStandForTheirAcks) {
  WriteFile(dir_ + "/quiet.py", kQuietHandler);
  ::chmod((dir_ + "/quiet.py").c_str(), 0755);
  StartWorker("quiet", {"--capacity", "8", "--batch-window", "1000", "--handler",
                        "calc=" + dir_ + "/quiet.py"});
  CreateWorkflow(
      "name: quiet\ninputs: {n: {type: integer}}\nsteps:\n"
      "  - {id: calc, type: command, command: calc}\n");
  constexpr int kN = 100;
  RunAll("quiet", kN);
  const double messages_in = Counter(R"(baton_worker_messages_total{direction="received"})");
  const double frames_in = Counter(R"(baton_worker_frames_total{direction="received"})");
  // An ack and a result each, without the window: 2 * kN (and the register).
  EXPECT_LT(messages_in, 2.0 * kN) << "every command was acked: no result stood for its ack";
  EXPECT_GE(messages_in, kN + 1.0);
  EXPECT_LT(frames_in, messages_in);
  RecordProperty("messages_received", std::to_string(messages_in));
  RecordProperty("frames_received", std::to_string(frames_in));
  kill(worker_, SIGTERM);  // drains: nothing runs, so it deregisters and exits 0
  EXPECT_EQ(WaitProcess(worker_), 0) << testing::ReadFile(log_);
  worker_ = -1;
}

// The Python example worker serves its handlers as a persistent handler too.
TEST_F(PersistentWorker, ThePythonExampleServesItsHandlersOverStdio) {
  auto token = server_->Admin().Call("POST", "/api/v1/tokens",
                                     {{"name", "workers"}, {"scopes", {"worker"}}});
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  const std::string example = testing::SourceDir() + "/examples/workers/python/baton_worker.py";
  CreateWorkflow(
      testing::ReadFile(testing::SourceDir() + "/examples/workers/python/checksum.yaml"));
  const std::string log = dir_ + "/worker.log";
  worker_ = StartProcess(
      {testing::BatonBin(), "worker", "--server", server_->url(), "--token", (*token)["token"],
       "--id", "py-stdio", "--persistent", "--handler", "checksum=" + example},
      log);
  ASSERT_GT(worker_, 0);
  auto submitted =
      server_->Admin().Call("POST", "/api/v1/executions",
                            {{"workflow", "checksum"}, {"input", {{"text", "hello, baton"}}}});
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  Json e = testing::WaitForExecutionStatus(server_->Admin(), (*submitted)["id"], "completed");
  ASSERT_EQ(e.value("status", ""), "completed") << e.dump() << testing::ReadFile(log);
  EXPECT_EQ(e["output"]["sha256"],
            "e261dd92924b7d32a75f1052c5d9ff9797be435f1b2dbb699b3ba0e0d687a00d");
  EXPECT_EQ(e["output"]["length"], 12);
  kill(worker_, SIGTERM);
  EXPECT_EQ(WaitProcess(worker_), 0) << testing::ReadFile(log);
  worker_ = -1;
}

}  // namespace
}  // namespace baton
