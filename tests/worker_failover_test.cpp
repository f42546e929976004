// Remote workers end to end: the real server and real `baton worker` processes on
// loopback, with failure detection on short timeouts (heartbeat 200 ms, timeout 1 s).
//
// The handler is a shell script: without a checkpoint it reports progress 50 with the
// checkpoint {"part": 5}, then blocks reading its worker's FIFO (the "gate") until the
// test opens it; with a checkpoint it resumes and finishes at once. Its output names the
// worker that ran it, so the tests see who completed what.
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>

namespace baton {
namespace {

using client::ApiClient;
using testing::MakeTempDir;
using testing::ServerProcess;
using testing::StartProcess;
using testing::WaitProcess;
using testing::WaitUntil;
using testing::WriteFile;

constexpr const char* kHandler = R"(#!/bin/sh
cat > /dev/null
if [ -n "$BATON_CHECKPOINT" ]; then
  echo "{\"resumed\": $BATON_CHECKPOINT, \"worker\": \"$WORKER_NAME\"}"
  exit 0
fi
echo '{"progress": 50, "checkpoint": {"part": 5}}'
read line < "$GATE"
echo "{\"fresh\": true, \"worker\": \"$WORKER_NAME\"}"
)";

std::string Workflow(const std::string& name, const std::string& target) {
  return "name: " + name +
         "\n"
         "steps:\n"
         "  - id: download\n"
         "    type: command\n"
         "    command: model.download\n"
         "    retry: {max_attempts: 1}\n" +
         (target.empty() ? "" : "    target: " + target + "\n");
}

class WorkerFailover : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    WriteFile(dir_ + "/download.sh", kHandler);
    ::chmod((dir_ + "/download.sh").c_str(), 0755);
    server_ = std::make_unique<ServerProcess>(
        dir_,
        std::vector<std::string>{"--heartbeat-interval", "200ms", "--heartbeat-timeout", "1s"});
    ASSERT_TRUE(server_->ok()) << server_->log();
    auto token =
        Admin().Call("POST", "/api/v1/tokens", {{"name", "workers"}, {"scopes", {"worker"}}});
    ASSERT_TRUE(token.ok()) << token.status().ToString();
    token_ = (*token)["token"];
    CreateWorkflow(Workflow("deploy", ""));
  }
  void TearDown() override {
    for (auto& [name, w] : workers_) {
      OpenGate(name);  // a handler orphaned by kill -9 is still waiting there
      if (w.pid > 0) {
        kill(w.pid, SIGCONT);
        kill(w.pid, SIGKILL);
        WaitProcess(w.pid);
      }
    }
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  ApiClient Admin() { return server_->Admin(); }
  void CreateWorkflow(const std::string& yaml) {
    auto r = Admin().Send("POST", "/api/v1/workflows", yaml, "application/yaml");
    ASSERT_TRUE(r.ok() && (r->status == 201 || r->status == 200)) << (r.ok() ? r->body : "");
  }
  Json Get(const std::string& target) {
    auto r = Admin().Call("GET", target);
    return r.ok() ? *r : Json::object();
  }

  struct Worker {
    pid_t pid = -1;
    std::string log;
  };
  void StartWorker(const std::string& name, std::vector<std::string> extra = {}) {
    const std::string gate = dir_ + "/gate-" + name;
    ASSERT_EQ(::mkfifo(gate.c_str(), 0600), 0);
    std::vector<std::string> argv = {testing::BatonBin(),
                                     "worker",
                                     "--server",
                                     server_->url(),
                                     "--token",
                                     token_,
                                     "--id",
                                     name,
                                     "--handler",
                                     "model.download=" + dir_ + "/download.sh"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Worker& w = workers_[name];
    w.log = dir_ + "/worker-" + name + ".log";
    w.pid = StartProcess(argv, w.log, {"WORKER_NAME=" + name, "GATE=" + gate});
    ASSERT_TRUE(WaitUntil([&] {
      return Get("/api/v1/workers/" + name).value("status", "") == "ONLINE";
    })) << testing::ReadFile(w.log);
  }
  // Lets every handler of this worker that waits at its gate finish.
  void OpenGate(const std::string& name) {
    int fd = ::open((dir_ + "/gate-" + name).c_str(), O_WRONLY | O_NONBLOCK);
    if (fd < 0) return;  // nobody waiting
    (void)!::write(fd, "go\n", 3);
    ::close(fd);
  }
  std::string Submit(const std::string& workflow = "deploy") {
    auto r = Admin().Call("POST", "/api/v1/executions", {{"workflow", workflow}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)["id"].get<std::string>() : "";
  }
  // The execution's live assignment once it satisfies `pred`.
  Json WaitForAssignment(const std::string& id, const std::function<bool(const Json&)>& pred) {
    Json a;
    EXPECT_TRUE(WaitUntil([&] {
      Json list = Get("/api/v1/assignments?execution=" + id)["assignments"];
      if (list.size() != 1) return false;
      a = list[0];
      return pred(a);
    })) << a.dump();
    return a;
  }
  Json WaitRunning(const std::string& id) {
    return WaitForAssignment(
        id, [](const Json& a) { return a["status"] == "running" && a["checkpoint"].is_object(); });
  }
  Json WaitForStatus(const std::string& id, const std::string& status) {
    return testing::WaitForExecutionStatus(Admin(), id, status);
  }
  int CountEvents(const std::string& id, const std::string& type) {
    int n = 0;
    auto r = Admin().Call("GET", "/api/v1/executions/" + id + "/events?limit=1000");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return -1;
    for (const Json& e : (*r)["events"]) {
      n += e["type"] == type;
    }
    return n;
  }

  std::string dir_, token_;
  std::unique_ptr<ServerProcess> server_;
  std::map<std::string, Worker> workers_;
};

TEST_F(WorkerFailover, AKilledWorkersTaskResumesOnAnotherFromItsCheckpointOnce) {
  StartWorker("a");
  std::string id = Submit();
  Json running = WaitRunning(id);
  EXPECT_EQ(running["workerId"], "a");
  StartWorker("b");
  const auto killed = std::chrono::steady_clock::now();
  kill(workers_["a"].pid, SIGKILL);
  WaitProcess(workers_["a"].pid);
  workers_["a"].pid = -1;

  // Seed 003's timeline on short timeouts: a is ONLINE until its heartbeat_timeout (1 s)
  // after its last heartbeat (at most 200 ms before the kill) has passed, then UNHEALTHY,
  // and its work moves at once (no grace).
  ASSERT_TRUE(WaitUntil([&] { return Get("/api/v1/workers/a")["status"] == "UNHEALTHY"; }));
  const auto detected = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - killed)
                            .count();
  EXPECT_GE(detected, 800) << "UNHEALTHY before its heartbeat_timeout passed";
  Json e = WaitForStatus(id, "completed");
  Json step = e["steps"][0];
  EXPECT_EQ(step["output"]["worker"], "b");
  EXPECT_EQ(step["output"]["resumed"]["part"], 5);  // from a's last checkpoint
  EXPECT_EQ(step["attempts"], 1);                   // moved, not retried
  EXPECT_EQ(CountEvents(id, "step.completed"), 1);
  Json moves = Get("/api/v1/reassignments")["reassignments"];
  ASSERT_EQ(moves.size(), 1u) << moves.dump();
  EXPECT_EQ(moves[0]["fromWorkerId"], "a");
  EXPECT_EQ(moves[0]["toWorkerId"], "b");
  EXPECT_EQ(moves[0]["checkpoint"]["part"], 5);
  EXPECT_EQ(Get("/api/v1/workers/a")["status"], "UNHEALTHY");
}

TEST_F(WorkerFailover, AStoppedWorkersLateResultIsRejectedAsStale) {
  StartWorker("a");
  std::string id = Submit();
  WaitRunning(id);
  StartWorker("b");
  kill(workers_["a"].pid, SIGSTOP);  // past the 1 s timeout: its work moves to b
  Json e = WaitForStatus(id, "completed");
  EXPECT_EQ(e["steps"][0]["output"]["worker"], "b");
  // a comes back with its copy finished. Whichever reaches the other first: the server
  // refuses a's result as stale (and logs it), or a hears that the work moved and drops
  // it. Either way the step completed once, with b's output.
  OpenGate("a");
  kill(workers_["a"].pid, SIGCONT);
  EXPECT_TRUE(WaitUntil([&] {
    return CountEvents(id, "step.stale_result") >= 1 ||
           testing::ReadFile(workers_["a"].log).find("cancelling") != std::string::npos;
  })) << testing::ReadFile(workers_["a"].log);
  EXPECT_EQ(CountEvents(id, "step.completed"), 1);
  EXPECT_EQ(Get("/api/v1/executions/" + id)["steps"][0]["output"]["worker"], "b");
  // And a is healthy again.
  EXPECT_TRUE(WaitUntil([&] { return Get("/api/v1/workers/a")["status"] == "ONLINE"; }));
}

TEST_F(WorkerFailover, PlacementFollowsLoadRatioNodeTagsAndCapacity) {
  CreateWorkflow(Workflow("on-n2", "{node: n2}"));
  CreateWorkflow(Workflow("on-gpu", "{tags: [gpu]}"));
  StartWorker("a", {"--capacity", "2", "--node", "n1", "--tags", "gpu,a100"});
  StartWorker("b", {"--capacity", "1", "--node", "n2", "--tags", "cpu"});
  auto holder = [&](const std::string& id) {
    return WaitForAssignment(id,
                             [](const Json& a) { return a["status"] == "running"; })["workerId"];
  };
  // Equal ratios (0/2, 0/1): round-robin starts with a. Then b has the lower ratio (0 <
  // 1/2); then b is full and a takes the third.
  std::string x = Submit();
  EXPECT_EQ(holder(x), "a");
  std::string y = Submit();
  EXPECT_EQ(holder(y), "b");
  std::string z = Submit();
  EXPECT_EQ(holder(z), "a");
  // Everyone is full: a gpu step waits, and says why.
  std::string g = Submit("on-gpu");
  Json waiting = WaitForAssignment(g, [](const Json& a) { return a["status"] == "waiting"; });
  EXPECT_NE(waiting["waitingReason"].get<std::string>().find("capacity"), std::string::npos)
      << waiting.dump();
  // b frees up: the gpu step still waits for a (tags), a node-pinned one goes to b.
  OpenGate("b");
  WaitForStatus(y, "completed");
  std::string pinned = Submit("on-n2");
  EXPECT_EQ(holder(pinned), "b");
  EXPECT_EQ(Get("/api/v1/assignments?execution=" + g)["assignments"][0]["status"], "waiting");
  OpenGate("a");
  EXPECT_EQ(holder(g), "a");
}

TEST_F(WorkerFailover, SigtermDrainsTheWorker) {
  StartWorker("a");
  std::string first = Submit();
  WaitRunning(first);
  kill(workers_["a"].pid, SIGTERM);
  ASSERT_TRUE(WaitUntil([&] { return Get("/api/v1/workers/a")["status"] == "DRAINING"; }));
  std::string second = Submit();  // no new work for a draining worker
  Json waiting = WaitForAssignment(second, [](const Json& a) { return a["status"] == "waiting"; });
  OpenGate("a");  // the running one finishes...
  Json e = WaitForStatus(first, "completed");
  EXPECT_EQ(e["steps"][0]["output"]["worker"], "a");
  EXPECT_EQ(WaitProcess(workers_["a"].pid), 0);  // ...then it deregisters and exits
  workers_["a"].pid = -1;
  EXPECT_EQ(Get("/api/v1/workers/a")["status"], "OFFLINE");
  EXPECT_EQ(Get("/api/v1/executions/" + second)["status"], "running");
}

TEST_F(WorkerFailover, WorkersReconnectAfterAServerSigkillAndNothingIsLost) {
  StartWorker("a");
  std::string id = Submit();
  WaitRunning(id);
  server_->Kill9();
  OpenGate("a");  // the handler finishes while the server is down: the result waits
  server_->Restart();
  ASSERT_TRUE(server_->ok()) << server_->log();
  // The worker comes back on its own reconnect schedule, which a loaded machine slows
  // down: wait for what the test needs (issue 11, defect 10), not a fixed 20 s.
  testing::WaitUntil(
      [&] {
        auto r = Admin().Call("GET", "/api/v1/executions/" + id);
        return r.ok() && (*r)["status"] == "completed";
      },
      90'000);
  Json e = WaitForStatus(id, "completed");
  EXPECT_EQ(e["steps"][0]["output"]["worker"], "a");
  EXPECT_EQ(e["steps"][0]["output"]["fresh"], true);
  EXPECT_EQ(e["steps"][0]["attempts"], 1);  // re-attached, not restarted
  EXPECT_EQ(CountEvents(id, "step.completed"), 1);
  EXPECT_EQ(Get("/api/v1/workers/a")["status"], "ONLINE");
}

}  // namespace
}  // namespace baton
