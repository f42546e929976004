// A steady stream of submissions with idempotency keys, for crash tests: a quarter of
// them repeat a key answered before, which must name the same execution again.
#pragma once

#include "support/server_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <thread>

namespace baton::testing {

// The workflow the crash tests load a server with: shell and noop steps, a join, and
// retries enough to survive the restarts.
inline constexpr const char* kLoadWorkflow = R"(
name: load
defaults:
  retry: {max_attempts: 5, initial_delay: 100ms}
steps:
  - {id: a, type: shell, run: "echo 1"}
  - {id: b, type: shell, run: "sleep 0.02; echo 2", depends_on: [a]}
  - {id: c, type: noop, depends_on: [a]}
  - {id: d, type: shell, run: "echo 3", depends_on: [b, c]}
)";

struct KeyedLoad {
  std::map<std::string, std::string> key_to_id;  // every key a 2xx answered
  int next_key = 0;

  // Submits `workflow` every ~10 ms until `until` or until the server exits (a crash
  // point). A refused or failed request is skipped, as a client would retry it.
  void RunUntil(ServerProcess& server, const std::string& workflow, std::mt19937& rng,
                std::chrono::steady_clock::time_point until) {
    auto admin = server.Admin();
    while (std::chrono::steady_clock::now() < until && !server.Exited()) {
      std::string key = "k" + std::to_string(next_key);
      if (!key_to_id.empty() && rng() % 4 == 0) {
        auto it = key_to_id.begin();
        std::advance(it, rng() % key_to_id.size());
        key = it->first;
      } else {
        ++next_key;
      }
      auto r = admin.Send("POST", "/api/v1/executions",
                          Json{{"workflow", workflow}, {"idempotency_key", key}}.dump());
      if (!r.ok() || r->status >= 300) continue;
      const std::string id = Json::parse(r->body)["id"];
      auto [it, fresh] = key_to_id.emplace(key, id);
      EXPECT_EQ(it->second, id) << "key " << key << " named two executions";
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  // Each key names one execution in the store (`workflow`'s, up to 1,000).
  void ExpectOneExecutionPerKey(const ServerProcess& server, const std::string& workflow) const {
    auto all =
        server.Admin().Call("GET", "/api/v1/executions?workflow=" + workflow + "&limit=1000");
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    std::map<std::string, int> per_key;
    for (const Json& e : (*all)["executions"]) {
      if (e["idempotency_key"].is_string()) ++per_key[e["idempotency_key"].get<std::string>()];
    }
    for (const auto& [key, n] : per_key) EXPECT_EQ(n, 1) << key;
  }
};

}  // namespace baton::testing
