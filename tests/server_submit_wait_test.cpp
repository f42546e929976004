// POST /api/v1/executions?wait=MS: a submit whose answer waits for the execution's end,
// driven over HTTP against the real `baton server` process.
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>
#include <vector>

namespace baton {
namespace {

using client::ApiClient;
using testing::MakeTempDir;
using testing::ServerProcess;

// A step that takes 300 ms, then one whose output is the execution's.
constexpr const char* kPause = R"(
name: pause
inputs: {who: {type: string, default: world}}
steps:
  - {id: nap, type: wait, duration: 300ms}
  - {id: greet, type: noop, depends_on: [nap], with: {greeting: "hello {{ inputs.who }}"}}
output: {said: "{{ steps.greet.output.greeting }}"}
)";

constexpr const char* kLong = R"(
name: long
steps:
  - {id: nap, type: wait, duration: 2s}
)";

constexpr const char* kNoop = R"(
name: quick
steps:
  - {id: only, type: noop, with: {n: 1}}
output: {n: "{{ steps.only.output.n }}"}
)";

constexpr const char* kFails = R"(
name: fails
steps:
  - {id: boom, type: shell, run: "exit 3"}
)";

class SubmitWait : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    server_ = std::make_unique<ServerProcess>(dir_);
    ASSERT_TRUE(server_->ok()) << server_->log();
    for (const char* yaml : {kPause, kLong, kNoop, kFails}) {
      auto r = server_->Admin().Send("POST", "/api/v1/workflows", yaml, "application/yaml");
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_EQ(r->status, 201) << r->body;
    }
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  // The answer of a submit of `body` with `query` ("?wait=5000").
  client::HttpReply Post(const Json& body, const std::string& query) {
    auto r = server_->Admin().Send("POST", "/api/v1/executions" + query, body.dump(),
                                   "application/json");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : client::HttpReply{};
  }
  Json Stored(const std::string& id) {
    auto e = server_->Admin().Call("GET", "/api/v1/executions/" + id);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? *e : Json();
  }

  std::string dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(SubmitWait, TheAnswerComesWithTheEndAndItsOutput) {
  auto r = Post({{"workflow", "pause"}, {"input", {{"who", "baton"}}}}, "?wait=30000");
  ASSERT_EQ(r.status, 201) << r.body;
  const Json e = Json::parse(r.body);
  EXPECT_EQ(e["status"], "completed");
  EXPECT_EQ(e["output"], (Json{{"said", "hello baton"}}));
  EXPECT_EQ(e["created"], true);
  EXPECT_TRUE(e["completed_at"].is_string());
  // Durable before the answer: the store already says so.
  const Json stored = Stored(e["id"]);
  EXPECT_EQ(stored["status"], "completed");
  EXPECT_EQ(stored["output"], e["output"]);
}

TEST_F(SubmitWait, AWaitThatPassesFirstAnswersWithTheStateThen) {
  auto r = Post({{"workflow", "long"}}, "?wait=100");
  ASSERT_EQ(r.status, 201) << r.body;
  const Json e = Json::parse(r.body);
  EXPECT_EQ(e["status"], "running");
  EXPECT_TRUE(e["output"].is_null());
  EXPECT_TRUE(e["completed_at"].is_null());
  // It goes on, and ends as it would have.
  EXPECT_EQ(testing::WaitForExecutionStatus(server_->Admin(), e["id"], "completed")["id"], e["id"]);
}

TEST_F(SubmitWait, WithoutAWaitTheAnswerIsTheStartAsBefore) {
  auto r = Post({{"workflow", "pause"}}, "");
  ASSERT_EQ(r.status, 201) << r.body;
  const Json e = Json::parse(r.body);
  EXPECT_EQ(e["status"], "running");
  EXPECT_FALSE(e.contains("output"));
  r = Post({{"workflow", "pause"}}, "?wait=0");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Json::parse(r.body)["status"], "running");
}

TEST_F(SubmitWait, AWorkflowThatEndsInItsFirstTurnAnswersAtOnce) {
  auto r = Post({{"workflow", "quick"}}, "?wait=30000");
  ASSERT_EQ(r.status, 201) << r.body;
  const Json e = Json::parse(r.body);
  EXPECT_EQ(e["status"], "completed");
  EXPECT_EQ(e["output"], (Json{{"n", 1}}));
}

TEST_F(SubmitWait, AFailureIsAnAnswerToo) {
  auto r = Post({{"workflow", "fails"}}, "?wait=30000");
  ASSERT_EQ(r.status, 201) << r.body;
  const Json e = Json::parse(r.body);
  EXPECT_EQ(e["status"], "failed");
  EXPECT_EQ(e["error"]["code"], "EXIT_NONZERO") << e.dump();
  EXPECT_TRUE(e["output"].is_null());
}

TEST_F(SubmitWait, ARepeatedIdempotencyKeyWaitsForTheFirstExecution) {
  const Json body = {{"workflow", "pause"}, {"idempotency_key", "order-7"}};
  auto first = Post(body, "");
  ASSERT_EQ(first.status, 201) << first.body;
  const std::string id = Json::parse(first.body)["id"];
  auto again = Post(body, "?wait=30000");
  ASSERT_EQ(again.status, 200) << again.body;
  const Json e = Json::parse(again.body);
  EXPECT_EQ(e["id"], id);
  EXPECT_EQ(e["created"], false);
  EXPECT_EQ(e["status"], "completed");
  EXPECT_EQ(e["output"], (Json{{"said", "hello world"}}));
  // Once it has ended (no longer in the engine's memory) a repeat answers at once.
  auto late = Post(body, "?wait=30000");
  ASSERT_EQ(late.status, 200) << late.body;
  EXPECT_EQ(Json::parse(late.body)["status"], "completed");
  EXPECT_EQ(Json::parse(late.body)["output"], e["output"]);
}

TEST_F(SubmitWait, ManyWaitersAtOnceEachGetTheirOwnEnd) {
  constexpr int kClients = 8;
  std::vector<Json> answers(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      auto r = server_->Admin().Send(
          "POST", "/api/v1/executions?wait=30000",
          Json{{"workflow", "pause"}, {"input", {{"who", "c" + std::to_string(i)}}}}.dump(),
          "application/json");
      if (r.ok() && r->status == 201) answers[i] = Json::parse(r->body);
    });
  }
  for (auto& t : clients) t.join();
  for (int i = 0; i < kClients; ++i) {
    EXPECT_EQ(answers[i]["status"], "completed") << i << ": " << answers[i].dump();
    EXPECT_EQ(answers[i]["output"]["said"], "hello c" + std::to_string(i));
  }
}

TEST_F(SubmitWait, AServerStoppedWhileSubmitsWaitExitsCleanly) {
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([this] {
      (void)server_->Admin().Send("POST", "/api/v1/executions?wait=30000",
                                  R"({"workflow": "long"})", "application/json");
    });
  }
  ASSERT_TRUE(testing::WaitUntil([&] {
    auto list = server_->Admin().Call("GET", "/api/v1/executions");
    return list.ok() && (*list)["executions"].size() == 4;
  }));
  // SIGTERM while the four answers wait: the server lets them go and exits 0.
  EXPECT_EQ(server_->Terminate(), 0) << server_->log();
  for (auto& t : clients) t.join();
}

TEST_F(SubmitWait, ABadWaitIsRefusedAndStartsNothing) {
  for (const char* bad : {"-1", "abc", "60001", "99999999999", "", "1e3", "%20"}) {
    auto r = Post({{"workflow", "pause"}}, std::string("?wait=") + bad);
    EXPECT_EQ(r.status, 400) << bad << ": " << r.body;
    const Json e = Json::parse(r.body, nullptr, false);
    EXPECT_EQ(e["error"]["code"], "VALIDATION") << bad;
    EXPECT_EQ(e["error"]["details"]["field"], "wait") << bad;
  }
  auto list = server_->Admin().Call("GET", "/api/v1/executions");
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE((*list)["executions"].empty()) << list->dump();
}

TEST_F(SubmitWait, TheCliWaitsAndSaysHowItEndedByItsExitCode) {
  auto done = server_->Cli({"submit", "pause", "--input", "who=cli", "--wait", "30s"});
  EXPECT_EQ(done.exit_code, 0) << done.out << done.err;
  EXPECT_NE(done.out.find(" completed\n"), std::string::npos) << done.out;
  EXPECT_NE(done.out.find("output: {\"said\":\"hello cli\"}"), std::string::npos) << done.out;

  auto failed = server_->Cli({"submit", "fails", "--wait", "30s"});
  EXPECT_EQ(failed.exit_code, 1) << failed.out << failed.err;
  EXPECT_NE(failed.out.find(" failed\n"), std::string::npos) << failed.out;
  EXPECT_NE(failed.out.find("EXIT_NONZERO"), std::string::npos) << failed.out;

  auto running = server_->Cli({"submit", "long", "--wait", "100ms"});
  EXPECT_EQ(running.exit_code, 3) << running.out << running.err;
  EXPECT_NE(running.out.find("running (the wait passed first)"), std::string::npos) << running.out;

  auto json = server_->Cli({"submit", "quick", "--wait", "5s", "--json"});
  EXPECT_EQ(json.exit_code, 0) << json.out << json.err;
  EXPECT_EQ(Json::parse(json.out, nullptr, false)["output"], (Json{{"n", 1}})) << json.out;
}

TEST_F(SubmitWait, TheCliRefusesAWaitItCannotHoldAndStartsNothing) {
  for (const char* bad : {"2m", "soon", "-1s", "0s"}) {
    auto r = server_->Cli({"submit", "pause", "--wait", bad});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("--wait takes a duration from 1ms to 60s"), std::string::npos) << r.err;
  }
  auto r = server_->Cli({"submit", "--batch", "x.jsonl", "--wait", "5s"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  auto list = server_->Admin().Call("GET", "/api/v1/executions");
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE((*list)["executions"].empty()) << list->dump();
}

// A step that waits long enough for /metrics (refreshed every 500 ms) to count the
// start's commit before the end's.
constexpr const char* kNap = R"(
name: nap
steps:
  - {id: nap, type: wait, duration: 1500ms}
  - {id: after, type: noop, depends_on: [nap], with: {done: true}}
output: {done: "{{ steps.after.output.done }}"}
)";

// The commits the server's /metrics counts, once that is more than `above`.
int64_t CommitsAbove(const ServerProcess& server, int64_t above) {
  int64_t n = -1;
  testing::WaitUntil([&] {
    auto r = server.Admin().Send("GET", "/metrics");
    const std::string key = "\nbaton_store_commits_total ";
    const size_t at = r.ok() ? r->body.find(key) : std::string::npos;
    n = at == std::string::npos ? -1 : std::stoll(r->body.substr(at + key.size()));
    return n > above;
  });
  return n;
}

// A refused commit of the end is never answered as an end: whatever the answer says
// ended, the store has.
TEST(SubmitWaitStoreFault, AnEndTheStoreRefusedIsNotAnsweredAsAnEnd) {
  // The same steps on a healthy server first, to learn which commit writes the end: the
  // one after the start's (nothing else commits while the step waits).
  int64_t end_commit = 0;
  {
    const std::string dir = MakeTempDir();
    ServerProcess healthy(dir);
    ASSERT_TRUE(healthy.ok()) << healthy.log();
    auto made = healthy.Admin().Send("POST", "/api/v1/workflows", kNap, "application/yaml");
    ASSERT_TRUE(made.ok() && made->status == 201);
    auto started = healthy.Admin().Send("POST", "/api/v1/executions", R"({"workflow": "nap"})",
                                        "application/json");
    ASSERT_TRUE(started.ok() && started->status == 201);
    const int64_t start_commits = CommitsAbove(healthy, 0);
    ASSERT_EQ(Json::parse(started->body)["status"], "running") << "the end came first";
    // The store's own count (BATON_FAULT_STORE's) also has the first admin token's and
    // the workflow's, commits that are not the engine's: the check below says if this
    // goes wrong.
    end_commit = start_commits + 1;
    const int64_t catalog_commits = 2;
    testing::WaitForExecutionStatus(healthy.Admin(), Json::parse(started->body)["id"], "completed");
    EXPECT_EQ(CommitsAbove(healthy, start_commits), end_commit)
        << "another commit came between: adjust the test";
    end_commit += catalog_commits;
    std::filesystem::remove_all(dir);
  }
  const std::string dir = MakeTempDir();
  ServerProcess server(dir, {},
                       {"BATON_FAULT_STORE=from=" + std::to_string(end_commit) + ",count=1"});
  ASSERT_TRUE(server.ok()) << server.log();
  auto made = server.Admin().Send("POST", "/api/v1/workflows", kNap, "application/yaml");
  ASSERT_TRUE(made.ok() && made->status == 201);
  auto r = server.Admin().Send("POST", "/api/v1/executions?wait=5000", R"({"workflow": "nap"})",
                               "application/json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->status, 201) << r->body;
  const Json answered = Json::parse(r->body);
  // The refused commit dropped the execution from memory (abandoned, then re-adopted).
  EXPECT_TRUE(testing::WaitUntil([&] {
    auto m = server.Admin().Send("GET", "/metrics");
    return m.ok() && m->body.find("\nbaton_executions_abandoned_total 0\n") == std::string::npos &&
           m->body.find("\nbaton_executions_abandoned_total ") != std::string::npos;
  })) << "the fault missed the end's commit ("
      << end_commit << "): " << server.log();
  // Refused, the end did not happen; the server re-adopts the execution from the store
  // and it may end again, durably, within the wait. Either way the answer is the store's.
  auto stored =
      server.Admin().Call("GET", "/api/v1/executions/" + answered["id"].get<std::string>());
  ASSERT_TRUE(stored.ok());
  if (answered["status"] == "completed") {
    EXPECT_EQ((*stored)["status"], "completed") << stored->dump();
    EXPECT_EQ((*stored)["completed_at"], answered["completed_at"]) << stored->dump();
    EXPECT_EQ((*stored)["output"], answered["output"]) << stored->dump();
  } else {
    EXPECT_TRUE(answered["completed_at"].is_null()) << r->body;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace baton
