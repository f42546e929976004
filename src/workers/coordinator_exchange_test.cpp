// The coordinator's side of several instances (DispatchExchange) in virtual time: what
// it offers and when, the news of an offer, a withdrawal, an offer coming home, and a
// foreign dispatch run here and given back. The database side is
// src/store/postgres/pg_offer_board_test.cpp; both together, with real processes,
// tests/postgres/server_postgres_offers_test.cpp.
#include "workers/coordinator_test_util.h"

namespace baton::workers {
namespace {

using testing::CoordinatorFixture;
using testing::WorkerSpec;

class FakeExchange final : public DispatchExchange {
 public:
  std::vector<std::string> offered, withdrawn, given_back, adopted;
  void Offer(const RunRequest& request) override { offered.push_back(request.assignment_id); }
  void Withdraw(const std::string& id) override { withdrawn.push_back(id); }
  void GiveBack(const std::string& id) override { given_back.push_back(id); }
  void Adopted(const std::string& id) override { adopted.push_back(id); }
};

class ExchangeTest : public ::testing::Test {
 protected:
  ExchangeTest() { f.coordinator->SetExchange(&exchange); }
  CoordinatorFixture f;
  FakeExchange exchange;
};

TEST_F(ExchangeTest, AStepNoWorkerHereCouldTakeIsOfferedAndEndsWithTheTakersResult) {
  const std::string id = f.Start("ex1");
  ASSERT_EQ(exchange.offered, (std::vector<std::string>{id}));
  EXPECT_EQ(f.coordinator->OfferedCount(), 1u);
  EXPECT_EQ(f.coordinator->WaitingCount(), 0u);  // out of the queue
  EXPECT_NE(f.coordinator->WaitingReason("ex1").find("offered to the other instances"),
            std::string::npos)
      << f.coordinator->WaitingReason("ex1");
  f.coordinator->OfferStarted(id);
  EXPECT_EQ(f.outcomes[id].started, 1);
  f.coordinator->OfferStarted(id);  // news once
  EXPECT_EQ(f.outcomes[id].started, 1);
  RunResult r;
  r.output = Json{{"ok", 1}};
  f.coordinator->OfferDone(id, r);
  f.loop.RunReady();
  EXPECT_TRUE(f.Done(id).status.ok());
  EXPECT_EQ(f.Done(id).output["ok"], 1);
  EXPECT_EQ(f.coordinator->OfferedCount(), 0u);
  // The taker's records are the assignment's: the owner wrote none.
  EXPECT_FALSE(f.store->GetAssignment(id).ok());
  // A late or repeated result changes nothing.
  f.coordinator->OfferDone(id, r);
  EXPECT_EQ(f.outcomes[id].done.size(), 1u);
}

TEST_F(ExchangeTest, AStepAWorkerHereCouldTakeWaitsHereEvenWhenAllAreBusy) {
  auto ch = f.Connect("w1", WorkerSpec{.capacity = 1});
  const std::string first = f.Start("ex1");
  const std::string second = f.Start("ex2");
  EXPECT_TRUE(exchange.offered.empty());
  EXPECT_EQ(ch->Commands().size(), 1u);
  EXPECT_EQ(f.coordinator->WaitingCount(), 1u);
  ASSERT_TRUE(f.Ack("w1", first).ok());
  ASSERT_TRUE(f.Succeed("w1", first).ok());
  EXPECT_EQ(ch->Commands().size(), 2u);
  EXPECT_EQ(ch->Commands().back().assignment_id, second);
}

TEST_F(ExchangeTest, ACancelledOfferIsWithdrawnAndAnOfferTakenHereComesHome) {
  const std::string cancelled = f.Start("ex1");
  f.Cancel(cancelled);
  EXPECT_EQ(exchange.withdrawn, (std::vector<std::string>{cancelled}));
  EXPECT_EQ(f.Done(cancelled).status.code(), errc::kCancelled);
  const std::string id = f.Start("ex2");
  ASSERT_EQ(exchange.offered.back(), id);
  // A worker for it connects here: the exchange finds room and takes the offer, which
  // is this instance's own.
  auto ch = f.Connect("w1");
  const RunRequest request = f.Request("ex2");
  EXPECT_EQ(f.coordinator->Takeable({request}), (std::vector<size_t>{0}));
  EXPECT_FALSE(f.coordinator->TakeForeign(request, {}));
  f.loop.RunReady();
  ASSERT_EQ(ch->Commands().size(), 1u);
  EXPECT_EQ(ch->Commands()[0].assignment_id, id);
  EXPECT_EQ(f.coordinator->OfferedCount(), 0u);
  ASSERT_TRUE(f.Ack("w1", id).ok());
  ASSERT_TRUE(f.Succeed("w1", id).ok());
  EXPECT_TRUE(f.Done(id).status.ok());  // the engine's own callbacks
}

TEST_F(ExchangeTest, AForeignDispatchRunsOnAWorkerHereAndIsGivenBackWhenItsWorkerLeaves) {
  auto ch = f.Connect("w1", WorkerSpec{.capacity = 1});
  RunRequest foreign = f.Request("other");
  // Room for one: of two requests, one is takeable now.
  EXPECT_EQ(f.coordinator->Takeable({foreign, f.Request("other2")}).size(), 1u);
  std::vector<RunResult> reported;
  int started = 0;
  RunFunctions cb;
  cb.on_started = [&] { ++started; };
  cb.on_done = [&](RunResult r) { reported.push_back(std::move(r)); };
  ASSERT_TRUE(f.coordinator->TakeForeign(foreign, std::move(cb)));
  f.loop.RunReady();
  ASSERT_EQ(ch->Commands().size(), 1u);
  ASSERT_TRUE(f.Ack("w1", foreign.assignment_id).ok());
  EXPECT_EQ(started, 1);
  ASSERT_TRUE(f.Succeed("w1", foreign.assignment_id).ok());
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_TRUE(reported[0].status.ok());
  // Never offered on: a foreign dispatch with no worker left goes back to the board.
  RunRequest again = f.Request("other3");
  ASSERT_TRUE(f.coordinator->TakeForeign(again, {}));
  ASSERT_TRUE(f.coordinator->Deregister("w1").ok());
  f.loop.RunReady();
  f.coordinator->OfferStranded();
  EXPECT_TRUE(exchange.offered.empty());
  EXPECT_EQ(exchange.given_back, (std::vector<std::string>{again.assignment_id}));
}

TEST_F(ExchangeTest, ATakeoverAdoptsAForeignDispatchAndOffersAStepItDoesNotHave) {
  auto ch = f.Connect("w1");
  RunRequest foreign = f.Request("ex1");
  std::vector<RunResult> to_board;
  RunFunctions cb;
  cb.on_done = [&](RunResult r) { to_board.push_back(std::move(r)); };
  ASSERT_TRUE(f.coordinator->TakeForeign(foreign, std::move(cb)));
  f.loop.RunReady();
  ASSERT_TRUE(f.Ack("w1", foreign.assignment_id).ok());
  // This instance takes ex1 over: its step, running here, becomes its own.
  const std::string id = f.Reattach("ex1");
  EXPECT_EQ(exchange.adopted, (std::vector<std::string>{id}));
  EXPECT_EQ(f.outcomes[id].started, 1);
  ASSERT_TRUE(f.Succeed("w1", id).ok());
  EXPECT_TRUE(f.Done(id).status.ok());
  EXPECT_TRUE(to_board.empty());
  // A step of a taken-over execution that is not here: offered under its id (adopting
  // the board's row in whatever state it is).
  const std::string elsewhere = f.Reattach("ex2");
  EXPECT_EQ(exchange.offered, (std::vector<std::string>{elsewhere}));
  EXPECT_EQ(ch->Commands().size(), 1u);
}

}  // namespace
}  // namespace baton::workers
