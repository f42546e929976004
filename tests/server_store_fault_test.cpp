// The real server with its store's commits refused for a while (a full disk), then
// accepted again (issue 11, defect 4): every execution it accepted reaches a terminal
// state without a restart, nothing completes twice, and new work runs.
#include "support/execution_checks.h"
#include "support/process_util.h"
#include "support/server_process.h"
#include "support/submit_tally.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

namespace baton {
namespace {

using testing::MakeTempDir;
using testing::ServerProcess;
using testing::WaitUntil;

constexpr const char* kWorkflow = R"(
name: two
defaults:
  retry: {max_attempts: 5, initial_delay: 200ms}
steps:
  - {id: a, type: shell, run: "sleep 0.05; echo 1"}
  - {id: b, type: shell, run: "echo 2", depends_on: [a]}
)";

TEST(ServerStoreFault, AcceptedWorkFinishesOnceTheStoreTakesWritesAgain) {
  const std::string dir = MakeTempDir();
  // Commits 12 to 31 are refused: after the server's own start-up writes, while
  // executions are being submitted and run.
  ServerProcess server(dir, {"--parallel", "2"}, {"BATON_FAULT_STORE=from=12,count=20"});
  ASSERT_TRUE(server.ok()) << server.log();
  auto admin = server.Admin();
  auto created = admin.Send("POST", "/api/v1/workflows", kWorkflow, "application/yaml");
  ASSERT_TRUE(created.ok() && created->status == 201) << (created.ok() ? created->body : "");

  testing::SubmitTally tally;
  for (int i = 0; i < 40; ++i) tally.Submit(server, "two", "k" + std::to_string(i));
  const std::set<std::string>& accepted = tally.accepted;
  const int refused = tally.refused;
  const bool saw_degraded = tally.saw_degraded;
  EXPECT_GT(refused, 0) << "the fault never hit a submission; adjust the plan";
  EXPECT_TRUE(saw_degraded);
  ASSERT_FALSE(accepted.empty());

  // Without a restart, everything accepted ends, and completes (the retries allow it).
  std::map<std::string, std::string> final_status;
  EXPECT_TRUE(WaitUntil(
      [&] {
        for (const std::string& id : accepted) {
          if (final_status.count(id)) continue;
          auto e = admin.Call("GET", "/api/v1/executions/" + id);
          if (!e.ok()) return false;
          const std::string s = (*e)["status"];
          if (s == "completed" || s == "failed" || s == "cancelled" || s == "timed_out") {
            final_status[id] = s;
          }
        }
        return final_status.size() == accepted.size();
      },
      60'000))
      << final_status.size() << " of " << accepted.size() << " ended\n"
      << server.log();
  for (const auto& [id, s] : final_status) testing::ExpectCompletedOnce(admin, id, {"a", "b"});
  // New work runs, and health is ok again.
  auto fresh = admin.Call("POST", "/api/v1/executions", {{"workflow", "two"}});
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  testing::WaitForExecutionStatus(admin, (*fresh)["id"], "completed");
  EXPECT_EQ((*server.As("").Call("GET", "/health"))["status"], "ok");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace baton
