// `baton server --postgres URL` from outside: the real binary on a schema of the test
// cluster runs workflows, keeps them across kill -9, refuses a second server on the same
// database, and says clearly what is wrong with a database it cannot use.
#include "support/pg_cluster.h"
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

namespace baton::testing {
namespace {

constexpr const char* kWorkflow = R"(
name: pause
steps:
  - id: start
    type: noop
    with: {n: "{{ inputs.n }}"}
  - id: pause
    type: wait
    duration: "{{ inputs.wait }}"
    depends_on: [start]
  - id: done
    type: noop
    depends_on: [pause]
    with: {n: "{{ steps.start.output.n }}"}
output: {n: "{{ steps.done.output.n }}"}
)";

class PostgresServer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new PgCluster();
    start_error_ = new std::string(cluster_->Start());
  }
  static void TearDownTestSuite() {
    delete cluster_;
    delete start_error_;
  }
  void SetUp() override {
    ASSERT_EQ(*start_error_, "");
    url_ = cluster_->NewSchema("srv" + std::to_string(getpid()) + "_" + std::to_string(++n_));
    ASSERT_FALSE(url_.empty());
  }

  static inline PgCluster* cluster_ = nullptr;
  static inline std::string* start_error_ = nullptr;
  static inline int n_ = 0;
  std::string url_;
};

std::string Start(const ServerProcess& server, int n, const std::string& wait) {
  auto e = server.Admin().Call("POST", "/api/v1/executions",
                               {{"workflow", "pause"}, {"input", {{"n", n}, {"wait", wait}}}});
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return e.ok() ? (*e)["id"].get<std::string>() : "";
}

TEST_F(PostgresServer, RunsWorkflowsAndKeepsThemAcrossAKill9) {
  ServerProcess server(MakeTempDir(), {"--postgres", url_});
  ASSERT_TRUE(server.ok()) << server.log();
  EXPECT_NE(server.log().find("(database postgresql://baton:***@127.0.0.1"), std::string::npos)
      << server.log();
  EXPECT_EQ(server.log().find(cluster_->password()), std::string::npos) << server.log();
  auto r = server.Admin().Send("POST", "/api/v1/workflows", kWorkflow, "application/yaml");
  ASSERT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());

  const std::string quick = Start(server, 1, "10ms");
  EXPECT_EQ(WaitForExecutionStatus(server.Admin(), quick, "completed")["output"]["n"], 1);
  // Durable before acknowledged: killed while it waits, it finishes after the restart.
  const std::string slow = Start(server, 2, "2s");
  server.Kill9();
  server.Restart();
  ASSERT_TRUE(server.ok()) << server.log();
  Json done = WaitForExecutionStatus(server.Admin(), slow, "completed");
  EXPECT_EQ(done["output"]["n"], 2) << done.dump();
  auto first = server.Admin().Call("GET", "/api/v1/executions/" + quick);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ((*first)["status"], "completed");
  auto events = server.Admin().Call("GET", "/api/v1/executions/" + slow + "/events");
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  // Its event log, read back from PostgreSQL, says where the restart came.
  std::vector<std::string> types;
  for (const Json& e : (*events)["events"]) types.push_back(e["type"]);
  EXPECT_NE(std::find(types.begin(), types.end(), "execution.recovered"), types.end())
      << events->dump();
  EXPECT_EQ(types.back(), "execution.completed") << events->dump();
}

TEST_F(PostgresServer, ASecondServerOnTheSameDatabaseIsRefused) {
  ServerProcess first(MakeTempDir(), {"--postgres", url_});
  ASSERT_TRUE(first.ok()) << first.log();
  ProcessResult second = RunProcess({BatonBin(), "server", "--listen", "127.0.0.1:0", "--postgres",
                                     url_, "--credentials", MakeTempDir() + "/credentials.json"});
  EXPECT_EQ(second.exit_code, 1) << second.err;
  EXPECT_NE(second.err.find("is in use by another baton server"), std::string::npos) << second.err;
  // The first one goes on serving.
  EXPECT_TRUE(first.Admin().Call("GET", "/health").ok());
}

TEST_F(PostgresServer, ADatabaseItCannotUseIsAClearErrorWithoutThePassword) {
  const std::string nobody =
      "postgresql://baton:topsecret@127.0.0.1:" + std::to_string(PgCluster::FreePort()) + "/x";
  ProcessResult refused =
      RunProcess({BatonBin(), "server", "--listen", "127.0.0.1:0", "--postgres", nobody,
                  "--credentials", MakeTempDir() + "/credentials.json"});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("connecting to PostgreSQL at postgresql://baton:***@127.0.0.1"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.err.find("topsecret"), std::string::npos) << refused.err;

  // From the environment, with a wrong password.
  ProcessResult wrong = RunProcess({BatonBin(), "server", "--listen", "127.0.0.1:0",
                                    "--credentials", MakeTempDir() + "/credentials.json"},
                                   "", {"BATON_POSTGRES=" + cluster_->Url("wrong-password")});
  EXPECT_EQ(wrong.exit_code, 1) << wrong.err;
  EXPECT_NE(wrong.err.find("password authentication failed"), std::string::npos) << wrong.err;
  EXPECT_EQ(wrong.err.find("wrong-password"), std::string::npos) << wrong.err;

  // --db and --postgres name two stores: refused before anything is opened.
  ProcessResult both =
      RunProcess({BatonBin(), "server", "--db", MakeTempDir() + "/b.db", "--postgres", url_});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;
}

}  // namespace
}  // namespace baton::testing
