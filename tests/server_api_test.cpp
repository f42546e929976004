// The server's REST API, driven over HTTP against the real `baton server` process.
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

namespace baton {
namespace {

using client::ApiClient;
using testing::MakeTempDir;
using testing::ServerProcess;
using testing::WaitUntil;

constexpr const char* kChain = R"(
name: chain
inputs: {who: {type: string, default: world}, n: {type: integer, default: 1}}
steps:
  - {id: a, type: noop, with: {greeting: "hello {{ inputs.who }}"}}
  - {id: b, type: noop, depends_on: [a], with: {n: "{{ inputs.n }}", from_a: "{{ steps.a.output.greeting }}"}}
  - {id: c, type: noop, depends_on: [a]}
output: {result: "{{ steps.b.output.from_a }}"}
)";

constexpr const char* kSlow = R"(
name: slow
steps:
  - {id: first, type: wait, duration: 300ms}
  - {id: second, type: wait, duration: 300ms, depends_on: [first]}
  - {id: third, type: wait, duration: 300ms, depends_on: [second]}
)";

class ServerApi : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    server_ = std::make_unique<ServerProcess>(dir_);
    ASSERT_TRUE(server_->ok()) << server_->log();
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  void CreateWorkflow(const std::string& yaml, const ApiClient& as) {
    auto r = as.Send("POST", "/api/v1/workflows", yaml, "application/yaml");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_TRUE(r->status == 201 || r->status == 200) << r->body;
  }
  std::string Submit(const ApiClient& as, Json body) {
    auto r = as.Call("POST", "/api/v1/executions", body);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->value("id", "") : "";
  }
  Json WaitForStatus(const ApiClient& as, const std::string& id, const std::string& status) {
    return testing::WaitForExecutionStatus(as, id, status);
  }

  std::string dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServerApi, FullLifecycleWithOutputsAttemptsLayersAndEvents) {
  ApiClient admin = server_->Admin();
  CreateWorkflow(kChain, admin);
  std::string id =
      Submit(admin, {{"workflow", "chain"}, {"input", {{"who", "baton"}}}, {"args", {"n=7"}}});
  ASSERT_FALSE(id.empty());
  Json e = WaitForStatus(admin, id, "completed");
  EXPECT_EQ(e["output"], (Json{{"result", "hello baton"}}));
  EXPECT_EQ(e["input"]["n"], 7);  // converted to the declared type
  EXPECT_EQ(e["progress"], 100);
  ASSERT_EQ(e["steps"].size(), 3u);
  EXPECT_EQ(e["steps"][1]["output"]["n"], 7);
  EXPECT_EQ(e["steps"][0]["attempt_history"].size(), 1u);
  EXPECT_EQ(e["layers"].size(), 2u);
  EXPECT_EQ(e["layers"][1]["steps"], (Json{"b", "c"}));
  EXPECT_TRUE(e["duration_ms"].is_number());

  // Events page by sequence number and end with the execution's completion.
  auto page1 = admin.Call("GET", "/api/v1/executions/" + id + "/events?limit=2");
  ASSERT_TRUE(page1.ok());
  ASSERT_EQ((*page1)["events"].size(), 2u);
  EXPECT_EQ((*page1)["events"][0]["type"], "execution.started");
  int64_t after = (*page1)["next_after"];
  auto rest =
      admin.Call("GET", "/api/v1/executions/" + id + "/events?after=" + std::to_string(after));
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ((*rest)["events"][0]["seq"], after + 1);
  EXPECT_EQ((*rest)["events"].back()["type"], "execution.completed");

  // Listed, newest first, filterable.
  auto list = admin.Call("GET", "/api/v1/executions?workflow=chain&status=completed");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ((*list)["executions"].size(), 1u);
  EXPECT_EQ((*list)["executions"][0]["id"], id);
  EXPECT_TRUE((*admin.Call("GET", "/api/v1/executions?status=failed"))["executions"].empty());
}

TEST_F(ServerApi, WorkflowVersionsAndSnapshots) {
  ApiClient admin = server_->Admin();
  CreateWorkflow(kChain, admin);
  // A submit without a version starts the latest (the server remembers it: each change
  // of the workflow must make it read the catalog again).
  const std::string first = Submit(admin, {{"workflow", "chain"}});
  EXPECT_EQ(WaitForStatus(admin, first, "completed")["version"], 1);
  // The same definition again is not a new version.
  auto same = admin.Send("POST", "/api/v1/workflows", kChain, "application/yaml");
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->status, 200);
  std::string v2 = std::string(kChain) + "description: second\n";
  auto second = admin.Send("POST", "/api/v1/workflows", v2, "application/yaml");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->status, 201) << second->body;
  EXPECT_EQ(Json::parse(second->body)["version"], 2);
  auto versions = admin.Call("GET", "/api/v1/workflows/chain/versions");
  ASSERT_TRUE(versions.ok());
  EXPECT_EQ((*versions)["versions"].size(), 2u);
  EXPECT_EQ((*admin.Call("GET", "/api/v1/workflows/chain?version=1"))["version"], 1);
  const std::string latest = Submit(admin, {{"workflow", "chain"}});
  EXPECT_EQ(WaitForStatus(admin, latest, "completed")["version"], 2);

  std::string id = Submit(admin, {{"workflow", "chain"}, {"version", 1}});
  WaitForStatus(admin, id, "completed");
  auto del = admin.Send("DELETE", "/api/v1/workflows/chain");
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->status, 204);
  EXPECT_EQ(admin.Call("GET", "/api/v1/workflows/chain").status().code(), "NOT_FOUND");
  // The execution keeps the snapshot it ran.
  auto e = admin.Call("GET", "/api/v1/executions/" + id);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)["version"], 1);
  EXPECT_EQ(admin.Call("POST", "/api/v1/executions", {{"workflow", "chain"}}).status().code(),
            "NOT_FOUND");
  // Created again: version 1 anew, and submits find it.
  CreateWorkflow(kChain, admin);
  const std::string again = Submit(admin, {{"workflow", "chain"}});
  EXPECT_EQ(WaitForStatus(admin, again, "completed")["version"], 1);
}

TEST_F(ServerApi, RepeatedIdempotencyKeyReturnsTheFirstExecution) {
  ApiClient admin = server_->Admin();
  CreateWorkflow(kSlow, admin);
  Json body = {{"workflow", "slow"}, {"idempotency_key", "order-42"}};
  auto first = admin.Send("POST", "/api/v1/executions", body.dump());
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->status, 201);
  std::string id = Json::parse(first->body)["id"];
  // Concurrent repeats, while the first is still running, all get the same execution.
  std::vector<std::string> ids(8);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      auto r = admin.Send("POST", "/api/v1/executions", body.dump());
      if (r.ok() && r->status == 200) ids[i] = Json::parse(r->body)["id"];
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& got : ids) EXPECT_EQ(got, id);
  auto list = admin.Call("GET", "/api/v1/executions?workflow=slow");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)["executions"].size(), 1u);
  // Another key is another execution.
  EXPECT_NE(Submit(admin, {{"workflow", "slow"}, {"idempotency_key", "order-43"}}), id);
  // Regression (issue 11, defect 9): the same key with another input silently returned
  // the first execution. It is a 409 that names the execution.
  auto reused = admin.Send(
      "POST", "/api/v1/executions",
      Json{{"workflow", "slow"}, {"idempotency_key", "order-42"}, {"input", {{"x", 1}}}}.dump());
  ASSERT_TRUE(reused.ok());
  EXPECT_EQ(reused->status, 409) << reused->body;
  EXPECT_EQ(Json::parse(reused->body)["error"]["code"], "IDEMPOTENCY_MISMATCH");
  EXPECT_NE(reused->body.find(id), std::string::npos) << reused->body;
}

TEST_F(ServerApi, PauseResumeCancel) {
  ApiClient admin = server_->Admin();
  CreateWorkflow(kSlow, admin);
  std::string id = Submit(admin, {{"workflow", "slow"}});
  auto paused = admin.Call("POST", "/api/v1/executions/" + id + "/pause", Json::object());
  ASSERT_TRUE(paused.ok()) << paused.status().ToString();
  EXPECT_EQ((*paused)["status"], "paused");
  auto resumed = admin.Call("POST", "/api/v1/executions/" + id + "/resume", Json::object());
  ASSERT_TRUE(resumed.ok());
  EXPECT_EQ((*resumed)["status"], "running");
  auto cancelled =
      admin.Call("POST", "/api/v1/executions/" + id + "/cancel", {{"reason", "changed my mind"}});
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ((*cancelled)["status"], "cancelled");
  EXPECT_EQ((*cancelled)["error"]["message"], "changed my mind");
  auto again = admin.Send("POST", "/api/v1/executions/" + id + "/cancel", "{}");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, 409) << again->body;
  EXPECT_EQ(admin.Call("POST", "/api/v1/executions/nope/pause", Json::object()).status().code(),
            "NOT_FOUND");
}

TEST_F(ServerApi, RetryRunsFailedStepsAgainAndKeepsCompletedOnes) {
  ApiClient admin = server_->Admin();
  const std::string flag = dir_ + "/fixed";
  const std::string count = dir_ + "/a-runs";
  CreateWorkflow(
      "name: fix\nsteps:\n"
      "  - {id: a, type: shell, run: 'echo a >> " +
          count +
          "'}\n"
          "  - {id: b, type: shell, run: 'test -e " +
          flag +
          "', depends_on: [a]}\n"
          "  - {id: c, type: noop, depends_on: [b]}\n",
      admin);
  std::string id = Submit(admin, {{"workflow", "fix"}});
  WaitForStatus(admin, id, "failed");
  auto early = admin.Send("POST", "/api/v1/executions/" + id + "/pause", "{}");
  EXPECT_EQ(early->status, 409);
  testing::WriteFile(flag, "");
  auto retried = admin.Call("POST", "/api/v1/executions/" + id + "/retry", Json::object());
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  Json e = WaitForStatus(admin, id, "completed");
  EXPECT_EQ(testing::ReadFile(count), "a\n");  // a kept its first result
  EXPECT_EQ(e["steps"][1]["attempts"], 2);
  EXPECT_EQ(e["steps"][2]["status"], "completed");
  auto again = admin.Send("POST", "/api/v1/executions/" + id + "/retry", "{}");
  EXPECT_EQ(again->status, 409);  // completed executions are not retried

  // ...except from a step: `baton retry --from a` reruns a and everything after it.
  auto unknown = admin.Send("POST", "/api/v1/executions/" + id + "/retry", R"({"from":"z"})");
  EXPECT_EQ(unknown->status, 400);
  EXPECT_NE(unknown->body.find("has no step 'z' to run again from"), std::string::npos);
  auto typo = admin.Send("POST", "/api/v1/executions/" + id + "/retry", R"({"form":"a"})");
  EXPECT_EQ(typo->status, 400);
  testing::ProcessResult cli = server_->Cli({"retry", id, "--from", "a", "--json"});
  ASSERT_EQ(cli.exit_code, 0) << cli.out << cli.err;
  e = WaitForStatus(admin, id, "completed");
  EXPECT_EQ(testing::ReadFile(count), "a\na\n");
  EXPECT_EQ(e["steps"][1]["attempts"], 3);
}

TEST_F(ServerApi, TokensScopesAndNamespaces) {
  ApiClient admin = server_->Admin();
  CreateWorkflow(kChain, admin);
  std::string id = Submit(admin, {{"workflow", "chain"}});

  // No token, a malformed one, an unknown one: 401.
  for (const std::string& token :
       {std::string(), std::string("nope"), std::string("bt_") + std::string(40, 'a')}) {
    auto r = server_->As(token).Send("GET", "/api/v1/executions");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 401) << token;
  }
  // A read token reads but cannot write.
  auto reader = admin.Call("POST", "/api/v1/tokens", {{"name", "dash"}, {"scopes", {"read"}}});
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ApiClient read = server_->As((*reader)["token"]);
  EXPECT_TRUE(read.Call("GET", "/api/v1/executions/" + id).ok());
  auto denied = read.Send("POST", "/api/v1/executions", Json{{"workflow", "chain"}}.dump());
  ASSERT_TRUE(denied.ok());
  EXPECT_EQ(denied->status, 403);

  // Another namespace sees nothing of this one: 404 for ids, empty lists.
  auto other = admin.Call("POST", "/api/v1/tokens",
                          {{"name", "team b"}, {"scopes", {"write"}}, {"namespace", "team-b"}});
  ASSERT_TRUE(other.ok());
  ApiClient b = server_->As((*other)["token"]);
  EXPECT_EQ(b.Call("GET", "/api/v1/executions/" + id).status().code(), "NOT_FOUND");
  EXPECT_EQ(b.Call("POST", "/api/v1/executions/" + id + "/cancel", Json::object()).status().code(),
            "NOT_FOUND");
  EXPECT_TRUE((*b.Call("GET", "/api/v1/executions"))["executions"].empty());
  EXPECT_TRUE((*b.Call("GET", "/api/v1/workflows"))["workflows"].empty());
  EXPECT_EQ(b.Call("POST", "/api/v1/executions", {{"workflow", "chain"}}).status().code(),
            "NOT_FOUND");
  // Its own workflow of the same name is its own.
  CreateWorkflow(kSlow, b);
  EXPECT_TRUE(admin.Call("GET", "/api/v1/workflows/slow").status().code() == "NOT_FOUND");

  // Revoked: 401 at once.
  std::string reader_id = (*reader)["id"];
  auto revoke = admin.Send("DELETE", "/api/v1/tokens/" + reader_id);
  ASSERT_TRUE(revoke.ok());
  EXPECT_EQ(revoke->status, 204);
  auto after = read.Send("GET", "/api/v1/executions/" + id);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->status, 401);
  auto listed = admin.Call("GET", "/api/v1/tokens");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ((*listed)["tokens"].size(), 3u);
  EXPECT_EQ(listed->dump().find("bt_"), std::string::npos);  // secrets are never listed
}

TEST_F(ServerApi, BadInputGetsClearErrorsAndChangesNothing) {
  ApiClient admin = server_->Admin();
  auto send = [&](const std::string& method, const std::string& path, const std::string& body,
                  const std::string& type = "application/json") {
    auto r = admin.Send(method, path, body, type);
    EXPECT_TRUE(r.ok());
    return r.ok() ? std::make_pair(r->status, Json::parse(r->body, nullptr, false))
                  : std::make_pair(0, Json());
  };
  auto [s1, cycle] = send("POST", "/api/v1/workflows",
                          "name: bad\nsteps:\n  - {id: a, type: noop, depends_on: [b]}\n"
                          "  - {id: b, type: noop, depends_on: [a]}\n",
                          "application/yaml");
  EXPECT_EQ(s1, 400);
  EXPECT_EQ(cycle["error"]["code"], "VALIDATION");
  EXPECT_NE(cycle["error"]["message"].get<std::string>().find("cycle"), std::string::npos);
  EXPECT_FALSE(cycle["error"]["details"]["diagnostics"].empty());
  auto [s2, yaml] = send("POST", "/api/v1/workflows", "name: [unclosed", "application/yaml");
  EXPECT_EQ(s2, 400);
  EXPECT_TRUE((*admin.Call("GET", "/api/v1/workflows"))["workflows"].empty());

  CreateWorkflow(kChain, admin);
  auto [s3, json] = send("POST", "/api/v1/executions", "{\"workflow\": ");
  EXPECT_EQ(s3, 400);
  EXPECT_NE(json["error"]["message"].get<std::string>().find("not valid JSON"), std::string::npos);
  auto [s4, unknown] = send("POST", "/api/v1/executions", R"({"workflow": "chain", "inptu": {}})");
  EXPECT_EQ(s4, 400);
  EXPECT_EQ(unknown["error"]["details"]["field"], "inptu");
  auto [s5, typed] =
      send("POST", "/api/v1/executions", R"({"workflow": "chain", "input": {"n": "x"}})");
  EXPECT_EQ(s5, 400);
  EXPECT_EQ(typed["error"]["code"], "VALIDATION");
  // An input over the payload limit: 413 naming the limit.
  Json big = {{"workflow", "chain"}, {"input", {{"who", std::string(300 << 10, 'x')}}}};
  auto [s6, payload] = send("POST", "/api/v1/executions", big.dump());
  EXPECT_EQ(s6, 413);
  EXPECT_NE(payload["error"]["message"].get<std::string>().find("limit"), std::string::npos);
  // A body over the request limit: 413 before it is read.
  auto [s7, body] = send("POST", "/api/v1/workflows", std::string(5 << 20, 'x'));
  EXPECT_EQ(s7, 413);
  EXPECT_TRUE((*admin.Call("GET", "/api/v1/executions"))["executions"].empty());
  // Unknown routes and methods.
  EXPECT_EQ(send("GET", "/api/v1/nothing", "").first, 404);
  EXPECT_EQ(send("PUT", "/api/v1/executions", "{}").first, 405);
  // The server is still fine.
  EXPECT_EQ(send("GET", "/health", "").first, 200);
}

TEST_F(ServerApi, HealthMetricsAndOpenApi) {
  ApiClient admin = server_->Admin();
  CreateWorkflow(kChain, admin);
  WaitForStatus(admin, Submit(admin, {{"workflow", "chain"}}), "completed");
  auto health = server_->As("").Call("GET", "/health");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ((*health)["store"], "ok");
  // Observers hear of events just after the commit the API already reads.
  Result<client::HttpReply> metrics = Status(errc::kIo, "not yet");
  WaitUntil([&] {
    metrics = admin.Send("GET", "/metrics");
    return metrics.ok() &&
           metrics->body.find("finished_total{status=\"completed\"} 1") != std::string::npos;
  });
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ(metrics->status, 200);
  for (const char* name : {"baton_executions_finished_total{status=\"completed\"} 1",
                           "baton_steps_total", "baton_step_duration_seconds_bucket",
                           "baton_ready_queue_depth", "baton_store_commits_total"}) {
    EXPECT_NE(metrics->body.find(name), std::string::npos) << name;
  }
  // The chain's steps were written, each at least once (the store's figures are a
  // periodic snapshot).
  const std::string rows = "baton_store_rows_written_total{table=\"steps\"} ";
  auto steps_written = [&] {
    const size_t at = metrics->body.find(rows);
    return at == std::string::npos ? -1 : std::stoll(metrics->body.substr(at + rows.size()));
  };
  EXPECT_TRUE(WaitUntil([&] {
    metrics = admin.Send("GET", "/metrics");
    return metrics.ok() && steps_written() >= 2;
  })) << steps_written();
  EXPECT_EQ(server_->As("").Send("GET", "/metrics")->status, 401);
  auto api = server_->As("").Call("GET", "/api/v1/openapi.json");
  ASSERT_TRUE(api.ok());
  for (const char* path : {"/api/v1/executions", "/api/v1/executions/{id}/cancel",
                           "/api/v1/workflows/{name}/versions", "/api/v1/tokens/{id}"}) {
    EXPECT_TRUE((*api)["paths"].contains(path)) << path;
  }
}

TEST_F(ServerApi, KilledServerRecoversAndFinishesWithoutRerunningCompletedSteps) {
  ApiClient admin = server_->Admin();
  const std::string marker = dir_ + "/runs";
  const std::string yaml =
      "name: durable\nsteps:\n"
      "  - {id: one, type: shell, run: 'echo one >> " +
      marker +
      "'}\n"
      "  - {id: nap, type: shell, run: 'sleep 1', depends_on: [one]}\n"
      "  - {id: two, type: shell, run: 'echo two >> " +
      marker + "', depends_on: [nap]}\n";
  CreateWorkflow(yaml, admin);
  std::string id = Submit(admin, {{"workflow", "durable"}});
  ASSERT_TRUE(WaitUntil([&] {
    auto e = admin.Call("GET", "/api/v1/executions/" + id);
    return e.ok() && (*e)["steps"][1]["status"] == "running";
  }));
  server_->Kill9();
  server_->Restart();
  ASSERT_TRUE(server_->ok()) << server_->log();
  ApiClient again = server_->Admin();  // the token survives restarts
  Json e = WaitForStatus(again, id, "completed");
  EXPECT_EQ(testing::ReadFile(marker), "one\ntwo\n");  // `one` ran once
  EXPECT_EQ(e["steps"][0]["attempts"], 1);
  EXPECT_EQ(e["steps"][1]["attempt_history"][0]["error"]["code"], "ENGINE_RESTART");
}

}  // namespace
}  // namespace baton
