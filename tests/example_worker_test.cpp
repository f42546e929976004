// The example Python worker (examples/workers/python/baton_worker.py) against the real
// server: it runs `command` steps, reports progress with checkpoints, drains on SIGTERM,
// and resumes work moved from a dead worker. Skipped when python3 is not on PATH
// (scripts/setup.sh installs it).
#include "server/auth.h"
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>

namespace baton {
namespace {

using testing::MakeTempDir;
using testing::ReadFile;
using testing::ServerProcess;
using testing::SourceDir;
using testing::WaitUntil;

constexpr const char* kCountWorkflow = R"(
name: count
inputs: {to: {type: integer, required: true}}
steps:
  - id: count
    type: command
    command: count
    data: {to: "{{ inputs.to }}"}
output: {counted: "{{ steps.count.output.counted }}"}
)";

class ExampleWorker : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::RunProcess({"python3", "--version"}).exit_code != 0) {
      GTEST_SKIP() << "python3 is not on PATH";
    }
    dir_ = MakeTempDir();
  }
  void TearDown() override {
    for (pid_t pid : workers_) {
      if (pid > 0) {
        kill(pid, SIGKILL);
        testing::WaitProcess(pid);
      }
    }
    server_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  // The server, and a token with the worker scope for the workers.
  void Start(std::vector<std::string> server_args = {}) {
    server_ = std::make_unique<ServerProcess>(dir_, std::move(server_args));
    ASSERT_TRUE(server_->ok()) << server_->log();
    auto token = server_->Admin().Call("POST", "/api/v1/tokens",
                                       {{"name", "python"}, {"scopes", {"worker"}}});
    ASSERT_TRUE(token.ok()) << token.status().ToString();
    worker_token_ = (*token)["token"];
  }
  // `python3 baton_worker.py --id ID` with its log in dir_/ID.log; returns its index.
  size_t StartWorker(const std::string& id, int capacity = 2) {
    workers_.push_back(testing::StartProcess(
        {"python3", SourceDir() + "/examples/workers/python/baton_worker.py", "--server",
         server_->url(), "--id", id, "--capacity", std::to_string(capacity)},
        dir_ + "/" + id + ".log", {"BATON_TOKEN=" + worker_token_}));
    EXPECT_GT(workers_.back(), 0);
    return workers_.size() - 1;
  }
  std::string WorkerLog(const std::string& id = "py-1") {
    return ReadFile(dir_ + "/" + id + ".log");
  }

  void CreateWorkflow(const std::string& yaml) {
    auto r = server_->Admin().Send("POST", "/api/v1/workflows", yaml, "application/yaml");
    ASSERT_TRUE(r.ok() && (r->status == 201 || r->status == 200)) << (r.ok() ? r->body : "");
  }
  Json Get(const std::string& target) {
    auto r = server_->Admin().Call("GET", target);
    EXPECT_TRUE(r.ok()) << target << ": " << r.status().ToString();
    return r.ok() ? *r : Json();
  }
  std::string Submit(const std::string& workflow, const Json& input) {
    auto r = server_->Admin().Call("POST", "/api/v1/executions",
                                   {{"workflow", workflow}, {"input", input}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)["id"].get<std::string>() : "";
  }
  // Waits for execution `id` to complete; the execution as the API shows it.
  Json WaitCompleted(const std::string& id, const std::string& worker = "py-1") {
    Json e;
    EXPECT_TRUE(WaitUntil([&] {
      e = Get("/api/v1/executions/" + id);
      return e.value("status", "") == "completed";
    })) << e.dump()
        << "\nworker log:\n"
        << WorkerLog(worker);
    return e;
  }
  // Worker `index`'s exit code once it exits (bounded wait; TearDown kills it if not).
  int WaitExit(size_t index) {
    pid_t& pid = workers_[index];
    int status = 0;
    if (!WaitUntil([&] { return waitpid(pid, &status, WNOHANG) == pid; })) return -1;
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::string dir_;
  std::string worker_token_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<pid_t> workers_;
};

TEST_F(ExampleWorker, RunsTheChecksumWorkflow) {
  Start();
  CreateWorkflow(ReadFile(SourceDir() + "/examples/workers/python/checksum.yaml"));
  StartWorker("py-1");
  const std::string text = "any language can be a worker: \"quotes\" and \xc3\xa9";
  Json e = WaitCompleted(Submit("checksum", {{"text", text}}));
  EXPECT_EQ(e["output"]["sha256"], server::Sha256Hex(text)) << e.dump();
  EXPECT_EQ(e["output"]["length"], text.size());
  Json assignments = Get("/api/v1/assignments?worker=py-1&status=all")["assignments"];
  ASSERT_EQ(assignments.size(), 1u) << assignments.dump();
  EXPECT_EQ(assignments[0]["status"], "completed");
  EXPECT_NE(WorkerLog().find("finished " + assignments[0]["assignmentId"].get<std::string>() +
                             " checksum: success"),
            std::string::npos)
      << WorkerLog();
}

// A busy worker says several things per request (POST .../batch): 60 executions at
// once on a worker of capacity 20 all complete, each with its own output, in fewer
// requests than messages.
TEST_F(ExampleWorker, ABusyWorkerSendsItsAcksAndResultsInBatches) {
  Start();
  CreateWorkflow(ReadFile(SourceDir() + "/examples/workers/python/checksum.yaml"));
  StartWorker("py-1", 20);
  ASSERT_TRUE(WaitUntil([&] {  // registered: the whole burst then goes to it at once
    auto r = server_->Admin().Call("GET", "/api/v1/workers/py-1");
    return r.ok() && (*r)["status"] == "ONLINE";
  }));
  constexpr int kN = 60;
  Json items = Json::array();
  for (int i = 0; i < kN; ++i) {
    items.push_back({{"workflow", "checksum"}, {"input", {{"text", "text " + std::to_string(i)}}}});
  }
  auto submitted =
      server_->Admin().Call("POST", "/api/v1/executions/batch", {{"executions", items}});
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  for (int i = 0; i < kN; ++i) {
    Json e = WaitCompleted((*submitted)["executions"][i]["id"]);
    EXPECT_EQ(e["output"]["sha256"], server::Sha256Hex("text " + std::to_string(i)));
  }
  auto metrics = server_->Admin().Send("GET", "/metrics");
  ASSERT_TRUE(metrics.ok());
  auto counter = [&](const std::string& name) {
    size_t at = metrics->body.find("\n" + name + " ");
    EXPECT_NE(at, std::string::npos) << name << " not in /metrics";
    return at == std::string::npos ? 0.0 : std::stod(metrics->body.substr(at + name.size() + 2));
  };
  const double requests = counter("baton_worker_longpoll_requests_total");
  const double messages = counter("baton_worker_longpoll_messages_total");
  EXPECT_GE(messages, 2.0 * kN);  // an ack and a result each
  EXPECT_LT(requests, messages) << "no batch was sent; worker log:\n" << WorkerLog();
  std::printf("long-poll: %.0f messages in %.0f requests\n", messages, requests);
}

TEST_F(ExampleWorker, CountReportsProgressWithCheckpoints) {
  Start();
  CreateWorkflow(kCountWorkflow);
  StartWorker("py-1");
  Json e = WaitCompleted(Submit("count", {{"to", 4}}));
  EXPECT_EQ(e["output"]["counted"], 4) << e.dump();
  std::vector<int> progress, checkpoints;
  const Json events = Get("/api/v1/executions/" + e["id"].get<std::string>() + "/events")["events"];
  for (const Json& ev : events) {
    if (ev["type"] != "step.progress") continue;
    progress.push_back(ev["data"]["progress"]);
    checkpoints.push_back(ev["data"]["data"]["checkpoint"]["i"]);
  }
  EXPECT_EQ(progress, (std::vector<int>{25, 50, 75, 99}));  // 100 is for the finished step
  EXPECT_EQ(checkpoints, (std::vector<int>{1, 2, 3, 4}));
}

TEST_F(ExampleWorker, SigtermDrainsAndDeregisters) {
  Start();
  size_t worker = StartWorker("py-idle");
  Json w;
  ASSERT_TRUE(WaitUntil([&] {
    auto r = server_->Admin().Call("GET", "/api/v1/workers/py-idle");
    if (r.ok()) w = *r;
    return r.ok() && w["status"] == "ONLINE";
  })) << w.dump()
      << WorkerLog();
  EXPECT_EQ(w["commands"], Json({"checksum", "count"}));
  EXPECT_EQ(w["capacity"], 2);
  kill(workers_[worker], SIGTERM);
  EXPECT_EQ(WaitExit(worker), 0) << WorkerLog("py-idle");
  EXPECT_EQ(Get("/api/v1/workers/py-idle")["status"], "OFFLINE");
  EXPECT_NE(WorkerLog("py-idle").find("drain finished: deregistered"), std::string::npos)
      << WorkerLog("py-idle");
}

TEST_F(ExampleWorker, ACountMovedToAnotherWorkerResumesFromItsCheckpoint) {
  Start({"--heartbeat-interval", "200ms", "--heartbeat-timeout", "1s"});
  CreateWorkflow(kCountWorkflow);
  size_t first = StartWorker("py-1");
  const std::string id = Submit("count", {{"to", 1000}});
  // py-1 dies once it has reported a checkpoint; py-2 gets the work with it.
  Json held;
  ASSERT_TRUE(WaitUntil([&] {
    held = Get("/api/v1/assignments?execution=" + id)["assignments"];
    return held.size() == 1 && held[0]["checkpoint"].is_object();
  })) << held.dump()
      << WorkerLog();
  kill(workers_[first], SIGKILL);
  WaitExit(first);
  StartWorker("py-2");
  Json e = WaitCompleted(id, "py-2");
  EXPECT_EQ(e["output"]["counted"], 1000);
  EXPECT_GT(e["steps"][0]["output"]["resumedFrom"], 0) << e.dump();
  EXPECT_NE(WorkerLog("py-2").find("finished " + id + "/count/1.r1 count: success"),
            std::string::npos)
      << WorkerLog("py-2");
}

}  // namespace
}  // namespace baton
