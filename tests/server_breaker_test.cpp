// Circuit breakers from outside: a dependency that keeps failing opens its breaker, which
// then fails other executions fast (without running them), shows in GET /api/v1/breakers,
// `baton breaker list`, /why and /metrics, survives a kill -9, and closes on a reset.
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

// `load` appends a line to `runs` each time it really runs, and fails (exit 3) until the
// file `ready` exists. Its breaker, "warehouse", opens after two failures.
std::string Workflow(const std::string& name, const std::string& dir, const std::string& retry) {
  return "name: " + name +
         "\nsteps:\n"
         "  - id: load\n"
         "    type: shell\n"
         "    run: ['sh', '-c', 'echo run >> \"$0/runs\"; test -f \"$0/ready\" || exit 3', '" +
         dir + "']\n" + retry +
         "    circuit_breaker: {key: warehouse, failure_threshold: 2, recovery_timeout: 1h}\n";
}

class ServerBreaker : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    server_ = std::make_unique<ServerProcess>(dir_);
    ASSERT_TRUE(server_->ok()) << server_->log();
    for (const auto& [name, retry] :
         {std::pair<std::string, std::string>{"ingest", ""},
          {"patient", "    retry: {max_attempts: 3, initial_delay: 1s}\n"}}) {
      auto r = server_->Admin().Send("POST", "/api/v1/workflows", Workflow(name, dir_, retry),
                                     "application/yaml");
      ASSERT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
    }
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string Start(const std::string& workflow) {
    auto r = server_->Admin().Call("POST", "/api/v1/executions", {{"workflow", workflow}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->value("id", "") : "";
  }
  std::string RunToEnd(const std::string& status) {
    std::string id = Start("ingest");
    WaitForExecutionStatus(server_->Admin(), id, status);
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

TEST_F(ServerBreaker, OpensFailsFastSurvivesAKill9AndClosesOnReset) {
  EXPECT_TRUE(Get("/api/v1/breakers")["breakers"].empty());
  RunToEnd("failed");
  RunToEnd("failed");
  ASSERT_EQ(Runs(), 2);

  Json list = Get("/api/v1/breakers");
  ASSERT_EQ(list["breakers"].size(), 1u) << list.dump();
  const Json& b = list["breakers"][0];
  EXPECT_EQ(b["key"], "warehouse");
  EXPECT_EQ(b["state"], "open");
  EXPECT_EQ(b["failures"], 2);
  EXPECT_EQ(b["trips"], 1);
  EXPECT_EQ(b["failure_threshold"], 2);
  EXPECT_EQ(b["recovery_timeout"], "1h");
  EXPECT_EQ(b["last_error"]["code"], "EXIT_NONZERO");
  EXPECT_TRUE(b["probe_at"].is_string());

  // Open: the next execution fails at once, CIRCUIT_OPEN, and its shell never runs.
  std::string fast = RunToEnd("failed");
  EXPECT_EQ(Runs(), 2);
  Json detail = Get("/api/v1/executions/" + fast);
  EXPECT_EQ(detail["steps"][0]["error"]["code"], "CIRCUIT_OPEN") << detail.dump();

  // A step with retries waits for the probe time, and /why says so.
  std::string patient = Start("patient");
  Json why;
  ASSERT_TRUE(WaitUntil([&] {
    why = Get("/api/v1/executions/" + patient + "/why");
    return why["steps"].size() == 1 && why["steps"][0]["kind"] == "breaker";
  })) << why.dump();
  EXPECT_EQ(why["steps"][0]["breaker"], "warehouse");
  EXPECT_NE(
      why["steps"][0]["reason"].get<std::string>().find("circuit breaker 'warehouse' is open"),
      std::string::npos)
      << why.dump();

  // Metrics are snapshots the server takes every half second.
  std::string metrics;
  EXPECT_TRUE(WaitUntil([&] {
    auto r = server_->Admin().Send("GET", "/metrics", "", "");
    metrics = r.ok() ? r->body : "";
    return metrics.find(
               "baton_circuit_breaker_state{namespace=\"default\",key=\"warehouse\","
               "state=\"open\"} 1") != std::string::npos;
  })) << metrics;
  EXPECT_NE(metrics.find("baton_circuit_breaker_trips_total{namespace=\"default\","
                         "key=\"warehouse\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics.find("baton_circuit_open_rejections_total "), std::string::npos);

  // The breaker is stored: after a kill -9 it is still open.
  server_->Kill9();
  server_->Restart();
  ASSERT_TRUE(server_->ok()) << server_->log();
  EXPECT_EQ(Get("/api/v1/breakers")["breakers"][0]["state"], "open");
  RunToEnd("failed");
  EXPECT_EQ(Runs(), 2);

  ProcessResult shown = Cli({"breaker", "list"});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("warehouse"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("open"), std::string::npos) << shown.out;
  ProcessResult as_json = Cli({"breaker", "list", "--json"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  EXPECT_EQ(Json::parse(as_json.out)["breakers"][0]["key"], "warehouse");

  // The dependency is back: a reset closes the breaker and work goes through again.
  std::ofstream(dir_ + "/ready") << "ok\n";
  ProcessResult reset = Cli({"breaker", "reset", "warehouse"});
  EXPECT_EQ(reset.exit_code, 0) << reset.err;
  EXPECT_NE(reset.out.find("circuit breaker warehouse closed"), std::string::npos) << reset.out;
  EXPECT_EQ(Get("/api/v1/breakers")["breakers"][0]["state"], "closed");
  RunToEnd("completed");
  EXPECT_EQ(Runs(), 3);
}

TEST_F(ServerBreaker, ResetsOfUnknownOrMalformedKeysAreRefused) {
  auto unknown = server_->Admin().Send("POST", "/api/v1/breakers/nope/reset", "", "");
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->status, 404) << unknown->body;
  auto huge =
      server_->Admin().Send("POST", "/api/v1/breakers/" + std::string(300, 'k') + "/reset", "", "");
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ(huge->status, 400) << huge->body;
  auto bad = server_->Admin().Send("POST", "/api/v1/breakers/%zz/reset", "", "");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, 400) << bad->body;
  ProcessResult cli = Cli({"breaker", "reset", "nope"});
  EXPECT_NE(cli.exit_code, 0);
  EXPECT_NE(cli.err.find("nope"), std::string::npos) << cli.err;
}

}  // namespace
}  // namespace baton
