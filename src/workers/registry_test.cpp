// Worker selection: capacity, load ratio, round-robin, node pinning, tags, namespaces,
// and the reasons given when nobody fits.
#include "workers/registry.h"

#include <gtest/gtest.h>

namespace baton::workers {
namespace {

WorkerEntry Worker(const std::string& id, int capacity, std::vector<std::string> commands = {"dl"},
                   std::vector<std::string> tags = {}, const std::string& node = "") {
  WorkerEntry w;
  w.id = id;
  w.ns = "default";
  w.node = node.empty() ? id : node;
  w.capacity = capacity;
  w.commands = std::move(commands);
  w.tags = std::move(tags);
  return w;
}

Placement For(const std::string& command) {
  Placement p;
  p.ns = "default";
  p.command = command;
  return p;
}

// Places `n` dispatches of `command`, returning the chosen worker ids in order.
std::vector<std::string> Place(Registry& r, int n, const Placement& p) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    WorkerEntry* w = r.Select(p, nullptr);
    if (w == nullptr) break;
    w->held.insert(p.command + std::to_string(i) + "@" + std::to_string(out.size()));
    out.push_back(w->id);
  }
  return out;
}

TEST(Registry, LowestLoadRatioFirstThenRoundRobinAmongEquals) {
  Registry r;
  r.Register(Worker("a", 10));
  r.Register(Worker("b", 10));
  r.Register(Worker("c", 10));
  r.Find("a")->held = {"x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8"};  // 80 %
  r.Find("b")->held = {"y1", "y2", "y3"};                                // 30 %
  r.Find("c")->held = {"z1", "z2", "z3", "z4", "z5"};                    // 50 %
  // b until it reaches c's 50 %, then c and b in turn; a (80 %) not before they reach it.
  std::vector<std::string> got = Place(r, 7, For("dl"));
  EXPECT_EQ(got, (std::vector<std::string>{"b", "b", "c", "b", "c", "b", "c"}));
}

TEST(Registry, RoundRobinAmongEqualWorkers) {
  Registry r;
  for (const char* id : {"w1", "w2", "w3"}) r.Register(Worker(id, 100));
  // Equal capacity, equal load after each round: w1, w2, w3, w1, ...
  EXPECT_EQ(Place(r, 6, For("dl")), (std::vector<std::string>{"w1", "w2", "w3", "w1", "w2", "w3"}));
}

TEST(Registry, CapacityIsRespectedAndTheReasonGiven) {
  Registry r;
  r.Register(Worker("a", 1));
  r.Register(Worker("b", 2));
  EXPECT_EQ(Place(r, 5, For("dl")).size(), 3u);
  std::string why;
  EXPECT_EQ(r.Select(For("dl"), &why), nullptr);
  EXPECT_EQ(why, "all 2 ONLINE workers for dl are at capacity");
}

TEST(Registry, NodeTagsCommandsAndNamespacesNarrowTheChoice) {
  Registry r;
  r.Register(Worker("cpu-1", 4, {"dl", "train"}, {"cpu"}));
  r.Register(Worker("gpu-1", 4, {"dl", "train"}, {"gpu", "a100"}, "gpu-node-01"));
  r.Register(Worker("gpu-2", 4, {"train"}, {"a100", "gpu"}, "gpu-node-02"));
  WorkerEntry other = Worker("other", 4, {"train"}, {"gpu", "a100"});
  other.ns = "team-b";
  r.Register(other);

  Placement pinned = For("train");
  pinned.node = "gpu-node-02";
  EXPECT_EQ(Place(r, 3, pinned), (std::vector<std::string>{"gpu-2", "gpu-2", "gpu-2"}));
  Placement tagged = For("dl");
  tagged.tags = {"a100", "gpu"};
  EXPECT_EQ(r.Select(tagged, nullptr)->id, "gpu-1");
  std::string why;
  Placement missing = For("dl");
  missing.node = "gpu-node-02";  // it does not handle dl
  EXPECT_EQ(r.Select(missing, &why), nullptr);
  EXPECT_EQ(why, "no ONLINE worker handles dl on node gpu-node-02");
  Placement tag_missing = For("dl");
  tag_missing.tags = {"tpu"};
  EXPECT_EQ(r.Select(tag_missing, &why), nullptr);
  EXPECT_EQ(why, "no ONLINE worker handles dl with tags tpu");
  EXPECT_EQ(r.Select(For("deploy"), &why), nullptr);
  EXPECT_EQ(why, "no ONLINE worker handles deploy");
  Placement b = For("train");
  b.ns = "team-b";
  EXPECT_EQ(r.Select(b, nullptr)->id, "other");  // namespaces do not share workers
}

TEST(Registry, OnlyOnlineWorkersAreChosenAndTheOthersAreCounted) {
  Registry r;
  r.Register(Worker("a", 4));
  r.Register(Worker("b", 4));
  r.Register(Worker("c", 4));
  r.Find("a")->state = WorkerState::kUnhealthy;
  r.Find("b")->state = WorkerState::kDraining;
  EXPECT_EQ(Place(r, 2, For("dl")), (std::vector<std::string>{"c", "c"}));
  r.Find("c")->state = WorkerState::kOffline;
  std::string why;
  EXPECT_EQ(r.Select(For("dl"), &why), nullptr);
  EXPECT_EQ(why, "no ONLINE worker handles dl (1 UNHEALTHY, 1 DRAINING, 1 OFFLINE)");
}

TEST(Registry, ExcludedWorkersAreSkipped) {
  Registry r;
  r.Register(Worker("a", 4));
  r.Register(Worker("b", 4));
  Placement p = For("dl");
  p.exclude = {"a"};
  EXPECT_EQ(r.Select(p, nullptr)->id, "b");
  p.exclude = {"a", "b"};
  std::string why;
  EXPECT_EQ(r.Select(p, &why), nullptr);
  EXPECT_EQ(why, "all 2 ONLINE workers for dl are at capacity or refused it");
}

TEST(Registry, ARegisteringAgainWorkerKeepsWhatItHolds) {
  Registry r;
  WorkerEntry w = Worker("a", 2);
  w.registered_at = 100;
  r.Register(w).held = {"d1"};
  r.Find("a")->state = WorkerState::kUnhealthy;
  WorkerEntry again = Worker("a", 8, {"dl", "dl", "up"}, {"z", "a"});
  again.registered_at = 500;
  WorkerEntry& now = r.Register(again);
  EXPECT_EQ(now.state, WorkerState::kOnline);
  EXPECT_EQ(now.capacity, 8);
  EXPECT_EQ(now.held, (std::set<std::string>{"d1"}));
  EXPECT_EQ(now.registered_at, 100);
  EXPECT_EQ(now.commands, (std::vector<std::string>{"dl", "up"}));
  EXPECT_EQ(now.tags, (std::vector<std::string>{"a", "z"}));
  EXPECT_EQ(r.List("").size(), 1u);
}

}  // namespace
}  // namespace baton::workers
