// Result caching from outside: a second execution of a cached step is served from the
// cache, listed by GET /api/v1/cache and `baton cache list`, counted in /metrics, kept
// across a kill -9, and cleared by DELETE /api/v1/cache and `baton cache clear`.
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace baton {
namespace {

using testing::MakeTempDir;
using testing::ProcessResult;
using testing::RunProcess;
using testing::ServerProcess;
using testing::WaitForExecutionStatus;
using testing::WaitUntil;

class ServerCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    server_ = std::make_unique<ServerProcess>(dir_);
    ASSERT_TRUE(server_->ok()) << server_->log();
    const std::string wf =
        "name: etl\n"
        "steps:\n"
        "  - id: extract\n"
        "    type: shell\n"
        "    run: ['sh', '-c', 'echo run >> \"$0/runs\"; echo \"{\\\"rows\\\": 42}\"', '" +
        dir_ +
        "']\n"
        "    cache: {ttl: 1h}\n";
    auto r = server_->Admin().Send("POST", "/api/v1/workflows", wf, "application/yaml");
    ASSERT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string RunEtl() {
    auto r = server_->Admin().Call("POST", "/api/v1/executions", {{"workflow", "etl"}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::string id = r.ok() ? r->value("id", "") : "";
    WaitForExecutionStatus(server_->Admin(), id, "completed");
    return id;
  }
  Json Get(const std::string& path) {
    auto r = server_->Admin().Call("GET", path);
    EXPECT_TRUE(r.ok()) << path << ": " << r.status().ToString();
    return r.ok() ? *r : Json();
  }
  int Runs() {
    std::ifstream in(dir_ + "/runs");
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
  ProcessResult Cli(std::vector<std::string> args) { return server_->Cli(std::move(args)); }

  std::string dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServerCache, ASecondExecutionIsServedListedClearedAndKeptAcrossAKill9) {
  const std::string first = RunEtl();
  const std::string second = RunEtl();
  EXPECT_EQ(Runs(), 1);
  Json detail = Get("/api/v1/executions/" + second);
  EXPECT_EQ(detail["steps"][0]["status"], "cached") << detail.dump();
  EXPECT_EQ(detail["steps"][0]["output"]["rows"], 42);
  bool event = false;
  const Json events = Get("/api/v1/executions/" + second + "/events");
  for (const Json& e : events["events"]) {
    if (e["type"] == "step.cached") event = e["data"]["execution_id"] == first;
  }
  EXPECT_TRUE(event) << "no step.cached event naming " << first << ": " << events.dump();

  Json list = Get("/api/v1/cache?workflow=etl");
  ASSERT_EQ(list["entries"].size(), 1u) << list.dump();
  EXPECT_EQ(list["total"], 1);
  const Json& entry = list["entries"][0];
  EXPECT_EQ(entry["step_id"], "extract");
  EXPECT_EQ(entry["execution_id"], first);
  EXPECT_EQ(entry["hits"], 1);
  EXPECT_TRUE(entry["expires_at"].is_string());
  EXPECT_FALSE(entry.contains("output"));
  const std::string key = entry["key"].get<std::string>();
  EXPECT_EQ(Get("/api/v1/cache/" + key)["output"]["rows"], 42);
  EXPECT_TRUE(Get("/api/v1/cache?workflow=other")["entries"].empty());

  std::string metrics;
  EXPECT_TRUE(WaitUntil([&] {
    auto r = server_->Admin().Send("GET", "/metrics", "", "");
    metrics = r.ok() ? r->body : "";
    return metrics.find("baton_cache_total{event=\"hit\"} 1") != std::string::npos;
  })) << metrics;
  EXPECT_NE(metrics.find("baton_cache_entries 1"), std::string::npos);

  server_->Kill9();
  server_->Restart();
  ASSERT_TRUE(server_->ok()) << server_->log();
  RunEtl();
  EXPECT_EQ(Runs(), 1);

  ProcessResult shown = Cli({"cache", "list"});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("etl"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find(key.substr(0, 16)), std::string::npos) << shown.out;
  ProcessResult cleared = Cli({"cache", "clear", "--workflow", "etl"});
  EXPECT_EQ(cleared.exit_code, 0) << cleared.err;
  EXPECT_NE(cleared.out.find("1 cached result(s) deleted"), std::string::npos) << cleared.out;
  EXPECT_TRUE(Get("/api/v1/cache")["entries"].empty());
  RunEtl();
  EXPECT_EQ(Runs(), 2);

  // One entry by key; an unknown key is 404.
  const std::string again = Get("/api/v1/cache")["entries"][0]["key"].get<std::string>();
  auto gone = server_->Admin().Call("DELETE", "/api/v1/cache/" + again);
  ASSERT_TRUE(gone.ok()) << gone.status().ToString();
  EXPECT_EQ((*gone)["deleted"], 1);
  auto unknown = server_->Admin().Send("DELETE", "/api/v1/cache/" + again, "", "");
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->status, 404);
  ProcessResult usage = Cli({"cache", "clear"});
  EXPECT_EQ(usage.exit_code, 2);
}

}  // namespace
}  // namespace baton
