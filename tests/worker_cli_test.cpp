// `baton worker`, `baton worker drain` and `baton workers` from the outside, against
// scripted servers: a WebSocket one for the worker, the plain HTTP test server for the
// rest.
#include <baton/json.h>

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "support/http_test_server.h"
#include "support/process_util.h"
#include "support/server_process.h"
#include "support/websocket_test_server.h"

namespace baton::testing {
namespace {

constexpr std::chrono::seconds kWait{30};

// `baton worker ARGS...` with BATON_SERVER and BATON_TOKEN unset.
ProcessResult Worker(std::vector<std::string> args) {
  args.insert(args.begin(), {BatonBin(), "worker"});
  return RunProcess(args, "", {"BATON_SERVER=", "BATON_TOKEN="});
}

void ExpectUsageError(const ProcessResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
}

TEST(WorkerCli, UsageErrors) {
  const std::string server = "http://127.0.0.1:1";
  ExpectUsageError(Worker({"--token", "t", "--handler", "a=/bin/true"}),
                   "baton worker: --server URL (or $BATON_SERVER) is required");
  ExpectUsageError(Worker({"--server", server, "--handler", "a=/bin/true"}),
                   "--token (or $BATON_TOKEN) is required");
  ExpectUsageError(Worker({"--server", server, "--token", "t"}),
                   "nothing to run: give at least one --handler COMMAND=EXECUTABLE");
  for (const char* bad : {"download.sh", "=/bin/true", "model.download="}) {
    ExpectUsageError(Worker({"--server", server, "--token", "t", "--handler", bad}),
                     std::string("--handler takes COMMAND=EXECUTABLE, got '") + bad + "'");
  }
  ExpectUsageError(
      Worker({"--server", server, "--token", "t", "--handler", "a=/nonexistent/run.sh"}),
      "'/nonexistent/run.sh' is not an executable file");
  ExpectUsageError(Worker({"--server", server, "--token", "t", "--handler", "a=/bin/true",
                           "--handler", "a=/bin/false"}),
                   "two handlers for 'a'");
  ExpectUsageError(Worker({"--server", "ftp://x", "--token", "t", "--handler", "a=/bin/true"}),
                   "server URL must start with http://");
  ExpectUsageError(
      Worker({"--server", server + ",ftp://x", "--token", "t", "--handler", "a=/bin/true"}),
      "server URL must start with http://");
  ExpectUsageError(Worker({"--server", ",", "--token", "t", "--handler", "a=/bin/true"}),
                   "--server URL (or $BATON_SERVER) is required");
  ExpectUsageError(
      Worker({"--server", server, "--token", "t", "--handler", "a=/bin/true", "--id", "has space"}),
      "worker id 'has space' must be");
  EXPECT_EQ(Worker({"--server", server, "--token", "t", "--builtin", "ftp"}).exit_code, 2);
  EXPECT_EQ(Worker({"--server", server, "--token", "t", "--builtin", "shell", "--capacity", "0"})
                .exit_code,
            2);
}

TEST(WorkerCli, HelpExplainsHandlers) {
  ProcessResult r = RunProcess({BatonBin(), "worker", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* text : {"--handler", "--builtin", "--capacity", "stdin", "BATON_ASSIGNMENT_ID",
                           "\"progress\"", "exit code", "drain"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << " in:\n" << r.out;
  }
}

TEST(WorkerCli, ARefusedTokenExitsAtOnce) {
  TestServer http([](const Received&) {
    return Response(401, R"({"error": {"code": "UNAUTHORIZED", "message": "bad token"}})");
  });
  ProcessResult r =
      Worker({"--server", http.Url(""), "--token", "nope", "--handler", "a=/bin/true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("UNAUTHORIZED: the server refused the worker connection (HTTP 401): bad "
                       "token (check --token"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(http.requests().size(), 1u);  // not retried
}

// Waits (bounded) for `pid` to exit; kills it when it does not.
int WaitExit(pid_t pid) {
  int status = 0;
  if (!WaitUntil([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 30'000)) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    ADD_FAILURE() << "the worker did not exit";
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(WorkerCli, RunsACommandThenDrainsOnSigterm) {
  std::string dir = MakeTempDir();
  WriteFile(dir + "/echo.sh",
            "#!/bin/sh\ncat >/dev/null\necho '{\"progress\": 50}'\n"
            "echo \"{\\\"step\\\": \\\"$BATON_STEP_ID\\\"}\"\n");
  chmod((dir + "/echo.sh").c_str(), 0755);
  std::promise<void> got_result;
  std::vector<Json> seen;  // what the worker sent, in order
  WsServer server([&](Ws& ws) {
    auto next = [&] { return seen.emplace_back(Json::parse(ReadText(ws))); };
    next();  // register
    ws.text(true);
    ws.write(boost::asio::buffer(std::string(
        R"({"type": "registered", "workerId": "w-e2e", "heartbeatInterval": 60000, "heartbeatTimeout": 120000})")));
    ws.write(boost::asio::buffer(std::string(R"({"type": "command", "messageId": "m1",
        "assignmentId": "asg-1", "command": "echo", "data": {"x": 1},
        "execution": {"executionId": "e1", "stepId": "s1", "stepIndex": 0, "attempt": 1}})")));
    while (next()["type"] != "command.result") {
    }
    got_result.set_value();
    while (next()["type"] != "deregister") {
    }
  });
  pid_t pid = StartProcess(
      {BatonBin(), "worker", "--server", server.url(), "--token", "bt_w", "--id", "w-e2e",
       "--handler", "echo=" + dir + "/echo.sh", "--tags", "gpu,a100", "--capacity", "2"},
      dir + "/out.log");
  ASSERT_GT(pid, 0);
  bool got = got_result.get_future().wait_for(kWait) == std::future_status::ready;
  if (!got) kill(pid, SIGKILL);  // ends the server's script too
  ASSERT_TRUE(got) << ReadFile(dir + "/out.log");
  kill(pid, SIGTERM);
  EXPECT_EQ(WaitExit(pid), 0);
  server.Join();
  std::string log = ReadFile(dir + "/out.log");
  EXPECT_EQ(server.error_, "") << log;
  EXPECT_EQ(server.authorization_, "Bearer bt_w");
  std::vector<std::string> types;
  for (const Json& m : seen) types.push_back(m["type"]);
  EXPECT_EQ(types, (std::vector<std::string>{"register", "command.ack", "command.progress",
                                             "command.result", "heartbeat", "deregister"}))
      << log;
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[0]["workerId"], "w-e2e");
  EXPECT_EQ(seen[0]["commands"], Json::array({"echo"}));  // built-ins are opt-in
  EXPECT_EQ(seen[0]["tags"], Json::array({"gpu", "a100"}));
  EXPECT_EQ(seen[0]["capacity"], 2);
  EXPECT_EQ(seen[3]["output"], Json({{"step", "s1"}}));
  EXPECT_EQ(seen[4]["status"], "DRAINING");
  for (const char* line :
       {"registered as w-e2e", "started asg-1 echo", "finished asg-1 echo: success",
        "terminated: draining", "drain finished: deregistered"}) {
    EXPECT_NE(log.find(line), std::string::npos) << line << " in:\n" << log;
  }
  std::system(("rm -rf '" + dir + "'").c_str());
}

// --server A,B: when A goes away, the worker registers with B and runs B's command.
TEST(WorkerCli, MovesToTheNextServerWhenOneGoesAway) {
  std::string dir = MakeTempDir();
  WriteFile(dir + "/echo.sh", "#!/bin/sh\ncat >/dev/null\necho '{\"ok\": true}'\n");
  chmod((dir + "/echo.sh").c_str(), 0755);
  const std::string registered =
      R"({"type": "registered", "workerId": "w-2", "heartbeatInterval": 60000,
          "heartbeatTimeout": 120000})";
  auto first = std::make_unique<WsServer>([&](Ws& ws) {
    ReadText(ws);  // register
    ws.text(true);
    ws.write(boost::asio::buffer(registered));
  });  // then the connection drops: the instance died
  std::promise<void> got_result;
  WsServer second([&](Ws& ws) {
    EXPECT_EQ(Json::parse(ReadText(ws))["type"], "register");
    ws.text(true);
    ws.write(boost::asio::buffer(registered));
    ws.write(boost::asio::buffer(std::string(R"({"type": "command", "messageId": "m1",
        "assignmentId": "asg-9", "command": "echo", "data": {},
        "execution": {"executionId": "e1", "stepId": "s1", "stepIndex": 0, "attempt": 1}})")));
    while (Json::parse(ReadText(ws))["type"] != "command.result") {
    }
    got_result.set_value();
    while (Json::parse(ReadText(ws))["type"] != "deregister") {
    }
  });
  const std::string second_url = second.url();
  pid_t pid =
      StartProcess({BatonBin(), "worker", "--server", first->url() + "," + second_url, "--token",
                    "bt_w", "--id", "w-2", "--handler", "echo=" + dir + "/echo.sh"},
                   dir + "/out.log");
  ASSERT_GT(pid, 0);
  first->Join();
  first.reset();  // nothing listens there any more
  bool got = got_result.get_future().wait_for(kWait) == std::future_status::ready;
  if (!got) kill(pid, SIGKILL);
  ASSERT_TRUE(got) << ReadFile(dir + "/out.log");
  kill(pid, SIGTERM);
  EXPECT_EQ(WaitExit(pid), 0);
  second.Join();
  const std::string log = ReadFile(dir + "/out.log");
  EXPECT_EQ(second.error_, "") << log;
  EXPECT_NE(log.find("connected to " + second_url), std::string::npos) << log;
  EXPECT_NE(log.find("finished asg-9 echo: success"), std::string::npos) << log;
  std::system(("rm -rf '" + dir + "'").c_str());
}

const char* kWorkersReply = R"({"workers": [
  {"workerId": "gpu-1", "namespace": "default", "nodeId": "gpu-node-01", "host": "10.0.0.7",
   "status": "ONLINE", "capacity": 4, "currentLoad": 2, "commands": ["model.download", "model.deploy"],
   "tags": ["gpu"], "lastHeartbeat": "2030-01-01T00:00:05.000Z",
   "registeredAt": "2030-01-01T00:00:00.000Z", "assignments": ["a1", "a2"]}]})";

TEST(WorkerCli, WorkersListsTheServersWorkers) {
  TestServer http([](const Received&) { return Response(200, kWorkersReply); });
  ProcessResult r = RunProcess({BatonBin(), "workers", "--server", http.Url(""), "--token", "t"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "ID     STATUS  LOAD  NODE         COMMANDS                     LAST HEARTBEAT\n"
            "gpu-1  ONLINE  2/4   gpu-node-01  model.download,model.deploy  "
            "2030-01-01T00:00:05.000Z\n");
  ProcessResult json =
      RunProcess({BatonBin(), "workers", "--server", http.Url(""), "--token", "t", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(Json::parse(json.out), Json::parse(kWorkersReply));
  ASSERT_EQ(http.requests().size(), 2u);
  EXPECT_EQ(http.requests()[0].method, "GET");
  EXPECT_EQ(http.requests()[0].target, "/api/v1/workers");
  EXPECT_EQ(http.requests()[0].Header("authorization"), "Bearer t");
}

TEST(WorkerCli, DrainAsksTheServer) {
  TestServer http([](const Received& req) {
    if (req.target != "/api/v1/workers/gpu-1") {
      return Response(404, R"({"error": {"code": "NOT_FOUND", "message": "no worker 'x'"}})");
    }
    Json w = Json::parse(kWorkersReply)["workers"][0];
    w["status"] = "DRAINING";
    return Response(202, w.dump());
  });
  ProcessResult r = RunProcess(
      {BatonBin(), "worker", "drain", "gpu-1", "--server", http.Url(""), "--token", "t"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "gpu-1 DRAINING (2/4 running)\n");
  EXPECT_EQ(http.requests()[0].method, "DELETE");
  ProcessResult missing =
      RunProcess({BatonBin(), "worker", "drain", "x", "--server", http.Url(""), "--token", "t"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("NOT_FOUND: no worker 'x'"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace baton::testing
