// What `baton status` and `baton events` print for a person (issue 16: the output and
// the error messages were missing).
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

namespace baton {
namespace {

using testing::MakeTempDir;
using testing::ProcessResult;
using testing::ServerProcess;
using testing::WaitForExecutionStatus;

constexpr const char* kGreet = R"(
name: greet
steps:
  - {id: a, type: noop, with: {greeting: hello}}
output: {said: "{{ steps.a.output.greeting }}"}
)";
constexpr const char* kBroken = R"(
name: broken
steps:
  - {id: load, type: shell, run: "echo no warehouse >&2; exit 3"}
)";

TEST(ClientCliOutput, StatusShowsTheOutputAndEventsShowErrors) {
  const std::string dir = MakeTempDir();
  ServerProcess server(dir);
  ASSERT_TRUE(server.ok()) << server.log();
  for (const char* yaml : {kGreet, kBroken}) {
    auto r = server.Admin().Send("POST", "/api/v1/workflows", yaml, "application/yaml");
    ASSERT_TRUE(r.ok() && r->status == 201);
  }
  auto start = [&](const char* workflow) {
    auto r = server.Admin().Call("POST", "/api/v1/executions", {{"workflow", workflow}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->value("id", "") : std::string();
  };
  const std::string ok = start("greet");
  WaitForExecutionStatus(server.Admin(), ok, "completed");
  ProcessResult status = server.Cli({"status", ok});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find(R"(output: {"said":"hello"})"), std::string::npos) << status.out;

  const std::string bad = start("broken");
  WaitForExecutionStatus(server.Admin(), bad, "failed");
  status = server.Cli({"status", bad});
  EXPECT_NE(status.out.find("load"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("EXIT_NONZERO: "), std::string::npos) << status.out;
  ProcessResult events = server.Cli({"events", bad});
  EXPECT_EQ(events.exit_code, 0) << events.err;
  // The failed step's line names its attempt and its error.
  bool found = false;
  std::istringstream lines(events.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("step.failed") != std::string::npos) {
      found = line.find("load attempt=1 EXIT_NONZERO: ") != std::string::npos;
      EXPECT_TRUE(found) << line;
    }
  }
  EXPECT_TRUE(found) << events.out;
  std::filesystem::remove_all(dir);
}

// Issue 16: `baton resume ID` read neither the credentials file nor the server of it, so a
// user whose other client commands worked got "no execution" from a local database.
TEST(ClientCliOutput, ResumeFindsTheServerOfTheCredentialsFile) {
  const std::string dir = MakeTempDir();
  ServerProcess server(dir);
  ASSERT_TRUE(server.ok()) << server.log();
  auto created = server.Admin().Send("POST", "/api/v1/workflows",
                                     "name: waits\n"
                                     "steps:\n"
                                     "  - {id: a, type: shell, run: 'sleep 0.3'}\n"
                                     "  - {id: b, type: noop, depends_on: [a]}\n",
                                     "application/yaml");
  ASSERT_TRUE(created.ok() && created->status == 201);
  auto started = server.Admin().Call("POST", "/api/v1/executions", {{"workflow", "waits"}});
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  const std::string id = started->value("id", "");
  ASSERT_TRUE(
      server.Admin().Call("POST", "/api/v1/executions/" + id + "/pause", Json::object()).ok());
  WaitForExecutionStatus(server.Admin(), id, "paused");
  // Only the credentials file knows the server; the default local database is absent.
  const std::string local_db = dir + "/local/baton.db";
  ProcessResult r = testing::RunProcess(
      {testing::BatonBin(), "resume", id}, "",
      {"BATON_SERVER=", "BATON_TOKEN=", "BATON_CREDENTIALS=" + dir + "/credentials.json",
       "BATON_DB=" + local_db});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // The server's answer: the execution running again, or already done (its last step is
  // a noop, and a slow process start lets step `a` finish during the pause).
  EXPECT_TRUE(r.out == id + " running\n" || r.out == id + " completed\n") << r.out << r.err;
  Json done = WaitForExecutionStatus(server.Admin(), id, "completed");
  EXPECT_EQ(done.value("status", ""), "completed") << done.dump();
  EXPECT_FALSE(std::filesystem::exists(local_db)) << "asking must not create a database";
  std::filesystem::remove_all(dir);
}

// Issue 16: `baton status --watch` attached mid-run showed "0% layer 0/0 0/0 steps" until
// a step finished, never showed a step's `name`, and ended without the final status. Run
// on a terminal (`script` gives it one), as a person runs it. `fit` runs long enough (3 s)
// for a slow (sanitized) CLI to attach while it runs.
TEST(ClientCliOutput, WatchAttachedMidRunShowsTheProgressSoFarAndTheOutcome) {
  const std::string dir = MakeTempDir();
  ServerProcess server(dir);
  ASSERT_TRUE(server.ok()) << server.log();
  auto created = server.Admin().Send(
      "POST", "/api/v1/workflows",
      "name: train\n"
      "steps:\n"
      "  - {id: prepare, type: noop}\n"
      "  - {id: fit, name: Fit the model on every shard, type: shell, run: 'sleep 3',\n"
      "     depends_on: [prepare]}\n"
      "  - {id: publish, type: noop, depends_on: [fit]}\n"
      "output: {done: yes}\n",
      "application/yaml");
  ASSERT_TRUE(created.ok() && created->status == 201) << (created.ok() ? created->body : "");
  auto started = server.Admin().Call("POST", "/api/v1/executions", {{"workflow", "train"}});
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  const std::string id = started->value("id", "");
  ASSERT_TRUE(testing::WaitUntil([&] {
    auto e = server.Admin().Call("GET", "/api/v1/executions/" + id);
    if (!e.ok()) return false;
    for (const Json& step : (*e)["steps"]) {
      if (step["id"] == "fit" && step["status"] == "running") return true;
    }
    return false;
  }));
  const std::string cmd = testing::BatonBin() + " status " + id + " --watch --server " +
                          server.url() + " --token " + server.admin_token();
  ProcessResult w = testing::RunProcess({"script", "-qefc", cmd, "/dev/null"}, "", {"TERM=xterm"});
  EXPECT_EQ(w.exit_code, 0) << w.out << w.err;
  // Where it stood when attached: one of three steps done, in the second of three layers.
  EXPECT_NE(w.out.find("layer 2/3  1/3 steps"), std::string::npos) << w.out;
  EXPECT_EQ(w.out.find("layer 0/0"), std::string::npos) << w.out;
  EXPECT_NE(w.out.find("Fit the model"), std::string::npos) << w.out;
  EXPECT_NE(w.out.find(id + " completed"), std::string::npos) << w.out;
  EXPECT_NE(w.out.find(R"(output: {"done":"yes"})"), std::string::npos) << w.out;
  // `baton status` names it too, and the detail carries it.
  ProcessResult status = server.Cli({"status", id});
  EXPECT_NE(status.out.find("fit (Fit the model on every shard)"), std::string::npos) << status.out;
  // A label wider than the column widens it for every step: the statuses line up.
  auto status_column = [&](const std::string& step) {
    const size_t line = status.out.find("\n  " + step);
    const size_t at = status.out.find("completed", line);
    return line == std::string::npos || at == std::string::npos ? std::string::npos : at - line;
  };
  EXPECT_NE(status_column("prepare"), std::string::npos) << status.out;
  EXPECT_EQ(status_column("prepare"), status_column("fit")) << status.out;
  EXPECT_EQ(status_column("prepare"), status_column("publish")) << status.out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace baton
