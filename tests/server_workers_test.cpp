// Remote workers against the real server over the HTTP long-poll transport, spoken by
// the test itself (docs/worker-protocol.md): dispatch, progress, fencing, waiting with a
// reason, drain, failure detection with short timeouts, and a server SIGKILL while a
// worker holds work.
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace baton {
namespace {

using client::ApiClient;
using testing::MakeTempDir;
using testing::ServerProcess;
using testing::WaitUntil;

constexpr const char* kWorkflow = R"(
name: deploy
inputs: {model: {type: string, required: true}}
steps:
  - id: download
    type: command
    command: model.download
    resource: {model: "{{ inputs.model }}"}
    data: {url: "https://hub/{{ inputs.model }}"}
    retry: {max_attempts: 1}
output: {path: "{{ steps.download.output.path }}"}
)";

// A worker spoken by hand over long-poll.
struct PollWorker {
  ApiClient api;
  std::string id;
  std::string session;  // the process's incarnation; "" sends none

  Result<Json> Register(const std::string& command = "model.download", int capacity = 1,
                        Json tags = Json::array()) {
    Json body = {{"workerId", id}, {"capacity", capacity}, {"commands", {command}}, {"tags", tags}};
    if (!session.empty()) body["sessionId"] = session;
    return api.Call("POST", "/api/v1/workers/register", body);
  }
  Result<Json> Post(const std::string& what, const Json& body) {
    return api.Call("POST", "/api/v1/workers/" + id + "/" + what, body);
  }
  // The next command, polling until one comes (each poll also counts as a heartbeat).
  Json NextCommand(int wait_ms = 200) {
    Json found;
    EXPECT_TRUE(WaitUntil([&] {
      auto r = api.Call("GET", "/api/v1/workers/" + id + "/poll?wait=" + std::to_string(wait_ms));
      if (!r.ok()) return false;
      for (const Json& m : (*r)["messages"]) {
        if (m["type"] == "command") {
          found = m;
          return true;
        }
      }
      return false;
    })) << "worker "
        << id << " got no command";
    return found;
  }
  Result<Json> Ack(const std::string& assignment) {
    return Post("ack", {{"assignmentId", assignment}, {"status", "accepted"}});
  }
  Result<Json> Progress(const std::string& assignment, int p, Json checkpoint) {
    return Post("progress",
                {{"assignmentId", assignment}, {"progress", p}, {"checkpoint", checkpoint}});
  }
  Result<Json> Succeed(const std::string& assignment, Json output) {
    return Post("result",
                {{"assignmentId", assignment}, {"status", "success"}, {"output", output}});
  }
};

class ServerWorkers : public ::testing::Test {
 protected:
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Start(std::vector<std::string> args = {}) {
    dir_ = MakeTempDir();
    server_ = std::make_unique<ServerProcess>(dir_, std::move(args));
    ASSERT_TRUE(server_->ok()) << server_->log();
    auto r = Admin().Send("POST", "/api/v1/workflows", kWorkflow, "application/yaml");
    ASSERT_TRUE(r.ok() && (r->status == 201 || r->status == 200)) << (r.ok() ? r->body : "");
    auto token =
        Admin().Call("POST", "/api/v1/tokens", {{"name", "workers"}, {"scopes", {"worker"}}});
    ASSERT_TRUE(token.ok()) << token.status().ToString();
    worker_token_ = (*token)["token"];
  }
  ApiClient Admin() { return server_->Admin(); }
  PollWorker Worker(const std::string& id) { return {server_->As(worker_token_), id, ""}; }
  Json Get(const std::string& target) {
    auto r = Admin().Call("GET", target);
    EXPECT_TRUE(r.ok()) << target << ": " << r.status().ToString();
    return r.ok() ? *r : Json();
  }
  std::string Submit(const std::string& model = "llama") {
    auto r = Admin().Call("POST", "/api/v1/executions",
                          {{"workflow", "deploy"}, {"input", {{"model", model}}}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)["id"].get<std::string>() : "";
  }
  Json WaitForStatus(const std::string& id, const std::string& status) {
    return testing::WaitForExecutionStatus(Admin(), id, status);
  }
  std::string dir_;
  std::string worker_token_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServerWorkers, ACommandStepRunsOnALongPollingWorker) {
  Start();
  PollWorker w = Worker("gpu-1");
  auto reg = w.Register();
  ASSERT_TRUE(reg.ok()) << reg.status().ToString();
  EXPECT_EQ((*reg)["type"], "registered");
  EXPECT_EQ((*reg)["heartbeatInterval"], 30000);
  std::string id = Submit();
  Json cmd = w.NextCommand();
  const std::string assignment = cmd["assignmentId"];
  EXPECT_EQ(cmd["command"], "model.download");
  EXPECT_EQ(cmd["resource"]["model"], "llama");
  EXPECT_EQ(cmd["data"]["url"], "https://hub/llama");
  EXPECT_EQ(cmd["execution"]["executionId"], id);
  EXPECT_EQ(cmd["execution"]["stepId"], "download");
  ASSERT_TRUE(w.Ack(assignment).ok());
  ASSERT_TRUE(w.Progress(assignment, 45, {{"bytes", 1024}}).ok());
  Json live = Get("/api/v1/assignments?worker=gpu-1")["assignments"];
  ASSERT_EQ(live.size(), 1u) << live.dump();
  EXPECT_EQ(live[0]["status"], "running");
  EXPECT_EQ(live[0]["checkpoint"]["bytes"], 1024);
  // The execution shows the running step's last reported progress.
  ASSERT_TRUE(
      WaitUntil([&] { return Get("/api/v1/executions/" + id)["steps"][0]["progress"] == 45; }));
  ASSERT_TRUE(w.Succeed(assignment, {{"path", "/models/llama"}}).ok());
  Json e = WaitForStatus(id, "completed");
  EXPECT_EQ(e["output"]["path"], "/models/llama");

  // The same result again is stale: 409, nothing changes, and the log says so.
  auto again = w.api.Send(
      "POST", "/api/v1/workers/gpu-1/result",
      Json{
          {"assignmentId", assignment}, {"status", "success"}, {"output", {{"path", "/elsewhere"}}}}
          .dump());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, 409) << again->body;
  EXPECT_NE(again->body.find("STALE_ASSIGNMENT"), std::string::npos) << again->body;
  EXPECT_EQ(Get("/api/v1/executions/" + id)["output"]["path"], "/models/llama");
  Json stored = Get("/api/v1/assignments/" + assignment);
  EXPECT_EQ(stored["status"], "completed");
  EXPECT_EQ(stored["workerId"], "gpu-1");
}

// A result stands for its ack (docs/worker-protocol.md): a worker that answers at once
// sends the result alone, and the step's history still says when it started.
TEST_F(ServerWorkers, AResultWithoutAnAckStartsTheStepBeforeCompletingIt) {
  Start();
  PollWorker w = Worker("gpu-1");
  ASSERT_TRUE(w.Register().ok());
  const std::string id = Submit();
  const std::string assignment = w.NextCommand()["assignmentId"];
  ASSERT_TRUE(w.Succeed(assignment, {{"path", "/models/llama"}}).ok());
  Json e = WaitForStatus(id, "completed");
  EXPECT_EQ(e["output"]["path"], "/models/llama");
  const Json events = Get("/api/v1/executions/" + id + "/events");
  std::vector<std::string> types;
  for (const Json& ev : events.value("events", Json::array())) {
    if (ev.value("step_id", "") == "download") types.push_back(ev.value("type", ""));
  }
  EXPECT_EQ(types, (std::vector<std::string>{"step.ready", "step.dispatched", "step.started",
                                             "step.completed"}))
      << events.dump();
  EXPECT_EQ(Get("/api/v1/assignments/" + assignment)["status"], "completed");
}

// A busy long-polling worker says several things in one request: POST .../batch.
TEST_F(ServerWorkers, ALongPollingWorkerSendsSeveralMessagesInOneRequest) {
  Start();
  PollWorker w = Worker("gpu-1");
  ASSERT_TRUE(w.Register("model.download", 2).ok());
  const std::string first = Submit("one");
  const std::string second = Submit("two");
  std::vector<std::string> assignments;
  ASSERT_TRUE(WaitUntil([&] {
    auto r = w.api.Call("GET", "/api/v1/workers/gpu-1/poll?wait=200");
    if (r.ok()) {
      for (const Json& m : (*r)["messages"]) {
        if (m["type"] == "command") assignments.push_back(m["assignmentId"]);
      }
    }
    return assignments.size() == 2;
  }));
  auto batch = [&](Json messages) {
    return w.api.Send("POST", "/api/v1/workers/gpu-1/batch",
                      Json{{"type", "batch"}, {"messages", std::move(messages)}}.dump());
  };
  auto ack = [](const std::string& a) {
    return Json{{"type", "command.ack"}, {"assignmentId", a}, {"status", "accepted"}};
  };
  auto result = [](const std::string& a, const std::string& path) {
    return Json{{"type", "command.result"},
                {"assignmentId", a},
                {"status", "success"},
                {"output", {{"path", path}}}};
  };

  // One bad message refuses the whole body, naming it; nothing in it is applied.
  auto refused = batch({ack(assignments[0]),
                        result(assignments[0], "/x"),
                        {{"type", "command.progress"}, {"assignmentId", assignments[1]}}});
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 400) << refused->body;
  EXPECT_NE(refused->body.find("messages[2]"), std::string::npos) << refused->body;
  EXPECT_EQ(Get("/api/v1/executions/" + first)["status"], "running");
  auto not_a_batch = w.api.Send("POST", "/api/v1/workers/gpu-1/batch", ack(assignments[0]).dump());
  ASSERT_TRUE(not_a_batch.ok());
  EXPECT_EQ(not_a_batch->status, 400) << not_a_batch->body;
  auto with_register =
      batch({ack(assignments[0]), {{"type", "register"}, {"workerId", "gpu-1"}, {"capacity", 1}}});
  ASSERT_TRUE(with_register.ok());
  EXPECT_EQ(with_register->status, 400) << with_register->body;

  const Json hb = {
      {"type", "heartbeat"}, {"currentLoad", 2}, {"capacity", 2}, {"status", "ONLINE"}};
  // Acks, a heartbeat and both results in one request: each answered in order.
  auto sent = batch({ack(assignments[0]), ack(assignments[1]), hb, result(assignments[0], "/first"),
                     result(assignments[1], "/second")});
  ASSERT_TRUE(sent.ok());
  ASSERT_EQ(sent->status, 200) << sent->body;
  Json results = Json::parse(sent->body)["results"];
  ASSERT_EQ(results.size(), 5u) << sent->body;
  EXPECT_EQ(results[0]["type"], "ok");
  EXPECT_EQ(results[2]["type"], "heartbeat.ok");
  EXPECT_EQ(results[4]["type"], "ok");
  std::map<std::string, std::string> paths;
  for (const std::string& id : {first, second}) {
    Json e = WaitForStatus(id, "completed");
    paths[e["input"]["model"]] = e["output"]["path"];
  }
  // Which command went to which execution is the server's choice; both outputs landed.
  EXPECT_EQ(paths.size(), 2u);
  std::set<std::string> outputs = {paths["one"], paths["two"]};
  EXPECT_EQ(outputs, (std::set<std::string>{"/first", "/second"}));

  // The same results again: each refused as stale, naming its assignment, nothing changes.
  auto again = batch({result(assignments[0], "/late"), result(assignments[1], "/late")});
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->status, 200) << again->body;
  Json stale = Json::parse(again->body)["results"];
  ASSERT_EQ(stale.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(stale[i]["error"]["code"], "STALE_ASSIGNMENT") << again->body;
    EXPECT_EQ(stale[i]["error"]["details"]["assignmentId"], assignments[i]);
  }
  EXPECT_NE(Get("/api/v1/executions/" + first)["output"]["path"], "/late");

  // A deregister ends the batch: what follows it is not handled.
  auto leaving = batch({{{"type", "deregister"}}, hb});
  ASSERT_TRUE(leaving.ok());
  ASSERT_EQ(leaving->status, 200) << leaving->body;
  EXPECT_EQ(Json::parse(leaving->body)["results"].size(), 1u) << leaving->body;
  EXPECT_EQ(Get("/api/v1/workers/gpu-1")["status"], "OFFLINE");
  auto gone = batch({hb});
  ASSERT_TRUE(gone.ok());
  ASSERT_EQ(gone->status, 200) << gone->body;
  EXPECT_EQ(Json::parse(gone->body)["results"][0]["error"]["code"], "NOT_FOUND") << gone->body;
  PollWorker stranger = Worker("never-registered");
  auto unknown = stranger.api.Send("POST", "/api/v1/workers/never-registered/batch",
                                   Json{{"type", "batch"}, {"messages", {hb}}}.dump());
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->status, 404) << unknown->body;
}

TEST_F(ServerWorkers, WorkersNeedTheWorkerScopeAndStepsWaitWithAReason) {
  Start();
  auto reader = Admin().Call("POST", "/api/v1/tokens", {{"name", "r"}, {"scopes", {"read"}}});
  ASSERT_TRUE(reader.ok());
  PollWorker intruder{server_->As((*reader)["token"]), "x", ""};
  auto refused = intruder.Register();
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), "FORBIDDEN") << refused.status().ToString();
  PollWorker nobody{server_->As("not-a-token"), "x", ""};
  EXPECT_EQ(nobody.Register().status().code(), "UNAUTHORIZED");

  std::string id = Submit();
  Json waiting;
  ASSERT_TRUE(WaitUntil([&] {
    waiting = Get("/api/v1/assignments?execution=" + id)["assignments"];
    return waiting.size() == 1;
  }));
  EXPECT_EQ(waiting[0]["status"], "waiting");
  EXPECT_EQ(waiting[0]["waitingReason"],
            "step 'download': no ONLINE worker handles model.download");
  EXPECT_EQ(Get("/api/v1/executions/" + id)["waiting"],
            "step 'download': no ONLINE worker handles model.download");
  testing::ProcessResult status =
      testing::RunProcess({testing::BatonBin(), "status", id, "--server", server_->url(), "--token",
                           server_->admin_token()});
  EXPECT_NE(status.out.find("waiting: step 'download': no ONLINE worker handles model.download"),
            std::string::npos)
      << status.out << status.err;
  // Issue 16: the step itself showed `dispatched`; it is queued, and says for what.
  bool step_line = false;
  std::istringstream lines(status.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("  download ") != 0) continue;
    step_line = true;
    EXPECT_NE(line.find(" queued "), std::string::npos) << line;
    EXPECT_NE(line.find("no ONLINE worker handles model.download"), std::string::npos) << line;
  }
  EXPECT_TRUE(step_line) << status.out;
  Json steps = Get("/api/v1/executions/" + id)["steps"];
  ASSERT_EQ(steps.size(), 1u) << steps.dump();
  EXPECT_EQ(steps[0]["waiting"], "no ONLINE worker handles model.download") << steps.dump();
  // A worker for another command does not take it; one for this command does.
  PollWorker other = Worker("cpu-1");
  ASSERT_TRUE(other.Register("data.clean").ok());
  PollWorker w = Worker("gpu-1");
  ASSERT_TRUE(w.Register().ok());
  Json cmd = w.NextCommand();
  ASSERT_TRUE(w.Ack(cmd["assignmentId"]).ok());
  ASSERT_TRUE(w.Succeed(cmd["assignmentId"], {{"path", "/p"}}).ok());
  WaitForStatus(id, "completed");

  // The two, and the server's own local worker (shell and http steps), by id.
  Json workers = Get("/api/v1/workers")["workers"];
  ASSERT_EQ(workers.size(), 3u) << workers.dump();
  EXPECT_EQ(workers[1]["workerId"], "gpu-1");
  EXPECT_EQ(workers[1]["status"], "ONLINE");
  EXPECT_EQ(workers[1]["commands"], Json({"model.download"}));
  EXPECT_EQ(workers[1]["local"], false);
  const Json local = workers[2];
  EXPECT_EQ(local["workerId"], "local");
  EXPECT_EQ(local["local"], true);
  EXPECT_EQ(local["namespace"], "*");
  EXPECT_EQ(local["commands"], Json({"http", "shell"}));
  Json health = Get("/api/v1/coordinator/health");
  EXPECT_EQ(health["totalWorkers"], 3);
  EXPECT_EQ(health["onlineWorkers"], 3);
  EXPECT_EQ(health["totalCapacity"], 2 + local["capacity"].get<int>());
  EXPECT_EQ(health["usedCapacity"], 0);
}

TEST_F(ServerWorkers, ShellStepsRunOnTheLocalWorkerAsItsAssignments) {
  Start({"--parallel", "1"});
  // Two shell steps that run until the test lets them finish.
  const std::string gate = dir_ + "/gate";
  const std::string wf = R"(
name: local-steps
steps:
  - id: first
    type: shell
    run: ["sh", "-c", "while [ ! -e \"$GATE\" ]; do sleep 0.02; done; echo one"]
    env: {GATE: ")" + gate +
                         R"("}
  - id: second
    type: shell
    run: ["sh", "-c", "while [ ! -e \"$GATE\" ]; do sleep 0.02; done; echo two"]
    env: {GATE: ")" + gate +
                         R"("}
)";
  auto put = Admin().Send("POST", "/api/v1/workflows", wf, "application/yaml");
  ASSERT_TRUE(put.ok() && put->status / 100 == 2) << (put.ok() ? put->body : "");
  auto submitted = Admin().Call("POST", "/api/v1/executions", {{"workflow", "local-steps"}});
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  const std::string id = (*submitted)["id"];

  // One at a time (--parallel 1), as an assignment of the worker "local".
  Json active;
  ASSERT_TRUE(WaitUntil([&] {
    active = Get("/api/v1/assignments?execution=" + id)["assignments"];
    return active.size() == 1 && active[0]["status"] == "running";
  })) << active.dump();
  EXPECT_EQ(active[0]["workerId"], "local");
  EXPECT_EQ(active[0]["command"], "shell");
  const std::string step = active[0]["stepId"];
  EXPECT_EQ(active[0]["assignmentId"], id + "/" + step + "/1");
  Json local = Get("/api/v1/workers/local");
  EXPECT_EQ(local["local"], true);
  EXPECT_EQ(local["status"], "ONLINE");
  EXPECT_EQ(local["capacity"], 1);
  EXPECT_EQ(local["currentLoad"], 1);
  EXPECT_EQ(local["assignments"], Json({id + "/" + step + "/1"}));
  // One by id too, though the local worker's assignments are not stored (it was 404).
  Json one = Get("/api/v1/assignments/" + id + "/" + step + "/1");
  EXPECT_EQ(one["workerId"], "local") << one.dump();
  EXPECT_EQ(one["status"], "running") << one.dump();

  // Not a worker one can drain, or pose as.
  auto drain = Admin().Send("DELETE", "/api/v1/workers/local", "", "application/json");
  ASSERT_TRUE(drain.ok());
  EXPECT_EQ(drain->status, 409) << drain->body;
  PollWorker impostor = Worker("local");
  EXPECT_FALSE(impostor.Register("shell").ok());

  std::FILE* f = std::fopen(gate.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  WaitForStatus(id, "completed");
  EXPECT_TRUE(Get("/api/v1/assignments?execution=" + id)["assignments"].empty());
  EXPECT_EQ(Get("/api/v1/workers/local")["currentLoad"], 0);
}

TEST_F(ServerWorkers, ADrainedWorkerFinishesItsWorkAndGetsNoMore) {
  Start();
  PollWorker a = Worker("a");
  ASSERT_TRUE(a.Register("model.download", 2).ok());
  std::string first = Submit("one");
  Json cmd = a.NextCommand();
  ASSERT_TRUE(a.Ack(cmd["assignmentId"]).ok());
  auto drained = Admin().Call("DELETE", "/api/v1/workers/a");
  ASSERT_TRUE(drained.ok()) << drained.status().ToString();
  EXPECT_EQ((*drained)["status"], "DRAINING");
  std::string second = Submit("two");
  // The running one finishes normally; the new one waits for another worker.
  ASSERT_TRUE(a.Succeed(cmd["assignmentId"], {{"path", "/one"}}).ok());
  WaitForStatus(first, "completed");
  Json waiting;
  ASSERT_TRUE(WaitUntil([&] {
    waiting = Get("/api/v1/assignments?execution=" + second)["assignments"];
    return waiting.size() == 1 && waiting[0]["status"] == "waiting";
  })) << waiting.dump();
  PollWorker b = Worker("b");
  ASSERT_TRUE(b.Register().ok());
  Json moved = b.NextCommand();
  EXPECT_EQ(moved["execution"]["executionId"], second);
  EXPECT_EQ(Get("/api/v1/workers/a")["status"], "DRAINING");
  auto missing = Admin().Call("GET", "/api/v1/workers/nobody");
  EXPECT_EQ(missing.status().code(), "NOT_FOUND");
}

TEST_F(ServerWorkers, ASilentWorkersWorkMovesWithItsCheckpoint) {
  Start({"--heartbeat-interval", "200ms", "--heartbeat-timeout", "1s"});
  PollWorker a = Worker("a");
  ASSERT_TRUE(a.Register().ok());
  std::string id = Submit();
  Json cmd = a.NextCommand();
  const std::string first = cmd["assignmentId"];
  ASSERT_TRUE(a.Ack(first).ok());
  ASSERT_TRUE(a.Progress(first, 60, {{"bytes", 600}}).ok());
  // b registers and keeps polling; a goes silent.
  PollWorker b = Worker("b");
  ASSERT_TRUE(b.Register().ok());
  Json moved = b.NextCommand();
  EXPECT_EQ(moved["assignmentId"], first + ".r1");
  EXPECT_EQ(moved["checkpoint"]["bytes"], 600);
  EXPECT_EQ(Get("/api/v1/workers/a")["status"], "UNHEALTHY");
  // a wakes up: its late result is refused; b's counts, once.
  auto late = a.Succeed(first, {{"path", "/from-a"}});
  EXPECT_EQ(late.status().code(), "STALE_ASSIGNMENT") << late.status().ToString();
  ASSERT_TRUE(b.Ack(moved["assignmentId"]).ok());
  ASSERT_TRUE(b.Succeed(moved["assignmentId"], {{"path", "/from-b"}}).ok());
  Json e = WaitForStatus(id, "completed");
  EXPECT_EQ(e["output"]["path"], "/from-b");
  Json history = Get("/api/v1/reassignments?limit=5")["reassignments"];
  ASSERT_EQ(history.size(), 1u) << history.dump();
  EXPECT_EQ(history[0]["fromWorkerId"], "a");
  EXPECT_EQ(history[0]["toWorkerId"], "b");
  EXPECT_EQ(history[0]["checkpoint"]["bytes"], 600);
  EXPECT_NE(history[0]["reason"].get<std::string>().find("no heartbeat"), std::string::npos);
  Json events = Get("/api/v1/executions/" + id + "/events")["events"];
  bool stale_logged = false;
  Json reassigned;
  for (const Json& ev : events) {
    stale_logged |= ev["type"] == "step.stale_result";
    if (ev["type"] == "step.reassigned") reassigned = ev;
  }
  EXPECT_TRUE(stale_logged) << events.dump();
  // The move is in the execution's own log too (DESIGN.md §4), not only in reassignments.
  ASSERT_FALSE(reassigned.is_null()) << events.dump();
  EXPECT_EQ(reassigned["step_id"], "download");
  EXPECT_EQ(reassigned["data"]["from_worker"], "a");
  EXPECT_EQ(reassigned["data"]["to_worker"], "b");
  // Regression (issue 11, defect 9): every stale message appended an event, so a
  // worker stuck resending grew the log without bound. A step logs its first three.
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(a.Succeed(first, {{"path", "/again"}}).status().code(), "STALE_ASSIGNMENT");
  }
  size_t stale_events = 0;
  testing::WaitUntil([&] {
    stale_events = 0;
    const Json all = Get("/api/v1/executions/" + id + "/events");
    for (const Json& ev : all["events"]) stale_events += ev["type"] == "step.stale_result";
    return stale_events >= 3;
  });
  EXPECT_EQ(stale_events, 3u);
  std::string metrics;
  EXPECT_TRUE(testing::WaitUntil([&] {  // the metrics are a periodic snapshot
    metrics = server_->Admin().Send("GET", "/metrics")->body;
    return metrics.find("baton_stale_messages_total 21\n") != std::string::npos;
  })) << metrics.substr(metrics.find("baton_stale_messages_total"), 60);
}

// Regression (CI of 2026-11-26, seen once under TSan): recovery re-attaches a running
// step to its worker in the effects of the recovery commit, and the server used to
// listen before those ran. A worker that came back at once and reported its result was
// told STALE_ASSIGNMENT, and the step ran again. Every commit of the restarted server is
// held back to make that window wide: the server must not answer until the step is
// re-attached.
TEST_F(ServerWorkers, AResultAfterAServerSigkillIsAcceptedOnce) {
  Start();
  PollWorker w = Worker("gpu-1");
  ASSERT_TRUE(w.Register().ok());
  std::string id = Submit();
  Json cmd = w.NextCommand();
  const std::string assignment = cmd["assignmentId"];
  ASSERT_TRUE(w.Ack(assignment).ok());
  ASSERT_TRUE(w.Progress(assignment, 30, {{"part", 3}}).ok());
  server_->Kill9();
  server_->SetEnv({"BATON_STALL_AT=store.before_commit:400"});
  server_->Restart();
  ASSERT_TRUE(server_->ok()) << server_->log();
  // The worker comes back and reports what it was running: accepted, exactly once.
  w.api = server_->As(worker_token_);
  ASSERT_TRUE(w.Register().ok());
  auto done = w.Succeed(assignment, {{"path", "/after-restart"}});
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  Json e = WaitForStatus(id, "completed");
  EXPECT_EQ(e["output"]["path"], "/after-restart");
  EXPECT_EQ(w.Succeed(assignment, {{"path", "/twice"}}).status().code(), "STALE_ASSIGNMENT");
  Json steps = e["steps"];
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0]["attempts"], 1) << steps.dump();  // re-attached, not restarted
}

// Regression (issue 11, defect 5): a worker killed while it held work and started again
// under the same id (the default id is the host name). Back within the heartbeat
// timeout, the dead process's assignments stayed booked on the new one and filled its
// capacity; back later, the id was on refused_by and a lone worker waited forever. A
// new incarnation gets the work again at once, with its checkpoint.
TEST_F(ServerWorkers, AWorkerRestartedUnderTheSameIdGetsItsWorkBackAtOnce) {
  Start({"--heartbeat-interval", "200ms", "--heartbeat-timeout", "1s"});
  PollWorker first = Worker("host-1");
  first.session = "process-1";
  ASSERT_TRUE(first.Register().ok());
  std::string id = Submit();
  Json cmd = first.NextCommand();
  const std::string held = cmd["assignmentId"];
  ASSERT_TRUE(first.Ack(held).ok());
  ASSERT_TRUE(first.Progress(held, 40, {{"bytes", 400}}).ok());
  // kill -9, then the same host starts a new process at once (well within 1 s).
  PollWorker second = Worker("host-1");
  second.session = "process-2";
  ASSERT_TRUE(second.Register().ok());
  Json again = second.NextCommand();
  EXPECT_EQ(again["assignmentId"], held + ".r1");
  EXPECT_EQ(again["checkpoint"]["bytes"], 400);
  ASSERT_TRUE(second.Ack(again["assignmentId"]).ok());
  // The old process's id is stale now.
  EXPECT_EQ(first.Succeed(held, {{"path", "/old"}}).status().code(), "STALE_ASSIGNMENT");
  ASSERT_TRUE(second.Succeed(again["assignmentId"], {{"path", "/new"}}).ok());
  Json e = WaitForStatus(id, "completed");
  EXPECT_EQ(e["output"]["path"], "/new");

  // Back after the timeout: the work moved (refused_by the id) and must still come back
  // to the only worker there is.
  std::string later = Submit();
  Json c2 = second.NextCommand();
  ASSERT_TRUE(second.Ack(c2["assignmentId"]).ok());
  // Silent past its 1 s heartbeat timeout: wait for the server to say so, not a fixed time.
  EXPECT_TRUE(WaitUntil([&] { return Get("/api/v1/workers/host-1")["status"] == "UNHEALTHY"; }));
  PollWorker third = Worker("host-1");
  third.session = "process-3";
  ASSERT_TRUE(third.Register().ok());
  Json c3 = third.NextCommand();
  ASSERT_TRUE(c3.contains("assignmentId")) << c3.dump();
  ASSERT_TRUE(third.Ack(c3["assignmentId"]).ok());
  ASSERT_TRUE(third.Succeed(c3["assignmentId"], {{"path", "/third"}}).ok());
  EXPECT_EQ(WaitForStatus(later, "completed")["output"]["path"], "/third");
}

// Regression: sessions were not stored, so after a server restart the first process to
// register under an id was taken for the one that held its work: with the worker and
// the server both restarted (a host reboot), the work stayed booked on a process that
// never had it until the heartbeat timeout, here 60 s.
TEST_F(ServerWorkers, AfterAServerRestartANewWorkerProcessStillGetsTheWorkBack) {
  Start({"--heartbeat-interval", "200ms", "--heartbeat-timeout", "60s"});
  PollWorker first = Worker("host-1");
  first.session = "process-1";
  ASSERT_TRUE(first.Register().ok());
  std::string id = Submit();
  Json cmd = first.NextCommand();
  const std::string held = cmd["assignmentId"];
  ASSERT_TRUE(first.Ack(held).ok());
  ASSERT_TRUE(first.Progress(held, 40, {{"bytes", 400}}).ok());
  // Progress is group-committed after the answer: wait until the checkpoint is stored.
  EXPECT_TRUE(WaitUntil([&] {
    Json stored = Get("/api/v1/assignments?status=all&execution=" + id)["assignments"];
    // (null until the progress is stored: value() would throw on it)
    return stored.size() == 1 && stored[0]["checkpoint"].is_object() &&
           stored[0]["checkpoint"].value("bytes", 0) == 400;
  }));
  // The host goes down: the server and the worker die together; both come back.
  server_->Kill9();
  server_->Restart();
  ASSERT_TRUE(server_->ok()) << server_->log();
  PollWorker second = Worker("host-1");
  second.session = "process-2";
  ASSERT_TRUE(second.Register().ok());
  Json again = second.NextCommand();
  ASSERT_EQ(again["assignmentId"], held + ".r1") << again.dump();
  EXPECT_EQ(again["checkpoint"]["bytes"], 400);
  ASSERT_TRUE(second.Ack(again["assignmentId"]).ok());
  ASSERT_TRUE(second.Succeed(again["assignmentId"], {{"path", "/after-reboot"}}).ok());
  EXPECT_EQ(WaitForStatus(id, "completed")["output"]["path"], "/after-reboot");
}

}  // namespace
}  // namespace baton
