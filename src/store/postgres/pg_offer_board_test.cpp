// The board of work offered between instances (OfferBoard): offering, taking once among
// racing takers, reports fenced by the taking, a take that expires opening again, a new
// owner adopting an offer in its state, withdrawal, and the notification that wakes a
// waiting instance. Stores with different instance names stand for servers.
#include "store/postgres/pg_test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace baton::pg {
namespace {

class PgOfferBoardTest : public PgTest {
 protected:
  static OfferBoard::Offer Offer(const std::string& id, int priority = 1) {
    return {id, "default", priority, Json{{"assignment_id", id}, {"spec", {{"command", "c"}}}}};
  }
  // The offer of attempt `attempt` of step `step` of execution `execution`.
  static OfferBoard::Offer StepOffer(const std::string& id, const std::string& execution,
                                     const std::string& step, int attempt) {
    return {id, "default", 1,
            Json{{"assignment_id", id},
                 {"execution_id", execution},
                 {"step_id", step},
                 {"attempt", attempt}}};
  }
  // A running execution whose step `step` is at attempt `attempt` (the ones before ended).
  static WriteBatch Running(const std::string& execution, const std::string& step, int attempt) {
    WriteBatch b;
    ExecutionRecord e;
    e.id = execution;
    e.workflow = "w";
    e.status = ExecutionStatus::kRunning;
    b.executions.push_back(e);
    for (int n = 1; n <= attempt; ++n) {
      AttemptRecord at;
      at.execution_id = execution;
      at.step_id = step;
      at.attempt = n;
      at.status = n < attempt ? StepStatus::kFailed : StepStatus::kRunning;
      b.attempts.push_back(at);
    }
    return b;
  }
  static bool Exec(const std::string& url, const std::string& sql) {
    auto c = Connection::Open(url);
    if (!c.ok()) return false;
    return c->Script(sql, "test statement").ok();
  }
  static int64_t Rows(const std::string& url, const std::string& table) {
    auto c = Connection::Open(url);
    if (!c.ok()) return -1;
    auto r = c->Exec("SELECT COUNT(*) FROM " + table, {}, "counting");
    if (!r.ok() || r->size() != 1) return -1;
    return std::stoll(r->at(0, 0).value_or("-1"));
  }
  static std::vector<std::string> Ids(const std::vector<OfferedDispatch>& v) {
    std::vector<std::string> out;
    for (const auto& d : v) out.push_back(d.id);
    return out;
  }
};

TEST_F(PgOfferBoardTest, AnOfferIsTakenOnceItsReportsGoToTheOwnerAndTheResultIsCollectedOnce) {
  const std::string url = NewDatabase();
  auto a = OpenInstance(url, "a"), b = OpenInstance(url, "b");
  ASSERT_TRUE(a && b);
  OfferBoard* owner = a->offers();
  OfferBoard* taker = b->offers();
  ASSERT_NE(owner, nullptr);
  ASSERT_TRUE(owner->Publish({Offer("d1"), Offer("d2", 3)}).ok());
  auto open = taker->Open(10);
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  // Higher priority first; the request as offered.
  ASSERT_EQ(Ids(*open), (std::vector<std::string>{"d2", "d1"}));
  EXPECT_EQ((*open)[0].owner, "a");
  EXPECT_EQ((*open)[0].request["spec"]["command"], "c");
  auto took = taker->Take({"d1"});
  ASSERT_TRUE(took.ok());
  ASSERT_EQ(took->size(), 1u);
  const int64_t take = (*took)[0].take;
  // Taken: no longer open, and nobody takes it again.
  EXPECT_EQ(Ids(*owner->Open(10)), (std::vector<std::string>{"d2"}));
  EXPECT_TRUE(owner->Take({"d1"})->empty());
  ASSERT_TRUE(*taker->Report("d1", take, "running", Json()));
  auto news = owner->Collect({"d1", "d2"});
  ASSERT_TRUE(news.ok()) << news.status().ToString();
  ASSERT_EQ(news->size(), 1u);
  EXPECT_EQ((*news)[0].status, "running");
  EXPECT_TRUE(owner->Collect({"d1"})->empty());  // a start is news once
  // A report naming another taking changes nothing.
  EXPECT_FALSE(*taker->Report("d1", take + 1, "done", Json{{"ok", false}}));
  ASSERT_TRUE(*taker->Report("d1", take, "done", Json{{"ok", true}, {"output", 7}}));
  news = owner->Collect({"d1"});
  ASSERT_EQ(news->size(), 1u);
  EXPECT_EQ((*news)[0].status, "done");
  EXPECT_EQ((*news)[0].result["output"], 7);
  EXPECT_TRUE(owner->Collect({"d1"})->empty());  // collected once
  // Only the owner collects its offers.
  EXPECT_TRUE(taker->Collect({"d2"})->empty());
}

// The owner dies after collecting a result and before committing it: the instance that
// takes the execution over offers the step again and collects the same result instead
// of running the step again. Once the store shows the attempt ended, the row goes.
TEST_F(PgOfferBoardTest, AResultCollectedButNotCommittedGoesToTheNextOwner) {
  const std::string url = NewDatabase();
  auto a = OpenInstance(url, "a"), b = OpenInstance(url, "b"), t = OpenInstance(url, "t");
  ASSERT_TRUE(a && b && t);
  ASSERT_TRUE(a->leases()->Renew().ok());
  ASSERT_TRUE(a->Commit(Running("x", "s", 1)).ok());
  ASSERT_TRUE(a->offers()->Publish({StepOffer("d", "x", "s", 1)}).ok());
  auto took = t->offers()->Take({"d"});
  ASSERT_EQ(took->size(), 1u);
  ASSERT_TRUE(*t->offers()->Report("d", (*took)[0].take, "done", Json{{"output", 5}}));
  ASSERT_EQ(a->offers()->Collect({"d"})->size(), 1u);
  // `a` dies here. `b` takes x over and offers the step again under the same id.
  ASSERT_TRUE(b->offers()->Publish({StepOffer("d", "x", "s", 1)}).ok());
  EXPECT_TRUE(t->offers()->Open(10)->empty());  // not open for anyone to run again
  auto news = b->offers()->Collect({"d"});
  ASSERT_TRUE(news.ok()) << news.status().ToString();
  ASSERT_EQ(news->size(), 1u);
  EXPECT_EQ((*news)[0].status, "done");
  EXPECT_EQ((*news)[0].result["output"], 5);
  EXPECT_TRUE(b->offers()->Collect({"d"})->empty());  // once
  EXPECT_EQ(Rows(url, "offered_dispatches"), 1);      // until the attempt is committed
  ASSERT_TRUE(Exec(url, "UPDATE attempts SET status = 'completed'"));
  ASSERT_TRUE(b->offers()->Collect({})->empty());
  EXPECT_EQ(Rows(url, "offered_dispatches"), 0);
}

// What an instance that died left behind is removed by the sweep: offers of finished
// executions and of ended attempts, and old control requests. Offers still needed stay.
TEST_F(PgOfferBoardTest, TheSweepRemovesWhatNoInstanceNeeds) {
  const std::string url = NewDatabase();
  auto a = OpenInstance(url, "a"), b = OpenInstance(url, "b");
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->leases()->Renew().ok());
  ASSERT_TRUE(a->Commit(Running("x", "s", 1)).ok());
  ASSERT_TRUE(a->Commit(Running("y", "s", 2)).ok());
  ASSERT_TRUE(a->Commit(Running("z", "s", 1)).ok());
  ASSERT_TRUE(a->offers()
                  ->Publish({StepOffer("x-needed", "x", "s", 1), StepOffer("y-old", "y", "s", 1),
                             StepOffer("z-done", "z", "s", 1), StepOffer("gone", "nosuch", "s", 1)})
                  .ok());
  ASSERT_TRUE(Exec(url, "UPDATE executions SET status = 'completed' WHERE id = 'z'"));
  ControlRequest cancel;
  cancel.execution_id = "x";
  cancel.op = "cancel";
  ASSERT_TRUE(a->relay()->Ask("dead", cancel).ok());
  // Nothing is old enough yet.
  auto none = b->offers()->Sweep(Duration(60'000));
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(*none, 0u);
  ASSERT_TRUE(Exec(url, "UPDATE offered_dispatches SET offered_at = offered_at - 120000"));
  ASSERT_TRUE(Exec(url, "UPDATE control_requests SET asked_at = asked_at - 120000"));
  auto swept = b->offers()->Sweep(Duration(60'000));
  ASSERT_TRUE(swept.ok()) << swept.status().ToString();
  EXPECT_EQ(*swept, 4u);  // y-old (its attempt 1 ended), z-done, gone, the request
  EXPECT_EQ(Ids(*b->offers()->Open(10)), (std::vector<std::string>{"x-needed"}));
  EXPECT_EQ(Rows(url, "control_requests"), 0);
}

TEST_F(PgOfferBoardTest, OfRacingTakersEachOfferGoesToExactlyOne) {
  const std::string url = NewDatabase();
  auto owner = OpenInstance(url, "owner");
  ASSERT_TRUE(owner);
  std::vector<OfferBoard::Offer> offers;
  std::vector<std::string> ids;
  for (int i = 0; i < 200; ++i) {
    offers.push_back(Offer("d" + std::to_string(i)));
    ids.push_back(offers.back().id);
  }
  ASSERT_TRUE(owner->offers()->Publish(offers).ok());
  auto t1 = OpenInstance(url, "t1"), t2 = OpenInstance(url, "t2");
  ASSERT_TRUE(t1 && t2);
  std::vector<std::string> got1, got2;
  std::thread first([&] {
    for (const std::string& id : ids) {
      auto r = t1->offers()->Take({id});
      if (r.ok() && !r->empty()) got1.push_back(id);
    }
  });
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    auto r = t2->offers()->Take({*it});
    if (r.ok() && !r->empty()) got2.push_back(*it);
  }
  first.join();
  EXPECT_EQ(got1.size() + got2.size(), ids.size());
  std::set<std::string> all(got1.begin(), got1.end());
  for (const std::string& id : got2) EXPECT_TRUE(all.insert(id).second) << id << " taken twice";
}

TEST_F(PgOfferBoardTest, ATakeNotRenewedOpensAgainAndItsTakerIsRefused) {
  const std::string url = NewDatabase();
  auto owner = OpenInstance(url, "owner");
  auto slow = OpenInstance(url, "slow", Duration(200));
  auto other = OpenInstance(url, "other");
  ASSERT_TRUE(owner && slow && other);
  ASSERT_TRUE(owner->offers()->Publish({Offer("d")}).ok());
  auto took = slow->offers()->Take({"d"});
  ASSERT_EQ(took->size(), 1u);
  const int64_t first = (*took)[0].take;
  auto renewed = slow->offers()->Renew();
  ASSERT_TRUE(renewed.ok());
  EXPECT_EQ(renewed->size(), 1u);
  // Not renewed for longer than its lease (the database's clock decides).
  std::vector<OfferedDispatch> open;
  for (int i = 0; i < 100 && open.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    open = other->offers()->Open(10).value();
  }
  ASSERT_EQ(Ids(open), (std::vector<std::string>{"d"}));
  auto again = other->offers()->Take({"d"});
  ASSERT_EQ(again->size(), 1u);
  EXPECT_GT((*again)[0].take, first);
  // The first taker finds out: its renewal no longer lists it, its reports are refused.
  EXPECT_TRUE(slow->offers()->Renew()->empty());
  EXPECT_FALSE(*slow->offers()->Report("d", first, "done", Json{{"ok", true}}));
  EXPECT_TRUE(*other->offers()->Report("d", (*again)[0].take, "done", Json{{"ok", true}}));
}

TEST_F(PgOfferBoardTest, ANewOwnerAdoptsAnOfferInItsStateAndAWithdrawnOneIsGone) {
  const std::string url = NewDatabase();
  auto a = OpenInstance(url, "a"), b = OpenInstance(url, "b"), t = OpenInstance(url, "t");
  ASSERT_TRUE(a && b && t);
  ASSERT_TRUE(a->offers()->Publish({Offer("d"), Offer("e")}).ok());
  auto took = t->offers()->Take({"d"});
  ASSERT_EQ(took->size(), 1u);
  ASSERT_TRUE(*t->offers()->Report("d", (*took)[0].take, "done", Json{{"ok", true}}));
  // b took a's execution over and offers its step again under the same id: the result
  // is b's to collect, not a fresh run.
  ASSERT_TRUE(b->offers()->Publish({Offer("d")}).ok());
  EXPECT_TRUE(a->offers()->Collect({"d"})->empty());
  auto news = b->offers()->Collect({"d"});
  ASSERT_EQ(news->size(), 1u);
  EXPECT_EQ((*news)[0].status, "done");
  // Withdrawn by its owner (only): gone from the board; a taker's renewal drops it.
  ASSERT_TRUE(b->offers()->Withdraw({"e"}).ok());
  EXPECT_EQ(Ids(*t->offers()->Open(10)), (std::vector<std::string>{"e"}));
  ASSERT_TRUE(a->offers()->Withdraw({"e"}).ok());
  EXPECT_TRUE(t->offers()->Open(10)->empty());
}

TEST_F(PgOfferBoardTest, AnOfferWakesAWaitingInstanceAndWakeEndsAWait) {
  const std::string url = NewDatabase();
  auto a = OpenInstance(url, "a"), b = OpenInstance(url, "b");
  ASSERT_TRUE(a && b);
  // LISTENing from the first call on.
  ASSERT_TRUE(b->offers()->Open(1).ok());
  std::atomic<bool> offered{false};
  // Published while b waits, or just before: either way the notification ends the wait.
  std::thread offer([&] {
    offered = true;
    EXPECT_TRUE(a->offers()->Publish({Offer("d")}).ok());
  });
  const auto start = std::chrono::steady_clock::now();
  auto woken = b->offers()->Wait(Duration(30'000));
  offer.join();
  ASSERT_TRUE(woken.ok()) << woken.status().ToString();
  EXPECT_FALSE(*woken);  // by the notification, not by Wake()
  EXPECT_TRUE(offered);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  b->offers()->Wake();
  auto again = b->offers()->Wait(Duration(30'000));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*again);
}

}  // namespace
}  // namespace baton::pg
