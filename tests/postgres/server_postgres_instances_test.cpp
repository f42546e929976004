// Several `baton server` instances on one PostgreSQL database (--instance): executions
// are leased to the instance that accepted them; an instance killed with kill -9, or
// frozen past its lease (SIGSTOP), has its executions taken over by the others, which
// continue them from the store. Nothing accepted is lost, no step completes twice, and a
// frozen instance that wakes up writes nothing for what it lost.
#include "support/execution_checks.h"
#include "support/pg_cluster.h"
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace baton::testing {
namespace {

// Steps long enough that an instance killed mid-run holds executions with a step in
// flight.
constexpr const char* kSlowWorkflow = R"(
name: slow
defaults:
  retry: {max_attempts: 5, initial_delay: 100ms}
steps:
  - {id: a, type: shell, run: "echo 1"}
  - {id: b, type: shell, run: "sleep 0.4; echo 2", depends_on: [a]}
  - {id: c, type: noop, depends_on: [a]}
  - {id: d, type: shell, run: "echo 3", depends_on: [b, c]}
)";

struct Instances {
  PgCluster cluster;
  std::string url;
  std::vector<std::unique_ptr<ServerProcess>> servers;
  std::string token;  // the first instance's admin token: the database's

  // `n` instances named i1, i2, ... with `lease`.
  void Start(int n, const std::string& lease) {
    ASSERT_EQ(cluster.Start(), "");
    url = cluster.NewSchema("instances" + std::to_string(getpid()));
    ASSERT_FALSE(url.empty());
    for (int i = 1; i <= n; ++i) {
      servers.push_back(std::make_unique<ServerProcess>(
          MakeTempDir(), std::vector<std::string>{"--postgres", url, "--instance",
                                                  "i" + std::to_string(i), "--lease", lease}));
      ASSERT_TRUE(servers.back()->ok()) << servers.back()->log();
    }
    token = servers[0]->admin_token();
    ASSERT_FALSE(token.empty());
  }
  client::ApiClient Api(size_t i) const { return servers[i]->As(token); }

  // Submits `workflow` to instance `i`; its id, or "" when refused.
  std::string Submit(size_t i, const std::string& workflow) {
    auto r = Api(i).Send("POST", "/api/v1/executions", Json{{"workflow", workflow}}.dump());
    if (!r.ok() || r->status != 201) return "";
    return Json::parse(r->body)["id"];
  }
};

TEST(PostgresInstances, AKilledInstancesExecutionsContinueOnTheOthers) {
  Instances in;
  in.Start(3, "1s");
  ASSERT_EQ(in.Api(0).Send("POST", "/api/v1/workflows", kSlowWorkflow, "application/yaml")->status,
            201);
  std::vector<std::string> ids;
  std::vector<std::string> on_first;
  for (int round = 0; round < 30; ++round) {
    for (size_t i = 0; i < 3; ++i) {
      std::string id = in.Submit(i, "slow");
      ASSERT_FALSE(id.empty()) << "instance " << i + 1 << " refused a submission";
      if (i == 0) on_first.push_back(id);
      ids.push_back(std::move(id));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Killed with most of its executions in flight (each takes ~0.5 s).
  in.servers[0]->Kill9();
  for (int round = 0; round < 10; ++round) {
    for (size_t i = 1; i < 3; ++i) {
      std::string id = in.Submit(i, "slow");
      ASSERT_FALSE(id.empty());
      ids.push_back(std::move(id));
    }
  }
  auto api = in.Api(1);
  for (const std::string& id : ids) {
    WaitForExecutionStatus(api, id, "completed");
    ExpectCompletedOnce(api, id, {"a", "b", "c", "d"});
  }
  // The killed instance's unfinished executions were taken over.
  const std::string logs = in.servers[1]->log() + in.servers[2]->log();
  EXPECT_NE(logs.find("took over"), std::string::npos) << logs;
  // The survivors answer for executions the dead one accepted.
  auto one = in.Api(2).Call("GET", "/api/v1/executions/" + on_first.front());
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)["status"], "completed");
}

TEST(PostgresInstances, AFrozenInstanceLosesItsExecutionsAndWritesNothingForThem) {
  Instances in;
  in.Start(2, "1s");
  constexpr const char* kLong = R"(
name: long
steps:
  - {id: a, type: shell, run: "sleep 1.5; echo 1"}
  - {id: b, type: noop, depends_on: [a]}
)";
  ASSERT_EQ(in.Api(0).Send("POST", "/api/v1/workflows", kLong, "application/yaml")->status, 201);
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(in.Submit(0, "long"));
    ASSERT_FALSE(ids.back().empty());
  }
  auto api = in.Api(1);
  for (const std::string& id : ids) WaitForExecutionStatus(api, id, "running");
  // Frozen past its lease: the other instance takes the executions and runs them again
  // from their stored state, while the frozen one's shell steps finish underneath it.
  in.servers[0]->Signal(SIGSTOP);
  for (const std::string& id : ids) WaitForExecutionStatus(api, id, "completed");
  in.servers[0]->Signal(SIGCONT);
  // Woken, it learns what it lost and drops it: the results of its old attempts are
  // never written.
  EXPECT_TRUE(WaitUntil(
      [&] { return in.servers[0]->log().find("another instance took") != std::string::npos; },
      10'000))
      << in.servers[0]->log();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // what it might still write
  for (const std::string& id : ids) ExpectCompletedOnce(api, id, {"a", "b"});
  // And it goes on serving: new work submitted to it completes.
  const std::string after = in.Submit(0, "long");
  ASSERT_FALSE(after.empty());
  WaitForExecutionStatus(in.Api(0), after, "completed");
  ExpectCompletedOnce(in.Api(0), after, {"a", "b"});
}

TEST(PostgresInstances, TwoInstancesOfOneNameAndAnInstanceBesideASingleServerAreRefused) {
  Instances in;
  in.Start(1, "1s");
  auto same = RunProcess({BatonBin(), "server", "--listen", "127.0.0.1:0", "--postgres", in.url,
                          "--instance", "i1", "--credentials", MakeTempDir() + "/c.json"},
                         "", {});
  EXPECT_NE(same.exit_code, 0);
  EXPECT_NE(same.err.find("runs as instance \"i1\""), std::string::npos) << same.err;
  auto single = RunProcess({BatonBin(), "server", "--listen", "127.0.0.1:0", "--postgres", in.url,
                            "--credentials", MakeTempDir() + "/c.json"},
                           "", {});
  EXPECT_NE(single.exit_code, 0);
  EXPECT_NE(single.err.find("in use by another baton server"), std::string::npos) << single.err;
  auto no_db = RunProcess({BatonBin(), "server", "--instance", "i9"}, "", {});
  EXPECT_EQ(no_db.exit_code, 2);
  EXPECT_NE(no_db.err.find("give --postgres too"), std::string::npos) << no_db.err;
}

}  // namespace
}  // namespace baton::testing
