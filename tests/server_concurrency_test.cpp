// Concurrency limits on the real server: a workflow's `concurrency` queues (or cancels)
// executions over its limit, --max-running-executions bounds the whole server, the
// queue survives a kill -9, and `why` names who holds the slot.
#include "support/process_util.h"
#include "support/server_process.h"
#include "support/server_test.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace baton {
namespace {

using client::ApiClient;
using testing::MakeTempDir;
using testing::ProcessResult;
using testing::ServerProcess;
using testing::WaitForExecutionStatus;
using testing::WaitUntil;

// One deploy per customer at a time; its step runs until the file `go` exists.
std::string Deploy(const std::string& dir, const std::string& policy) {
  return R"(
name: deploy
inputs:
  customer: {type: string}
concurrency: {limit: 1, key: "{{ inputs.customer }}", policy: )" +
         policy + R"(}
steps:
  - id: work
    type: shell
    run: ['sh', '-c', 'while [ ! -f "$0" ]; do sleep 0.05; done', ')" +
         dir + R"(/go']
)";
}

class ServerConcurrency : public testing::ServerTest {
 protected:
  void SetUp() override {}  // each test starts its server with its own options
  void Start(const std::string& policy, std::vector<std::string> args = {}) {
    StartServer(std::move(args));
    CreateWorkflow(Deploy(dir_, policy));
  }
  void TearDown() override {
    if (!dir_.empty()) Go();
    ServerTest::TearDown();
  }
  void Go() { std::ofstream(dir_ + "/go") << "go\n"; }
  std::string Submit(const std::string& customer) {
    auto r = server_->Admin().Call("POST", "/api/v1/executions",
                                   {{"workflow", "deploy"}, {"input", {{"customer", customer}}}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->value("id", "") : "";
  }
  Json Wait(const std::string& id, const std::string& status) {
    return WaitForExecutionStatus(server_->Admin(), id, status);
  }
};

TEST_F(ServerConcurrency, ASecondExecutionOfTheKeyWaitsQueuedAndSaysForWhom) {
  Start("queue");
  const std::string a = Submit("acme");
  Wait(a, "running");
  const std::string b = Submit("acme");
  const std::string other = Submit("globex");
  Wait(b, "queued");
  Wait(other, "running");
  auto queued = server_->Admin().Call("GET", "/api/v1/executions?status=queued");
  ASSERT_TRUE(queued.ok()) << queued.status().ToString();
  ASSERT_EQ((*queued)["executions"].size(), 1u) << queued->dump();
  EXPECT_EQ((*queued)["executions"][0]["id"], b);

  ProcessResult why = server_->Cli({"why", b});
  EXPECT_EQ(why.exit_code, 0) << why.err;
  EXPECT_NE(why.out.find("queued: its workflow runs at most 1 at once for concurrency key 'acme', "
                         "held by '" +
                         a + "'"),
            std::string::npos)
      << why.out;
  // (The engine's figures reach /metrics every half second.)
  EXPECT_TRUE(WaitUntil([&] {
    auto metrics = server_->Admin().Send("GET", "/metrics", "");
    return metrics.ok() && metrics->body.find("baton_executions_queued 1\n") != std::string::npos;
  }));

  Go();
  Json done = Wait(b, "completed");
  Json first = Wait(a, "completed");
  EXPECT_GE(done["steps"][0]["started_at"].get<std::string>(),
            first["completed_at"].get<std::string>());
}

TEST_F(ServerConcurrency, TheQueueOutlivesAKill9) {
  Start("queue");
  const std::string a = Submit("acme");
  Wait(a, "running");
  const std::string b = Submit("acme");
  Wait(b, "queued");
  server_->Kill9();
  server_->Restart();
  ASSERT_TRUE(server_->ok()) << server_->log();
  Wait(a, "running");  // its step runs again (at least once)
  Wait(b, "queued");   // still waiting: no slot leaked to it, none held twice
  Go();
  Wait(a, "completed");
  Wait(b, "completed");
}

TEST_F(ServerConcurrency, CancelNewestRefusesTheSecond) {
  Start("cancel_newest");
  const std::string a = Submit("acme");
  const std::string b = Submit("acme");
  Json refused = Wait(b, "cancelled");
  EXPECT_EQ(refused["error"]["code"], "CONCURRENCY_LIMIT");
  Go();
  Wait(a, "completed");
}

TEST_F(ServerConcurrency, MaxRunningExecutionsBoundsTheServer) {
  Start("queue", {"--max-running-executions", "1"});
  const std::string a = Submit("acme");
  Wait(a, "running");
  const std::string b = Submit("globex");  // another key: only the server's limit holds it
  Wait(b, "queued");
  auto why = server_->Admin().Call("GET", "/api/v1/executions/" + b + "/why");
  ASSERT_TRUE(why.ok());
  EXPECT_NE(why->dump().find("--max-running-executions"), std::string::npos) << why->dump();
  // A queued execution cannot be paused; it can be cancelled.
  auto paused = server_->Admin().Call("POST", "/api/v1/executions/" + b + "/pause");
  EXPECT_FALSE(paused.ok());
  const std::string c = Submit("initech");
  Wait(c, "queued");
  ASSERT_TRUE(server_->Admin().Call("POST", "/api/v1/executions/" + b + "/cancel").ok());
  Wait(b, "cancelled");
  Go();
  Wait(a, "completed");
  Wait(c, "completed");
}

}  // namespace
}  // namespace baton
