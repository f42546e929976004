// "Why is it waiting": GET /api/v1/executions/{id}/why, `baton why` and `baton status`
// against the real server, one blocked step of each kind.
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace baton {
namespace {

using client::ApiClient;
using testing::ProcessResult;
using testing::ServerProcess;
using testing::WaitUntil;

// busy takes max_parallel's one place, so later is held back (wait steps hold no
// place: they run nothing); ship waits for approve.
constexpr const char* kBlocked = R"(
name: blocked
max_parallel: 1
steps:
  - {id: nap, type: wait, duration: 1h}
  - {id: approve, type: wait, signal: approve, timeout: 2h}
  - {id: busy, type: shell, run: 'sleep 30'}
  - {id: later, type: shell, run: 'sleep 30'}
  - {id: ship, type: noop, depends_on: [approve]}
)";

constexpr const char* kElsewhere = R"(
name: elsewhere
steps:
  - {id: flaky, type: shell, run: 'echo broken >&2; exit 3',
     retry: {max_attempts: 3, initial_delay: 1h}}
  - {id: download, type: command, command: model.download}
)";

class ServerWhy : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir();
    server_ = std::make_unique<ServerProcess>(dir_);
    ASSERT_TRUE(server_->ok()) << server_->log();
    for (const char* yaml : {kBlocked, kElsewhere}) {
      auto r = server_->Admin().Send("POST", "/api/v1/workflows", yaml, "application/yaml");
      ASSERT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
    }
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string Submit(const std::string& workflow) {
    auto r = server_->Admin().Call("POST", "/api/v1/executions", {{"workflow", workflow}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->value("id", "") : "";
  }
  // Waits until /why has an entry of `kind` for `step`; returns it (null if it never came).
  Json WaitForKind(const std::string& id, const std::string& step, const std::string& kind) {
    Json found;
    WaitUntil([&] {
      auto why = server_->Admin().Call("GET", "/api/v1/executions/" + id + "/why");
      if (!why.ok()) return false;
      for (const Json& w : (*why)["steps"]) {
        if (w["step_id"] == step && w["kind"] == kind) found = w;
      }
      return !found.is_null();
    });
    EXPECT_FALSE(found.is_null()) << step << " never waited for " << kind;
    return found;
  }
  ProcessResult Cli(std::vector<std::string> args) { return server_->Cli(std::move(args)); }

  std::string dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServerWhy, NamesWhatEachOpenStepWaitsFor) {
  std::string id = Submit("blocked");
  Json nap = WaitForKind(id, "nap", "timer");  // dispatched, or running once it started
  EXPECT_NE(nap["reason"].get<std::string>().find("waits until 20"), std::string::npos) << nap;
  EXPECT_FALSE(nap["until"].is_null());
  Json approve = WaitForKind(id, "approve", "signal");
  EXPECT_EQ(approve["reason"], "waits for signal 'approve' (`baton signal " + id +
                                   " approve --data JSON`); times out at " +
                                   approve["until"].get<std::string>());
  Json busy = WaitForKind(id, "busy", "running");
  EXPECT_EQ(busy["reason"], "attempt 1 running since " + busy["since"].get<std::string>());
  Json later = WaitForKind(id, "later", "max_parallel");
  EXPECT_EQ(later["reason"], "the workflow's max_parallel (1) is reached: 'busy' is running");
  Json ship = WaitForKind(id, "ship", "upstream");
  EXPECT_EQ(ship["reason"], "waits for step 'approve' to finish");

  // The same sentences on the command line.
  ProcessResult why = Cli({"why", id});
  ASSERT_EQ(why.exit_code, 0) << why.err;
  EXPECT_NE(why.out.find("waits for step 'approve' to finish"), std::string::npos) << why.out;
  ProcessResult status = Cli({"status", id});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("the workflow's max_parallel (1) is reached"), std::string::npos)
      << status.out;

  ASSERT_TRUE(server_->Admin().Call("POST", "/api/v1/executions/" + id + "/cancel", {}).ok());
  testing::WaitForExecutionStatus(server_->Admin(), id, "cancelled");
  ProcessResult done = Cli({"why", id, "--json"});
  ASSERT_EQ(done.exit_code, 0) << done.err;
  EXPECT_EQ(Json::parse(done.out)["steps"], Json::array());
}

TEST_F(ServerWhy, NamesARetryBackoffAMissingWorkerAndAPause) {
  std::string id = Submit("elsewhere");
  Json flaky = WaitForKind(id, "flaky", "retry_backoff");
  EXPECT_EQ(flaky["status"], "waiting_retry");
  const std::string reason = flaky["reason"];
  EXPECT_EQ(reason.rfind("attempt 1 of 3 failed (EXIT_NONZERO", 0), 0u) << reason;
  EXPECT_NE(reason.find("the next starts at " + flaky["until"].get<std::string>()),
            std::string::npos)
      << reason;
  Json download = WaitForKind(id, "download", "worker");
  EXPECT_EQ(download["reason"], "waits for a worker: no ONLINE worker handles model.download");
  // On the command line a step no worker has taken is queued, as `status` says (issue 16).
  ProcessResult why = Cli({"why", id});
  ASSERT_EQ(why.exit_code, 0) << why.err;
  const size_t line = why.out.find("download");
  ASSERT_NE(line, std::string::npos) << why.out;
  const std::string download_line = why.out.substr(line, why.out.find('\n', line) - line);
  EXPECT_NE(download_line.find("queued"), std::string::npos) << why.out;
  EXPECT_EQ(download_line.find("dispatched"), std::string::npos) << why.out;

  ASSERT_TRUE(server_->Admin().Call("POST", "/api/v1/executions/" + id + "/pause", {}).ok());
  flaky = WaitForKind(id, "flaky", "paused");
  EXPECT_EQ(flaky["reason"], "the execution is paused: `baton resume " + id + "` lets it go on");
  auto other = server_->Admin().Send("GET", "/api/v1/executions/nope/why");
  EXPECT_EQ(other->status, 404);
}

TEST_F(ServerWhy, AStepPastItsExpectedDurationIsLoggedAndCounted) {
  auto made = server_->Admin().Send("POST", "/api/v1/workflows",
                                    "name: slowpoke\nsteps:\n"
                                    "  - {id: crawl, type: shell, run: 'sleep 1.5', "
                                    "expected_duration: 300ms}\n",
                                    "application/yaml");
  ASSERT_TRUE(made.ok() && made->status == 201);
  std::string id = Submit("slowpoke");
  testing::WaitForExecutionStatus(server_->Admin(), id, "completed");
  auto events = server_->Admin().Call("GET", "/api/v1/executions/" + id + "/events");
  ASSERT_TRUE(events.ok());
  Json slow;
  for (const Json& e : (*events)["events"]) {
    if (e["type"] == "step.slow") slow = e;
  }
  ASSERT_FALSE(slow.is_null()) << events->dump();
  EXPECT_EQ(slow["step_id"], "crawl");
  EXPECT_EQ(slow["data"]["expected_duration_ms"], 300);
  auto metrics = server_->Admin().Send("GET", "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics->body.find("baton_steps_total{event=\"slow\"} 1"), std::string::npos);
}

// --stall-after: a running execution silent for that long gets one execution.stalled
// event saying what it waits for, and the metric counts it.
TEST_F(ServerWhy, ASilentExecutionIsReportedStalled) {
  server_->Restart({"--stall-after", "400ms"});
  ASSERT_TRUE(server_->ok()) << server_->log();
  auto made = server_->Admin().Send("POST", "/api/v1/workflows",
                                    "name: silent\nsteps:\n"
                                    "  - {id: hush, type: shell, run: 'sleep 1.5'}\n",
                                    "application/yaml");
  ASSERT_TRUE(made.ok() && made->status == 201);
  std::string id = Submit("silent");
  testing::WaitForExecutionStatus(server_->Admin(), id, "completed");
  auto events = server_->Admin().Call("GET", "/api/v1/executions/" + id + "/events");
  ASSERT_TRUE(events.ok());
  std::vector<Json> stalls;
  for (const Json& e : (*events)["events"]) {
    if (e["type"] == "execution.stalled") stalls.push_back(e);
  }
  ASSERT_EQ(stalls.size(), 1u) << events->dump();
  EXPECT_EQ(stalls[0]["data"]["waiting"][0]["step_id"], "hush");
  EXPECT_GE(stalls[0]["data"]["idle_ms"].get<int64_t>(), 400);
  auto metrics = server_->Admin().Send("GET", "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_NE(metrics->body.find("baton_executions_stalled_total 1"), std::string::npos);
  auto bad = testing::RunProcess({testing::BatonBin(), "server", "--stall-after", "soon"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--stall-after"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace baton
