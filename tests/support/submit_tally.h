// Submissions to a server whose store may be refusing writes, tallied: which executions
// it accepted, how many it refused (503), and whether /health said degraded meanwhile.
#pragma once

#include "support/server_process.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace baton::testing {

struct SubmitTally {
  std::set<std::string> accepted;
  int refused = 0;
  bool saw_degraded = false;

  // Starts `workflow` once under idempotency key `key`, then reads /health.
  void Submit(const ServerProcess& server, const std::string& workflow, const std::string& key) {
    auto r = server.Admin().Send("POST", "/api/v1/executions",
                                 Json{{"workflow", workflow}, {"idempotency_key", key}}.dump());
    ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << server.log();
    if (r->status == 201 || r->status == 200) {
      accepted.insert(Json::parse(r->body)["id"].get<std::string>());
    } else {
      EXPECT_EQ(r->status, 503) << r->body;
      ++refused;
    }
    auto health = server.As("").Send("GET", "/health");
    if (health.ok() && health->body.find("degraded") != std::string::npos) saw_degraded = true;
  }
};

}  // namespace baton::testing
