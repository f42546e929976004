// Pools on the real server: POST /api/v1/pools defines one, steps with `pool:` wait for
// its slots across executions, `why` and GET /pools say who holds them, and neither a
// kill -9 nor a delete leaves a slot taken.
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
using testing::ServerProcess;
using testing::WaitForExecutionStatus;
using testing::WaitUntil;

// Two GPU steps side by side; each runs until the file `go` exists.
std::string Train(const std::string& dir) {
  const std::string wait =
      "['sh', '-c', 'while [ ! -f \"$0\" ]; do sleep 0.05; done', '" + dir + "/go']";
  return "name: train\nsteps:\n  - {id: a, type: shell, pool: gpu, run: " + wait +
         "}\n  - {id: b, type: shell, pool: gpu, run: " + wait + "}\n";
}

class ServerPools : public testing::ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    CreateWorkflow(Train(dir_));
  }
  void TearDown() override {
    Go();
    ServerTest::TearDown();
  }
  void Go() { std::ofstream(dir_ + "/go") << "go\n"; }
  Json Pools() {
    auto r = server_->Admin().Call("GET", "/api/v1/pools");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)["pools"] : Json::array();
  }
  std::string SubmitUntilOneHolds() {
    auto r = server_->Admin().Call("POST", "/api/v1/executions", {{"workflow", "train"}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    const std::string id = r.ok() ? r->value("id", "") : "";
    EXPECT_TRUE(WaitUntil([&] {
      Json p = Pools();
      return p.size() == 1 && p[0]["used"] == 1 && p[0]["waiting"] == 1;
    })) << Pools().dump();
    return id;
  }
};

TEST_F(ServerPools, StepsWaitForTheSlotsAndWhySaysWhoHoldsThem) {
  ApiClient admin = server_->Admin();
  auto created = admin.Send("POST", "/api/v1/pools", R"({"name":"gpu","slots":1})");
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->status, 201) << created->body;
  auto bad = admin.Send("POST", "/api/v1/pools", R"({"name":"gpu","slots":0})");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, 400) << bad->body;
  EXPECT_NE(bad->body.find("slots"), std::string::npos);

  const std::string id = SubmitUntilOneHolds();
  Json pool = Pools()[0];
  ASSERT_EQ(pool["holders"].size(), 1u);
  const std::string holder = pool["holders"][0];
  EXPECT_EQ(holder.rfind(id + "/", 0), 0u) << holder;
  auto why = admin.Call("GET", "/api/v1/executions/" + id + "/why");
  ASSERT_TRUE(why.ok());
  EXPECT_NE(why->dump().find("waits for a slot of pool 'gpu' (1 slots), held by '" + holder + "'"),
            std::string::npos)
      << why->dump();

  // Growing the pool lets the waiting step in at once.
  testing::ProcessResult resized = server_->Cli({"pool", "set", "gpu", "2", "--json"});
  EXPECT_EQ(resized.exit_code, 0) << resized.err;
  EXPECT_NE(resized.out.find("\"slots\": 2"), std::string::npos) << resized.out;
  EXPECT_TRUE(WaitUntil([&] { return Pools()[0]["used"] == 2; })) << Pools().dump();
  Go();
  WaitForExecutionStatus(admin, id, "completed");
  EXPECT_EQ(Pools()[0]["used"], 0);
}

TEST_F(ServerPools, AKill9NeitherLosesThePoolNorLeaksItsSlots) {
  ApiClient admin = server_->Admin();
  ASSERT_TRUE(admin.Call("POST", "/api/v1/pools", {{"name", "gpu"}, {"slots", 1}}).ok());
  const std::string id = SubmitUntilOneHolds();
  server_->Kill9();
  server_->Restart();
  ASSERT_TRUE(server_->ok()) << server_->log();
  // The pool is still defined, and the restarted step holds the one slot again.
  EXPECT_TRUE(WaitUntil([&] {
    Json p = Pools();
    return p.size() == 1 && p[0]["slots"] == 1 && p[0]["used"] == 1;
  })) << Pools().dump();
  Go();
  WaitForExecutionStatus(server_->Admin(), id, "completed");
  EXPECT_EQ(Pools()[0]["used"], 0);

  testing::ProcessResult listed = server_->Cli({"pool", "list"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("gpu"), std::string::npos) << listed.out;
  testing::ProcessResult deleted = server_->Cli({"pool", "delete", "gpu"});
  EXPECT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_NE(deleted.out.find("pool gpu deleted"), std::string::npos) << deleted.out;
  EXPECT_TRUE(Pools().empty());
  server_->Restart();  // (a SIGTERM first) and still gone
  ASSERT_TRUE(server_->ok()) << server_->log();
  EXPECT_TRUE(Pools().empty());
}

}  // namespace
}  // namespace baton
