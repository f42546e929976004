// Invariants the crash and fault tests check on an execution through the API.
#pragma once

#include "client/api_client.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace baton::testing {

// The execution `id` completed, each of `steps` completed exactly once (one
// step.completed event), the execution ended once, and its event sequence is gap-free.
inline void ExpectCompletedOnce(const client::ApiClient& api, const std::string& id,
                                const std::vector<std::string>& steps) {
  auto e = api.Call("GET", "/api/v1/executions/" + id);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ((*e)["status"], "completed") << id << " " << e->dump();
  auto events = api.Call("GET", "/api/v1/executions/" + id + "/events?limit=1000");
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  std::map<std::string, int> completed;
  int64_t seq = 0;
  int ends = 0;
  for (const Json& ev : (*events)["events"]) {
    EXPECT_EQ(ev["seq"].get<int64_t>(), ++seq) << "gap in the events of " << id;
    if (ev["type"] == "step.completed") ++completed[ev["step_id"].get<std::string>()];
    if (ev["type"] == "execution.completed") ++ends;
  }
  EXPECT_EQ(ends, 1) << id;
  for (const std::string& step : steps) EXPECT_EQ(completed[step], 1) << id << " " << step;
}

}  // namespace baton::testing
