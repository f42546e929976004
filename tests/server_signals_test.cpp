// Signals from outside: POST /api/v1/executions/{id}/signals/{name} and `baton signal`
// against the real server, including across a kill -9.
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace baton {
namespace {

using client::ApiClient;
using testing::MakeTempDir;
using testing::ProcessResult;
using testing::ReadFile;
using testing::RunProcess;
using testing::ServerProcess;
using testing::WaitUntil;

std::string Workflow(const std::string& marker) {
  return "name: release\nsteps:\n"
         "  - {id: build, type: shell, run: 'echo build >> " +
         marker +
         "'}\n"
         "  - id: approve\n"
         "    type: wait\n"
         "    signal: approve\n"
         "    timeout: 1h\n"
         "    depends_on: [build]\n"
         "    schema: {type: object, required: [by], properties: {by: {type: string}}}\n"
         "  - id: ship\n"
         "    type: shell\n"
         "    run: ['sh', '-c', 'echo \"ship $0\" >> " +
         marker +
         "', '{{ steps.approve.output.by }}']\n"
         "    depends_on: [approve]\n";
}

class ServerSignals : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    marker_ = dir_ + "/runs";
    server_ = std::make_unique<ServerProcess>(dir_);
    ASSERT_TRUE(server_->ok()) << server_->log();
    auto r =
        server_->Admin().Send("POST", "/api/v1/workflows", Workflow(marker_), "application/yaml");
    ASSERT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Submits `release` and waits until its approve step waits.
  std::string SubmitAndWait() {
    auto r = server_->Admin().Call("POST", "/api/v1/executions", {{"workflow", "release"}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return "";
    std::string id = r->value("id", "");
    EXPECT_TRUE(WaitUntil([&] {
      auto e = server_->Admin().Call("GET", "/api/v1/executions/" + id);
      return e.ok() && (*e)["steps"][1]["status"] == "running";
    })) << server_->log();
    return id;
  }
  ProcessResult Cli(std::vector<std::string> args) { return server_->Cli(std::move(args)); }

  std::string dir_, marker_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServerSignals, ASignalCompletesTheWaitStepAndWrongOnesChangeNothing) {
  ApiClient admin = server_->Admin();
  std::string id = SubmitAndWait();
  const std::string base = "/api/v1/executions/" + id + "/signals/";

  auto typo = admin.Send("POST", base + "aprove", R"({"by":"ana"})");
  ASSERT_TRUE(typo.ok());
  EXPECT_EQ(typo->status, 400) << typo->body;
  EXPECT_NE(typo->body.find("has no step waiting for signal 'aprove' (it waits for: approve)"),
            std::string::npos)
      << typo->body;
  auto wrong = admin.Send("POST", base + "approve", R"({"by":7})");
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->status, 400) << wrong->body;
  EXPECT_NE(wrong->body.find("schema of step 'approve'"), std::string::npos) << wrong->body;
  auto garbage = admin.Send("POST", base + "approve", "{\"by\":");
  ASSERT_TRUE(garbage.ok());
  EXPECT_EQ(garbage->status, 400) << garbage->body;
  auto reader = admin.Call("POST", "/api/v1/tokens", {{"name", "ro"}, {"scopes", {"read"}}});
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto forbidden =
      server_->As((*reader)["token"].get<std::string>()).Send("POST", base + "approve", "{}");
  ASSERT_TRUE(forbidden.ok());
  EXPECT_EQ(forbidden->status, 403);
  EXPECT_EQ((*admin.Call("GET", "/api/v1/executions/" + id + "/signals"))["signals"].size(), 0u);

  ProcessResult sent = Cli({"signal", id, "approve", "--data", R"({"by":"ana"})", "--json"});
  ASSERT_EQ(sent.exit_code, 0) << sent.out << sent.err;
  Json reply = Json::parse(sent.out);
  EXPECT_EQ(reply["signal"]["taken_by"], "approve");
  EXPECT_EQ(reply["signal"]["payload"], Json({{"by", "ana"}}));

  Json e = testing::WaitForExecutionStatus(admin, id, "completed");
  EXPECT_EQ(e["steps"][1]["output"], Json({{"by", "ana"}}));
  EXPECT_EQ(ReadFile(marker_), "build\nship ana\n");
  auto listed = admin.Call("GET", "/api/v1/executions/" + id + "/signals");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ((*listed)["signals"].size(), 1u);
  EXPECT_EQ((*listed)["signals"][0]["taken_by"], "approve");
  auto events = admin.Call("GET", "/api/v1/executions/" + id + "/events?limit=1000");
  int received = 0, consumed = 0;
  for (const Json& ev : (*events)["events"]) {
    received += ev["type"] == "signal.received";
    consumed += ev["type"] == "signal.consumed";
  }
  EXPECT_EQ(received, 1);
  EXPECT_EQ(consumed, 1);

  ProcessResult late = Cli({"signal", id, "approve", "--data", R"({"by":"bob"})"});
  EXPECT_NE(late.exit_code, 0);
  EXPECT_NE(late.err.find("completed; signals go to running executions"), std::string::npos)
      << late.err;
  auto late_http = admin.Send("POST", base + "approve", R"({"by":"bob"})");
  EXPECT_EQ(late_http->status, 409);
  EXPECT_EQ(admin.Send("POST", "/api/v1/executions/nope/signals/approve", "{}")->status, 404);
}

TEST_F(ServerSignals, AWaitingStepOutlivesAKill9AndTakesTheSignalOnce) {
  std::string id = SubmitAndWait();
  server_->Kill9();
  server_->Restart();
  ASSERT_TRUE(server_->ok()) << server_->log();
  ProcessResult sent = Cli({"signal", id, "approve", "-d", R"({"by":"after restart"})"});
  ASSERT_EQ(sent.exit_code, 0) << sent.out << sent.err;
  EXPECT_NE(sent.out.find("taken by step approve"), std::string::npos) << sent.out;
  Json e = testing::WaitForExecutionStatus(server_->Admin(), id, "completed");
  EXPECT_EQ(e["steps"][1]["attempts"], 1);
  EXPECT_EQ(ReadFile(marker_), "build\nship after restart\n");  // nothing ran twice
}

TEST_F(ServerSignals, HelpExplainsTheCommand) {
  ProcessResult help = Cli({"signal", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--data-file"), std::string::npos) << help.out;
  ProcessResult bad = Cli({"signal", "x", "approve", "--data", "{nope"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("not valid JSON"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace baton
