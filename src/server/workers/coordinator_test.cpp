// The coordinator in virtual time: dispatch, fencing, heartbeat deadlines, reassignment
// with the last checkpoint. (WIP branch: persistence is not built yet.)
#include "server/workers/coordinator.h"

#include <baton/event_loop.h>

#include <gtest/gtest.h>

namespace baton::server {
namespace {

constexpr TimeMs kStart = 1'767'607'200'000;

struct Channel final : WorkerChannel {
  std::vector<protocol::ServerMessage> sent;
  bool closed = false;
  void Send(const protocol::ServerMessage& m) override { sent.push_back(m); }
  void Close() override { closed = true; }
  std::vector<protocol::Command> Commands() const {
    std::vector<protocol::Command> out;
    for (const auto& m : sent) {
      if (auto* c = std::get_if<protocol::Command>(&m)) out.push_back(*c);
    }
    return out;
  }
};

struct Fixture {
  SimClock clock{kStart};
  SimEventLoop loop{&clock};
  Coordinator coordinator{&loop, nullptr, {}};
  std::vector<RunResult> results;
  std::vector<int> progress;

  std::shared_ptr<Channel> Connect(const std::string& id, int capacity = 2) {
    auto ch = std::make_shared<Channel>();
    protocol::Register r;
    r.worker_id = id;
    r.capacity = capacity;
    r.commands = {"model.download"};
    EXPECT_TRUE(coordinator.Register("default", r, ch).ok());
    loop.RunReady();
    return ch;
  }
  void Start(const std::string& dispatch_id) {
    RunRequest req;
    req.execution_id = "ex1";
    req.step_id = "download";
    req.assignment_id = dispatch_id;
    req.type = StepType::kCommand;
    req.ns = "default";
    req.spec = {{"command", "model.download"}, {"data", {{"url", "u"}}}};
    RunCallbacks cb;
    cb.on_progress = [this](int p, Json) { progress.push_back(p); };
    cb.on_done = [this](RunResult r) { results.push_back(std::move(r)); };
    coordinator.runner()->Start(req, cb);
  }
  Status Progress(const std::string& worker, const std::string& assignment, int p,
                  Json checkpoint) {
    protocol::CommandProgress m;
    m.assignment_id = assignment;
    m.progress = p;
    m.checkpoint = std::move(checkpoint);
    return coordinator.OnMessage(worker, m);
  }
  Status Result(const std::string& worker, const std::string& assignment) {
    return coordinator.OnMessage(worker, protocol::CommandResult::Success(assignment, {{"ok", 1}}));
  }
};

TEST(Coordinator, DispatchesProgressesAndCompletes) {
  Fixture f;
  auto a = f.Connect("a");
  f.Start("asg_1");
  ASSERT_EQ(a->Commands().size(), 1u);
  EXPECT_EQ(a->Commands()[0].assignment_id, "asg_1");
  EXPECT_EQ(a->Commands()[0].data["url"], "u");
  EXPECT_TRUE(f.Progress("a", "asg_1", 40, {{"bytes", 10}}).ok());
  EXPECT_TRUE(f.Result("a", "asg_1").ok());
  ASSERT_EQ(f.results.size(), 1u);
  EXPECT_TRUE(f.results[0].status.ok());
  EXPECT_EQ(f.progress, (std::vector<int>{40}));
  // A second result for the same assignment is stale.
  EXPECT_EQ(f.Result("a", "asg_1").code(), errc::kStaleAssignment);
}

TEST(Coordinator, WaitsWithAReasonUntilAWorkerFits) {
  Fixture f;
  f.Start("asg_1");
  auto views = f.coordinator.Active("default", "");
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].status, "waiting");
  EXPECT_EQ(f.coordinator.WaitingReason("ex1"),
            "step 'download': no ONLINE worker handles model.download");
  auto a = f.Connect("a");
  EXPECT_EQ(a->Commands().size(), 1u);
}

TEST(Coordinator, AMissedDeadlineMovesTheWorkWithItsCheckpointAndFencesTheOldHolder) {
  Fixture f;
  auto a = f.Connect("a");
  f.Start("asg_1");
  ASSERT_TRUE(f.Progress("a", "asg_1", 50, {{"bytes", 500}}).ok());
  auto b = f.Connect("b");
  // b keeps sending heartbeats; a goes silent.
  for (int i = 0; i < 3; ++i) {
    f.clock.Advance(Duration(30'000));
    protocol::Heartbeat hb{0, 2, protocol::WorkerStatus::kOnline};
    ASSERT_TRUE(f.coordinator.OnMessage("b", hb).ok());
    f.loop.RunReady();
  }
  f.loop.RunUntilIdle(f.clock.Now());
  EXPECT_EQ(f.coordinator.registry().Find("a")->state, WorkerState::kUnhealthy);
  ASSERT_EQ(b->Commands().size(), 1u);
  const protocol::Command moved = b->Commands()[0];
  EXPECT_EQ(moved.assignment_id, "asg_1.r1");
  EXPECT_EQ(moved.checkpoint, (Json{{"bytes", 500}}));
  // The old holder's late result changes nothing; the new holder's counts once.
  EXPECT_EQ(f.Result("a", "asg_1").code(), errc::kStaleAssignment);
  EXPECT_TRUE(f.results.empty());
  EXPECT_TRUE(f.Result("b", "asg_1.r1").ok());
  EXPECT_EQ(f.results.size(), 1u);
  EXPECT_EQ(f.coordinator.stats().reassigned, 1u);
}

}  // namespace
}  // namespace baton::server
