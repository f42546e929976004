// The live feed of a namespace or a workflow with several instances on one database:
// every instance sends the events of every execution, whichever instance runs it, in one
// order with the same positions, so a client resumes on another instance after the last
// position it saw and misses nothing.
#include "client/event_stream.h"
#include "postgres/instances.h"
#include "support/execution_checks.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace baton::testing {
namespace {

constexpr const char* kQuick = R"(
name: quick
steps:
  - {id: a, type: shell, run: "echo a"}
  - {id: b, type: noop, depends_on: [a]}
  - {id: c, type: shell, run: "echo c", depends_on: [b]}
)";
constexpr const char* kOther = R"(
name: other
steps:
  - {id: only, type: noop}
)";

struct Seen {
  std::string execution_id;
  int64_t seq = 0;
  int64_t position = 0;
  std::string workflow;
  bool operator==(const Seen&) const = default;
};

// Events from `s` until `completions` executions completed (or a minute passed); with
// `until_ready`, only up to the end of the replay instead.
std::vector<Seen> Collect(client::EventStream& s, size_t completions, bool until_ready = false) {
  std::vector<Seen> seen;
  size_t completed = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < give_up) {
    auto m = s.Next(1000);
    if (!m.ok()) {
      ADD_FAILURE() << "the feed ended: " << m.status().ToString();
      break;
    }
    if (!m->has_value()) continue;
    const Json& j = **m;
    if (j["type"] == "ready") {
      if (until_ready) break;
      continue;
    }
    if (!j.contains("seq")) continue;
    seen.push_back({j["execution_id"], j["seq"], j["position"], j.value("workflow", "")});
    if (j["type"] == "execution.completed" && ++completed == completions && !until_ready) break;
  }
  return seen;
}

TEST(PostgresFeed, TheFeedOfANamespaceIsTheSameOnEveryInstanceAndResumesOnAnother) {
  Instances in;
  in.Start(2, "1s");
  in.Create(0, kQuick);
  in.Create(0, kOther);
  // Live from now: the whole namespace through i2, the workflow `quick` through i1.
  auto all = client::EventStream::Open({in.servers[1]->url(), in.token}, "");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  auto quick = client::EventStream::Open({in.servers[0]->url(), in.token}, "workflow=quick");
  ASSERT_TRUE(quick.ok()) << quick.status().ToString();
  // Subscribed once "ready" came: what is committed from then on is sent.
  ASSERT_TRUE(Collect(**all, 0, /*until_ready=*/true).empty());
  ASSERT_TRUE(Collect(**quick, 0, /*until_ready=*/true).empty());
  std::set<std::string> ids;
  for (size_t i = 0; i < 6; ++i) {
    const std::string id = in.Submit(i % 2, "quick");  // each instance runs half of them
    ASSERT_FALSE(id.empty());
    ids.insert(id);
  }
  for (size_t i = 0; i < 2; ++i) ids.insert(in.Submit(i, "other"));
  ASSERT_EQ(ids.size(), 8u);
  const std::vector<Seen> seen = Collect(**all, 8);

  // One order, and every event of every execution, wherever it ran.
  for (size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GT(seen[i].position, seen[i - 1].position) << "at " << i;
  }
  std::map<std::string, std::vector<int64_t>> seqs;
  for (const Seen& s : seen) seqs[s.execution_id].push_back(s.seq);
  for (const std::string& id : ids) {
    auto stored = in.Api(0).Call("GET", "/api/v1/executions/" + id + "/events?limit=1000");
    ASSERT_TRUE(stored.ok()) << stored.status().ToString();
    const Json& events = (*stored)["events"];
    ASSERT_EQ(seqs[id].size(), events.size()) << "execution " << id;
    for (size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(seqs[id][i], static_cast<int64_t>(i + 1)) << "execution " << id;
      // The API numbers them as the feed does, on every instance.
      EXPECT_GT(events[i]["position"].get<int64_t>(), 0);
    }
    ExpectCompletedOnce(in.Api(1), id, {});
  }

  // The workflow's feed through the other instance: the same events of `quick`, the same
  // positions.
  std::vector<Seen> expected_quick;
  for (const Seen& s : seen) {
    if (s.workflow == "quick") expected_quick.push_back(s);
  }
  EXPECT_EQ(Collect(**quick, 6), expected_quick);

  // Resumed on i1 after a position seen through i2: exactly what followed it there.
  const size_t half = seen.size() / 2;
  auto resumed = client::EventStream::Open({in.servers[0]->url(), in.token},
                                           "after=" + std::to_string(seen[half].position));
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  const std::vector<Seen> rest = Collect(**resumed, 0, /*until_ready=*/true);
  EXPECT_EQ(rest, std::vector<Seen>(seen.begin() + static_cast<long>(half) + 1, seen.end()));
}

}  // namespace
}  // namespace baton::testing
