// Child workflows on the real server: a `type: workflow` step starts a workflow of the
// namespace by name; GET lists the children, `baton status` shows the tree, cancel and
// pause reach the child, and a kill -9 while the child runs leaves the parent waiting for
// that same child.
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
using testing::WaitUntil;

constexpr const char* kRelease = R"(
name: release
steps:
  - id: train
    type: workflow
    workflow: training
    input: {model: whisper}
  - {id: announce, type: noop, depends_on: [train], with: "{{ steps.train.output.path }}"}
output: {path: "{{ steps.train.output.path }}"}
)";

// Its fit step runs until the file `go` exists in the test's directory.
std::string Training(const std::string& dir) {
  return R"(
name: training
inputs:
  model: {type: string}
steps:
  - id: fit
    type: shell
    run: ['sh', '-c', 'while [ ! -f "$0" ]; do sleep 0.05; done; printf "{\"weights\": \"/w/%s\"}" "$1"', ')" +
         dir + R"(/go', '{{ inputs.model }}']
output: {path: "{{ steps.fit.output.weights }}"}
)";
}

class ServerChildren : public testing::ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    CreateWorkflow(kRelease);
    CreateWorkflow(Training(dir_));
  }
  void TearDown() override {
    Go();  // no shell loop outlives the test
    ServerTest::TearDown();
  }
  void Go() { std::ofstream(dir_ + "/go") << "go\n"; }
  Json Get(const std::string& path) {
    auto r = server_->Admin().Call("GET", path);
    EXPECT_TRUE(r.ok()) << path << ": " << r.status().ToString();
    return r.ok() ? *r : Json();
  }
  // Submits `release` and waits until its child's fit step runs; returns {parent, child}.
  std::pair<std::string, std::string> SubmitUntilTheChildRuns() {
    auto r = server_->Admin().Call("POST", "/api/v1/executions", {{"workflow", "release"}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return {};
    const std::string id = r->value("id", "");
    std::string child;
    EXPECT_TRUE(WaitUntil([&] {
      Json e = Get("/api/v1/executions/" + id);
      if (!e.contains("children") || e["children"].size() != 1) return false;
      child = e["children"][0]["id"];
      Json c = Get("/api/v1/executions/" + child);
      return c["steps"][0]["status"] == "running";
    })) << server_->log();
    return {id, child};
  }
  std::string WaitForStatus(const std::string& id, const std::string& status) {
    std::string last;
    EXPECT_TRUE(WaitUntil([&] {
      last = Get("/api/v1/executions/" + id).value("status", "");
      return last == status;
    })) << id
        << " is " << last << "\n"
        << server_->log();
    return last;
  }
};

TEST_F(ServerChildren, TheChildIsListedAndItsOutputIsTheSteps) {
  auto [id, child] = SubmitUntilTheChildRuns();
  ASSERT_FALSE(child.empty());
  Json c = Get("/api/v1/executions/" + child);
  EXPECT_EQ(c["parent_id"], id);
  EXPECT_EQ(c["parent_step"], "train");
  EXPECT_EQ(c["workflow"], "training");
  EXPECT_EQ(c["input"], Json({{"model", "whisper"}}));
  // The parent's list filter finds it too.
  Json listed = Get("/api/v1/executions?parent=" + id);
  ASSERT_EQ(listed["executions"].size(), 1u) << listed.dump();
  // Why is the parent's step waiting: for its child.
  Json why = Get("/api/v1/executions/" + id + "/why");
  EXPECT_NE(why.dump().find("its child execution " + child + " runs"), std::string::npos)
      << why.dump();

  // `baton status` shows the child under the step that started it.
  ProcessResult tree = server_->Cli({"status", id});
  EXPECT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_NE(tree.out.find("  train"), std::string::npos) << tree.out;
  EXPECT_NE(tree.out.find("    " + child + "  running  training@1"), std::string::npos) << tree.out;
  EXPECT_NE(tree.out.find("      fit"), std::string::npos) << tree.out;

  Go();
  WaitForStatus(id, "completed");
  Json e = Get("/api/v1/executions/" + id);
  EXPECT_EQ(e["output"], Json({{"path", "/w/whisper"}}));
  EXPECT_EQ(e["children"][0]["status"], "completed");
  EXPECT_EQ(e["children"][0]["parent_attempt"], 1);
}

TEST_F(ServerChildren, AfterAKill9TheParentWaitsForTheSameChild) {
  auto [id, child] = SubmitUntilTheChildRuns();
  ASSERT_FALSE(child.empty());
  server_->Kill9();
  server_->Restart();
  ASSERT_TRUE(server_->ok()) << server_->log();
  Go();
  WaitForStatus(id, "completed");
  Json e = Get("/api/v1/executions/" + id);
  ASSERT_EQ(e["children"].size(), 1u) << e["children"].dump();  // no second child
  EXPECT_EQ(e["children"][0]["id"], child);
  EXPECT_EQ(e["children"][0]["status"], "completed");
  EXPECT_EQ(e["steps"][0]["attempts"], 1);
  EXPECT_EQ(e["output"], Json({{"path", "/w/whisper"}}));
}

TEST_F(ServerChildren, PauseResumeAndCancelOfTheParentReachTheChild) {
  auto [id, child] = SubmitUntilTheChildRuns();
  ASSERT_FALSE(child.empty());
  ApiClient admin = server_->Admin();
  ASSERT_TRUE(admin.Call("POST", "/api/v1/executions/" + id + "/pause", Json::object()).ok());
  WaitForStatus(child, "paused");
  ASSERT_TRUE(admin.Call("POST", "/api/v1/executions/" + id + "/resume", Json::object()).ok());
  WaitForStatus(child, "running");
  ASSERT_TRUE(admin.Call("POST", "/api/v1/executions/" + id + "/cancel", Json::object()).ok());
  WaitForStatus(id, "cancelled");
  WaitForStatus(child, "cancelled");
}

TEST_F(ServerChildren, AnUnknownChildWorkflowFailsTheStepNamingIt) {
  auto r = server_->Admin().Send("POST", "/api/v1/workflows",
                                 "name: orphan\nsteps:\n"
                                 "  - {id: s, type: workflow, workflow: nowhere}\n",
                                 "application/yaml");
  ASSERT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
  auto sub = server_->Admin().Call("POST", "/api/v1/executions", {{"workflow", "orphan"}});
  ASSERT_TRUE(sub.ok()) << sub.status().ToString();
  const std::string id = sub->value("id", "");
  WaitForStatus(id, "failed");
  Json e = Get("/api/v1/executions/" + id);
  EXPECT_EQ(e["steps"][0]["error"]["code"], "NOT_FOUND");
  EXPECT_NE(e["steps"][0]["error"]["message"].get<std::string>().find("no workflow 'nowhere'"),
            std::string::npos);
  EXPECT_TRUE(e["children"].empty());
}

}  // namespace
}  // namespace baton
