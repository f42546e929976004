// Crash under load (issue 11): a real server takes a steady stream of submissions with
// idempotency keys while it is killed again and again, at a named crash point and at
// random moments. After a last restart every accepted execution must end, no step may
// complete twice, event sequences must be gap-free, and each key must name one
// execution. Bounded: six rounds of about a second each (BATON_SOAK_ROUNDS for more:
// `make soak`).
#include "support/execution_checks.h"
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

constexpr const char* kWorkflow = R"(
name: load
defaults:
  retry: {max_attempts: 5, initial_delay: 100ms}
steps:
  - {id: a, type: shell, run: "echo 1"}
  - {id: b, type: shell, run: "sleep 0.02; echo 2", depends_on: [a]}
  - {id: c, type: noop, depends_on: [a]}
  - {id: d, type: shell, run: "echo 3", depends_on: [b, c]}
)";

TEST(CrashLoad, KilledRepeatedlyUnderLoadNothingIsLostOrDoneTwice) {
  const std::string dir = MakeTempDir();
  auto server = std::make_unique<ServerProcess>(dir);
  ASSERT_TRUE(server->ok()) << server->log();
  ASSERT_EQ(
      server->Admin().Send("POST", "/api/v1/workflows", kWorkflow, "application/yaml")->status,
      201);
  std::mt19937 rng(20261124);
  std::map<std::string, std::string> key_to_id;  // every key a 2xx answered
  int next_key = 0;
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
    auto admin = server->Admin();
    const auto kill_at = std::chrono::steady_clock::now() +
                         std::chrono::milliseconds(400 + static_cast<int>(rng() % 800));
    while (std::chrono::steady_clock::now() < kill_at && !server->Exited()) {
      // A new key, or one answered before (it must come back as the same execution).
      std::string key = "k" + std::to_string(next_key);
      if (!key_to_id.empty() && rng() % 4 == 0) {
        auto it = key_to_id.begin();
        std::advance(it, rng() % key_to_id.size());
        key = it->first;
      } else {
        ++next_key;
      }
      auto r = admin.Send("POST", "/api/v1/executions",
                          Json{{"workflow", "load"}, {"idempotency_key", key}}.dump());
      if (!r.ok() || r->status >= 300) continue;  // dying, or refused: the client retries
      const std::string id = Json::parse(r->body)["id"];
      auto [it, fresh] = key_to_id.emplace(key, id);
      EXPECT_EQ(it->second, id) << "key " << key << " named two executions";
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a steady stream
    }
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
  auto all = admin.Call("GET", "/api/v1/executions?workflow=load&limit=1000");
  ASSERT_TRUE(all.ok());
  std::map<std::string, int> per_key;
  for (const Json& e : (*all)["executions"]) {
    if (e["idempotency_key"].is_string()) ++per_key[e["idempotency_key"].get<std::string>()];
  }
  for (const auto& [key, n] : per_key) EXPECT_EQ(n, 1) << key;
  server.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace baton
