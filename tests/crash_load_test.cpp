// Crash under load (issue 11): a real server takes a steady stream of submissions with
// idempotency keys while it is killed again and again, at a named crash point and at
// random moments. After a last restart every accepted execution must end, no step may
// complete twice, event sequences must be gap-free, and each key must name one
// execution. Bounded: six rounds of about a second each (BATON_SOAK_ROUNDS for more:
// `make soak`).
#include "support/execution_checks.h"
#include "support/keyed_load.h"
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <thread>

namespace baton {
namespace {

using testing::MakeTempDir;
using testing::ServerProcess;
using testing::WaitUntil;

TEST(CrashLoad, KilledRepeatedlyUnderLoadNothingIsLostOrDoneTwice) {
  const std::string dir = MakeTempDir();
  auto server = std::make_unique<ServerProcess>(dir);
  ASSERT_TRUE(server->ok()) << server->log();
  ASSERT_EQ(server->Admin()
                .Send("POST", "/api/v1/workflows", testing::kLoadWorkflow, "application/yaml")
                ->status,
            201);
  std::mt19937 rng(20261124);
  testing::KeyedLoad load;
  const std::map<std::string, std::string>& key_to_id = load.key_to_id;
  const char* soak = std::getenv("BATON_SOAK_ROUNDS");
  const int rounds = soak != nullptr && std::atoi(soak) > 0 ? std::atoi(soak) : 6;
  for (int round = 0; round < rounds; ++round) {
    // Even rounds die at a named point (a turn durable, its effects not yet run); odd
    // rounds are killed at a random moment.
    const bool named = round % 2 == 0;
    if (round > 0) {
      server->SetEnv(named ? std::vector<std::string>{"BATON_CRASH_AT=engine.after_commit:" +
                                                      std::to_string(15 + 10 * round)}
                           : std::vector<std::string>{});
      server->Restart();
      if (!server->ok()) {
        // It reached the crash point while recovering, before serving: a crash too.
        ASSERT_TRUE(named) << server->log();
        ASSERT_TRUE(server->Exited());
        continue;
      }
    }
    const auto kill_at = std::chrono::steady_clock::now() +
                         std::chrono::milliseconds(400 + static_cast<int>(rng() % 800));
    load.RunUntil(*server, "load", rng, kill_at);
    if (!server->Exited()) server->Kill9();
  }
  server->SetEnv({});
  server->Restart();  // recovers what the last kill left
  ASSERT_TRUE(server->ok()) << server->log();
  ASSERT_GT(key_to_id.size(), 10u);
  auto admin = server->Admin();
  std::set<std::string> ended;
  EXPECT_TRUE(WaitUntil(
      [&] {
        for (const auto& [key, id] : key_to_id) {
          if (ended.count(id)) continue;
          auto e = admin.Call("GET", "/api/v1/executions/" + id);
          if (!e.ok()) return false;
          if ((*e)["status"] == "completed" || (*e)["status"] == "failed") ended.insert(id);
        }
        return ended.size() == key_to_id.size();
      },
      60'000))
      << ended.size() << " of " << key_to_id.size() << " ended\n"
      << server->log();
  for (const auto& [key, id] : key_to_id) {
    testing::ExpectCompletedOnce(admin, id, {"a", "b", "c", "d"});
    EXPECT_EQ((*admin.Call("GET", "/api/v1/executions/" + id))["idempotency_key"], key);
  }
  // Each key names one execution in the store, too.
  load.ExpectOneExecutionPerKey(*server, "load");
  server.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace baton
