// `GET /metrics` of a server that has run work, checked by Prometheus's own linter
// (`promtool check metrics`, unpacked into .cache/tools/ by scripts/setup.sh): histograms
// as histograms, quantiles only on summaries, counters ending in `_total`.
#include "support/process_util.h"
#include "support/server_process.h"
#include "support/server_test.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

namespace baton {
namespace {

using testing::ReadFile;
using testing::RunProcess;
using testing::StartProcess;
using testing::WaitProcess;
using testing::WriteFile;

std::string Promtool() {
  return testing::SourceDir() + "/.cache/tools/promtool";
}

// promtool's complaints about the exposition text in `file` (empty: none), or why it
// could not run.
std::string PromtoolComplaints(const std::string& file) {
  auto r = RunProcess({"/bin/sh", "-c", "\"$0\" check metrics < \"$1\"", Promtool(), file});
  if (r.exit_code == 0) return "";
  return "exit " + std::to_string(r.exit_code) + ": " + r.out + r.err;
}

constexpr const char* kHandler = R"(#!/usr/bin/env python3
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "cancel" in m:
        continue
    print(json.dumps({"assignment_id": m["assignmentId"], "output": {"ok": True}}), flush=True)
)";

class MetricsFormat : public testing::ServerTest {
 protected:
  void TearDown() override {
    if (worker_ > 0) {
      kill(worker_, SIGKILL);
      WaitProcess(worker_);
    }
    ServerTest::TearDown();
  }
  pid_t worker_ = -1;
};

// The linter is real: it refuses what /metrics used to print (a gauge with a quantile
// label, a counter named `_count`). Without this the check below could pass on a linter
// that accepts anything, or on none at all.
TEST_F(MetricsFormat, PromtoolRefusesQuantileGaugesAndCountCounters) {
  ASSERT_EQ(::access(Promtool().c_str(), X_OK), 0)
      << Promtool() << " is missing: `make setup` (scripts/setup.sh) unpacks it";
  const std::string bad = dir_ + "/bad.txt";
  WriteFile(bad,
            "# HELP x_latency_quantile_seconds Latency.\n"
            "# TYPE x_latency_quantile_seconds gauge\n"
            "x_latency_quantile_seconds{quantile=\"0.5\"} 0.001\n"
            "# HELP x_latency_count Acks.\n"
            "# TYPE x_latency_count counter\n"
            "x_latency_count 3\n");
  const std::string complaints = PromtoolComplaints(bad);
  EXPECT_NE(complaints.find("quantile"), std::string::npos) << complaints;
  EXPECT_NE(complaints.find("_total"), std::string::npos) << complaints;
}

TEST_F(MetricsFormat, PromtoolAcceptsTheMetricsOfAServerThatRanWork) {
  ASSERT_EQ(::access(Promtool().c_str(), X_OK), 0)
      << Promtool() << " is missing: `make setup` (scripts/setup.sh) unpacks it";
  // Work that fills every family: a command step through a connected worker (dispatch
  // latencies), a shell step that fails and retries, one that succeeds.
  WriteFile(dir_ + "/handler.py", kHandler);
  ::chmod((dir_ + "/handler.py").c_str(), 0755);
  CreateWorkflow(
      "name: mixed\n"
      "steps:\n"
      "  - {id: remote, type: command, command: calc}\n"
      "  - {id: local, type: shell, run: 'true'}\n"
      "  - {id: flaky, type: shell, run: 'exit 3', retry: {max_attempts: 2, initial_delay: "
      "10ms}}\n");
  auto token = server_->Admin().Call("POST", "/api/v1/tokens",
                                     {{"name", "workers"}, {"scopes", {"worker"}}});
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  const std::string log = dir_ + "/worker.log";
  worker_ = StartProcess(
      {testing::BatonBin(), "worker", "--server", server_->url(), "--token", (*token)["token"],
       "--id", "w1", "--persistent", "--quiet", "--handler", "calc=" + dir_ + "/handler.py"},
      log);
  ASSERT_GT(worker_, 0);
  for (int i = 0; i < 3; ++i) {
    auto started = server_->Admin().Call("POST", "/api/v1/executions", {{"workflow", "mixed"}});
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    Json e = testing::WaitForExecutionStatus(server_->Admin(), (*started)["id"], "failed");
    ASSERT_EQ(e.value("status", ""), "failed") << e.dump() << ReadFile(log);
    bool remote_completed = false;
    for (const Json& step : e["steps"]) {
      if (step.value("id", "") == "remote") remote_completed = step["status"] == "completed";
    }
    ASSERT_TRUE(remote_completed) << e.dump();
  }
  // The coordinator's figures reach /metrics with the server's periodic snapshot.
  std::string text;
  EXPECT_TRUE(testing::WaitUntil([&] {
    auto metrics = server_->Admin().Send("GET", "/metrics");
    text = metrics.ok() && metrics->status == 200 ? metrics->body : "";
    return text.find("\nbaton_dispatch_latency_recent_seconds_count 3\n") != std::string::npos;
  })) << text;
  // The work shows: a histogram and two summaries, the step durations.
  EXPECT_NE(text.find("# TYPE baton_dispatch_latency_seconds histogram"), std::string::npos);
  EXPECT_NE(text.find("# TYPE baton_dispatch_prepared_latency_seconds summary"), std::string::npos);
  EXPECT_NE(text.find("\nbaton_step_duration_seconds_count "), std::string::npos) << text;
  const std::string file = dir_ + "/metrics.txt";
  WriteFile(file, text);
  EXPECT_EQ(PromtoolComplaints(file), "") << text;
}

}  // namespace
}  // namespace baton
