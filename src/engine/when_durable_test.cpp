// Engine::WhenDurable and WhenDurableOffLoop: a caller (the server answering a submit)
// learns when what it asked for is committed, and never before.
#include <baton/engine.h>
#include <baton/event_loop.h>

#include "support/held_committer.h"
#include "support/sim_harness.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using testing::MustParse;

using Fixture = testing::HeldEngine;

constexpr const char* kWorkflow = R"(
name: w
steps:
  - {id: a, type: wait, duration: 1s}
)";

TEST(WhenDurable, AnswersOnlyAfterTheStartIsCommitted) {
  Fixture f;
  StartRequest req;
  req.workflow = MustParse(kWorkflow);
  req.ns = "team-a";
  req.idempotency_key = "k1";
  std::string id;
  std::vector<std::string> answers;
  f.loop.Post([&] {
    id = *f.engine.Start(req);
    f.engine.WhenDurable([&](const Status& s) { answers.push_back(s.ToString()); });
  });
  f.loop.RunReady();
  EXPECT_TRUE(answers.empty());
  EXPECT_EQ(f.store->GetExecution(id).status().code(), errc::kNotFound);
  ASSERT_EQ(f.committer.held(), 1u);
  f.committer.ReleaseOne();
  f.loop.RunReady();
  EXPECT_EQ(answers, (std::vector<std::string>{"ok"}));
  auto stored = f.store->GetExecution(id);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->ns, "team-a");
  EXPECT_EQ(stored->idempotency_key, "k1");
}

TEST(WhenDurable, WithNothingPendingAnswersAtOnceAndReportsStoreErrors) {
  Fixture f;
  std::vector<std::string> answers;
  f.loop.Post(
      [&] { f.engine.WhenDurable([&](const Status& s) { answers.push_back(s.ToString()); }); });
  f.loop.RunReady();
  EXPECT_EQ(answers, (std::vector<std::string>{"ok"}));

  StartRequest req;
  req.workflow = MustParse(kWorkflow);
  f.loop.Post([&] {
    auto started = f.engine.Start(req);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    f.engine.WhenDurable([&](const Status& s) { answers.push_back(s.code()); });
  });
  f.loop.RunReady();
  f.committer.ReleaseOne(Status(errc::kStore, "disk full"));
  f.loop.RunReady();
  EXPECT_EQ(answers, (std::vector<std::string>{"ok", errc::kStore}));
}

// WhenDurableOffLoop: the same moment, told by the thread that learns it (here the test's,
// inside ReleaseOne), before the loop runs anything about the commit.
TEST(WhenDurableOffLoop, RunsWhenTheCommitEndsBeforeTheLoopHearsOfIt) {
  Fixture f;
  StartRequest req;
  req.workflow = MustParse(kWorkflow);
  std::vector<std::string> told;
  f.loop.Post([&] {
    ASSERT_TRUE(f.engine.Start(req).ok());
    f.engine.WhenDurableOffLoop([&](const Status& s) { told.push_back("off:" + s.ToString()); });
    f.engine.WhenDurable([&](const Status& s) { told.push_back("loop:" + s.ToString()); });
  });
  f.loop.RunReady();
  EXPECT_TRUE(told.empty());
  ASSERT_EQ(f.committer.held(), 1u);
  f.committer.ReleaseOne();
  EXPECT_EQ(told, (std::vector<std::string>{"off:ok"}));
  f.loop.RunReady();
  EXPECT_EQ(told, (std::vector<std::string>{"off:ok", "loop:ok"}));
}

TEST(WhenDurableOffLoop, GetsTheStoresErrorAndWaitsForTheLastBatchOnly) {
  Fixture f;
  StartRequest req;
  req.workflow = MustParse(kWorkflow);
  std::vector<std::string> told;
  f.loop.Post([&] {
    ASSERT_TRUE(f.engine.Start(req).ok());
    f.engine.WhenDurableOffLoop([&](const Status& s) { told.push_back("first:" + s.code()); });
    ASSERT_TRUE(f.engine.Start(req).ok());
    f.engine.WhenDurableOffLoop([&](const Status& s) { told.push_back("second:" + s.code()); });
  });
  f.loop.RunReady();
  ASSERT_EQ(f.committer.held(), 2u);
  f.committer.ReleaseOne();
  EXPECT_EQ(told, (std::vector<std::string>{"first:"}));
  f.committer.ReleaseOne(Status(errc::kStore, "disk full"));
  EXPECT_EQ(told, (std::vector<std::string>{"first:", std::string("second:") + errc::kStore}));
}

TEST(WhenDurableOffLoop, WithNothingPendingRunsOnTheLoop) {
  Fixture f;
  bool told = false;
  f.loop.Post([&] { f.engine.WhenDurableOffLoop([&](const Status& s) { told = s.ok(); }); });
  f.loop.RunReady();
  EXPECT_TRUE(told);
}

}  // namespace
}  // namespace baton
