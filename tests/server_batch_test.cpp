// POST /api/v1/executions/batch and `baton submit --batch`, against the real server.
#include "support/process_util.h"
#include "support/server_process.h"
#include "support/server_test.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

namespace baton {
namespace {

using client::ApiClient;
using testing::MakeTempDir;
using testing::ServerProcess;

constexpr const char* kGreet = R"(
name: greet
inputs: {who: {type: string}}
steps:
  - {id: a, type: noop, with: {greeting: "hello {{ inputs.who }}"}}
output: {greeting: "{{ steps.a.output.greeting }}"}
)";

class ServerBatch : public testing::ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    CreateWorkflow(kGreet);
  }
  size_t Executions(const ApiClient& as) {
    auto list = as.Call("GET", "/api/v1/executions?limit=1000");
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    return list.ok() ? (*list)["executions"].size() : 0;
  }
};

TEST_F(ServerBatch, StartsEveryItemInOrderWithItsOwnIdempotencyKey) {
  ApiClient admin = server_->Admin();
  Json items = Json::array();
  for (int i = 0; i < 50; ++i) {
    items.push_back({{"workflow", "greet"}, {"input", {{"who", "n" + std::to_string(i)}}}});
  }
  items[7]["idempotency_key"] = "order-7";
  auto r = admin.Send("POST", "/api/v1/executions/batch", Json{{"executions", items}}.dump());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status, 201) << r->body;
  Json answer = Json::parse(r->body)["executions"];
  ASSERT_EQ(answer.size(), 50u);
  for (int i : {0, 7, 49}) {
    ASSERT_TRUE(answer[i]["created"].get<bool>()) << answer[i];
    Json e = testing::WaitForExecutionStatus(admin, answer[i]["id"], "completed");
    EXPECT_EQ(e["output"]["greeting"], "hello n" + std::to_string(i));
  }
  // The key names the first execution when the batch is sent again.
  auto again =
      admin.Send("POST", "/api/v1/executions/batch", Json{{"executions", {items[7]}}}.dump());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, 200) << again->body;
  EXPECT_EQ(Json::parse(again->body)["executions"][0]["id"], answer[7]["id"]);
  EXPECT_EQ(Executions(admin), 50u);
}

TEST_F(ServerBatch, OneBadItemRefusesTheWholeBatchNamingIt) {
  ApiClient admin = server_->Admin();
  Json items = {{{"workflow", "greet"}, {"input", {{"who", "a"}}}},
                {{"workflow", "greet"}, {"input", {{"who", 5}}}},
                {{"workflow", "greet"}, {"input", {{"who", "c"}}}}};
  auto r = admin.Send("POST", "/api/v1/executions/batch", Json{{"executions", items}}.dump());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400) << r->body;
  Json error = Json::parse(r->body)["error"];
  EXPECT_EQ(error["details"]["field"], "executions[1].input") << error;
  items[1] = {{"workflow", "nope"}};
  r = admin.Send("POST", "/api/v1/executions/batch", Json{{"executions", items}}.dump());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 404) << r->body;
  EXPECT_NE(r->body.find("executions[1]."), std::string::npos) << r->body;
  items[1] = {{"workflow", "greet"}, {"input", {{"who", "b"}}}, {"colour", "red"}};
  r = admin.Send("POST", "/api/v1/executions/batch", Json{{"executions", items}}.dump());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(Json::parse(r->body)["error"]["details"]["field"], "executions[1].colour");
  for (const Json& body : {Json{{"executions", Json::array()}}, Json{{"executions", "x"}},
                           Json{{"jobs", items}}, Json{{"executions", Json::array({1, 2})}}}) {
    auto bad = admin.Send("POST", "/api/v1/executions/batch", body.dump());
    ASSERT_TRUE(bad.ok());
    EXPECT_EQ(bad->status, 400) << body << " -> " << bad->body;
  }
  Json too_many = Json::array();
  for (int i = 0; i < 1001; ++i) too_many.push_back({{"workflow", "greet"}});
  auto big = admin.Send("POST", "/api/v1/executions/batch", Json{{"executions", too_many}}.dump());
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->status, 400) << big->body;
  EXPECT_EQ(Executions(admin), 0u);  // nothing started by any refused batch
  // A read-only token may not submit.
  auto reader = admin.Call("POST", "/api/v1/tokens", {{"name", "dash"}, {"scopes", {"read"}}});
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto refused =
      server_->As((*reader)["token"])
          .Send("POST", "/api/v1/executions/batch", Json{{"executions", {items[0]}}}.dump());
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->status, 403) << refused->body;
}

// The starts of one request are made ~128 steps to an engine turn: their records go to
// the store in a batch per turn, not one each for the committer to group again (which cost the
// worker path ~3 µs of engine time per job). An item repeating an earlier item's idempotency key
// names that execution, whose start is in the same batch.
TEST_F(ServerBatch, ARequestsStartsAreWrittenInAFewBatches) {
  ApiClient admin = server_->Admin();
  // From the store's figures, which the server takes every 500 ms with the engine's.
  auto figures = [&] {
    std::pair<double, double> batches_and_completed{-1, -1};
    auto r = admin.Send("GET", "/metrics", "");
    if (!r.ok() || r->status != 200) return batches_and_completed;
    std::istringstream lines(r->body);
    for (std::string line; std::getline(lines, line);) {
      const size_t space = line.rfind(' ');
      if (space == std::string::npos) continue;
      const std::string name = line.substr(0, space);
      if (name == "baton_store_commit_batches_total") {
        batches_and_completed.first = std::stod(line.substr(space + 1));
      } else if (name == "baton_executions_finished_total{status=\"completed\"}") {
        batches_and_completed.second = std::stod(line.substr(space + 1));
      }
    }
    return batches_and_completed;
  };
  // The batch count once `completed` executions have finished and two snapshots in a
  // row agree on it (the completions are counted live, the batches in the snapshot).
  auto settled = [&](double completed) {
    double last = -1;
    for (int i = 0; i < 100; ++i) {
      auto f = figures();
      if (f.first >= 0 && f.second == completed && f.first == last) return last;
      last = f.second == completed ? f.first : -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(600));
    }
    ADD_FAILURE() << "the metrics never settled at " << completed << " completed executions";
    return -1.0;
  };
  Json warm = Json::array({{{"workflow", "greet"}, {"input", {{"who", "first"}}}}});
  auto first = admin.Send("POST", "/api/v1/executions/batch", Json{{"executions", warm}}.dump());
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->status, 201) << first->body;
  const double before = settled(1);

  constexpr int kItems = 400;
  Json items = Json::array();
  for (int i = 0; i < kItems; ++i) {
    items.push_back({{"workflow", "greet"}, {"input", {{"who", "n" + std::to_string(i)}}}});
  }
  items[10]["idempotency_key"] = "ten";
  items[20] = items[10];  // the same request again, in the same batch
  auto r = admin.Send("POST", "/api/v1/executions/batch", Json{{"executions", items}}.dump());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status, 201) << r->body;
  Json answer = Json::parse(r->body)["executions"];
  ASSERT_EQ(answer.size(), static_cast<size_t>(kItems));
  EXPECT_TRUE(answer[10]["created"].get<bool>());
  EXPECT_FALSE(answer[20]["created"].get<bool>());
  EXPECT_EQ(answer[20]["id"], answer[10]["id"]);
  const double after = settled(kItems);  // 400 new, one of them named twice, plus the first
  // Four batches for the request's starts (the noop steps finish in them), and a few for
  // anything else the server wrote meanwhile; one per start would be 399.
  EXPECT_LT(after - before, 20) << "batches before " << before << ", after " << after;
  EXPECT_EQ(Executions(admin), static_cast<size_t>(kItems));
}

// A request whose starts span several commits, one of them refused by the store (a full
// disk): the answer says created for exactly the executions the store holds. Each turn's
// starts wait for their own batch; waiting for the request's last one told the starts
// of a refused turn they were created when a later turn's batch was written, or the
// starts of a written turn they failed when the last was refused.
TEST(ServerBatchFault, ARefusedCommitFailsTheStartsItHeldOnly) {
  const std::string dir = MakeTempDir();
  // Commit 1 is the server's start-up, 2 the workflow, 3 the request's first turn (the
  // idle writer takes it alone while the engine makes the next), 4 what came meanwhile.
  ServerProcess server(dir, {}, {"BATON_FAULT_STORE=from=4,count=1"});
  ASSERT_TRUE(server.ok()) << server.log();
  ApiClient admin = server.Admin();
  auto created = admin.Send("POST", "/api/v1/workflows", kGreet, "application/yaml");
  ASSERT_TRUE(created.ok() && created->status == 201) << (created.ok() ? created->body : "");
  constexpr int kItems = 600;
  Json items = Json::array();
  for (int i = 0; i < kItems; ++i) {
    items.push_back({{"workflow", "greet"}, {"input", {{"who", std::to_string(i)}}}});
  }
  auto r = admin.Send("POST", "/api/v1/executions/batch", Json{{"executions", items}}.dump());
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->status == 201 || r->status == 207) << r->status << " " << r->body;
  Json answer = Json::parse(r->body)["executions"];
  ASSERT_EQ(answer.size(), static_cast<size_t>(kItems));
  std::set<std::string> answered_created;
  int answered_failed = 0;
  for (const Json& item : answer) {
    if (item.contains("id")) {
      answered_created.insert(item["id"].get<std::string>());
    } else {
      ++answered_failed;
    }
  }
  auto listed = admin.Call("GET", "/api/v1/executions?limit=1000");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  std::set<std::string> stored;
  for (const Json& e : (*listed)["executions"]) stored.insert(e["id"].get<std::string>());
  EXPECT_EQ(stored, answered_created)
      << answered_failed << " answered failed, " << answered_created.size() << " created, "
      << stored.size() << " stored";
  if (answered_failed == 0 || answered_created.empty()) {
    std::printf("note: the refused commit held %s of the request\n",
                answered_failed == 0 ? "none" : "all");
  }
  std::filesystem::remove_all(dir);
}

// `baton submit --batch`: 1,500 lines go in two requests; a bad line anywhere sends
// nothing and names the line.
TEST_F(ServerBatch, CliSubmitsAJsonLinesFileInRequestsOfAThousand) {
  std::string text;
  for (int i = 0; i < 1500; ++i) {
    text += Json{{"workflow", "greet"}, {"input", {{"who", std::to_string(i)}}}}.dump() + "\n";
    if (i == 3) text += "\n";  // blank lines are skipped
  }
  const std::string file = dir_ + "/jobs.jsonl";
  testing::WriteFile(file, text);
  testing::ProcessResult bad_line = [&] {
    testing::WriteFile(dir_ + "/bad.jsonl", text.substr(0, 200) + "{\"workflow\": \n");
    return server_->Cli({"submit", "--batch", dir_ + "/bad.jsonl"});
  }();
  EXPECT_EQ(bad_line.exit_code, 2) << bad_line.err;
  EXPECT_NE(bad_line.err.find("bad.jsonl:"), std::string::npos) << bad_line.err;
  testing::WriteFile(dir_ + "/unknown.jsonl",
                     "{\"workflow\": \"greet\", \"input\": {\"who\": \"x\"}}\n"
                     "{\"workflow\": \"greet\", \"inputs\": {}}\n");
  testing::ProcessResult unknown = server_->Cli({"submit", "--batch", dir_ + "/unknown.jsonl"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("unknown.jsonl:2: unknown field 'executions[1].inputs'"),
            std::string::npos)
      << unknown.err;
  EXPECT_EQ(Executions(server_->Admin()), 0u);

  testing::ProcessResult ok = server_->Cli({"submit", "--batch", file});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  std::vector<std::string> ids;
  std::istringstream out(ok.out);
  for (std::string line; std::getline(out, line);) {
    ASSERT_NE(line.find(" submitted"), std::string::npos) << line;
    ids.push_back(line.substr(0, line.find(' ')));
  }
  ASSERT_EQ(ids.size(), 1500u);
  Json last = testing::WaitForExecutionStatus(server_->Admin(), ids.back(), "completed");
  EXPECT_EQ(last["output"]["greeting"], "hello 1499");  // answers come in the file's order
}

}  // namespace
}  // namespace baton
