// The real server while its PostgreSQL goes away and comes back (stopped as a crash stops
// it, then started again on the same port): submissions are refused with 503 and /health
// says degraded meanwhile, the server reconnects by itself, and every execution it
// accepted finishes exactly once, also when the server tried to read an execution back
// while the database was still gone.
#include "support/execution_checks.h"
#include "support/pg_cluster.h"
#include "support/process_util.h"
#include "support/server_process.h"
#include "support/submit_tally.h"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <set>
#include <string>
#include <thread>

namespace baton::testing {
namespace {

constexpr const char* kWorkflow = R"(
name: two
defaults:
  retry: {max_attempts: 5, initial_delay: 200ms}
steps:
  - {id: a, type: shell, run: "sleep 0.05; echo 1"}
  - {id: b, type: shell, run: "echo 2", depends_on: [a]}
)";

TEST(PostgresOutage, AcceptedWorkFinishesOnceTheDatabaseIsBack) {
  PgCluster cluster;  // its own: this test stops it
  ASSERT_EQ(cluster.StartOwn(), "");
  ServerProcess server(MakeTempDir(), {"--postgres", cluster.Url(), "--parallel", "2"});
  ASSERT_TRUE(server.ok()) << server.log();
  auto admin = server.Admin();
  auto created = admin.Send("POST", "/api/v1/workflows", kWorkflow, "application/yaml");
  ASSERT_TRUE(created.ok() && created->status == 201) << (created.ok() ? created->body : "");

  SubmitTally tally;
  auto submit = [&](int i) { tally.Submit(server, "two", "k" + std::to_string(i)); };
  for (int i = 0; i < 10; ++i) submit(i);
  ASSERT_EQ(cluster.Pause(), "");
  for (int i = 10; i < 20; ++i) submit(i);
  // Longer than the server's re-adoption tick (500 ms): executions dropped by a refused
  // commit are read back while the database is still down, and must be tried again.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_EQ(cluster.Resume(), "");
  // Back: new work is taken again once the server has reconnected.
  ASSERT_TRUE(WaitUntil([&] {
    const size_t before = tally.accepted.size();
    submit(static_cast<int>(100 + before + static_cast<size_t>(tally.refused)));
    return tally.accepted.size() > before;
  })) << server.log();

  EXPECT_GT(tally.refused, 0) << "the outage never hit a submission";
  EXPECT_TRUE(tally.saw_degraded);
  ASSERT_GE(tally.accepted.size(), 11u);
  for (const std::string& id : tally.accepted) {
    WaitForExecutionStatus(admin, id, "completed");
    ExpectCompletedOnce(admin, id, {"a", "b"});
  }
  auto health = server.As("").Send("GET", "/health");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->body.find("degraded"), std::string::npos) << health->body;
  if (HasFailure()) std::cerr << server.log();
}

}  // namespace
}  // namespace baton::testing
