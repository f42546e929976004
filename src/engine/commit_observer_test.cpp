// ObserverThread::kCommit: an observer (the server's live feed) hears of a batch's events
// from the thread that learns the batch is durable, without waiting for the engine's loop
// to run (here the loop runs only when the test says), and never of a batch the store
// refused.
#include <baton/engine.h>
#include <baton/event_loop.h>

#include "support/held_committer.h"
#include "support/sim_harness.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton {
namespace {

using testing::MustParse;

constexpr const char* kWorkflow = R"(
name: w
steps:
  - {id: a, type: noop}
  - {id: b, type: wait, duration: 1s, depends_on: [a]}
)";

struct Recorder final : ExecutionObserver {
  std::vector<std::string> heard;  // "<execution>:<seq>:<type>:<steps_done>"
  std::vector<std::string>* log = nullptr;
  std::string name;
  void OnEvent(const EventRecord& e, const ExecutionProgress& p) override {
    heard.push_back(e.execution_id + ":" + std::to_string(e.seq) + ":" + e.type + ":" +
                    std::to_string(p.steps_done));
    if (log != nullptr) log->push_back(name);
  }
};

TEST(CommitObserver, HearsTheBatchBeforeTheLoopAndInOrder) {
  testing::HeldEngine f;
  std::vector<std::string> order;
  Recorder on_commit, on_loop;
  on_commit.log = on_loop.log = &order;
  on_commit.name = "commit";
  on_loop.name = "loop";
  f.engine.AddObserver(&on_commit, ObserverThread::kCommit);
  f.engine.AddObserver(&on_loop);
  StartRequest req;
  req.workflow = MustParse(kWorkflow);
  std::string id;
  f.loop.Post([&] { id = *f.engine.Start(req); });
  f.loop.RunReady();
  EXPECT_TRUE(on_commit.heard.empty());  // nothing before the commit
  ASSERT_GE(f.committer.held(), 1u);
  f.committer.ReleaseOne();
  ASSERT_FALSE(on_commit.heard.empty());  // told by the releasing thread itself
  EXPECT_TRUE(on_loop.heard.empty());
  f.loop.RunReady();
  while (f.committer.held() > 0) {
    f.committer.ReleaseOne();
    f.loop.RunReady();
  }
  // Both heard the same events in the same order; the loop ran only after each release.
  EXPECT_EQ(on_commit.heard, on_loop.heard);
  ASSERT_FALSE(order.empty());
  EXPECT_EQ(order.front(), "commit");
  std::vector<int64_t> seqs;
  for (const std::string& h : on_commit.heard) {
    ASSERT_EQ(h.rfind(id + ":", 0), 0u) << h;
    seqs.push_back(std::stoll(h.substr(id.size() + 1)));
  }
  for (size_t i = 1; i < seqs.size(); ++i) EXPECT_LT(seqs[i - 1], seqs[i]);
  // The progress is the turn's: step a (noop) was done when its step.completed committed.
  bool saw_a_done = false;
  for (const std::string& h : on_commit.heard) {
    if (h.find(":step.completed:") != std::string::npos) {
      EXPECT_EQ(h.back(), '1') << h;
      saw_a_done = true;
    }
  }
  EXPECT_TRUE(saw_a_done);
}

TEST(CommitObserver, HearsNothingOfARefusedBatch) {
  testing::HeldEngine f;
  Recorder on_commit;
  f.engine.AddObserver(&on_commit, ObserverThread::kCommit);
  StartRequest req;
  req.workflow = MustParse(kWorkflow);
  f.loop.Post([&] { ASSERT_TRUE(f.engine.Start(req).ok()); });
  f.loop.RunReady();
  ASSERT_EQ(f.committer.held(), 1u);
  f.committer.ReleaseOne(Status(errc::kStore, "disk full"));
  f.loop.RunReady();
  EXPECT_TRUE(on_commit.heard.empty());
}

}  // namespace
}  // namespace baton
